"""The reproduction report: the seed papers' published tables beside the stored runs.

``python scripts/reproduction_report.py`` (:mod:`.command`) rewrites the generated tables of
``docs/results.md`` from ``benchmarks/results/<run>/{compare,result}.json``; ``--check`` tells
whether it is stale. Repository bookkeeping, not part of the installed package: imported as
``reproduction`` with ``benchmarks/`` on the path, as the scripts of ``benchmarks/`` import each
other.
"""

from .published import TABLES, Row, Table
from .report import load_run, regenerate, render_table, stale_tables, update_document

__all__ = [
    "TABLES",
    "Row",
    "Table",
    "load_run",
    "regenerate",
    "render_table",
    "stale_tables",
    "update_document",
]
