"""The consistency check of trained models and refinement until consistent.

The failure case of the issue: a two-state hybrid model (the SciML tutorial's Lotka-Volterra
universal differential equation: known linear growth and decay, one MLP for the unknown
interaction) fitted to 21 noisy samples with a 40 x 3 mesh and λ = 1e-5. IPOPT reports success,
the collocation trajectory stays within the noise of the truth, and the learned ODE re-simulated
from the same initial state leaves it (``benchmarks/consistency.py`` measures it).
"""

from __future__ import annotations

import itertools
import json
import warnings
from dataclasses import replace

import casadi as ca
import numpy as np
import pytest
from scipy.integrate import solve_ivp

from collocnode import (
    DynamicOptimizationProblem,
    HybridModel,
    IpoptOptions,
    NeuralODE,
    Parameter,
    RadauIIA,
    SolverStatus,
    TrainingProblem,
    TrainingSolution,
    Trajectory,
    problems,
    solve,
)
from collocnode.nn import MLP
from collocnode.strategies import UntilConsistent, UntilConsistentRecord
from collocnode.tools._io import write_json
from collocnode.training._consistency import (
    ConsistencyCheck,
    ConsistencyReport,
    InconsistentModelWarning,
    check_grid,
)
from collocnode.transcription import Mesh

QUIET = IpoptOptions(print_level=0, max_iter=1000)
ALPHA, BETA, GAMMA, DELTA = 1.3, 0.9, 0.8, 1.8


def lotka_volterra(t):
    x0 = np.array([0.44249296, 4.6280594])
    sol = solve_ivp(
        lambda _, x: [ALPHA * x[0] - BETA * x[0] * x[1], -GAMMA * x[1] + DELTA * x[0] * x[1]],
        (t[0], t[-1]),
        x0,
        t_eval=t,
        method="DOP853",
        rtol=1e-12,
        atol=1e-12,
    )
    return sol.y.T


def ude_problem(regularization=1e-5):
    """The issue's failure case: 21 samples on [0, 5], noise 5 % of each state's mean."""
    t = np.linspace(0.0, 5.0, 21)
    x = lotka_volterra(t)
    noisy = x + 0.05 * x.mean(axis=0) * np.random.default_rng(1).standard_normal(x.shape)

    def physics(x, u, t, blocks, params):
        interaction = blocks["interaction"](x)
        return ca.vertcat(ALPHA * x[0] + interaction[0], -GAMMA * x[1] + interaction[1])

    names = ("prey", "predator")
    model = HybridModel(2, {"interaction": MLP((2, 5, 5, 2), "tanh")}, physics, state_names=names)
    return TrainingProblem(
        model,
        Trajectory(t, noisy, state_names=names),
        regularization=regularization,
        initial_state="data",
    )


def oscillator(x0, t):
    """x' = y, y' = -x (exact)."""
    c, s = np.cos(t), np.sin(t)
    return np.column_stack([x0[0] * c + x0[1] * s, -x0[0] * s + x0[1] * c])


def oscillator_problem(starts=((1.0, 0.0),)):
    """A linear network that can represent the exact dynamics, one trajectory per start."""
    t = np.linspace(0.0, 2.0, 21)
    data = [Trajectory(t, oscillator(np.array(x0), t)) for x0 in starts]
    model = NeuralODE(MLP((2, 2), "identity"))
    return TrainingProblem(model, data if len(data) > 1 else data[0], initial_state="data")


