"""Hidden states: recovered where the observations determine them, guessed and scaled by the
model, checked against their own collocated trajectory."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from collocnode import (
    HybridModel,
    IpoptOptions,
    Parameter,
    RadauIIA,
    TrainingProblem,
    Trajectory,
    simulate,
    solve,
)
from collocnode.training._warmstart import fit_initial_guess

TIGHT = IpoptOptions(print_level=0, tol=1e-12, max_iter=200)
ACCEL, V0, P0 = -0.8, 1.5, 0.3
T = np.linspace(0.0, 2.0, 9)


def position(t: np.ndarray) -> np.ndarray:
    return P0 + V0 * t + ACCEL * t**2 / 2


def kinematics() -> HybridModel:
    """pos' = vel, vel' = a (a fitted): a linear system whose velocity is never measured."""
    return HybridModel(
        2,
        {},
        lambda x, u, t, b, p: [x[1], p["a"]],
        parameters={"a": Parameter(0.0, fit=True)},
        state_names=("pos", "vel"),
    )


@pytest.mark.parametrize(
    "data",
    [
        Trajectory(T, position(T), state_names=("pos",)),  # the hidden column absent
        Trajectory(T, np.c_[position(T), np.full(T.size, np.nan)]),  # or NaN
    ],
    ids=["absent", "nan"],
)
def test_a_hidden_state_the_observations_determine_is_recovered_to_solver_tolerance(data):
    """The position is a quadratic: Radau collocation with 3 stages holds it exactly, so the
    hidden velocity v0 + a t and the acceleration come back to IPOPT's tolerance, with the
    velocity's initial value free."""
    prob = TrainingProblem(kinematics(), data, loss="samples")
    assert prob.initial_states() == [None]
    sol = solve(prob, RadauIIA(4, 3, ipopt=TIGHT), seed=0)
    assert sol.success
    assert sol.params["a"] == pytest.approx(ACCEL, abs=1e-10)
    t = np.linspace(0.0, 2.0, 41)
    np.testing.assert_allclose(sol(t)[:, 1], V0 + ACCEL * t, atol=1e-10)
    np.testing.assert_allclose(sol(t)[:, 0], position(t), atol=1e-10)
    # the check scales the hidden velocity by its collocated trajectory
    assert sol.consistency.consistent and sol.consistency.scale_sources == ("data", "collocation")
    assert sol.state_spread()[1] == pytest.approx(np.std(sol.solution.x_nodes[:, 1]))
    assert sol.consistency.to_dict()["scale_sources"] == ["data", "collocation"]


def test_an_inconsistent_report_says_how_a_hidden_state_is_scaled():
    from collocnode import ConsistencyCheck

    prob = TrainingProblem(
        kinematics(), Trajectory(T, position(T), state_names=("pos",)), loss="samples"
    )
    sol = solve(prob, RadauIIA(4, 3, ipopt=TIGHT), seed=0, check=False)
    # a tolerance below round-off makes any model "inconsistent", to read the words
    report = sol.check_consistency(ConsistencyCheck(tol=1e-300))
    assert not report.consistent
    assert "for the hidden state 'vel', in the collocated trajectory" in report.summary()


def test_a_hidden_initial_value_may_be_fixed_and_the_measured_one_free():
    data = Trajectory(T, position(T), state_names=("pos",))
    prob = TrainingProblem(kinematics(), data, loss="samples", initial_state=[np.nan, V0])
    dop = prob.to_dop(np.zeros(1))
    assert np.isnan(dop.x0[0]) and dop.x0[1] == V0
    sol = solve(prob, RadauIIA(4, 3, ipopt=TIGHT), seed=0)
    assert sol.solution.x_nodes[0, 1] == V0
    assert sol.params["a"] == pytest.approx(ACCEL, abs=1e-10)


# ---- the guesses of unmeasured states -----------------------------------------------------------
def forced_model() -> HybridModel:
    """v' = -v + w (v measured), w' = (v - w) / 2 (w hidden)."""
    return HybridModel(
        2, {}, lambda x, u, t, b, p: [-x[0] + x[1], (x[0] - x[1]) / 2], state_names=("v", "w")
    )


