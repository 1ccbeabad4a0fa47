"""``scripts/reproduction_report.py``: rewrite the generated tables of the reproduction report
from the stored runs. Exit codes (:mod:`collocnode._cli.exits`): 0 when written (or, with
``--check``, when current), 1 when ``--check`` finds it stale, 2 on bad input."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from collocnode._cli.exits import EXIT_FAILED, fail
from collocnode._cli.parsing import OneLineParser

from .published import TABLES
from .report import regenerate, stale_tables

PROG = "reproduction_report.py"


def reproduction_report(argv: Sequence[str] | None = None) -> int:
    """Rewrite the generated tables of the reproduction report from the stored runs."""
    args = _parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    try:
        if not args.results.is_dir():
            raise ValueError(f"--results {str(args.results)!r} is not a folder")
        if not args.document.is_file():
            raise ValueError(f"--document {str(args.document)!r} is not a file")
        stale = stale_tables(args.document, args.results)
        current = regenerate(args.document, args.results, check=args.check)
    except (ValueError, OSError) as exc:
        return fail(PROG, str(exc), args.debug)
    runs = sorted({row.run for table in TABLES for row in table.rows})
    stored = sum((args.results / run).is_dir() for run in runs)
    checked = (
        f"{len(TABLES)} generated tables against {stored} of {len(runs)} runs stored in "
        f"{args.results}"
    )
    if args.check:
        if current:
            print(f"{args.document} is current: {checked}")
        else:
            print(
                f"{args.document} is stale in {', '.join(stale)} ({checked}): run without "
                "--check to update it",
                file=sys.stderr,
            )
        return 0 if current else EXIT_FAILED
    print(f"{args.document}: {'unchanged' if current else 'updated'} ({checked})")
    return 0


def _parser() -> OneLineParser:
    p = OneLineParser(
        prog=PROG,
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
    p.add_argument(
        "--document",
        type=Path,
        default=Path("docs/results.md"),
        help="the report whose generated tables are rewritten",
    )
    p.add_argument(
        "--check", action="store_true", help="write nothing; exit 1 if the document is stale"
    )
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    return p