@pytest.fixture(scope="module")
def failure():
    """The failure case solved as a new user would, with the warnings it raised."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sol = solve(ude_problem(), RadauIIA(40, 3, ipopt=QUIET), seed=1)
    return sol, [w for w in caught if issubclass(w.category, InconsistentModelWarning)]


# ---- the check flags the failure case ------------------------------------------------------------


def test_the_failure_case_is_flagged_inconsistent_and_keeps_ipopt_status(failure):
    sol, _ = failure
    assert sol.status == SolverStatus.SUCCESS
    report = sol.consistency
    assert isinstance(report, ConsistencyReport)
    assert not report.consistent
    # the collocation trajectory is within the noise of the truth, the re-simulation is not
    t = np.linspace(0.0, 5.0, 201)
    assert np.sqrt(np.mean((sol(t) - lotka_volterra(t)) ** 2)) < 0.1
    # far beyond the 0.05 tolerance: 1.9 of the data's spreads with the node maps on one
    # thread, 2.0 on two (the thread count and the order of the nodes' sums move the local
    # optimum IPOPT reaches: 6.4 and 12.8 with one flat sum per thread)
    assert report.largest > 20 * report.tol
    assert report.max_deviation.shape == (1, 2) and report.rms_deviation.shape == (1, 2)
    assert report.worst_state in ("prey", "predator")
    assert 0.0 < report.starts_at < 5.0
    # the deviation stays below the tolerance until it starts
    grid = check_grid(sol.solution.mesh)
    before = grid[grid < report.starts_at]
    sim = sol.simulate(before).x
    dev = np.abs(sim - sol(before)) / sol.state_spread()
    assert dev[:, report.worst[1]].max() <= report.tol


def test_the_failure_case_warns_with_the_deviation_the_state_and_where_it_starts(failure):
    sol, caught = failure
    assert len(caught) == 1
    message = str(caught[0].message)
    report = sol.consistency
    assert f"{report.largest:.3g}" in message
    assert repr(report.worst_state) in message
    assert f"from t = {report.starts_at:.4g}" in message
    assert caught[0].filename == __file__  # the warning points at the caller's solve()


def test_the_report_reaches_result_json_and_the_summary(failure, tmp_path):
    sol, _ = failure
    out = sol.to_dict()
    assert out["status"] == "success"
    c = out["consistency"]
    assert c["consistent"] is False
    assert c["worst_state"] == sol.consistency.worst_state
    assert c["max_deviation"][0] == list(sol.consistency.max_deviation[0])
    path = write_json(tmp_path / "result.json", out)
    assert json.loads(path.read_text())["consistency"]["starts_at"] == pytest.approx(
        sol.consistency.starts_at
    )
    assert sol.consistency.summary().startswith("INCONSISTENT")
    assert "consistency" in sol.summary().splitlines()[-1]


# ---- good fits pass ------------------------------------------------------------------------------


def test_a_van_der_pol_fit_at_a_small_mesh_is_consistent():
    system = problems.get("vdp")
    data = system.generate(noise=0.0, seed=0).train
    data = Trajectory(data.t[data.t <= 3.0], data.x[data.t <= 3.0])
    model = NeuralODE([MLP((2, 5, 5, 1), "sigmoid"), MLP((2, 5, 5, 1), "sigmoid")])
    prob = TrainingProblem(model, data, regularization=1e-4, initial_state="data")
    with warnings.catch_warnings():
        warnings.simplefilter("error", InconsistentModelWarning)
        sol = solve(prob, RadauIIA(30, 3, ipopt=QUIET), seed=0)
    assert sol.status == SolverStatus.SUCCESS
    assert sol.consistency.consistent
    assert sol.consistency.largest < 1e-2
    assert np.all(np.isnan(sol.consistency.exceeds_from))
    assert sol.consistency.starts_at is None
    assert sol.consistency.summary().startswith("consistent")


def test_an_exact_model_is_consistent_to_the_collocation_error():
    sol = solve(oscillator_problem(), RadauIIA(10, 3, ipopt=QUIET), seed=0)
    report = sol.consistency
    # what is left is the collocation error of 10 x 3 intervals (order 5)
    assert report.consistent and report.largest < 1e-4
    assert np.all(report.rms_deviation <= report.max_deviation)
    assert report.horizons == ((0.0, 2.0),)
    np.testing.assert_allclose(report.scales, sol.problem.trajectories[0].x.std(axis=0))


def test_check_grid_holds_every_node_and_the_midpoints():
    mesh = Mesh.equidistant(0.0, 1.0, 4, 3)
    grid = check_grid(mesh)
    assert grid.size == 2 * mesh.n_nodes - 1
    np.testing.assert_array_equal(grid[::2], mesh.node_times)
    assert np.all(np.diff(grid) > 0)


# ---- several trajectories ------------------------------------------------------------------------


def test_each_trajectory_has_its_own_deviations():
    sol = solve(oscillator_problem(((1.0, 0.0), (0.0, 1.5))), RadauIIA(10, 3, ipopt=QUIET), seed=0)
    assert sol.consistency.consistent
    assert sol.consistency.max_deviation.shape == (2, 2)
    # move trajectory 1's collocation states away from t = 1 on: its ODE no longer runs there
    inner = sol.solution
    t1 = inner.meshes[1].node_times
    moved = inner.segment_states[1] + np.where(t1[:, None] >= 1.0, 0.3, 0.0)
    broken = TrainingSolution(
        replace(inner, segment_states=[inner.segment_states[0], moved]), sol.problem
    )
    report = broken.check_consistency()
    assert not report.consistent
    assert report.max_deviation[0].max() < 1e-4  # trajectory 0 untouched
    assert report.worst_trajectory == 1
    assert np.all(np.isnan(report.exceeds_from[0]))
    assert report.starts_at == pytest.approx(1.0, abs=0.1)
    assert report.max_deviation[1].max() == pytest.approx(0.3 / sol.state_spread().min(), rel=0.5)
    assert "of trajectory 1" in report.describe()


# ---- a re-simulation that blows up ---------------------------------------------------------------


def quadratic_problem():
    """x' = a x² from x(0) = 1, data with a = 0.5 on [0, 1]: x = 1 / (1 - a t)."""
    t = np.linspace(0.0, 1.0, 11)
    model = HybridModel(
        1,
        {},
        lambda x, u, t, blocks, params: params["a"] * x**2,
        parameters={"a": Parameter(0.3, fit=True, lb=0.0, ub=5.0)},
    )
    data = Trajectory(t, (1.0 / (1.0 - 0.5 * t))[:, None])
    return TrainingProblem(model, data, initial_state="data")


