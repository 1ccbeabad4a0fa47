"""Command-line plumbing shared by the scripts: argument parsing from option dataclasses,
one-line errors with exit code 2 for bad input, a short summary table."""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

EXIT_USAGE = 2


class OneLineParser(argparse.ArgumentParser):
    """argparse with a single ``prog: error: message`` line on bad arguments (exit code 2)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def _field_type(field: dataclasses.Field) -> Callable[[str], Any]:
    hint = str(field.type)
    if "float" in hint:
        return float
    if "int" in hint:
        return int
    return str


def add_dataclass_options(
    parser: argparse.ArgumentParser, cls: type, skip: Sequence[str] = ()
) -> None:
    """One ``--option`` per field of the options dataclass ``cls`` (booleans get --no-x)."""
    for f in dataclasses.fields(cls):
        if f.name in skip or f.name.startswith("_"):
            continue
        flag = "--" + f.name.replace("_", "-")
        default = f.default if f.default is not dataclasses.MISSING else None
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
    names = {f.name for f in dataclasses.fields(cls)}
    return cls(**{k: val for k, val in vars(args).items() if k in names})


def default_out(kind: str) -> Path:
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    return Path("runs") / f"{kind}-{stamp}"


def check_writable(out: Path) -> Path:
    """Create ``out`` (and parents) or raise ValueError naming it."""
    if str(out).strip() in ("", "."):
        raise ValueError(f"--out must name a directory, got {str(out)!r}")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ValueError(f"--out {str(out)!r} cannot be created: {exc.strerror}") from None
    if not os.access(out, os.W_OK):
        raise ValueError(f"--out {str(out)!r} is not writable")
    return out


def fail(prog: str, message: str, debug: bool) -> int:
    if debug:
        raise
    print(f"{prog}: error: {message}", file=sys.stderr)
    return EXIT_USAGE


def table(rows: Sequence[tuple[str, Any]]) -> str:
    width = max(len(k) for k, _ in rows)
    return "\n".join(f"  {k:<{width}}  {_fmt(val)}" for k, val in rows)


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, dict):
        return ", ".join(f"{k} {_fmt(v)}" for k, v in value.items())
    return str(value)


def train_collocation(argv: Sequence[str] | None = None) -> int:
    """``scripts/train_collocation.py``: train one named problem by collocation."""
    from . import experiments

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
    parser = OneLineParser(prog=prog, description=exp.summary)
    parser.add_argument("problem", choices=names)
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        help="output directory (default: runs/<problem>-<timestamp>)",
    )
    parser.add_argument("--quiet", action="store_true", help="no IPOPT iteration output")
    parser.add_argument("--debug", action="store_true", help="tracebacks instead of one line")
    add_dataclass_options(parser, options_cls, skip=("problem",))
    args = parser.parse_args(argv)
    try:
        if args.quiet:
            args.print_level = 0
        opts = options_from_args(options_cls, args)
        out = check_writable(args.out or default_out(args.problem))
    except (ValueError, TypeError) as exc:
        return fail(prog, str(exc), args.debug)
    result = run(opts, out)
    rows = [
        (k, result[k])
        for k in (
            "status",
            "iterations",
            "objective",
            "wall_time_s",
            "nnz_jacobian",
            "nnz_hessian",
            "n_params",
        )
        if k in result
    ]
    rows += [
        (k, val)
        for k, val in result.items()
        if k.endswith(("rmse", "mse", "rate", "residual")) and val is not None
    ]
    print(f"\n{args.problem}: results in {out}\n" + table(rows))
    return 0 if result.get("status") in ("success", "acceptable") else 1
