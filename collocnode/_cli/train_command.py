"""``scripts/train_collocation.py PROBLEM [options]``: train one named experiment by collocation.

The problem comes first and picks the options dataclass whose fields become the options. Exit
codes (`collocnode._cli.exits`): 0 when the solve converged and the model is consistent, 1 when it
did not or the run failed (status "failed" and the phase in ``result.json``: "storage" when a file
could not be written), 2 on bad input (a wrong ``--scheduler`` included: it is checked before
``--out`` is made; a ``--resume`` with other settings than the stored seeds', which touches
nothing), 130 on Ctrl-C or SIGTERM (status "interrupted").
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ..tools._allocator import keep_freed_memory
from ..tools._io import StorageError, storage_error
from ..tools._machine import command_line
from .exits import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_USAGE, fail, first_line
from .output import OutputDirectory, default_out, resume_command
from .parsing import OneLineParser, add_dataclass_options, options_from_args
from .signals import sigterm_as_interrupt
from .summary import profile_rows, result_rows, succeeded, table

PROG = "train_collocation.py"


def train_collocation(argv: Sequence[str] | None = None) -> int:
    """``scripts/train_collocation.py``: train one named problem by collocation."""
    with sigterm_as_interrupt():
        return _train_collocation(argv)


def _train_collocation(argv: Sequence[str] | None) -> int:
    started = time.perf_counter()
    from .. import _experiments as experiments
    from .._experiments.record import new_run_id

    argv = list(sys.argv[1:] if argv is None else argv)
    names = sorted(experiments.EXPERIMENTS)
    head = _leading_arguments(argv)
    if head.problem is None or head.problem.startswith("-"):
        return _without_problem(argv, names)
    try:
        exp = experiments.get(head.problem)
    except ValueError as exc:
        return fail(PROG, str(exc), head.debug)
    options_cls, run = exp.load()
    args = _parser(exp.summary, names, options_cls).parse_args(argv)
    run_id = new_run_id()
    try:
        opts = _options(options_cls, args)
        executor = _scheduler(opts)  # a wrong address is refused before --out exists
    except (ValueError, TypeError) as exc:
        return fail(PROG, str(exc), args.debug)
    keep_freed_memory()  # this process's KKT factorizations reuse their pages
    try:
        out = _output(args, run_id, argv)
        return _run(run, opts, out, run_id, argv, args, executor, started)
    except (ValueError, TypeError) as exc:  # from _output: nothing was made
        return fail(PROG, str(exc), args.debug)
    except StorageError as exc:
        return fail(PROG, f"storage: {exc.strerror or exc}", args.debug, EXIT_FAILED)
    finally:
        if executor is not None:
            executor.shutdown()


def _leading_arguments(argv: list[str]) -> argparse.Namespace:
    """The problem name and ``--debug``, read before the problem's own options are known."""
    head = OneLineParser(prog=PROG, add_help=False)
    head.add_argument("problem", nargs="?")
    head.add_argument("--debug", action="store_true")
    known, _ = head.parse_known_args(argv)
    return known


def _without_problem(argv: list[str], names: list[str]) -> int:
    """``--help`` before a problem lists the problems (exit 0); no problem is a usage error."""
    if "-h" in argv or "--help" in argv:
        print(
            f"usage: {PROG} PROBLEM [options]   (PROBLEM: {', '.join(names)}; "
            f"'{PROG} PROBLEM --help' lists the options)"
        )
        return 0
    print(f"{PROG}: error: missing PROBLEM (one of: {', '.join(names)})", file=sys.stderr)
    return EXIT_USAGE


def _parser(summary: str, names: list[str], options_cls: type) -> OneLineParser:
    parser = OneLineParser(prog=PROG, description=summary)
    parser.add_argument("problem", choices=names, help="the experiment to run")
    parser.add_argument(
        "--out", type=Path, default=None, help="output directory (default: runs/<problem>-<time>)"
    )
    parser.add_argument(
        "--overwrite", action="store_true", help="replace a non-empty --out directory"
    )
    parser.add_argument(
        "--resume",
        action="store_true",
        help="continue the run in --out: its finished seeds (--seeds > 1) are reused",
    )
    parser.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="print IPOPT's own log, one line per iteration (--print-level 5, unless given)",
    )
    parser.add_argument(
        "--no-progress",
        action="store_true",
        help="no progress: neither the phases nor the iterations (on a terminal they are bars, "
        "in a log plain lines on standard error)",
    )
    parser.add_argument(
        "--quiet", action="store_true", help="no IPOPT log and no progress (the summary only)"
    )
    parser.add_argument("--debug", action="store_true", help="tracebacks instead of one line")
    parser.add_argument(
        "--profile",
        action="store_true",
        help="print where the run's seconds went: start-up, each phase (data, training with "
        "its warm start, build, IPOPT and callbacks, evaluation, plots) and the total",
    )
    add_dataclass_options(
        parser,
        options_cls,
        skip=("problem",),
        shown_defaults={"print_level": "0, or 5 with --verbose"},
    )
    return parser


def _scheduler(opts: Any) -> Any:
    """The Dask executor of a study on a cluster (``--scheduler`` with ``--seeds`` > 1),
    connected and checked within one time limit; None otherwise. Raises ValueError (one line
    saying what answers at the address) when it is not a working scheduler."""
    address = getattr(opts, "scheduler", "")
    if not address or getattr(opts, "seeds", 1) <= 1:
        return None
    from ..tools.tasks import dask_executor

    return dask_executor(address)