def test_a_blow_up_is_an_infinite_deviation_from_where_it_blew_up():
    sol = solve(quadratic_problem(), RadauIIA(8, 3, ipopt=QUIET))
    assert sol.consistency.consistent
    assert sol.p[0] == pytest.approx(0.5, abs=1e-4)
    # a = 2 blows up at t = 1/2 inside the horizon
    fast = TrainingSolution(replace(sol.solution, p=np.array([2.0])), sol.problem)
    report = fast.check_consistency()
    assert not report.consistent
    assert np.isinf(report.largest) and np.isinf(report.rms_deviation[0, 0])
    # the last check time the integration reached: the grid is ~0.03 apart there
    grid = check_grid(sol.solution.mesh)
    assert report.failed_at[0] == grid[grid < 0.5][-1]
    assert report.starts_at < report.failed_at[0]  # it leaves the trajectory before it blows up
    assert f"fails at t = {report.failed_at[0]:.4g}" in report.describe()
    assert report.to_dict()["failed_at"] == [report.failed_at[0]]
    assert report.to_dict()["max_deviation"] == [[np.inf]]
    with pytest.warns(InconsistentModelWarning, match="re-simulated model fails at t = 0.4"):
        report.warn()


def test_non_finite_parameters_are_inconsistent_from_the_start():
    sol = solve(quadratic_problem(), RadauIIA(8, 3, ipopt=QUIET))
    nan = TrainingSolution(replace(sol.solution, p=np.array([np.nan])), sol.problem)
    report = nan.check_consistency()
    assert not report.consistent and report.failed_at[0] == 0.0 and report.starts_at == 0.0


# ---- turning it off, settings, bad input ---------------------------------------------------------


def test_check_false_skips_the_check(monkeypatch):
    def refuse(self, settings=None):
        raise AssertionError("the check ran")

    monkeypatch.setattr(TrainingSolution, "check_consistency", refuse)
    sol = solve(oscillator_problem(), RadauIIA(10, 3, ipopt=QUIET), seed=0, check=False)
    assert sol.success
    assert sol.consistency is None
    assert sol.to_dict()["consistency"] is None
    assert "consistency" not in sol.summary()


