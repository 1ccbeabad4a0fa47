"""Lorenz system for the MNN discovery experiment."""

from __future__ import annotations

import casadi as ca
import numpy as np
import pytest
from scipy.integrate import solve_ivp

from collocnode import problems
from collocnode.problems._lorenz import LIBRARY_TERMS


@pytest.fixture
def lorenz():
    return problems.get("lorenz")


def test_registry_defaults_follow_the_mnn_paper(lorenz):
    assert (lorenz.dt, lorenz.n_train, lorenz.n_steps) == (0.01, 10_000, 12_000)
    assert lorenz.params == {
        "sigma": 10.0,
        "rho": 28.0,
        "beta": 8.0 / 3.0,
        "x0": 1.0,
        "y0": 1.0,
        "z0": 1.0,
    }
    split = lorenz.generate(n_steps=300, n_train=200)
    assert split.train.x.shape == (200, 3) and split.test.x.shape == (101, 3)
    np.testing.assert_array_equal(split.train.x[0], [1.0, 1.0, 1.0])
    assert np.all(np.isfinite(split.full.x))


def test_library_coefficients_reproduce_the_rhs_exactly(lorenz, rng):
    x = rng.normal(size=(50, 3)) * 15
    xi = lorenz.library_coefficients()
    assert xi.shape == (len(LIBRARY_TERMS), 3) and np.count_nonzero(xi) == 7
    np.testing.assert_allclose(lorenz.library(x) @ xi, lorenz.rhs(0.0, x), rtol=1e-14, atol=1e-12)


def test_casadi_rhs_matches_numpy(lorenz, rng):
    xs = ca.SX.sym("x", 3)
    fun = ca.Function("f", [xs], [lorenz.casadi_rhs(xs, None, 0.0)])
    for x in rng.normal(size=(10, 3)) * 10:
        np.testing.assert_allclose(np.array(fun(x)).ravel(), lorenz.rhs(0.0, x), rtol=1e-14)


def test_phase_volume_contracts_at_the_constant_rate(lorenz, rng):
    # div f = −(σ + 1 + β) everywhere; check by central differences of the numpy rhs
    h = 1e-6
    for x in rng.normal(size=(5, 3)) * 10:
        div = sum(
            (lorenz.rhs(0, x + h * e)[i] - lorenz.rhs(0, x - h * e)[i]) / (2 * h)
            for i, e in enumerate(np.eye(3))
        )
        assert div == pytest.approx(-(10.0 + 1.0 + 8.0 / 3.0), rel=1e-8)


def test_ground_truth_agrees_with_an_independent_implicit_solver(lorenz):
    # before chaos amplifies round-off (Lyapunov time ~1.1 s), two solvers must agree closely
    t = np.linspace(0.0, 1.0, 101)
    truth = lorenz.simulate(t).x
    radau = solve_ivp(
        lambda s, x: lorenz.rhs(s, x), (0, 1), lorenz.x0, "Radau", t, rtol=1e-12, atol=1e-12
    )
    np.testing.assert_allclose(truth, radau.y.T, rtol=0, atol=1e-6)


def test_trajectory_stays_on_the_attractor(lorenz):
    t = lorenz.time_grid(n_steps=3000)
    x = lorenz.simulate(t).x
    assert np.abs(x[:, :2]).max() < 30 and 0 < x[1000:, 2].min() and x[:, 2].max() < 55
    assert np.count_nonzero(np.diff(np.sign(x[:, 0]))) > 5  # switches between the wings


@pytest.mark.parametrize("field", ["sigma", "rho", "beta"])
def test_invalid_parameters_name_the_field(field):
    with pytest.raises(ValueError, match=field):
        problems.get("lorenz", **{field: -1.0})
