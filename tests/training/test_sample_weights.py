"""The loss at the measurement times is least squares by default: on irregular samples its
estimate is scipy's least-squares estimate; the cell (trapezoid) weights are an option, and
they move the estimate away from it."""

import casadi as ca
import numpy as np
import pytest
from scipy.integrate import solve_ivp
from scipy.optimize import least_squares

from collocnode import (
    HybridModel,
    IpoptOptions,
    Parameter,
    RadauIIA,
    TrainingProblem,
    Trajectory,
    solve,
)

# logistic growth x' = r x (1 - x / K), sampled densely while it grows and sparsely after
R, K, X0 = 1.2, 2.0, 0.1
T = np.array([0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0, 7.0, 10.0, 14.0, 20.0])


def data() -> Trajectory:
    exact = K / (1 + (K / X0 - 1) * np.exp(-R * T))
    noise = 0.05 * np.random.default_rng(4).standard_normal(T.size)
    return Trajectory(T, (exact + noise)[:, None])


def problem(**fields) -> TrainingProblem:
    model = HybridModel(
        n_states=1,
        blocks={},
        rhs=lambda x, u, t, b, p: ca.vertcat(p["r"] * x[0] * (1 - x[0] / p["K"])),
        parameters={"r": Parameter(1.0, fit=True), "K": Parameter(1.5, fit=True)},
    )
    return TrainingProblem(
        model, data(), initial_state=[X0], loss="samples", state_guess="data", **fields
    )


def scipy_least_squares() -> np.ndarray:
    d = data()

    def residuals(theta):
        r, k = theta
        sol = solve_ivp(
            lambda t, x: r * x * (1 - x / k), (0, T[-1]), [X0], t_eval=T, rtol=1e-11, atol=1e-12
        )
        return sol.y[0] - d.x[:, 0]

    return least_squares(residuals, [1.0, 1.5], xtol=1e-14, ftol=1e-14, gtol=1e-14).x


@pytest.fixture(scope="module")
def reference():
    return scipy_least_squares()


def fit(**fields) -> np.ndarray:
    alg = RadauIIA(200, 3, ipopt=IpoptOptions(print_level=0, tol=1e-12))
    sol = solve(problem(**fields), alg, check=False)
    assert sol.status.ok, sol.message
    return sol.p


def test_the_default_sample_loss_is_least_squares(reference):
    theta = fit()
    np.testing.assert_allclose(theta, reference, rtol=1e-6)


def test_cell_weights_are_the_quadrature_option_and_move_the_estimate(reference):
    theta = fit(sample_weights="cells")
    # the samples after the long gaps weigh up to 12x more: the estimate is not least squares
    assert np.max(np.abs(theta / reference - 1)) > 1e-3


def test_both_weights_sum_to_the_horizon_per_column():
    for weights in ("least_squares", "cells"):
        samples = problem(sample_weights=weights).samples(0)
        assert samples.data[:, 1].sum() == pytest.approx(T[-1] - T[0])
    w = problem().samples(0).data[:, 1]
    np.testing.assert_allclose(w, T[-1] / T.size)


def test_sample_weights_are_checked():
    with pytest.raises(
        ValueError, match=r"unknown sample_weights .gaps.; valid: least_squares, cells"
    ):
        problem(sample_weights="gaps")
    with pytest.raises(ValueError, match="sample_weights='cells' needs loss='samples'"):
        TrainingProblem(problem().model, data(), loss="nodes", sample_weights="cells")