def test_a_consistency_check_sets_the_tolerance():
    with pytest.warns(InconsistentModelWarning, match="tolerance 1e-12"):
        sol = solve(
            oscillator_problem(),
            RadauIIA(2, 2, ipopt=QUIET),
            seed=0,
            check=ConsistencyCheck(tol=1e-12),
        )
    assert sol.consistency.tol == 1e-12
    assert not sol.consistency.consistent  # a 2 x 2 mesh is not exact to 1e-12


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"tol": 0.0}, ValueError, "tol"),
        ({"tol": "big"}, TypeError, "tol"),
        ({"method": "rk4"}, ValueError, "method"),
        ({"rtol": -1.0}, ValueError, "rtol"),
        ({"max_steps": 0}, ValueError, "max_steps"),
    ],
)
def test_bad_check_settings_give_one_clear_error(kwargs, error, match):
    with pytest.raises(error, match=match):
        ConsistencyCheck(**kwargs)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"inner": "radau"}, TypeError, "inner must be an algorithm object"),
        ({"max_rounds": -1}, ValueError, "max_rounds"),
        ({"fraction": 1.5}, ValueError, "fraction"),
        ({"fraction": 0.0}, ValueError, "fraction"),
        ({"restart": "sometimes"}, ValueError, "restart"),
        ({"rule": "h"}, TypeError, "rule"),
    ],
)
def test_bad_refinement_settings_give_one_clear_error(kwargs, error, match):
    with pytest.raises(error, match=match):
        UntilConsistent(**kwargs)


def test_bad_check_arguments_of_solve_give_one_clear_error():
    prob = oscillator_problem()
    with pytest.raises(TypeError, match="check must be True, False or a ConsistencyCheck"):
        solve(prob, RadauIIA(2, 2), check="yes")
    with pytest.raises(ValueError, match="check=False turns it off"):
        solve(prob, UntilConsistent(RadauIIA(2, 2)), check=False)
    dop = DynamicOptimizationProblem(
        dynamics=lambda x, p, u, t: -x, n_states=1, n_params=0, tspan=(0.0, 1.0), x0=[1.0]
    )
    with pytest.raises(TypeError, match="UntilConsistent solves a TrainingProblem"):
        solve(dop, UntilConsistent(RadauIIA(2, 2)))
    with pytest.raises(TypeError, match="needs a TrainingProblem"):
        solve(dop, RadauIIA(2, 2), check=ConsistencyCheck())


# ---- refinement until consistent -----------------------------------------------------------------


def unstable_problem():
    """x' = 3 x on [0, 2] with nothing to fit: the collocation error of a coarse mesh grows
    like e^{3t}, and refinement shrinks it."""
    t = np.linspace(0.0, 2.0, 11)
    model = HybridModel(
        1, {}, lambda x, u, t, blocks, params: params["k"] * x, parameters={"k": Parameter(3.0)}
    )
    return TrainingProblem(model, Trajectory(t, np.exp(3.0 * t)[:, None]), initial_state="data")


def test_refinement_makes_a_coarse_collocation_consistent():
    with pytest.warns(InconsistentModelWarning):
        coarse = solve(unstable_problem(), RadauIIA(2, 2, ipopt=QUIET))
    assert not coarse.consistency.consistent
    with warnings.catch_warnings():
        warnings.simplefilter("error", InconsistentModelWarning)
        res = solve(
            unstable_problem(), UntilConsistent(RadauIIA(2, 2, ipopt=QUIET), max_rounds=6)
        ).record(UntilConsistent)
    assert isinstance(res, UntilConsistentRecord)
    assert res.converged and res.consistency.consistent
    assert res.rounds[0].intervals == 2 and not res.rounds[0].consistent
    assert res.rounds[-1].consistent and res.rounds[-1].refined == 0
    assert all(r.start == "warm" for r in res.rounds[1:])  # the deviation shrinks every round
    deviations = [r.largest_deviation for r in res.rounds]
    assert all(b < 0.5 * a for a, b in itertools.pairwise(deviations))
    assert res.mesh.n_intervals == res.rounds[-1].intervals > 2
    assert "| round |" in res.table()