def test_the_data_guess_integrates_a_hidden_state_driven_by_the_measured_ones():
    t = np.linspace(0.0, 4.0, 41)
    v = np.sin(t) + 1.0  # whatever the data say v is: the guess holds v on them
    prob = TrainingProblem(
        forced_model(),
        Trajectory(t, v, state_names=("v",)),
        state_guess="data",
        initial_state=[np.nan, 0.5],
    )
    guess = prob.to_dop().state_guess(t)
    np.testing.assert_allclose(guess[:, 0], v, atol=1e-12)
    expected = solve_ivp(
        lambda tt, w: (np.sin(tt) + 1.0 - w) / 2,
        (0, 4),
        [0.5],
        t_eval=t,
        rtol=1e-10,
        atol=1e-12,
    ).y[0]
    # the measured v is the data's cubic interpolant: close to sin t + 1 between the samples
    np.testing.assert_allclose(guess[:, 1], expected, atol=1e-5)
    # the hidden state's scaling is the spread of that guess
    assert prob.nominal()[1] == pytest.approx(
        np.std(prob._state_guess(0)(np.unique(np.r_[np.linspace(0, 4, 401), t]))[:, 1]), rel=1e-12
    )


def test_the_simulated_guess_is_the_model_from_the_starting_values():
    t = np.linspace(0.0, 4.0, 41)
    data = Trajectory(t, np.exp(-t) + 1.0, state_names=("v",))
    prob = TrainingProblem(forced_model(), data, state_guess="simulate", initial_state=[2.0, 0.0])
    guess = prob.to_dop().state_guess(t)
    expected = simulate(forced_model(), np.zeros(0), t, np.array([2.0, 0.0])).x
    np.testing.assert_allclose(guess, expected, atol=1e-5)


def test_a_constant_guess_starts_a_free_hidden_state_at_zero_moved_into_its_bounds():
    data = Trajectory(T, position(T), state_names=("pos",))
    assert TrainingProblem(kinematics(), data).starting_values(0)[1] == 0.0
    bounded = TrainingProblem(kinematics(), data, x_lb={"vel": 1.0})
    np.testing.assert_array_equal(bounded.starting_values(0), [P0, 1.0])
    np.testing.assert_array_equal(bounded.to_dop(np.zeros(1)).state_guess(T[:2]), [[P0, 1.0]] * 2)


def test_a_guess_whose_integration_fails_stays_at_its_last_good_value():
    # w' = w^2 from w = 1 blows up at t = 1
    model = HybridModel(2, {}, lambda x, u, t, b, p: [-x[0], x[1] ** 2], state_names=("v", "w"))
    t = np.linspace(0.0, 2.0, 21)
    prob = TrainingProblem(
        model,
        Trajectory(t, np.exp(-t), state_names=("v",)),
        state_guess="data",
        initial_state=[np.nan, 1.0],
    )
    guess = prob.to_dop().state_guess(t)
    assert np.all(np.isfinite(guess))
    before = t < 0.9
    np.testing.assert_allclose(guess[before, 1], 1.0 / (1.0 - t[before]), rtol=1e-4)
    assert np.all(guess[t > 1.0, 1] == guess[-1, 1])


# ---- the regression warm start -----------------------------------------------------------------
def test_the_warm_start_evaluates_hidden_states_at_their_guess():
    t = np.linspace(0.0, 4.0, 81)
    w0 = 0.5
    truth = solve_ivp(
        lambda tt, x: [-x[0] + x[1], (x[0] - x[1]) / 2],
        (0, 4),
        [1.0, w0],
        t_eval=t,
        rtol=1e-12,
        atol=1e-12,
    ).y.T
    model = HybridModel(
        2,
        {},
        lambda x, u, t, b, p: [-p["k"] * x[0] + x[1], (x[0] - x[1]) / 2],
        parameters={"k": Parameter(0.2, fit=True)},
        state_names=("v", "w"),
    )
    data = Trajectory(t, truth[:, 0], state_names=("v",))
    prob = TrainingProblem(model, data, state_guess="data", initial_state=[np.nan, w0])
    warm = fit_initial_guess(prob)
    assert warm.success
    # w is the exact forced solution at k's guess (w' does not read k), v smoothed data
    assert warm.p[0] == pytest.approx(1.0, abs=1e-3)
    with pytest.raises(ValueError, match=r"^warm_start: the fit leaves state 'w' unobserved"):
        fit_initial_guess(TrainingProblem(model, data))
