"""The gallery (examples/gallery/): every example runs at its small size through the public API
and reports sane figures; docs/gallery.md shows them at full size."""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import pytest

GALLERY = Path(__file__).resolve().parents[1] / "examples" / "gallery"
EXAMPLES = sorted(p.stem for p in GALLERY.glob("*.py"))


def load(name: str):
    spec = importlib.util.spec_from_file_location(f"gallery_{name}", GALLERY / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_gallery_has_its_examples():
    assert EXAMPLES == [
        "bioreactor_feeds",
        "duffing_inputs",
        "fitzhugh_nagumo_hidden",
        "lotka_volterra_discovery",
        "lotka_volterra_gaps",
        "lotka_volterra_ude",
        "spiral_neural_ode",
    ]


@pytest.mark.parametrize("name", EXAMPLES)
def test_example_runs_at_small_size(name):
    if name == "lotka_volterra_discovery":
        pytest.importorskip("pysindy")
    result = load(name).run(small=True)
    assert result["example"] == name
    assert result["status"] in ("success", "acceptable", "iteration_limit")
    assert 0 < result["iterations"] <= 30 and result["train_time_s"] > 0
    assert result["n_params"] > 0
    assert isinstance(result["consistent"], bool) and result["largest_deviation"] >= 0
    # the small run is too short to fit well, but its re-simulation is finite and measured
    assert result["held_out_rmse"] is not None and math.isfinite(result["held_out_rmse"])
    if name == "lotka_volterra_discovery":  # learn, discover, control ran to their ends
        assert set(result["control"]) == {"network", "closed_form", "true_model"}
        assert all(math.isfinite(c["cost_on_truth"]) for c in result["control"].values())


def test_an_example_draws_its_figure(tmp_path):
    """Each script draws its figure with ``figure=PATH`` (``--figure PATH``); the fastest one
    at its small size writes a PNG there."""
    path = tmp_path / "spiral.png"
    load("spiral_neural_ode").run(small=True, figure=str(path))
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_every_example_takes_a_figure_path():
    for name in EXAMPLES:
        text = (GALLERY / f"{name}.py").read_text()
        assert "figure: str | None = None" in text and '"--figure"' in text, name


def test_examples_use_only_the_public_api():
    for name in EXAMPLES:
        text = (GALLERY / f"{name}.py").read_text()
        imports = [
            line
            for line in text.splitlines()
            if line.startswith(("from collocnode", "import coll"))
        ]
        for line in imports:
            assert line.startswith(("from collocnode import", "from collocnode.nn import")), line
