"""examples/quickstart.ipynb runs top to bottom (on a small mesh) and shows what it promises."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

NOTEBOOK = Path(__file__).resolve().parents[1] / "examples" / "quickstart.ipynb"
SMALL = 12  # collocation intervals for the test run (the notebook's default is larger)


def text_of(cell) -> str:
    out = []
    for o in cell.get("outputs", []):
        if o.get("output_type") == "stream":
            out.append(o["text"])
        elif "data" in o and "text/plain" in o["data"]:
            out.append(o["data"]["text/plain"])
    return "".join(out)


def test_notebook_is_stored_without_outputs():
    nb = nbformat.read(NOTEBOOK, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code, "no code cells"
    assert all(not c.outputs and c.execution_count is None for c in code)


def test_notebook_uses_only_the_public_api():
    nb = nbformat.read(NOTEBOOK, as_version=4)
    source = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    modules = re.findall(r"^\s*(?:from|import)\s+([\w.]+)", source, flags=re.M)
    allowed = {"collocnode", "collocnode.nn", "collocnode.serialize", "numpy", "matplotlib.pyplot"}
    assert set(modules) <= allowed, set(modules) - allowed
    assert "._" not in source and "_validation" not in source


def test_notebook_executes(tmp_path):
    nb = nbformat.read(NOTEBOOK, as_version=4)
    settings = nb.cells[1]
    settings.source, count = re.subn(
        r"^INTERVALS = \d+", f"INTERVALS = {SMALL}", settings.source, flags=re.M
    )
    assert count == 1, "the notebook must set INTERVALS in its settings cell"
    client = nbclient.NotebookClient(
        nb,
        timeout=240,
        kernel_name="python3",
        resources={"metadata": {"path": str(tmp_path)}},  # the model file lands here
    )
    client.execute()
    cells = {c.get("id"): c for c in nb.cells}
    train = text_of(cells["train"])
    assert re.search(r"converged: (True|False)", train)
    assert re.search(r"status\s+\w+ \(\w+\)", train), train  # the summary's status row
    assert "nonzeros" in train
    simulated = text_of(cells["simulate"])
    assert "training window" in simulated and "extrapolation" in simulated
    figures = [o for o in cells["plot"].outputs if "image/png" in o.get("data", {})]
    assert len(figures) == 1, "the plot cell shows one figure"
    assert "bit for bit: True" in text_of(cells["save"])
    assert (tmp_path / "vdp_model.json").exists()
