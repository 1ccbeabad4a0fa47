"""``scripts/compare.py PROBLEM [options]``: several methods on one problem, one data set, one
report.

Exit codes (`collocnode._cli.exits`): 0 when every method finished, 1 when one failed (or the run
stopped: a method that could not be stored, a lost Dask scheduler; the line says how to resume), 2
on bad input (checked before any data is made and before ``--out`` exists: a wrong ``--scheduler``
included; a ``--resume`` with other settings touches nothing), 130 on Ctrl-C or SIGTERM, or when
a method was interrupted.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..tools._io import StorageError, storage_error
from ..tools._machine import command_line
from .exits import EXIT_FAILED, EXIT_INTERRUPTED, fail, first_line
from .output import OutputDirectory, default_out, resume_command
from .parsing import OneLineParser
from .signals import sigterm_as_interrupt

PROG = "compare.py"


def compare(argv: Sequence[str] | None = None) -> int:
    """``scripts/compare.py``: every method on one problem, one data set, one report. Exits 1
    when a method failed or was interrupted, 130 on Ctrl-C (or SIGTERM)."""
    with sigterm_as_interrupt():
        return _compare(argv)


def _compare(argv: Sequence[str] | None) -> int:
    from .._experiments.record import new_run_id

    argv = list(sys.argv[1:] if argv is None else argv)
    args = _parser().parse_args(argv)
    run_id = new_run_id()
    executor = None
    try:
        config = _config(args, argv)
        parallel = _check_parallel(args)
        if args.scheduler:
            from ..tools.tasks import dask_executor

            executor = dask_executor(args.scheduler)
        out = OutputDirectory(
            args.out or default_out(f"compare-{args.problem}"),
            run_id,
            args.overwrite,
            args.resume,
            command=config.command,
        )
    except (ValueError, TypeError, StorageError) as exc:
        if executor is not None:
            executor.shutdown()
        if isinstance(exc, StorageError):
            return fail(PROG, f"storage: {exc.strerror or exc}", args.debug, EXIT_FAILED)
        return fail(PROG, str(exc), args.debug)
    for note in out.notes:
        print(f"{PROG}: note: {note}", file=sys.stderr)
    return _run(config, out, executor, parallel, args, argv)


def _parser() -> OneLineParser:
    p = OneLineParser(
        prog=PROG,
        description="Train several methods on one problem with one data set and compare them.",
    )
    p.add_argument("problem", help="registered problem name, e.g. vdp, smsd, double_pendulum")
    p.add_argument(
        "--methods",
        default=None,
        help="comma-separated method names (default: collocation,fnode,mbdnode; for qvm every "
        "applicable method: collocation,node,fnode,mbdnode,mnn,snde)",
    )
    p.add_argument("--preset", default=None, help="preset of the problem (default: its first)")
    p.add_argument("--quick", action="store_true", help="few epochs, small nets and data")
    _add_output_options(p)
    _add_execution_options(p)
    p.add_argument(
        "--seed", type=int, default=0, help="seed of the data, the noise and the initial weights"
    )
    p.add_argument(
        "--epochs",
        type=int,
        default=None,
        help="every method's epochs (collocation: its iteration limit) "
        "(default: each method's own)",
    )
    p.add_argument(
        "--budget",
        type=float,
        default=None,
        help="wall-time budget per method [s] (default: none, no time limit)",
    )
    p.add_argument(
        "--noise",
        type=float,
        default=None,
        help="std of Gaussian state noise (default 0; for qvm a fraction of each signal's std, "
        "default 0.02)",
    )
    p.add_argument(
        "--eval-every",
        type=float,
        default=None,
        help="test-error curve cadence [s] (default: the problem's cadence when collocation is "
        "compared with other methods and --eval-at is not given, else no curve)",
    )
    p.add_argument(
        "--eval-at",
        default="",
        metavar="T1,T2,...",
        help="training times [s] at which to evaluate the test error as well, e.g. 1x and 20x "
        "collocation's training time (default: none)",
    )
    p.add_argument(
        "--threads",
        type=int,
        default=None,
        help="torch CPU threads (default: the problem's setting, else torch's own)",
    )
    p.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="METHOD.OPTION=VALUE",
        help="override one option of one method, e.g. fnode.targets=fd or lstm.partition=true "
        "(repeatable; default: none)",
    )
    p.add_argument(
        "--no-progress",
        action="store_true",
        help="no progress bars (on a terminal each method shows one; logs get one line per method)",
    )
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    return p


def _add_output_options(p: OneLineParser) -> None:
    p.add_argument(
        "--out",
        type=Path,
        default=None,
        help="output directory (default: runs/compare-<problem>-<time>)",
    )
    p.add_argument("--overwrite", action="store_true", help="replace a non-empty --out")
    p.add_argument(
        "--resume",
        action="store_true",
        help="continue the run in --out (with --workers/--scheduler)",
    )


def _add_execution_options(p: OneLineParser) -> None:
    p.add_argument(
        "--workers",
        type=int,
        default=1,
        help="methods run at once in local processes (default 1: one after another, comparable "
        "timings)",
    )
    p.add_argument(
        "--scheduler",
        default="",
        help="run the methods on the Dask scheduler at this address (default: none, local)",
    )
    p.add_argument("--device", default="auto", help="auto, cpu, cuda or cuda:N")


def _times(flag: str, text: str) -> tuple[float, ...]:
    """``"180,3600"`` -> (180.0, 3600.0); the values are checked by the config."""
    out = []
    for item in filter(None, (part.strip() for part in text.split(","))):
        try:
            out.append(float(item))
        except ValueError:
            raise ValueError(f"{flag} expects comma-separated seconds, got {text!r}") from None
    return tuple(out)


def method_overrides(items: Sequence[str]) -> dict[str, dict[str, object]]:
    """``["fnode.targets=fd", "mbdnode.hidden=(64, 64)"]`` -> {"fnode": {"targets": "fd"}, ...};
    values are Python literals where they parse as one (``true``/``false`` too, as in JSON and
    YAML), strings otherwise."""
    import ast

    out: dict[str, dict[str, object]] = {}
    for item in items:
        key, sep, text = item.partition("=")
        method, dot, option = key.partition(".")
        if not sep or not dot or not method or not option:
            raise ValueError(f"--set expects METHOD.OPTION=VALUE, got {item!r}")
        value: object
        if text in ("true", "false"):
            value = text == "true"
        else:
            try:
                value = ast.literal_eval(text)
            except (ValueError, SyntaxError):
                value = text
        out.setdefault(method, {})[option] = value
    return out


def _config(args: argparse.Namespace, argv: list[str]) -> Any:
    """The comparison's ``CompareConfig``, every option checked (each method's ``--set``
    options by making its trainer, the device by resolving it) before any data is made."""
    from ..compare._run import CompareConfig, default_methods, parse_methods
    from ..compare.methods import make_trainer

    if args.budget is not None and not args.budget > 0:
        raise ValueError(f"--budget must be > 0 seconds, got {args.budget:g}")
    if args.epochs is not None and args.epochs <= 0:
        raise ValueError(f"--epochs must be a positive integer, got {args.epochs}")
    options = method_overrides(args.set)
    methods = parse_methods(
        ",".join(default_methods(args.problem)) if args.methods is None else args.methods
    )
    for method, opts in options.items():
        if method not in methods:
            raise ValueError(f"--set names method {method!r}, which --methods does not run")
        # validates the options, with the run's device (which some options depend on)
        make_trainer(method, args.problem, quick=args.quick, **{"device": args.device, **opts})
    config = CompareConfig(
        problem=args.problem,
        methods=methods,
        preset=args.preset,
        quick=args.quick,
        epochs=args.epochs,
        budget_s=args.budget,
        device=args.device,
        seed=args.seed,
        noise=args.noise,
        eval_every_s=args.eval_every,
        eval_at_s=_times("--eval-at", args.eval_at),
        threads=args.threads,
        options=options,
        command=command_line("scripts/compare.py", argv),
    )
    if any(method != "collocation" for method in methods):
        from ..compare.methods.device import resolve_device

        resolve_device(args.device)  # CUDA asked for where there is none: before any data
    return config


def _check_parallel(args: argparse.Namespace) -> bool:
    """Whether the methods run in parallel (``--workers > 1`` or ``--scheduler``), which a
    ``--resume`` needs: a serial comparison stores no methods to resume."""
    if args.workers < 1:
        raise ValueError(f"--workers must be a positive integer, got {args.workers}")
    parallel = args.workers > 1 or bool(args.scheduler)
    if args.resume and (args.out is None or not parallel):
        raise ValueError(
            "--resume needs --out (the run to continue) and --workers > 1 or --scheduler "
            "(a serial comparison stores no methods to resume)"
        )
    return parallel


def _run(
    config: Any,
    out: OutputDirectory,
    executor: Any,
    parallel: bool,
    args: argparse.Namespace,
    argv: list[str],
) -> int:
    """Run the comparison into ``out``, move its report into the run folder (in place of an
    earlier run under ``--overwrite`` only if every method finished) and report how it ended."""
    from ..compare._run import run
    from ..tools.tasks import ExecutorLost, StoredTaskMismatch

    try:
        report = run(
            config,
            out.path,
            progress=not args.no_progress and not parallel,
            log=print,
            workers=args.workers,
            executor=executor,
            store=out.folder / "methods",
        )
    except KeyboardInterrupt:
        where = out.finish(success=False)
        print(f"{PROG}: interrupted; finished methods are in {_where(out, where)}", file=sys.stderr)
        return EXIT_INTERRUPTED
    except StoredTaskMismatch as exc:  # --resume with other settings: the run stays as it was
        out.discard()
        return fail(PROG, str(exc), args.debug)
    except Exception as exc:
        storage = storage_error(exc)
        if args.debug or not (storage is not None or isinstance(exc, ExecutorLost)):
            out.finish(success=False)
            raise
        where = out.finish(success=False)
        stored = len(list((where / "methods").glob("*.json")))
        why = str(exc) if storage is None else f"storage: {_oneline(storage)}"
        print(
            f"{PROG}: error: {why}; {stored} finished methods are stored in "
            f"{_where(out, where)}; continue with: "
            f"{resume_command('scripts/compare.py', argv, where)}",
            file=sys.stderr,
        )
        return EXIT_FAILED
    finally:
        if executor is not None:
            executor.shutdown()
    code = _exit_code(report, args.debug)
    where = out.finish(success=code == 0)
    print(f"wrote {where / 'compare.json'} and {where / 'compare.md'}")
    if out.ending:
        print(f"  note: {out.ending}")
    return code


def _oneline(exc: BaseException) -> str:
    return getattr(exc, "strerror", None) or first_line(exc)


def _where(out: OutputDirectory, where: Path) -> str:
    return f"{where} ({out.ending})" if out.ending else str(where)


def _exit_code(report: Any, debug: bool) -> int:
    """130 when a method was interrupted, 1 when one failed (named on stderr), else 0; with
    ``debug`` the failed methods' tracebacks go to stderr first."""
    failed, interrupted = report.failed, report.interrupted
    if debug:
        for r in report["rows"]:
            if r.get("traceback"):
                print(r["traceback"], file=sys.stderr)
    if interrupted:
        print(f"{PROG}: interrupted in {', '.join(interrupted)}", file=sys.stderr)
        return EXIT_INTERRUPTED
    if failed:
        print(f"{PROG}: error: {', '.join(failed)} failed (see compare.md)", file=sys.stderr)
        return EXIT_FAILED
    return 0
