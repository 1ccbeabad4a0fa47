"""Collocation error estimates, the refinement rule and the adaptive solve loop."""

import casadi as ca
import numpy as np
import pytest

from collocnode import (
    DynamicOptimizationProblem,
    IpoptOptions,
    Mesh,
    NeuralODE,
    RadauIIA,
    SolverStatus,
    TrainingProblem,
    problems,
    solve,
)
from collocnode.nn import MLP
from collocnode.strategies import AdaptiveRefinement
from collocnode.transcription._refine import RefinementRule, interval_errors

QUIET = IpoptOptions(tol=1e-12, print_level=0)
STEEP = 40.0  # slope parameter of the front
TT = np.linspace(0.0, 1.0, 4001)


def front() -> DynamicOptimizationProblem:
    """x' = −10 (x − g) + g' with g = tanh(40 (t − 1/2)) and x(0) = g(0): the exact solution is
    g, a stable front of width ~1/40 in the middle of [0, 1] (smooth elsewhere)."""

    def g(t):
        return ca.tanh(STEEP * (t - 0.5))

    return DynamicOptimizationProblem(
        dynamics=lambda x, p, u, t: -10.0 * (x - g(t)) + STEEP * (1 - g(t) ** 2),
        n_states=1,
        n_params=0,
        tspan=(0.0, 1.0),
        # the structured NLP needs an objective; the problem is square, so it does not matter
        lagrange=lambda x, p, u, t: x[0] ** 2,
        x0=[np.tanh(-STEEP / 2)],
        x_guess=[0.0],
    )


def front_error(sol) -> float:
    return float(np.max(np.abs(sol(TT)[:, 0] - np.tanh(STEEP * (TT - 0.5)))))


def decay() -> DynamicOptimizationProblem:
    return DynamicOptimizationProblem(
        dynamics=lambda x, p, u, t: -1.5 * x,
        n_states=1,
        n_params=0,
        tspan=(0.0, 2.0),
        lagrange=lambda x, p, u, t: x[0] ** 2,
        x0=[1.0],
        x_guess=[1.0],
    )


# ---- the estimate ------------------------------------------------------------------------------


def test_estimate_decreases_with_the_stages_and_tracks_the_true_error():
    estimates, errors = [], []
    for stages in (1, 2, 3, 4, 5):
        sol = solve(front(), RadauIIA(16, stages, ipopt=QUIET))
        assert sol.success
        estimates.append(interval_errors(sol).max())
        errors.append(front_error(sol) / 2.0)  # the estimate is relative to 1 + max|x| = 2
    assert np.all(np.diff(estimates) < 0), estimates
    ratio = np.array(estimates) / np.array(errors)
    assert np.all((ratio > 1 / 3) & (ratio < 3)), ratio


@pytest.mark.parametrize("stages", [1, 2, 3])
def test_estimate_converges_like_the_local_error(stages):
    """Stage order m: the collocation polynomial's local error is O(h^(m+1))."""
    est = [interval_errors(solve(decay(), RadauIIA(n, stages, ipopt=QUIET))).max() for n in (8, 16)]
    assert np.log2(est[0] / est[1]) == pytest.approx(stages + 1, abs=0.4)


def test_estimate_vanishes_when_the_solution_is_a_collocation_polynomial():
    ramp = DynamicOptimizationProblem(
        dynamics=lambda x, p, u, t: 2.0 * t,  # x = t², degree 2
        n_states=1,
        n_params=0,
        tspan=(0.0, 1.0),
        lagrange=lambda x, p, u, t: x[0] ** 2,
        x0=[0.0],
    )
    sol = solve(ramp, RadauIIA(3, 2, ipopt=QUIET))
    assert np.max(interval_errors(sol)) < 1e-13


def test_estimate_locates_the_front():
    sol = solve(front(), RadauIIA(10, 3, ipopt=QUIET))
    errors = interval_errors(sol)
    assert np.argmax(errors) in (4, 5)  # the intervals that meet at t = 0.5
    assert errors[[0, -1]].max() < 1e-3 * errors.max()


def test_estimate_rejects_other_objects():
    with pytest.raises(TypeError, match="Solution"):
        interval_errors(front())


# ---- the rule ----------------------------------------------------------------------------------


def test_h_rule_splits_only_the_intervals_above_the_tolerance():
    mesh = Mesh.from_grid([0.0, 1.0, 2.0, 3.0], 3)
    new = RefinementRule("h").apply(mesh, [1e-9, 1e-4, 1e-9], tol=1e-6)
    # (1e-4 / 1e-6)^(1/4) = 3.16 -> 4 equal parts
    np.testing.assert_allclose(new.grid, [0.0, 1.0, 1.25, 1.5, 1.75, 2.0, 3.0])
    np.testing.assert_array_equal(new.stages, 3)
    capped = RefinementRule("h", max_split=3).apply(mesh, [1e-9, 1.0, 1e-9], tol=1e-6)
    assert capped.n_intervals == 5


