"""The comparison's module paths of 0.2 (``collocnode.compare.fnode``, ``.harness``, ...) keep
working for one release, each with a DeprecationWarning naming its new home in ``methods/`` or
``run/``."""

from __future__ import annotations

import subprocess
import sys

import pytest

from collocnode.tools._moved import MOVED_MODULES

# (0.2's collocnode.compare.integrators left the comparison: the fixed-step schemes are tools)
COMPARE = sorted(
    old
    for old in MOVED_MODULES
    if old.startswith("collocnode.compare.") and old != "collocnode.compare.integrators"
)


def test_every_module_that_left_the_flat_comparison_has_a_new_home():
    import importlib

    flat = {old.rsplit(".", 1)[1] for old in COMPARE}
    assert {"base", "gradient", "fnode", "registry", "harness", "scenarios", "qvm"} <= flat
    for old in COMPARE:
        for home in MOVED_MODULES[old]:
            assert home.startswith(("collocnode.compare.methods.", "collocnode.compare._run."))
            importlib.import_module(home)


@pytest.mark.parametrize(
    ("old", "name", "new"),
    [
        ("collocnode.compare.fnode", "FNODE", "collocnode.compare.methods.fnode"),
        ("collocnode.compare.registry", "make_trainer", "collocnode.compare.methods.registry"),
        ("collocnode.compare.harness", "CompareConfig", "collocnode.compare._run.config"),
        ("collocnode.compare.harness", "COLUMNS", "collocnode.compare._run.scenarios"),
        ("collocnode.compare.qvm", "RoadEvaluation", "collocnode.compare._run.qvm"),
    ],
)
def test_an_old_comparison_path_gives_the_new_object_and_warns(old, name, new):
    code = (
        "import importlib\n"
        f"old = getattr(importlib.import_module({old!r}), {name!r})\n"
        f"assert old is getattr(importlib.import_module({new!r}), {name!r})\n"
    )
    out = subprocess.run(
        [sys.executable, "-W", "always::DeprecationWarning", "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert f"{old} moved to" in out.stderr and "DeprecationWarning" in out.stderr
