"""The two command-line programs, ``scripts/train_collocation.py`` and ``scripts/compare.py``.

Shared behaviour: options come from the option dataclasses (nested ones by their flat field
names); bad input is one ``prog: error: message`` line on stderr and exit code 2 (a traceback
only with ``--debug``); every run writes into a fresh temporary sibling of ``--out`` that is
renamed to ``--out`` when the run ends, however it ends, so two runs never mix their files; a
non-empty ``--out`` is refused unless ``--overwrite``; Ctrl-C writes what the run has so far with
status "interrupted" and the phase it stopped in, and exits with 130.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import datetime
import os
import shutil
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

EXIT_USAGE = 2
EXIT_FAILED = 1
EXIT_INTERRUPTED = 130


class OneLineParser(argparse.ArgumentParser):
    """argparse with a single ``prog: error: message`` line on bad arguments (exit code 2)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


# ---- options from dataclasses ----------------------------------------------------------------


def _int_or_widths(text: str) -> int | tuple[int, ...]:
    """``"16"`` -> 16, ``"16,8"`` -> (16, 8) (hidden-layer widths)."""
    parts = [p for p in text.replace(" ", "").split(",") if p]
    try:
        values = tuple(int(p) for p in parts)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected an int or comma-separated ints, got {text!r}"
        ) from None
    return values[0] if len(values) == 1 and "," not in text else values


def _field_type(field: dataclasses.Field) -> Callable[[str], Any]:
    hint = str(field.type)
    if "tuple" in hint:
        return _int_or_widths
    if "float" in hint:
        return float
    if "int" in hint:
        return int
    return str


def add_dataclass_options(
    parser: argparse.ArgumentParser, cls: type, skip: Sequence[str] = ()
) -> None:
    """One ``--option`` per leaf field of the options dataclass ``cls``, nested ones by their
    own names (booleans get ``--no-x``)."""
    from ..tools.options import flat_fields

    for _, f, default in flat_fields(cls):
        if f.name in skip:
            continue
        flag = "--" + f.name.replace("_", "-")
        doc = f"default: {default}"
        if isinstance(default, bool):
            parser.add_argument(
                flag,
                dest=f.name,
                action=argparse.BooleanOptionalAction,
                default=argparse.SUPPRESS,
                help=doc,
            )
        else:
            parser.add_argument(
                flag,
                dest=f.name,
                type=_field_type(f),
                default=argparse.SUPPRESS,
                help=doc,
                metavar=f.name.upper(),
            )


def options_from_args(cls: type, args: argparse.Namespace) -> Any:
    """``cls`` with the parsed values (nested fields by their own names)."""
    from ..tools.options import build, flat_fields

    names = {f.name for f in dataclasses.fields(cls)}
    names |= {path[-1] for path, _, _ in flat_fields(cls)}
    return build(cls, **{k: val for k, val in vars(args).items() if k in names})


# ---- the output directory ----------------------------------------------------------------------


def default_out(kind: str) -> Path:
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    return Path("runs") / f"{kind}-{stamp}"


class OutputDirectory:
    """A run's output: written into a temporary sibling of ``target``, renamed to ``target``
    by :meth:`finish` (however the run ended).

    Raises ValueError (naming ``--out``) when ``target`` is a file, cannot be created, or is a
    non-empty directory and ``overwrite`` is off.
    """

    def __init__(
        self, target: Path, run_id: str, overwrite: bool = False, resume: bool = False
    ) -> None:
        if str(target).strip() in ("", "."):
            raise ValueError(f"--out must name a directory, got {str(target)!r}")
        self.target, self.overwrite = target, overwrite or resume
        if target.exists() and not target.is_dir():
            raise ValueError(f"--out {str(target)!r} is not a directory")
        if resume and not target.is_dir():
            raise ValueError(f"--resume: --out {str(target)!r} holds no earlier run")
        if target.is_dir() and any(target.iterdir()) and not self.overwrite:
            raise ValueError(
                f"--out {str(target)!r} is not empty; pass --overwrite to replace it, or name "
                "another directory"
            )
        self.path = target.parent / f".{target.name}.{run_id}.partial"
        try:
            self.path.mkdir(parents=True)
        except OSError as exc:
            raise ValueError(f"--out {str(target)!r} cannot be created: {exc.strerror}") from None
        if not os.access(self.path, os.W_OK | os.X_OK):
            raise ValueError(f"--out {str(target)!r} is not writable")
        if resume:  # the earlier run's stored tasks are read back from the new directory
            shutil.copytree(target, self.path, dirs_exist_ok=True, symlinks=True)

    def discard(self) -> None:
        """Remove the run's directory; the target stays as it was."""
        shutil.rmtree(self.path, ignore_errors=True)

    def finish(self) -> Path:
        """Rename the run's directory to the target (replacing it with ``overwrite``); if
        another run took the target meanwhile, the files stay where they are, and that path is
        returned."""
        old = None
        try:
            if self.target.is_dir():
                if any(self.target.iterdir()):
                    if not self.overwrite:
                        return self.path
                    old = self.target.parent / f".{self.target.name}.{self.path.stem}.old"
                    os.rename(self.target, old)
                else:
                    self.target.rmdir()
            os.rename(self.path, self.target)
        except OSError:
            return self.path
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
        return self.target


