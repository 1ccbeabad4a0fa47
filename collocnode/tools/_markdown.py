"""Markdown tables of a solve's records (a path, starts, refinement rounds)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

#: a consistency verdict in a table cell (None: not checked)
VERDICT = {True: "yes", False: "no", None: "-"}


def table(header: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    """A Markdown table: ``header`` and one line per row, each cell as ``str`` gives it."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)
