"""Rollout metrics: window split, constraint violation, invariant drift, divergence."""

from __future__ import annotations

import numpy as np
import pytest

from collocnode import problems
from collocnode.compare._run.metrics import evaluate, window_errors
from collocnode.tools._fixed_step import DivergenceError


class _Exact:
    """A 'trainer' that predicts the ground truth plus a known offset."""

    def __init__(self, system, offset=0.0, fail_at=None):
        self.system, self.offset, self.fail_at = system, offset, fail_at

    def predict(self, t, x0, u=None):
        if self.fail_at is not None:
            raise DivergenceError(self.fail_at, t[self.fail_at], None, "blow-up")
        return self.system.simulate(t, x0).x + self.offset


def test_window_errors_split_train_and_extrapolation():
    ref = np.zeros((10, 2))
    pred = ref.copy()
    pred[:6] = 1.0
    pred[6:] = 3.0
    e = window_errors(pred, ref, 6)
    assert e["train_mse"] == 1.0 and e["test_mse"] == 9.0 and e["test_rmse"] == 3.0
    # the papers' window: all samples, (6 * 1 + 4 * 9) / 10
    assert e["full_mse"] == pytest.approx(4.2, rel=1e-15)
    assert window_errors(pred, ref, 10)["test_mse"] is None
    assert window_errors(pred, ref, 10)["full_mse"] == e["full_mse"]  # any split
    assert window_errors(pred, ref, 6, columns=[1])["test_mse"] == 9.0


@pytest.mark.parametrize("offset", [0.0, 0.1])
def test_exact_prediction_scores_zero(offset):
    system = problems.get("sms")
    split = system.generate(n_steps=50, n_train=30)
    m = evaluate(_Exact(system, offset), system, split.full, 30)
    assert m.status == "success"
    assert m.train_mse == pytest.approx(offset**2, rel=1e-12, abs=1e-20)
    assert m.test_mse == pytest.approx(offset**2, rel=1e-12, abs=1e-20)
    assert m.constraint_violation is None  # no constraints
    if offset == 0.0:
        assert m.invariant_drift["energy"] < 1e-8
    else:
        assert m.invariant_drift["energy"] > 1e-3


def test_constraint_violation_of_a_mechanism():
    system = problems.get("slider_crank")
    split = system.generate(n_steps=30, n_train=20)
    m = evaluate(_Exact(system), system, split.full, 20)
    assert m.constraint_violation < 1e-8
    off = evaluate(_Exact(system, 0.01), system, split.full, 20)
    assert off.constraint_violation > 1e-3


def test_a_method_that_starts_from_several_states_is_given_the_first_ones():
    system = problems.get("sms")
    split = system.generate(n_steps=50, n_train=30)

    class _FromThree(_Exact):
        start_samples = 3

        def predict(self, t, x0, u=None):
            assert x0.shape == (3, 2)
            np.testing.assert_array_equal(x0, split.full.x[:3])
            return super().predict(t, x0[0], u)

    assert evaluate(_FromThree(system), system, split.full, 30).train_mse < 1e-16


def test_divergence_is_a_status_with_the_step_not_nan_metrics():
    system = problems.get("vdp")
    split = system.generate(n_steps=30, n_train=20)
    m = evaluate(_Exact(system, fail_at=12), system, split.full, 20)
    assert m.status == "diverged" and m.diverged_step == 12
    assert m.test_mse is None and m.train_mse is None and "step 12" in m.message