def test_a_consistent_first_solve_needs_no_refinement():
    res = solve(oscillator_problem(), UntilConsistent(RadauIIA(10, 3, ipopt=QUIET)), seed=0).record(
        UntilConsistent
    )
    assert res.converged and len(res.rounds) == 1
    assert res.rounds[0].start == "guess" and res.rounds[0].refined == 0
    assert res.iterations == res.solution.iterations


def test_the_refinement_budget_ends_the_loop_inconsistent():
    with pytest.warns(InconsistentModelWarning):
        res = solve(
            unstable_problem(), UntilConsistent(RadauIIA(2, 2, ipopt=QUIET), max_rounds=1)
        ).record(UntilConsistent)
    assert len(res.rounds) == 2 and not res.converged


@pytest.mark.slow
def test_refinement_until_consistent_repairs_the_failure_case():
    # measured (benchmarks/consistency.py refine): 40 x 3 deviates by ~93 spreads; the warm
    # re-solve on the refined mesh keeps the unstable model (it stalls), the restart from the
    # problem's guess on that mesh leaves it, and the next warm round is consistent
    with warnings.catch_warnings():
        warnings.simplefilter("error", InconsistentModelWarning)
        res = solve(ude_problem(), UntilConsistent(RadauIIA(40, 3, ipopt=QUIET)), seed=1).record(
            UntilConsistent
        )
    assert res.converged
    first, last = res.rounds[0], res.rounds[-1]
    assert first.intervals == 40 and not first.consistent and first.largest_deviation > 10
    assert last.consistent and last.status == "success"
    assert any(r.restarted for r in res.rounds)
    assert res.mesh.n_intervals == last.intervals > 40
    t = np.linspace(0.0, 5.0, 201)
    assert np.sqrt(np.mean((res.solution.simulate(t).x - lotka_volterra(t)) ** 2)) < 0.1


def test_a_callback_stop_ends_the_refinement_with_that_solve():
    iterations = []

    def stop_after_two(state):
        iterations.append(state.iteration)
        return state.iteration >= 2

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InconsistentModelWarning)
        res = solve(
            oscillator_problem(),
            UntilConsistent(RadauIIA(2, 2, ipopt=QUIET)),
            seed=0,
            callback=stop_after_two,
        ).record(UntilConsistent)
    assert res.solution.status == SolverStatus.STOPPED
    assert len(res.rounds) == 1 and not res.converged
    assert res.solution.consistency is not None  # the kept iterate is checked all the same
    assert max(iterations) == 2


# ---- the integrator fits the model; the time past the data ---------------------------------------


def robertson_problem():
    """Robertson's stiff kinetics (rate constants 0.04, 3e7, 1e4) with the first rate fitted,
    exact data on a log-spaced grid of [0, 40], and a log-spaced mesh."""
    k2, k3 = 3e7, 1e4

    def rhs(x, u, t, blocks, params):
        k1 = params["k1"]
        return ca.vertcat(
            -k1 * x[0] + k3 * x[1] * x[2],
            k1 * x[0] - k3 * x[1] * x[2] - k2 * x[1] ** 2,
            k2 * x[1] ** 2,
        )

    def truth(x, t):
        return [
            -0.04 * x[0] + k3 * x[1] * x[2],
            0.04 * x[0] - k3 * x[1] * x[2] - k2 * x[1] ** 2,
            k2 * x[1] ** 2,
        ]

    t = np.r_[0.0, np.geomspace(1e-5, 40.0, 60)]
    ref = solve_ivp(
        lambda tt, x: truth(x, tt),
        (0, 40),
        [1, 0, 0],
        t_eval=t,
        method="Radau",
        rtol=1e-12,
        atol=1e-14,
    )
    model = HybridModel(
        3,
        {},
        rhs,
        parameters={"k1": Parameter(0.02, fit=True, lb=0.0, ub=1.0)},
        state_names=("A", "B", "C"),
    )
    names = ("A", "B", "C")
    problem = TrainingProblem(
        model, Trajectory(t, ref.y.T, state_names=names), initial_state="data"
    )
    grid = np.r_[0.0, np.geomspace(1e-5, 40.0, 80)]
    return problem, Mesh.from_grid(grid, np.full(grid.size - 1, 3))