# ---- reporting -----------------------------------------------------------------------------------


def fail(prog: str, message: str, debug: bool, code: int = EXIT_USAGE) -> int:
    if debug:
        raise
    print(f"{prog}: error: {message}", file=sys.stderr)
    return code


def table(rows: Sequence[tuple[str, Any]]) -> str:
    width = max(len(k) for k, _ in rows)
    return "\n".join(f"  {k:<{width}}  {_fmt(val)}" for k, val in rows)


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, dict):
        return ", ".join(f"{k} {_fmt(v)}" for k, v in value.items())
    return str(value)


def _summary(result: dict[str, Any]) -> list[tuple[str, Any]]:
    keys = ("status", "iterations", "objective", "wall_time_s", "nnz_jacobian", "nnz_hessian")
    rows = [(k, result[k]) for k in (*keys, "n_params") if k in result]
    rows += [
        (k, val)
        for k, val in result.items()
        if k.endswith(("rmse", "mse", "rate", "residual")) and val is not None
    ]
    check = result.get("consistency")
    if check:
        verdict = "consistent" if check["consistent"] else "INCONSISTENT"
        where = f", in state {check['worst_state']}" if check.get("worst_state") else ""
        largest = check.get("largest_deviation")
        size = "inf" if largest is None else f"{largest:.3g}"
        rows.append(
            ("consistency", f"{verdict}: largest deviation {size}{where} (tol {check['tol']:g})")
        )
    return rows


def _converged(status: Any) -> bool:
    from ..status import SolverStatus

    try:
        return SolverStatus(status).ok
    except ValueError:
        return False


def _phase(record: Any, exc: BaseException) -> str:
    detail = getattr(exc, "phase", None)  # where inside a solve, when the solve says so
    return f"{record.phase} ({detail})" if detail else record.phase


# ---- train_collocation.py ----------------------------------------------------------------------


def _train_parser(prog: str, summary: str, names: list[str], options_cls: type) -> OneLineParser:
    parser = OneLineParser(prog=prog, description=summary)
    parser.add_argument("problem", choices=names)
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
    parser.add_argument("--quiet", action="store_true", help="no IPOPT iteration output")
    parser.add_argument("--debug", action="store_true", help="tracebacks instead of one line")
    add_dataclass_options(parser, options_cls, skip=("problem",))
    return parser


@contextlib.contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """While a command runs, SIGTERM (a scheduler's stop, ``timeout``, ``kill``) ends it the way
    Ctrl-C does: the finished part is written and the output directory renamed. Where SIGINT is
    ignored (a background job of a non-interactive shell) SIGTERM keeps its default action."""

    def on_sigterm(signum: int, frame: Any) -> None:
        if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)  # no Ctrl-C path: end as before
            os.kill(os.getpid(), signal.SIGTERM)
        else:
            os.kill(os.getpid(), signal.SIGINT)

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, on_sigterm)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def train_collocation(argv: Sequence[str] | None = None) -> int:
    """``scripts/train_collocation.py``: train one named problem by collocation."""
    with sigterm_as_interrupt():
        return _train_collocation(argv)