def test_hp_rule_raises_stages_then_splits():
    mesh = Mesh.from_grid([0.0, 1.0, 2.0], 3)
    rule = RefinementRule("hp", max_stages=8)
    raised = rule.apply(mesh, [1e-3, 1e-9], tol=1e-6)  # log10(1e3) = 3 more stages
    np.testing.assert_array_equal(raised.grid, mesh.grid)
    np.testing.assert_array_equal(raised.stages, [6, 3])
    split = rule.apply(mesh, [1e3, 1e-9], tol=1e-6)  # 3 + 9 > 8: split into 3-stage parts
    assert split.n_intervals == 1 + 4  # ⌈12 / 3⌉ parts
    np.testing.assert_array_equal(split.stages, 3)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"strategy": "p"}, ValueError, "strategy"),
        ({"max_split": 1}, ValueError, "max_split"),
        ({"max_stages": 0}, ValueError, "max_stages"),
        ({"max_stages": 500}, ValueError, "max_stages"),
        ({"min_stages": 2.5}, TypeError, "min_stages"),
    ],
)
def test_rule_validation(kwargs, error, match):
    with pytest.raises(error, match=match):
        RefinementRule(**kwargs)


def test_rule_apply_validation():
    mesh = Mesh.from_grid([0.0, 1.0, 2.0], 3)
    with pytest.raises(ValueError, match="errors must have shape"):
        RefinementRule().apply(mesh, [1.0], tol=1e-6)
    with pytest.raises(ValueError, match="tol"):
        RefinementRule().apply(mesh, [1.0, 1.0], tol=-1.0)


# ---- the adaptive loop ---------------------------------------------------------------------------


@pytest.mark.parametrize("strategy", ["h", "hp"])
def test_refinement_concentrates_intervals_at_the_front_and_meets_the_tolerance(strategy):
    tol = 1e-6
    res = solve(
        front(),
        AdaptiveRefinement(RadauIIA(4, 3, ipopt=QUIET), tol=tol, rule=RefinementRule(strategy)),
    ).record(AdaptiveRefinement)
    assert res.converged
    assert res.errors.max() <= tol
    assert front_error(res.solution) < 2.0 * 5 * tol  # estimate ≈ true error / (1 + max|x|)
    grid = res.mesh.grid
    mid = 0.5 * (grid[1:] + grid[:-1])
    near = np.abs(mid - 0.5) < 0.1
    assert np.mean(np.diff(grid)[near]) < 0.25 * np.mean(np.diff(grid)[~near])
    assert [r.round for r in res.rounds] == list(range(len(res.rounds)))
    assert res.rounds[-1].max_error == pytest.approx(res.errors.max())
    assert np.all(np.diff([r.nodes for r in res.rounds]) > 0)


def test_adaptive_mesh_beats_a_uniform_mesh_with_three_times_the_nodes():
    res = solve(front(), AdaptiveRefinement(RadauIIA(4, 3, ipopt=QUIET), tol=1e-6)).record(
        AdaptiveRefinement
    )
    err = front_error(res.solution)
    intervals = res.mesh.n_intervals
    same = solve(front(), RadauIIA(intervals, 3, ipopt=QUIET))
    triple = solve(front(), RadauIIA(3 * intervals, 3, ipopt=QUIET))
    assert same.success and triple.success
    assert front_error(same) > 100 * err
    assert front_error(triple) > err
    assert triple.mesh.n_nodes > 2.9 * res.mesh.n_nodes


def test_max_rounds_zero_solves_once_and_reports_not_converged():
    res = solve(
        front(), AdaptiveRefinement(RadauIIA(4, 3, ipopt=QUIET), tol=1e-6, max_rounds=0)
    ).record(AdaptiveRefinement)
    assert len(res.rounds) == 1 and not res.converged
    assert res.rounds[0].refined == int(np.sum(res.errors > 1e-6)) > 0


def test_node_cap_stops_refinement():
    rule = RefinementRule(max_nodes=40)
    res = solve(
        front(), AdaptiveRefinement(RadauIIA(4, 3, ipopt=QUIET), tol=1e-8, rule=rule)
    ).record(AdaptiveRefinement)
    assert not res.converged
    assert res.mesh.n_nodes <= 40


