"""The public surface is what the paths say: a module whose path has no component starting with
an underscore is listed in docs/architecture.md's public table, and every listed one exists
without an underscore (diffrax's rule); every module path of 0.2 still imports, through the
old-path hook where it moved."""

from __future__ import annotations

import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest
from test_docs_imports import PUBLIC, is_public

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "collocnode"


def module_paths() -> list[str]:
    """Every module and package of collocnode, dotted."""
    out = []
    for f in sorted(PACKAGE.rglob("*.py")):
        parts = f.relative_to(ROOT).with_suffix("").parts
        out.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return out


def unprefixed(module: str) -> bool:
    return not any(part.startswith("_") for part in module.split("."))


@pytest.mark.parametrize("module", [m for m in module_paths() if unprefixed(m)])
def test_a_path_without_an_underscore_is_public(module):
    assert is_public(module) or any(p.startswith(module + ".") for p in PUBLIC), (
        f"{module} has no underscore but is not in docs/architecture.md's public table: "
        "prefix it with an underscore, or list it"
    )


@pytest.mark.parametrize("module", PUBLIC)
def test_a_public_path_exists_without_an_underscore(module):
    name = module.removesuffix(".*")
    assert unprefixed(name)
    importlib.import_module(name)


def test_a_private_module_is_not_public():
    assert not is_public("collocnode.transcription._collocation")
    assert not any(is_public(m) for m in module_paths() if "._nlp" in m)


OLD = (Path(__file__).parent / "data" / "modules_0_2.txt").read_text().split()


def test_every_module_of_0_2_imports():
    """In a fresh interpreter (a module warns once per process): each path of 0.2 imports, and
    one that no longer exists as a file warns that it moved."""
    code = (
        "import importlib, warnings, sys\n"
        "bad = []\n"
        f"for old in {OLD!r}:\n"
        "    with warnings.catch_warnings(record=True) as caught:\n"
        "        warnings.simplefilter('always')\n"
        "        module = importlib.import_module(old)\n"
        "    moved = type(module).__name__ == '_MovedModule'\n"
        "    if moved and not any('moved to' in str(w.message) for w in caught):\n"
        "        bad.append(old)\n"
        "print(bad)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "[]"
    assert len(OLD) > 100


def homes_named() -> list[tuple[str, str]]:
    """(concept, path) for every file or folder docs/architecture.md's "One home per concept"
    table names, relative to the package or the repository. In a cell, a name without a folder
    lies in the folder named before it; a name in capitals is a placeholder."""
    text = (ROOT / "docs" / "architecture.md").read_text()
    table = text[text.index("## One home per concept") :].split("\n## ", 1)[0]
    out = []
    for line in table.splitlines()[2:]:
        if not line.startswith("| ") or line.count("|") < 3:
            continue
        concept, cell = line.split("|")[1:3]
        folder = ""
        for code in re.findall(r"`([^`]+)`", cell):
            for name in re.split(r"[ ,]+", code):
                if not re.fullmatch(r"[\w/.]+\.py|[\w/]+/", name) or re.search(r"[A-Z]", name):
                    continue
                if "/" in name.rstrip("/"):
                    path = name
                    folder = name.rstrip("/") if name.endswith("/") else str(Path(name).parent)
                elif name.endswith("/"):
                    path = folder = name.rstrip("/")
                else:
                    path = f"{folder}/{name}" if folder else name
                out.append((concept.strip(), path))
    return out


def test_the_architecture_table_names_files_that_exist():
    named = homes_named()
    assert len(named) > 100  # the table was read
    missing = [
        f"{concept}: {path}"
        for concept, path in named
        if not ((PACKAGE / path).exists() or (ROOT / path).exists())
    ]
    assert not missing, "docs/architecture.md names files that do not exist:\n" + "\n".join(missing)
