"""No function or method of the package is longer than 80 lines (decorators and docstring
included): a longer one does more than one thing, and is split into named helpers."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "collocnode"
MAX_LINES = 80


def _lengths(path: Path) -> list[tuple[int, str]]:
    """(lines, "file:line name") of every function and method defined in ``path``."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            where = f"{path.relative_to(PACKAGE.parent).as_posix()}:{node.lineno} {node.name}"
            found.append((node.end_lineno - first + 1, where))
    return found


def test_the_walk_finds_the_package():
    files = list(PACKAGE.rglob("*.py"))
    assert len(files) > 50
    assert any(name.endswith(" solve") for path in files for _, name in _lengths(path))


def test_no_function_is_longer_than_80_lines():
    too_long = sorted(
        (
            (lines, where)
            for path in sorted(PACKAGE.rglob("*.py"))
            for lines, where in _lengths(path)
            if lines > MAX_LINES
        ),
        reverse=True,
    )
    assert not too_long, f"{len(too_long)} functions are longer than {MAX_LINES} lines:\n" + (
        "\n".join(f"  {lines} lines: {where}" for lines, where in too_long)
    )
