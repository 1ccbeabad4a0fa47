"""No function or method of the package is longer than 80 lines (decorators and docstring
included, but not the docstring's ``Examples:`` section, which shows the function in use and
does not make it do more): a longer one does more than one thing, and is split into named
helpers."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "collocnode"
MAX_LINES = 80


def _examples_lines(node: ast.FunctionDef | ast.AsyncFunctionDef, lines: list[str]) -> int:
    """The lines of the ``Examples:`` section of ``node``'s docstring (0 without one): from the
    blank line above its header to the next line indented no deeper than the header (a section
    or the closing quotes)."""
    doc = node.body[0] if node.body else None
    if not (
        isinstance(doc, ast.Expr)
        and isinstance(doc.value, ast.Constant)
        and isinstance(doc.value.value, str)
    ):
        return 0
    span = lines[doc.lineno - 1 : doc.end_lineno]
    for k, line in enumerate(span):
        if line.strip() == "Examples:":
            indent = len(line) - len(line.lstrip())
            end = k + 1
            while end < len(span) and (
                not span[end].strip() or len(span[end]) - len(span[end].lstrip()) > indent
            ):
                end += 1
            return end - k + (k > 0 and not span[k - 1].strip())
    return 0


def _lengths(path: Path) -> list[tuple[int, str]]:
    """(lines, "file:line name") of every function and method defined in ``path``, without
    the ``Examples:`` section of its docstring."""
    text = path.read_text(encoding="utf-8")
    tree = ast.parse(text, filename=str(path))
    lines = text.splitlines()
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            where = f"{path.relative_to(PACKAGE.parent).as_posix()}:{node.lineno} {node.name}"
            length = node.end_lineno - first + 1 - _examples_lines(node, lines)
            found.append((length, where))
    return found


def test_the_walk_finds_the_package():
    files = list(PACKAGE.rglob("*.py"))
    assert len(files) > 50
    assert any(name.endswith(" solve") for path in files for _, name in _lengths(path))


def test_an_examples_section_is_not_counted():
    body = "\n".join(f"    x{k} = {k}" for k in range(70))
    example = "\n".join(f"        print({k})" for k in range(30))
    source = (
        f'def f():\n    """Doc.\n\n    Examples:\n        Run it:\n\n        ```python\n'
        f'{example}\n        ```\n    """\n{body}\n'
    )
    node = ast.parse(source).body[0]
    # what counts: the def, the summary line, the closing quotes and the body
    assert node.end_lineno - _examples_lines(node, source.splitlines()) == 3 + 70


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
