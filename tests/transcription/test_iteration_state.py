"""The iteration callback of a collocation solve: the same states on both IPOPT backends, a stop
that keeps its iterate, a raising callback that keeps the last iterate, the start and end hooks,
and the rounds of an adaptive refinement."""

from __future__ import annotations

import time

import casadi as ca
import numpy as np
import pytest
from scipy.integrate import solve_ivp

from collocnode import (
    DynamicOptimizationProblem,
    Inputs,
    IpoptOptions,
    RadauIIA,
    SolverStatus,
    solve,
)
from collocnode.strategies import AdaptiveRefinement
from collocnode.transcription._ipopt.backends import BACKENDS
from collocnode.transcription._ipopt.iteration import RunInfo

T = np.linspace(0.0, 6.0, 61)


def van_der_pol_fit() -> DynamicOptimizationProblem:
    """Fit μ and the stiffness k of x'' = μ (1 − x²) x' − k x to a noise-free trajectory
    (μ = k = 1) from the guess μ = 0.1, k = 3: about 28 IPOPT iterations."""
    ref = solve_ivp(
        lambda t, x: [x[1], (1 - x[0] ** 2) * x[1] - x[0]],
        (0.0, 6.0),
        [2.0, 0.0],
        t_eval=T,
        rtol=1e-10,
        atol=1e-10,
    )
    return DynamicOptimizationProblem(
        dynamics=lambda x, p, u, t: ca.vertcat(x[1], p[0] * (1 - x[0] ** 2) * x[1] - p[1] * x[0]),
        n_states=2,
        n_params=2,
        tspan=(0.0, 6.0),
        lagrange=lambda x, p, u, t: ca.sumsqr(x - u),
        inputs=Inputs.from_samples(T, ref.y.T),
        x_guess=[2.0, 0.0],
        p_guess=[0.1, 3.0],
        p_lb=[0.0, 0.0],
        p_ub=[10.0, 10.0],
    )


def alg(backend: str = "casadi", **ipopt) -> RadauIIA:
    return RadauIIA(30, 3, ipopt=IpoptOptions(print_level=0, backend=backend, **ipopt))


class StopAt:
    """Stops at ``at``; keeps what the state said at every iteration."""

    def __init__(self, at: int) -> None:
        self.at = at
        self.seen: list[tuple[int, float, float, float]] = []
        self.params: np.ndarray | None = None
        self.states: np.ndarray | None = None

    def __call__(self, state) -> bool:
        self.seen.append((state.iteration, state.objective, state.inf_pr, state.inf_du))
        if state.iteration == self.at:
            self.params, self.states = state.params(), state.states()
            return True
        return False


