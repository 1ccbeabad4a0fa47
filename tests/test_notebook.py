"""The example notebooks run top to bottom (on small settings) and show what they promise."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
NOTEBOOK = EXAMPLES / "quickstart.ipynb"
SMALL = 12  # collocation intervals for the test run (the notebook's default is larger)
BASE = {"collocnode", "collocnode.nn", "collocnode.serialize", "numpy", "matplotlib.pyplot"}
# each notebook and the modules it may import: the public API and well-known libraries
ALLOWED = {
    "quickstart.ipynb": BASE,
    "active_suspension.ipynb": BASE
    | {"casadi", "scipy.integrate", "time", "collocnode.recipes.qvm"},
}


def load_script(name: str):
    path = EXAMPLES.parent / "scripts" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def text_of(cell) -> str:
    out = []
    for o in cell.get("outputs", []):
        if o.get("output_type") == "stream":
            out.append(o["text"])
        elif "data" in o and "text/plain" in o["data"]:
            out.append(o["data"]["text/plain"])
    return "".join(out)


@pytest.mark.parametrize("name", sorted(ALLOWED))
def test_notebook_is_stored_without_outputs(name):
    nb = nbformat.read(EXAMPLES / name, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code, "no code cells"
    assert all(not c.outputs and c.execution_count is None for c in code)


@pytest.mark.parametrize("name", sorted(ALLOWED))
def test_notebook_uses_only_the_public_api(name):
    nb = nbformat.read(EXAMPLES / name, as_version=4)
    source = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    modules = re.findall(r"^\s*(?:from|import)\s+([\w.]+)", source, flags=re.M)
    assert set(modules) <= ALLOWED[name], set(modules) - ALLOWED[name]
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


def test_active_suspension_notebook_executes(tmp_path):
    # at the CI size of the documentation build (scripts/execute_notebooks.py), about 20 s
    execute = load_script("execute_notebooks")
    nb = nbformat.read(EXAMPLES / "active_suspension.ipynb", as_version=4)
    nb = execute.sized(nb, execute.CI_SIZE["active_suspension.ipynb"])
    client = nbclient.NotebookClient(
        nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    )
    client.execute()
    cells = {c.get("id"): c for c in nb.cells}
    train = text_of(cells["train"])
    assert re.search(r"^training: \w+", train, flags=re.M), train
    assert re.search(r"^(consistent|INCONSISTENT)", train, flags=re.M), train  # the check
    control = text_of(cells["control"])
    assert "learned  model: success" in control and "true     model: success" in control
    rms = dict(re.findall(r"RMS body acceleration, (\w+)\s*: ([\d.]+)", text_of(cells["evaluate"])))
    # both controllers beat the passive suspension on the true vehicle
    assert float(rms["learned"]) < float(rms["passive"])
    assert float(rms["true"]) < float(rms["passive"])
    figures = [o for o in cells["plot"].outputs if "image/png" in o.get("data", {})]
    assert len(figures) == 1