def test_coarse_mesh_argument():
    alg = RadauIIA(50, 3, ipopt=QUIET)
    by_count = solve(decay(), AdaptiveRefinement(alg, tol=1.0, coarse=5)).record(AdaptiveRefinement)
    assert by_count.mesh.n_intervals == 5 and by_count.converged
    mesh = Mesh.from_grid([0.0, 0.5, 2.0], 4)
    assert solve(decay(), AdaptiveRefinement(alg, tol=1.0, coarse=mesh)).mesh == mesh
    with pytest.raises(ValueError, match="horizon"):
        solve(decay(), AdaptiveRefinement(alg, coarse=Mesh.from_grid([0.0, 1.0], 3)))


def test_training_problem_rounds_are_warm_started():
    """Refined rounds start from the previous weights and states, so they need few iterations."""
    system = problems.get("vdp")
    data = system.generate(seed=0).train
    model = NeuralODE([MLP((2, 5, 5, 1), "sigmoid") for _ in range(2)])
    problem = TrainingProblem(model, data, regularization=1e-4, initial_state=system.x0)
    alg = RadauIIA(ipopt=IpoptOptions(tol=1e-7, max_iter=200, print_level=0))
    res = solve(problem, AdaptiveRefinement(alg, tol=1e-4, coarse=10), seed=0).record(
        AdaptiveRefinement
    )
    assert res.converged and len(res.rounds) >= 2
    assert res.solution.status == SolverStatus.SUCCESS
    assert res.rounds[0].iterations > 20
    assert all(r.iterations <= 10 for r in res.rounds[1:])
    assert res.iterations == sum(r.iterations for r in res.rounds)
    assert "| round |" in res.table()


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"tol": 0.0}, ValueError, "tol"),
        ({"max_rounds": -1}, ValueError, "max_rounds"),
        ({"rule": "h"}, TypeError, "RefinementRule"),
        ({"coarse": 0}, ValueError, "coarse"),
    ],
)
def test_adaptive_refinement_argument_errors(kwargs, error, match):
    with pytest.raises(error, match=match):
        solve(decay(), AdaptiveRefinement(RadauIIA(4, 2, ipopt=QUIET), **kwargs))


def test_adaptive_refinement_rejects_other_problems_and_algorithms():
    with pytest.raises(TypeError, match="solves a DynamicOptimizationProblem or TrainingProblem"):
        solve(object(), AdaptiveRefinement())
    with pytest.raises(TypeError, match="RadauIIA"):
        AdaptiveRefinement("radau")


def test_each_trajectory_mesh_is_refined_by_its_own_estimates():
    """Two trajectories of the front problem: on [0, 1] through the front, on [2, 3] after it
    (where the solution is smooth); only the first needs fine intervals."""
    from collocnode.transcription._problem import Segment

    g0 = np.tanh(-STEEP / 2)
    dop = front().remake(
        segments=(Segment((0.0, 1.0), x0=[g0], x_guess=[0.0]), Segment((2.0, 3.0), x0=[1.0]))
    )
    res = solve(dop, AdaptiveRefinement(RadauIIA(4, 3, ipopt=QUIET), tol=1e-6)).record(
        AdaptiveRefinement
    )
    assert res.converged
    first, second = res.meshes
    assert (first.t0, second.t0) == (0.0, 2.0)
    assert first.n_intervals > 3 * second.n_intervals
    assert res.errors.shape == (first.n_intervals + second.n_intervals,)
    assert res.errors.max() <= 1e-6
    assert res.rounds[-1].intervals == first.n_intervals + second.n_intervals
    assert front_error(res.solution) < 2.0 * 5 * 1e-6
    tt = np.linspace(2.0, 3.0, 101)
    exact = np.tanh(STEEP * (tt - 0.5))  # x(2) = 1 ~ g(2): the solution stays on g
    np.testing.assert_allclose(res.solution.states(tt, 1)[:, 0], exact, atol=1e-5)


def test_estimate_takes_dynamics_written_as_a_list():
    # the transcription accepts a list of expressions; so does the error estimate
    as_list = DynamicOptimizationProblem(
        dynamics=lambda x, p, u, t: [x[1], -x[0]],
        n_states=2,
        n_params=0,
        tspan=(0.0, 10.0),
        x0=[1.0, 0.0],
    )
    as_column = DynamicOptimizationProblem(
        dynamics=lambda x, p, u, t: ca.vertcat(x[1], -x[0]),
        n_states=2,
        n_params=0,
        tspan=(0.0, 10.0),
        x0=[1.0, 0.0],
    )
    quiet = IpoptOptions(print_level=0)
    errors = [interval_errors(solve(d, RadauIIA(8, 3, ipopt=quiet))) for d in (as_list, as_column)]
    np.testing.assert_array_equal(errors[0], errors[1])
    assert errors[0].shape == (8,) and np.all(errors[0] > 0)