def _train_collocation(argv: Sequence[str] | None) -> int:
    from .. import experiments
    from ..experiments.record import RunRecord, new_run_id
    from ..tools import machine

    prog = "train_collocation.py"
    argv = list(sys.argv[1:] if argv is None else argv)
    head = OneLineParser(prog=prog, add_help=False)
    head.add_argument("problem", nargs="?")
    head.add_argument("--debug", action="store_true")
    known, _ = head.parse_known_args(argv)
    names = sorted(experiments.EXPERIMENTS)
    if known.problem in (None, "-h", "--help") or known.problem.startswith("-"):
        if "-h" in argv or "--help" in argv:
            print(
                f"usage: {prog} PROBLEM [options]   (PROBLEM: {', '.join(names)}; "
                f"'{prog} PROBLEM --help' lists the options)"
            )
            return 0
        print(f"{prog}: error: missing PROBLEM (one of: {', '.join(names)})", file=sys.stderr)
        return EXIT_USAGE
    try:
        exp = experiments.get(known.problem)
    except ValueError as exc:
        return fail(prog, str(exc), known.debug)
    options_cls, run = exp.load()
    args = _train_parser(prog, exp.summary, names, options_cls).parse_args(argv)
    run_id = new_run_id()
    try:
        if args.quiet:
            args.print_level = 0
        opts = options_from_args(options_cls, args)
        if args.resume and args.out is None:
            raise ValueError("--resume needs --out: the directory of the run to continue")
        out = OutputDirectory(
            args.out or default_out(args.problem), run_id, args.overwrite, args.resume
        )
    except (ValueError, TypeError) as exc:
        return fail(prog, str(exc), args.debug)
    record = RunRecord(out.path, run_id)
    record.update(
        command=command_line("scripts/train_collocation.py", argv),
        machine=machine.describe(),
        load_at_start=machine.load_average(),
        created=datetime.datetime.now().strftime("%Y-%m-%dT%H:%M:%S"),
    )
    code = EXIT_FAILED
    try:
        result = run(opts, record)
        consistent = result.get("consistency", {}).get("consistent", True)
        code = 0 if _converged(result.get("status")) and consistent else EXIT_FAILED
    except KeyboardInterrupt as exc:
        phase = _phase(record, exc)
        record.write(status="interrupted", phase=phase)
        where = out.finish()
        print(f"{prog}: interrupted in phase {phase}; what was done is in {where}", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception as exc:
        if args.debug:
            out.finish()
            raise
        phase = _phase(record, exc)
        message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        record.write(status="failed", phase=phase, error=f"{type(exc).__name__}: {message}")
        where = out.finish()
        print(f"{prog}: error in phase {phase}: {message} (files in {where})", file=sys.stderr)
        return EXIT_FAILED
    where = out.finish()
    print(f"\n{args.problem}: results in {where}\n" + table(_summary(result)))
    return code


# ---- compare.py --------------------------------------------------------------------------------


def _compare_parser() -> OneLineParser:
    p = OneLineParser(
        prog="compare.py",
        description="Train several methods on one problem with one data set and compare them.",
    )
    p.add_argument("problem", help="registered problem name, e.g. smsd, double_pendulum")
    p.add_argument(
        "--methods",
        default=None,
        help="comma-separated method names (default: fnode,mbdnode; for qvm every applicable "
        "method: collocation,node,fnode,mbdnode,mnn,snde)",
    )
    p.add_argument("--preset", default=None, help="preset of the problem (default: its first)")
    p.add_argument("--quick", action="store_true", help="few epochs, small nets and data")
    p.add_argument("--out", type=Path, default=None, help="output directory")
    p.add_argument("--overwrite", action="store_true", help="replace a non-empty --out")
    p.add_argument(
        "--resume",
        action="store_true",
        help="continue the run in --out (with --workers/--scheduler)",
    )
    p.add_argument(
        "--workers",
        type=int,
        default=1,
        help="methods run at once in local processes (default 1: one after another, comparable "
        "timings)",
    )
    p.add_argument(
        "--scheduler", default="", help="run the methods on the Dask scheduler at this address"
    )
    p.add_argument("--device", default="auto", help="auto, cpu, cuda or cuda:N")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--epochs", type=int, default=None, help="override every method's epochs")
    p.add_argument("--budget", type=float, default=None, help="wall-time budget per method [s]")
    p.add_argument(
        "--noise",
        type=float,
        default=None,
        help="std of Gaussian state noise (default 0; for qvm a fraction of each signal's std, "
        "default 0.02)",
    )
    p.add_argument("--eval-every", type=float, default=None, help="test-error curve cadence [s]")
    p.add_argument(
        "--eval-at",
        default="",
        metavar="T1,T2,...",
        help="training times [s] at which to evaluate the test error as well, e.g. 1x and 20x "
        "collocation's training time",
    )
    p.add_argument("--threads", type=int, default=None, help="torch CPU threads")
    p.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="METHOD.OPTION=VALUE",
        help="override one option of one method, e.g. fnode.targets=fd (repeatable)",
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    return p


def command_line(script: str, argv: Sequence[str]) -> str:
    """The command that reruns this run, as a shell line: ``python SCRIPT ARGS``."""
    import shlex

    return shlex.join(["python", script, *argv])


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
    values are Python literals where they parse as one, strings otherwise."""
    import ast

    out: dict[str, dict[str, object]] = {}
    for item in items:
        key, sep, text = item.partition("=")
        method, dot, option = key.partition(".")
        if not sep or not dot or not method or not option:
            raise ValueError(f"--set expects METHOD.OPTION=VALUE, got {item!r}")
        try:
            value: object = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            value = text
        out.setdefault(method, {})[option] = value
    return out


def compare(argv: Sequence[str] | None = None) -> int:
    """``scripts/compare.py``: every method on one problem, one data set, one report. Exits 1
    when a method failed or was interrupted, 130 on Ctrl-C (or SIGTERM)."""
    with sigterm_as_interrupt():
        return _compare(argv)


def _compare(argv: Sequence[str] | None) -> int:
    from ..experiments.record import new_run_id

    prog = "compare.py"
    argv = list(sys.argv[1:] if argv is None else argv)
    args = _compare_parser().parse_args(argv)
    run_id = new_run_id()
    executor = None
    try:
        from ..compare.methods import make_trainer
        from ..compare.run import CompareConfig, default_methods, parse_methods

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
            make_trainer(method, args.problem, quick=args.quick, **opts)  # validates the options
        cfg = CompareConfig(
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
        if args.workers < 1:
            raise ValueError(f"--workers must be a positive integer, got {args.workers}")
        parallel = args.workers > 1 or bool(args.scheduler)
        if args.resume and (args.out is None or not parallel):
            raise ValueError(
                "--resume needs --out (the run to continue) and --workers > 1 or --scheduler "
                "(a serial comparison stores no methods to resume)"
            )
        if args.scheduler:
            from ..tools.tasks import dask_executor

            executor = dask_executor(args.scheduler)
        out = OutputDirectory(
            args.out or default_out(f"compare-{args.problem}"),
            run_id,
            args.overwrite,
            args.resume,
        )
    except (ValueError, TypeError) as exc:
        if executor is not None:
            executor.shutdown()
        return fail(prog, str(exc), args.debug)

    from ..compare.run import run
    from ..tools.tasks import StoredTaskMismatch

    try:
        report = run(
            cfg,
            out.path,
            progress=not args.no_progress and not parallel,
            log=print,
            workers=args.workers,
            executor=executor,
        )
    except KeyboardInterrupt:
        where = out.finish()
        print(f"{prog}: interrupted; finished methods are in {where}", file=sys.stderr)
        return EXIT_INTERRUPTED
    except StoredTaskMismatch as exc:  # --resume with other settings: the run stays as it was
        out.discard()
        return fail(prog, str(exc), args.debug)
    finally:
        if executor is not None:
            executor.shutdown()
    where = out.finish()
    rows = report["rows"]
    failed, interrupted = report.failed, report.interrupted
    print(f"wrote {where / 'compare.json'} and {where / 'compare.md'}")
    if args.debug:
        for r in rows:
            if r.get("traceback"):
                print(r["traceback"], file=sys.stderr)
    if interrupted:
        print(f"{prog}: interrupted in {', '.join(interrupted)}", file=sys.stderr)
        return EXIT_INTERRUPTED
    if failed:
        print(f"{prog}: error: {', '.join(failed)} failed (see compare.md)", file=sys.stderr)
        return EXIT_FAILED
    return 0


# ---- reproduction_report.py -------------------------------------------------------------------


def reproduction_report(argv: Sequence[str] | None = None) -> int:
    """Rewrite the generated tables of the reproduction report from the stored runs."""
    prog = "reproduction_report.py"
    p = OneLineParser(
        prog=prog,
        description="Rewrite the seed papers' tables in the reproduction report from the stored "
        "runs' JSON files (compare.json / result.json, one folder per run).",
    )
    p.add_argument(
        "--results",
        type=Path,
        default=Path("benchmarks/results"),
        help="folder of stored runs (default benchmarks/results; runs/reproduce after "
        "benchmarks/reproduce.sh)",
    )
    p.add_argument("--document", type=Path, default=Path("docs/results.md"))
    p.add_argument(
        "--check", action="store_true", help="write nothing; exit 1 if the document is stale"
    )
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    args = p.parse_args(list(sys.argv[1:] if argv is None else argv))
    from ..reproduction import regenerate

    try:
        if not args.results.is_dir():
            raise ValueError(f"--results {str(args.results)!r} is not a folder")
        if not args.document.is_file():
            raise ValueError(f"--document {str(args.document)!r} is not a file")
        current = regenerate(args.document, args.results, check=args.check)
    except (ValueError, OSError) as exc:
        return fail(prog, str(exc), args.debug)
    if args.check:
        if not current:
            print(f"{args.document} is stale: run without --check to update it", file=sys.stderr)
        return 0 if current else EXIT_FAILED
    print(f"{args.document}: {'unchanged' if current else 'updated'}")
    return 0
