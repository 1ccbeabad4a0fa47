"""Every import in README.md, docs/ and examples/ resolves to what it names, through the
current paths (a deprecated path would warn, and warnings are errors here), and every dotted
``collocnode.…`` name those files mention exists."""

from __future__ import annotations

import ast
import importlib
import inspect
import json
import re
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FENCE = re.compile(r"```(?:python|py)(?:[ \t][^\n]*)?\n(.*?)```", re.S)
DOTTED = re.compile(r"(?<![\w./-])collocnode(?:\.[A-Za-z_]\w*)+")


def sources() -> list[tuple[str, str]]:
    """(where, Python code) of every code block, notebook cell and example script."""
    out = []
    for md in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        for k, block in enumerate(FENCE.findall(md.read_text())):
            out.append((f"{md.relative_to(ROOT)} block {k}", block))
    for nb in sorted((ROOT / "examples").rglob("*.ipynb")):
        cells = json.loads(nb.read_text())["cells"]
        for k, cell in enumerate(cells):
            if cell["cell_type"] == "code":
                out.append((f"{nb.relative_to(ROOT)} cell {k}", "".join(cell["source"])))
    for py in sorted((ROOT / "examples").rglob("*.py")):
        out.append((str(py.relative_to(ROOT)), py.read_text()))
    return out


def imports(code: str) -> list[tuple[str, tuple[str, ...]]]:
    """(module, names) of every collocnode import in ``code``; lines that do not parse as a
    whole are read one import statement at a time."""
    try:
        trees = [ast.parse(code)]
    except SyntaxError:
        trees = []
        for line in code.splitlines():
            if line.lstrip().startswith(("import ", "from ")):
                try:
                    trees.append(ast.parse(line.strip()))
                except SyntaxError:
                    continue
    out = []
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                out += [(a.name, ()) for a in node.names if a.name.startswith("collocnode")]
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("collocnode"):
                out.append((node.module, tuple(a.name for a in node.names)))
    return out


def documented() -> list[str]:
    """Every dotted collocnode name mentioned in README, docs/ and the examples."""
    names: set[str] = set()
    files = [ROOT / "README.md", *(ROOT / "docs").rglob("*.md"), *(ROOT / "examples").rglob("*")]
    for f in files:
        if f.is_file() and f.suffix in (".md", ".py", ".ipynb"):
            names.update(DOTTED.findall(f.read_text()))
    return sorted(names)


IMPORTS = [(where, mod, names) for where, code in sources() for mod, names in imports(code)]


def public_modules() -> tuple[str, ...]:
    """The public modules, from the table of docs/architecture.md ("The public surface"): its
    first column's names; ``collocnode.recipes.*`` admits every submodule."""
    text = (ROOT / "docs" / "architecture.md").read_text()
    section = text.split("## The public surface", 1)[1].split("\n## ", 1)[0]
    out = []
    for line in section.splitlines():
        if line.startswith("| `collocnode"):
            out += re.findall(r"`(collocnode[\w.*]*)`", line.split("|")[1])
    return tuple(out)


PUBLIC = public_modules()


def is_public(module: str) -> bool:
    return any(module == p or (p.endswith(".*") and module.startswith(p[:-1])) for p in PUBLIC)


def test_the_public_table_is_read():
    assert {
        "collocnode",
        "collocnode.nn",
        "collocnode.petab",
        "collocnode.compare.methods.*",
    } <= set(PUBLIC)


@pytest.mark.parametrize(("where", "module", "names"), IMPORTS, ids=[i[0] for i in IMPORTS])
def test_every_documented_import_is_public(where, module, names):
    assert is_public(module), (
        f"{where} imports from {module}, which is private (docs/architecture.md lists the "
        "public modules): import from a public one, or re-export the name there"
    )
    exported = getattr(importlib.import_module(module), "__all__", None)
    for name in names:
        if name == "*" or is_public(f"{module}.{name}") or exported is None:
            continue
        assert name in exported, f"{where}: {module} does not export {name!r} (its __all__)"


def test_the_files_hold_imports_to_check():
    assert len(IMPORTS) > 20


@pytest.mark.parametrize(("where", "module", "names"), IMPORTS, ids=[i[0] for i in IMPORTS])
def test_every_documented_import_resolves(where, module, names):
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        mod = importlib.import_module(module)
        for name in names:
            if name == "*":
                continue
            if not hasattr(mod, name):
                importlib.import_module(f"{module}.{name}")  # a submodule


@pytest.mark.parametrize("dotted", documented())
def test_every_documented_name_exists(dotted):
    parts = dotted.split(".")
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        # a public name of the package (collocnode.simulate is the function, although an old
        # module of that path still warns when imported)
        obj = importlib.import_module(parts[0])
        for attr in parts[1:]:
            obj = getattr(obj, attr, None)
            if obj is None or inspect.ismodule(obj):
                break
        else:
            return
        # the longest importable module, then attributes
        for n in range(len(parts), 0, -1):
            try:
                obj = importlib.import_module(".".join(parts[:n]))
            except ModuleNotFoundError:
                continue
            for attr in parts[n:]:
                assert hasattr(obj, attr), f"{dotted}: {'.'.join(parts[:n])} has no {attr!r}"
                obj = getattr(obj, attr)
            return
    pytest.fail(f"{dotted} names no module")
