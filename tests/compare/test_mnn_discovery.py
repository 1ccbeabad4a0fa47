"""MNN discovery: the mechanistic block with a sparse library right-hand side (MNN §3.4, A.3)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from collocnode.compare.methods.base import NotApplicableError
from collocnode.compare.methods.mnn_discovery import MNNDiscovery
from collocnode.compare.methods.mnn_solver import solve_ode

pytest.importorskip("pysindy")

FAST = {"device": "cpu", "hidden": (16,), "horizon": 10, "stride": 2, "batch_size": 32}


@pytest.fixture
def circle_data(circle):
    return circle.generate(n_steps=200, n_train=200, dt=0.05)


def test_the_precomputed_solution_map_is_the_relaxed_solver(circle, circle_data):
    """With c = (0, 1) fixed the solver is linear in (b, u(t1)): one matrix reproduces it."""
    trainer = MNNDiscovery(epochs=1, cycles=1, **FAST)
    trainer.system = circle
    trainer._setup(circle, [circle_data.train])
    G = trainer._solution_map
    T = FAST["horizon"]
    rng = np.random.default_rng(0)
    b = torch.as_tensor(rng.standard_normal((5, T)))
    iv = torch.as_tensor(rng.standard_normal((5, 1)))
    coeffs = torch.zeros((5, T, 2), dtype=torch.float64)
    coeffs[..., 1] = 1.0
    steps = torch.full((5, T - 1), 0.05, dtype=torch.float64)
    direct = solve_ode(coeffs, b, iv, steps, ridge=1e-10)[..., 0]
    mapped = (G @ torch.cat([b, iv], dim=1).T).T
    np.testing.assert_allclose(mapped.numpy(), direct.numpy(), atol=1e-7)
    # it integrates: u' = 1 from u(0) = 0 is u = t
    ones = torch.ones((1, T), dtype=torch.float64)
    u = (G @ torch.cat([ones, torch.zeros((1, 1), dtype=torch.float64)], dim=1).T).ravel()
    np.testing.assert_allclose(u.numpy(), 0.05 * np.arange(T), atol=1e-6)


def test_the_rotation_is_discovered(circle, circle_data):
    """x' = -y, y' = x (ω = 1) from one noise-free trajectory, in the degree-1 basis."""
    trainer = MNNDiscovery(degree=1, epochs=60, cycles=3, threshold=0.1, **FAST)
    result = trainer.fit(circle, circle_data.train)
    assert result.status == "success" and result.epochs == 60
    found = trainer.coefficients()
    assert set(found["x'"]) == {"y"} and set(found["y'"]) == {"x"}
    assert found["x'"]["y"] == pytest.approx(-1.0, rel=0.1)
    assert found["y'"]["x"] == pytest.approx(1.0, rel=0.1)
    assert result.message == "; ".join(trainer.equations())
    x = circle_data.train.x[:5]
    np.testing.assert_allclose(
        trainer.vector_field(x),
        np.column_stack([found["x'"]["y"] * x[:, 1], found["y'"]["x"] * x[:, 0]]),
    )
    pred = trainer.predict(circle_data.train.t, circle_data.train.x[0])
    assert pred.shape == circle_data.train.x.shape and np.all(np.isfinite(pred))


@pytest.mark.parametrize("form", ["tanh", "rational"])
def test_the_other_forms_train_and_print(circle, circle_data, form):
    trainer = MNNDiscovery(degree=2, form=form, epochs=2, cycles=1, threshold=0.0, **FAST)
    assert trainer.fit(circle, circle_data.train).status == "success"
    text = " ".join(trainer.equations())
    assert ("tanh(" in text) == (form == "tanh") and ("/ (1" in text) == (form == "rational")
    assert trainer.vector_field(circle_data.train.x[:3]).shape == (3, 2)


@pytest.mark.parametrize(
    ("option", "match"),
    [
        ({"form": "cubic"}, "unknown form 'cubic'"),
        ({"epochs": 3, "cycles": 5}, "cycles must be <= epochs"),
        ({"horizon": 2}, "horizon must be >= 3"),
    ],
)
def test_bad_options_are_named(option, match):
    with pytest.raises(ValueError, match=match):
        MNNDiscovery(**option)


def test_systems_with_inputs_are_not_applicable(oscillator):
    trainer = MNNDiscovery(epochs=1, cycles=1, **FAST)
    with pytest.raises(NotApplicableError, match="autonomous"):
        trainer.fit(oscillator, oscillator.generate().train)
