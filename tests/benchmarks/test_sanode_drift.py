"""The SANODE drift diagnostic: its field component across the constraint is the one the
stabilized right-hand side implies."""

from __future__ import annotations

import numpy as np
import pytest
from load_benchmark import load_benchmark

from collocnode import problems

torch = pytest.importorskip("torch")
pytest.importorskip("torchdiffeq")
sanode_drift = load_benchmark("sanode_drift")


def test_the_drift_obeys_the_balance_it_reports():
    system = problems.get("rigid_body")
    rng = np.random.default_rng(0)
    t = system.time_grid(system.n_train)
    data = [system.simulate(t, system.sample_x0(rng)) for _ in range(4)]
    from collocnode.compare import make_trainer

    trainer = make_trainer(
        "sanode", problem="rigid_body", epochs=1, hidden=(8, 8), batch_size=64, seed=0
    )
    trainer.fit(system, data)
    truth = system.simulate(t, system.sample_x0(rng)).x
    a = sanode_drift.along(trainer, system, t, truth)
    # d(g - g0)/dt = G f_θ - γ (g - g0) (SNDE eq. 12 with F = G⁺), checked by central
    # differences of the rolled-out drift
    rate = np.gradient(a["drift"], t)[1:-1]
    implied = (a["G_f"] - trainer.options.gamma * a["drift"])[1:-1]
    assert np.abs(a["drift"]).max() > 0
    np.testing.assert_allclose(rate, implied, atol=0.05 * np.abs(implied).max() + 1e-9)
    assert a["drift"][0] == 0.0
    np.testing.assert_allclose(a["energy_true"], a["energy_true"][0], rtol=1e-6)
    # the augmented states start at 0, where the field with a = 0 is the field itself
    assert a["augmented"][0] == 0.0 and a["augmented"][-1] > 0.0
    assert a["G_f_at_a0"][0] == pytest.approx(a["G_f"][0], rel=1e-12, abs=1e-15)
    assert not np.allclose(a["G_f_at_a0"], a["G_f"])  # elsewhere a moves the field


def test_a_rollout_that_diverges_is_reported_up_to_its_divergence():
    from collocnode.compare import DivergenceError, make_trainer

    system = problems.get("rigid_body")
    t = system.time_grid(21)
    truth = system.simulate(t, system.sample_x0(np.random.default_rng(1))).x
    options = make_trainer("sanode", problem="rigid_body").options

    class Diverging:  # a SANODE whose rollout leaves the finite range at sample 8
        def __init__(self) -> None:
            self.options, self.dtype = options, torch.float64

        def predict_with_derivatives(self, tt, x0):
            if tt.size > 8:
                raise DivergenceError(8, tt[8], truth[:8], "blow-up")
            return truth[: tt.size], np.gradient(truth[: tt.size], tt, axis=0)

        def augmented_states(self, tt, x0):
            if tt.size > 8:
                raise DivergenceError(8, tt[8], truth[:8], "blow-up")
            return np.zeros((tt.size, 2))

        def field(self, z, u, mu):
            return torch.zeros_like(z)

    a = sanode_drift.along(Diverging(), system, t, truth)
    assert a["diverged_at"] == t[8] and len(a["drift"]) == len(a["energy_true"]) == 8
    np.testing.assert_allclose(a["drift"], 0.0, atol=1e-9)  # the truth keeps its Casimir
    report = sanode_drift.analyse(Diverging(), system, t, truth)
    assert report["diverged_at"] == t[8] and report["times"][-1]["t"] <= t[7]


@pytest.mark.parametrize("steps", [(1,), (12, 5), (9, 1)], ids=["first", "earlier", "to-first"])
def test_a_rollout_is_cut_until_it_no_longer_diverges(steps):
    """A divergence at the first step leaves the initial state alone; an adaptive solver's
    rollout over the cut grid may diverge earlier still, and is cut again."""
    from collocnode.compare import DivergenceError, make_trainer

    system = problems.get("rigid_body")
    t = system.time_grid(21)
    truth = system.simulate(t, system.sample_x0(np.random.default_rng(2))).x
    options = make_trainer("sanode", problem="rigid_body").options
    queue = list(steps)  # where each successive rollout diverges

    class Diverging:
        def __init__(self) -> None:
            self.options, self.dtype = options, torch.float64

        def predict_with_derivatives(self, tt, x0):
            if queue and tt.size > queue[0]:
                k = queue.pop(0)
                raise DivergenceError(k, tt[k], truth[:k], "blow-up")
            return truth[: tt.size], np.zeros_like(truth[: tt.size])

        def augmented_states(self, tt, x0):
            return np.zeros((tt.size, 2))

        def field(self, z, u, mu):
            return torch.zeros_like(z)

    a = sanode_drift.along(Diverging(), system, t, truth)
    assert len(a["x"]) == len(a["drift"]) == steps[-1] and not queue
    assert a["diverged_at"] == t[min(steps)]
    np.testing.assert_array_equal(a["x"][0], truth[0])