def test_a_stop_at_iteration_3_keeps_that_iterate_on_both_backends_alike():
    dop = van_der_pol_fit()
    sols, stops = {}, {}
    for backend in BACKENDS:
        stops[backend] = stop = StopAt(3)
        sols[backend] = sol = solve(dop, alg(backend), callback=stop)
        assert sol.status == SolverStatus.STOPPED and not sol.status.ok
        assert sol.status.value == "stopped_by_callback"
        assert sol.iterations == 3 and sol.message == "stopped by the callback at iteration 3"
        assert [s[0] for s in stop.seen] == [0, 1, 2, 3]
        # the state's iterate is the solution's, to the bit
        np.testing.assert_array_equal(stop.params, sol.p)
        np.testing.assert_array_equal(stop.states, sol.x_nodes)
        # the infeasibilities the callback read are IPOPT's, as the history records them
        np.testing.assert_allclose([s[2:] for s in stop.seen], [h[3:] for h in sol.history])
    a, b = sols["casadi"], sols["cyipopt"]
    np.testing.assert_allclose(a.p, b.p, rtol=1e-9)
    np.testing.assert_allclose(a.x_nodes, b.x_nodes, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(stops["casadi"].seen, stops["cyipopt"].seen, rtol=1e-7)
    assert a.p[0] != pytest.approx(1.0, abs=1e-3)  # stopped well before the optimum


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_raising_callback_ends_with_its_error_and_a_finite_iterate(backend):
    def broken(state):
        if state.iteration == 2:
            raise ZeroDivisionError("no validation data")

    sol = solve(van_der_pol_fit(), alg(backend), callback=broken)
    assert sol.status == SolverStatus.CALLBACK_ERROR and not sol.status.ok
    assert sol.message == (
        "the callback raised ZeroDivisionError at iteration 2: no validation data"
    )
    assert sol.iterations == 2
    assert np.all(np.isfinite(sol.p)) and np.all(np.isfinite(sol.x_nodes))


def test_a_callback_that_never_stops_changes_nothing():
    dop = van_der_pol_fit()
    plain = solve(dop, alg())
    watched = solve(dop, alg(), callback=lambda state: None)
    assert watched.status == plain.status == SolverStatus.SUCCESS
    assert watched.iterations == plain.iterations > 10
    np.testing.assert_array_equal(watched.p, plain.p)
    assert "user_callback" in watched.timings and "user_callback" not in plain.timings


def test_only_true_stops_the_solve():
    sol = solve(van_der_pol_fit(), alg(), callback=lambda state: "stop")
    assert sol.status == SolverStatus.SUCCESS
    sol = solve(van_der_pol_fit(), alg(), callback=lambda state: np.bool_(state.iteration == 1))
    assert sol.status == SolverStatus.STOPPED and sol.iterations == 1


def test_the_reason_of_a_stop_becomes_the_message():
    class Reasoned:
        reason = ""

        def __call__(self, state):
            if state.iteration == 4:
                self.reason = "enough at 4"
                return True

    sol = solve(van_der_pol_fit(), alg(), callback=Reasoned())
    assert sol.status == SolverStatus.STOPPED and sol.message == "enough at 4"


def test_a_state_read_after_its_callback_returned_is_refused():
    kept = []
    solve(van_der_pol_fit(), alg(max_iter=2), callback=kept.append)
    assert [s.iteration for s in kept] == [0, 1, 2]
    with pytest.raises(RuntimeError, match="read after its callback returned"):
        kept[0].params()
    with pytest.raises(TypeError, match="predict needs a TrainingProblem"):
        kept[0].predict(T, [2.0, 0.0])


def test_callback_time_is_apart_from_ipopt_time_and_from_the_elapsed_time():
    elapsed = []

    def slow(state):
        elapsed.append(state.elapsed_s)
        time.sleep(0.2)

    sol = solve(van_der_pol_fit(), alg(max_iter=4), callback=slow)
    assert sol.timings["user_callback"] >= 5 * 0.2
    assert sol.timings["ipopt"] < sol.timings["total"] - 5 * 0.2
    # the elapsed time a state reports leaves out the callback's own sleeps (0.8 s before the
    # last call)
    assert elapsed[-1] < 0.6


class Hooks:
    def __init__(self, fail_on_start: bool = False) -> None:
        self.fail_on_start = fail_on_start
        self.events: list[object] = []

    def on_start(self, info: RunInfo) -> None:
        self.events.append(info)
        if self.fail_on_start:
            raise ValueError("window = 500 is longer than the iteration limit")

    def on_end(self) -> None:
        self.events.append("end")

    def __call__(self, state) -> bool:
        return state.iteration == 1


def test_on_start_sees_the_limits_and_on_end_runs_after_the_solve():
    hooks = Hooks()
    sol = solve(van_der_pol_fit(), alg(max_iter=77), callback=hooks)
    assert sol.status == SolverStatus.STOPPED
    assert hooks.events == [RunInfo(max_iterations=77, n_states=2, n_params=2), "end"]


def test_an_error_in_on_start_propagates_before_anything_is_built():
    hooks = Hooks(fail_on_start=True)
    with pytest.raises(ValueError, match="window = 500"):
        solve(van_der_pol_fit(), alg(), callback=hooks)
    assert len(hooks.events) == 1  # no on_end: the solve never started


def test_a_callback_must_be_callable():
    with pytest.raises(TypeError, match="callback must be callable, got 3"):
        solve(van_der_pol_fit(), alg(), callback=3)


def test_the_adaptive_loop_runs_the_callback_in_every_round_and_ends_on_a_stop():
    starts = []

    class Counting:
        def on_start(self, info):
            starts.append(info.max_iterations)

        def __call__(self, state):
            return None

    refinement = AdaptiveRefinement(alg(), tol=1e-9, max_rounds=2, coarse=10)
    result = solve(van_der_pol_fit(), refinement, callback=Counting()).record(AdaptiveRefinement)
    assert len(starts) == len(result.rounds) >= 2

    stopped = solve(van_der_pol_fit(), refinement, callback=lambda state: state.iteration == 2)
    stopped = stopped.record(AdaptiveRefinement)
    assert len(stopped.rounds) == 1 and not stopped.converged
    assert stopped.solution.status == SolverStatus.STOPPED
    assert stopped.rounds[0].status == "stopped_by_callback"
