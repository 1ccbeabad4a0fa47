"""Per-trajectory parameters: the conditions of each experiment, given by the data or fitted per
trajectory, seen by the physics by name."""

from __future__ import annotations

import casadi as ca
import numpy as np
import pytest

from collocnode import (
    ConsensusADMM,
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

TIGHT = IpoptOptions(print_level=0, tol=1e-12, max_iter=300)
RATE, FEEDS = 1.3, (0.5, 1.0, 2.0)
T = np.linspace(0.0, 3.0, 31)


def fed(t: np.ndarray, feed: float, x0: float) -> np.ndarray:
    """x' = -k x + feed from x0, exactly."""
    return feed / RATE + (x0 - feed / RATE) * np.exp(-RATE * t)


def model(fit_feed: bool, **feed) -> HybridModel:
    return HybridModel(
        1,
        {},
        lambda x, u, t, b, p: [-p["k"] * x[0] + p["feed"]],
        parameters={
            "k": Parameter(0.5, fit=True),
            "feed": Parameter(1.0, fit=fit_feed, per_trajectory=True, **feed),
        },
    )


def experiments(params: list[dict] | None = None) -> list[Trajectory]:
    params = params or [{"feed": f} for f in FEEDS]
    return [
        Trajectory(T, fed(T, f, 0.2 * k), params=p)
        for k, (f, p) in enumerate(zip(FEEDS, params, strict=True))
    ]


def test_a_model_keeps_per_trajectory_parameters_out_of_its_parameter_vector():
    m = model(fit_feed=True)
    assert m.per_trajectory == ("feed",) and m.fitted == ["k"] and m.n_params == 1
    np.testing.assert_array_equal(m.per_trajectory_values({"feed": 3.0, "other": 1.0}), [3.0])
    np.testing.assert_array_equal(m.per_trajectory_values(), [1.0])  # the parameter's value
    x = simulate(m, [RATE], T, [0.0], trajectory_params={"feed": 2.0}).x[:, 0]
    np.testing.assert_allclose(x, fed(T, 2.0, 0.0), atol=1e-8)
    with pytest.raises(ValueError, match=r"^trajectory_params\['feed'\] must be finite"):
        simulate(m, [RATE], T, [0.0], trajectory_params={"feed": np.nan})


@pytest.mark.parametrize("loss", ["samples", "nodes"])
def test_given_values_enter_each_trajectory_and_the_shared_rate_comes_back(loss):
    prob = TrainingProblem(model(fit_feed=False), experiments(), initial_state="data", loss=loss)
    sol = solve(prob, RadauIIA(30, 4, ipopt=TIGHT), seed=0)
    assert sol.success
    # the samples are exact: only the collocation error remains at the samples; the node loss
    # also carries the cubic interpolation of the data between them
    assert sol.params["k"] == pytest.approx(RATE, abs=1e-9 if loss == "samples" else 1e-5)
    assert sol.trajectory_params == [{"feed": f} for f in FEEDS]
    for k, f in enumerate(FEEDS):  # each trajectory simulated with its own feed
        sim = sol.simulate(T, segment=k).x[:, 0]
        np.testing.assert_allclose(sim, fed(T, f, 0.2 * k), atol=1e-6)
    assert sol.consistency.consistent


def test_fitted_per_trajectory_values_are_recovered_from_synthetic_data():
    guesses = [{"feed": 1.0}] * 3  # every experiment starts from the same guess
    prob = TrainingProblem(
        model(fit_feed=True, lb=0.0, ub=5.0),
        experiments(guesses),
        initial_state="data",
        loss="samples",
    )
    dop = prob.to_dop(np.array([0.5]))
    assert dop.n_params == 1 + 3
    np.testing.assert_array_equal(dop.p_guess, [0.5, 1.0, 1.0, 1.0])
    np.testing.assert_array_equal(dop.p_lb[1:], 0.0)
    sol = solve(prob, RadauIIA(30, 4, ipopt=TIGHT), seed=0)
    assert sol.success and sol.p.shape == (1,)
    assert sol.params["k"] == pytest.approx(RATE, abs=1e-8)
    fitted = [p["feed"] for p in sol.trajectory_params]
    np.testing.assert_allclose(fitted, FEEDS, atol=1e-8)
    assert sol.consistency.consistent


def test_a_fitted_value_without_data_starts_from_the_parameters_value():
    prob = TrainingProblem(
        model(fit_feed=True), [Trajectory(d.t, d.x) for d in experiments()], loss="samples"
    )
    assert [prob.trajectory_params_of(k) for k in range(3)] == [{"feed": 1.0}] * 3
    np.testing.assert_array_equal(prob.to_dop().p_guess, [0.0, 1.0, 1.0, 1.0])


def test_per_trajectory_values_follow_a_subset():
    prob = TrainingProblem(model(fit_feed=False), experiments(), initial_state="data")
    part = prob.subset([2, 0])
    assert [part.trajectory_params_of(k) for k in range(2)] == [{"feed": 2.0}, {"feed": 0.5}]
    sol = solve(part, RadauIIA(30, 4, ipopt=TIGHT), seed=0)
    assert sol.trajectory_params == [{"feed": 2.0}, {"feed": 0.5}]
    np.testing.assert_allclose(sol.simulate(T, segment=0).x[:, 0], fed(T, 2.0, 0.4), atol=1e-5)


@pytest.mark.parametrize(
    "fit_feed, params, match",
    [
        (
            False,
            [{"feed": 0.5}, {"load": 1.0}, {"feed": 2.0}],
            r"^data\[1\]\.params has no 'feed' \(a per-trajectory parameter of the model that "
            r"is not fitted\); data\[1\]\.params holds: load$",
        ),
        (
            True,
            [{"feed": 0.5}, {}, {"feed": 2.0}],
            r"^data\[1\]\.params has no 'feed' \(it is fitted per trajectory and other "
            r"trajectories give its guess\); data\[1\]\.params holds: none$",
        ),
        (
            False,
            [{"feed": 0.5}, {"feed": 1.0}, {"feed": -2.0}],
            r"^data\[2\]\.params\['feed'\] = -2\.0 is outside the parameter's bounds \[0\.0, inf\]",
        ),
    ],
)
def test_a_missing_or_impossible_condition_is_one_clear_error(fit_feed, params, match):
    with pytest.raises(ValueError, match=match):
        TrainingProblem(model(fit_feed, lb=0.0), experiments(params))


def test_consensus_admm_refuses_fitted_per_trajectory_parameters():
    prob = TrainingProblem(model(fit_feed=True), experiments(), loss="samples")
    with pytest.raises(ValueError, match=r"^ConsensusADMM does not fit per-trajectory parameters"):
        solve(prob, ConsensusADMM(RadauIIA(10, 3, ipopt=TIGHT), blocks=3), seed=0)


def test_the_warm_start_regresses_at_each_trajectorys_values():
    prob = TrainingProblem(model(fit_feed=False), experiments(), initial_state="data")
    warm = fit_initial_guess(prob)
    assert warm.success and warm.p[0] == pytest.approx(RATE, abs=0.02)


def test_a_model_file_keeps_per_trajectory_parameters(tmp_path):
    from collocnode.serialize._codec import decode, encode

    par = Parameter(1.0, fit=True, lb=0.0, per_trajectory=True)
    assert decode(encode(par, "p", 0), "p", 0) == par


def test_symbolic_takes_the_per_trajectory_column():
    m = model(fit_feed=False)
    x, p, c = ca.SX.sym("x"), ca.SX.sym("p"), ca.SX.sym("c")
    xdot, _ = m.symbolic(x, p, ca.SX(0, 1), ca.SX.sym("t"), c)
    assert ca.depends_on(xdot, c)
    with pytest.raises(ValueError, match=r"^c must be a \(1, 1\) column, got shape \(2, 1\)"):
        m.symbolic(x, p, ca.SX(0, 1), ca.SX.sym("t"), ca.SX.sym("c", 2))
    with pytest.raises(TypeError, match=r"^per_trajectory must be True or False, got 1"):
        Parameter(1.0, per_trajectory=1)