def _output(args: argparse.Namespace, run_id: str, argv: list[str]) -> OutputDirectory:
    out = OutputDirectory(
        args.out or default_out(args.problem),
        run_id,
        args.overwrite,
        args.resume,
        command=command_line("scripts/train_collocation.py", argv),
    )
    for note in out.notes:
        print(f"{PROG}: note: {note}", file=sys.stderr)
    return out


def _options(options_cls: type, args: argparse.Namespace) -> Any:
    """The run's options from the parsed arguments: IPOPT's own log only with ``--verbose``
    (or an explicit ``--print-level``), never with ``--quiet``."""
    if args.quiet:
        args.print_level = 0
    elif not hasattr(args, "print_level"):  # not given: the verbosity decides
        args.print_level = 5 if args.verbose else 0
    opts = options_from_args(options_cls, args)
    if args.resume and args.out is None:
        raise ValueError("--resume needs --out: the directory of the run to continue")
    return opts


def _run(
    run: Callable[..., dict[str, Any]],
    opts: Any,
    out: OutputDirectory,
    run_id: str,
    argv: list[str],
    args: argparse.Namespace,
    executor: Any = None,
    started: float | None = None,
) -> int:
    """Run the experiment into ``out``, record how it ended, and move its summary into the run
    folder (which replaces an earlier run under ``--overwrite`` only if this one succeeded);
    ``started``: the command's ``time.perf_counter()`` at its start, for ``--profile``."""
    from .._experiments.record import RunRecord
    from ..tools import _machine as machine
    from ..tools._progress import watching
    from ..tools.tasks import StoredTaskMismatch
    from ..training._callbacks import PhaseProgress

    record = RunRecord(out.path, run_id, units_dir=out.folder)
    age = machine.process_age()  # the interpreter's start and the package's imports too
    startup = age if age is not None else time.perf_counter() - (started or time.perf_counter())
    record.update(**machine.run_record("scripts/train_collocation.py", argv))
    shown = None if args.quiet or args.no_progress else PhaseProgress()
    try:
        with watching(shown) if shown is not None else contextlib.nullcontext():
            result = run(opts, record, **({"executor": executor} if executor is not None else {}))
        record.update(phase_seconds=record.close_phase(), startup_s=startup)
        record.write()
        code = 0 if succeeded(result) else EXIT_FAILED
    except StoredTaskMismatch as exc:  # --resume with other settings: the run stays as it was
        out.discard()
        return fail(PROG, str(exc), args.debug)
    except KeyboardInterrupt as exc:
        if shown is not None:
            shown.close()
        phase = _phase(record, exc)
        unwritten = _record_end(record, status="interrupted", phase=phase)
        where = _ended(out, argv, record, out.finish(success=False))
        print(f"{PROG}: interrupted in phase {phase}; {where}{unwritten}", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception as exc:
        if shown is not None:
            shown.close()
        if args.debug:
            out.finish(success=False)
            raise
        storage = storage_error(exc)
        phase = "storage" if storage is not None else _phase(record, exc)
        message = _message(exc if storage is None else storage)
        unwritten = _record_end(
            record, status="failed", phase=phase, error=f"{type(exc).__name__}: {message}"
        )
        where = _ended(out, argv, record, out.finish(success=False))
        print(f"{PROG}: error in phase {phase}: {message}; {where}{unwritten}", file=sys.stderr)
        return EXIT_FAILED
    if shown is not None:
        shown.close()
    where = out.finish(success=code == 0)
    print(f"\n{args.problem}: results in {where}\n" + table(result_rows(result)))
    if result.get("regularization_path"):
        print("\nregularization path:\n" + result["regularization_path"]["table"])
    if args.profile:
        print("\nwhere the seconds went:")
        print(table(profile_rows(startup, record.phase_seconds, result.get("wall_time_s"))))
    if out.ending:
        print(f"  note: {out.ending}")
    for text in result.get("warnings", []):
        print(f"  warning: {text}")
    return code


def _phase(record: Any, exc: BaseException) -> str:
    detail = getattr(exc, "phase", None)  # where inside a solve, when the solve says so
    return f"{record.phase} ({detail})" if detail else record.phase


def _message(exc: BaseException) -> str:
    """One line for ``exc``: an OSError's own words (the file it names included)."""
    if isinstance(exc, OSError) and exc.strerror:
        name = f" {str(exc.filename)!r}" if exc.filename else ""
        return f"{exc.strerror}{name}"
    return first_line(exc)


def _record_end(record: Any, **fields: Any) -> str:
    """Write ``result.json`` with how the run ended; where that fails too (a full disk) it is
    said in the same line rather than with a second traceback."""
    try:
        record.write(**fields)
    except OSError as exc:
        return f" (result.json could not be written: {exc.strerror or exc})"
    return ""


def _ended(out: OutputDirectory, argv: list[str], record: Any, where: Path) -> str:
    """Where a run that stopped early left its files, where the run it was to replace stays,
    and for a study the command that continues it."""
    text = f"what was done is in {where}"
    if out.ending:
        text += f" ({out.ending})"
    if "seeds_completed" in record.result:
        done = record.result["seeds_completed"]
        text += f"; {done} seeds are stored; continue with: "
        text += resume_command("scripts/train_collocation.py", argv, where)
    return text