def test_a_good_stiff_model_is_consistent_and_the_explicit_check_says_what_helps():
    problem, mesh = robertson_problem()
    sol = solve(problem, RadauIIA(mesh=mesh, ipopt=QUIET))
    assert sol.status.ok and sol.p[0] == pytest.approx(0.04, rel=1e-3)
    assert sol.consistency.consistent, sol.consistency.summary()
    assert sol.consistency.method == "cvodes"
    explicit = sol.check_consistency(ConsistencyCheck(method="DOP853", max_steps=2000))
    assert not explicit.consistent and "ran out of steps" in explicit.advice()
    assert "method='Radau'" in explicit.advice()


def test_the_compiled_check_gives_the_scipy_checks_verdict_and_deviations(failure):
    sol, _ = failure
    # the failure case's re-simulation leaves the data by hundreds of spreads, which amplifies
    # the integrators' own error (rtol 1e-8 of each state's spread): 0.74 % apart with the
    # iterate IPOPT reaches on one core; the oscillator stays near its data
    oscillator = solve(oscillator_problem(), RadauIIA(10, 3, ipopt=QUIET))
    for trained, rtol in ((sol, 2e-2), (oscillator, 1e-3)):
        compiled = trained.check_consistency(ConsistencyCheck(method="cvodes", margin=0))
        scipy = trained.check_consistency(ConsistencyCheck(method="DOP853", margin=0))
        assert compiled.consistent == scipy.consistent
        np.testing.assert_allclose(
            compiled.max_deviation, scipy.max_deviation, rtol=rtol, atol=1e-6
        )


def test_a_model_that_blows_up_just_past_the_data_is_not_consistent():
    """x' = a x² with a = 0.5 blows up at t = 2; data on [0, 1.9]: fitted exactly and followed
    on the data, it diverges within the 10 % margin."""
    t = np.linspace(0.0, 1.9, 40)
    problem = replace(quadratic_problem(), data=Trajectory(t, (1.0 / (1.0 - 0.5 * t))[:, None]))
    with pytest.warns(InconsistentModelWarning, match="past the data"):
        sol = solve(problem, RadauIIA(30, 3, ipopt=QUIET))
    report = sol.consistency
    assert sol.p[0] == pytest.approx(0.5, abs=1e-4)
    assert report.within_horizon and not report.consistent
    assert report.beyond[0].failed_at == pytest.approx(2.0, abs=0.02)
    assert "regularization" in report.advice()
    assert report.to_dict()["beyond"][0]["diverged"] is True
    # without a margin the verdict is the horizon's alone
    assert sol.check_consistency(ConsistencyCheck(margin=0.0)).consistent


def test_the_margin_is_bounded_or_unverified_and_says_which():
    sol = solve(oscillator_problem(), RadauIIA(10, 3, ipopt=QUIET))
    assert sol.consistency.consistent
    assert sol.consistency.beyond[0].until == pytest.approx(2.2)
    assert "bounded past the data up to t = 2.2" in sol.consistency.summary()
    forced = HybridModel(1, {}, lambda x, u, t, b, p: -x[0] + u[0], n_inputs=1, parameters={})
    t = np.linspace(0.0, 1.0, 11)
    data = Trajectory(t, np.exp(-t)[:, None], u=np.zeros((t.size, 1)))
    driven = solve(TrainingProblem(forced, data, initial_state="data"), RadauIIA(5, 3, ipopt=QUIET))
    assert driven.consistency.beyond[0].until is None
    assert "samples that end with the data" in driven.consistency.beyond_summary()
