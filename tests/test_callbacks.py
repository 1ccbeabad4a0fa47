"""The ready-made callbacks of collocnode.training._callbacks on training solves (and, for early
stopping, on a PyTorch trainer with the same object): the training state's rollout, early stopping
that keeps the best parameters, objective stagnation, the progress bar, several callbacks at once,
and bad input."""

from __future__ import annotations

import io
import math
import warnings

import casadi as ca
import numpy as np
import pytest

from collocnode import (
    CallbackList,
    DynamicOptimizationProblem,
    EarlyStopping,
    IpoptOptions,
    NeuralODE,
    ProgressBar,
    RadauIIA,
    SolverStatus,
    StopOnStagnation,
    TrainingProblem,
    Trajectory,
    problems,
    simulate,
    solve,
)
from collocnode.nn import MLP
from collocnode.training._callbacks import RunInfo, State, TrainingIterationState

# A model that does not pass the consistency check of a training solve only warns: these tests
# are about the iterations, not about the final model.
pytestmark = pytest.mark.filterwarnings("ignore:the trained model is inconsistent")

QUIET = IpoptOptions(print_level=0)
VDP = problems.get("vdp")


def vdp_problem(n_intervals_data: int | None = None) -> TrainingProblem:
    """The paper's Van der Pol neural ODE (two 2-5-5-1 sigmoid nets) on noisy data over [0, 7]."""
    data = VDP.generate(noise=0.05, seed=0).train
    model = NeuralODE([MLP((2, 5, 5, 1), "sigmoid") for _ in range(2)])
    return TrainingProblem(model, data, regularization=1e-4, initial_state=VDP.x0)


def truth(t_end: float = 10.0) -> Trajectory:
    """The noise-free Van der Pol trajectory from x(0) = (2, 0) on [0, t_end]: a validation
    trajectory that also covers the extrapolation beyond the training window [0, 7]."""
    full = VDP.generate(noise=0.0, seed=0).full
    keep = full.t <= t_end
    return Trajectory(full.t[keep], full.x[keep])


def overfitting_problem() -> TrainingProblem:
    """15 samples with noise σ = 0.2 on [0, 7], one 2-5-5-2 tanh net and no regularization: the
    fit follows the noise, and the re-simulated model's error on the noise-free trajectory first
    falls (near iteration 28), then rises."""
    t = np.linspace(0.0, 7.0, 15)
    clean = truth()
    x = np.column_stack([np.interp(t, clean.t, clean.x[:, k]) for k in range(2)])
    noisy = x + 0.2 * np.random.default_rng(1).standard_normal(x.shape)
    model = NeuralODE([MLP((2, 5, 5, 2), "tanh")])
    return TrainingProblem(
        model, Trajectory(t, noisy), initial_state=VDP.x0, interpolation="linear"
    )


def validation_mse(model, p: np.ndarray, val: Trajectory) -> float:
    pred = simulate(model, p, val.t, val.x[0], rtol=1e-6, atol=1e-6).x
    return float(np.mean((pred - val.x) ** 2))


# ---- the training solve's state ---------------------------------------------------------------
def test_the_training_state_simulates_the_model_at_the_current_parameters():
    problem = vdp_problem()
    seen = {}

    def look(state):
        assert isinstance(state, TrainingIterationState) and isinstance(state, State)
        if state.iteration == 5:
            t = np.linspace(0.0, 3.0, 31)
            seen["p"], seen["blocks"] = state.params(), state.params_by_block()
            seen["pred"] = state.predict(t, VDP.x0)
            seen["ref"] = simulate(problem.model, seen["p"], t, VDP.x0, rtol=1e-6, atol=1e-6).x
            seen["nodes"] = (state.node_times(), state.states())
            return True
        return None

    sol = solve(problem, RadauIIA(30, 3, ipopt=QUIET), seed=0, callback=look)
    assert sol.status == SolverStatus.STOPPED and sol.iterations == 5
    np.testing.assert_array_equal(seen["p"], sol.p)  # the stopping iterate is the solution's
    np.testing.assert_allclose(seen["pred"], seen["ref"], rtol=1e-12, atol=1e-12)
    assert set(seen["blocks"]) == set(sol.params)
    np.testing.assert_array_equal(seen["nodes"][0], sol.t_nodes)
    np.testing.assert_array_equal(seen["nodes"][1], sol.x_nodes)


# ---- early stopping -----------------------------------------------------------------------------
def test_early_stopping_keeps_the_best_parameters_when_the_validation_error_rises():
    problem, val = overfitting_problem(), truth()
    stop = EarlyStopping(val, every=2, patience=4)
    sol = solve(
        problem,
        RadauIIA(30, 3, ipopt=IpoptOptions(print_level=0, max_iter=200)),
        seed=0,
        callback=stop,
    )
    assert sol.status == SolverStatus.STOPPED
    assert sol.message == stop.reason and stop.reason.startswith(
        f"early stopping: validation MSE {stop.best_error:.3g} at iteration {stop.best_iteration} "
        f"did not improve in 4 evaluations (every 2 iterations)"
    )
    iterations = [i for i, _ in stop.history]
    assert iterations == list(range(0, sol.iterations + 1, 2))
    # the validation error fell, then rose for the last 4 evaluations: the solve stopped there
    first, best = stop.history[0][1], stop.best_error
    assert best < 0.1 * first
    assert all(err > best for _, err in stop.history[-4:])
    assert stop.best_iteration == sol.iterations - 8
    # the kept parameters are those of the best evaluation, not the final iterate
    assert validation_mse(problem.model, stop.best_params, val) == pytest.approx(best, rel=1e-9)
    assert validation_mse(problem.model, sol.p, val) > best
    assert not np.array_equal(stop.best_params, sol.p)


def test_one_early_stopping_object_serves_a_trainer_and_a_collocation_solve():
    pytest.importorskip("torch")
    from collocnode.compare.methods.registry import make_trainer

    val = truth(7.0)
    stop = EarlyStopping(val, every=1, patience=100)
    trainer = make_trainer("fnode", epochs=3, hidden=(8, 8), batch_size=16, device="cpu")
    result = trainer.fit(VDP, VDP.generate(n_steps=40, n_train=40).train, callback=stop)
    assert result.status == "success"
    assert [i for i, _ in stop.history] == [1, 2, 3]
    assert stop.best_params.shape == (trainer.n_params,)
    pred = trainer.predict(val.t, val.x[0])
    if stop.best_iteration == 3:  # the trainer kept its last epoch: the same error
        assert stop.best_error == pytest.approx(float(np.mean((pred - val.x) ** 2)), rel=1e-9)

    problem = vdp_problem()
    sol = solve(
        problem,
        RadauIIA(30, 3, ipopt=IpoptOptions(print_level=0, max_iter=6)),
        seed=0,
        callback=stop,
    )
    assert sol.status == SolverStatus.ITERATION_LIMIT  # patience 100: no stop
    assert [i for i, _ in stop.history] == list(range(7))  # the record restarted
    assert stop.best_params.shape == (problem.model.n_params,)
    assert all(math.isfinite(e) for _, e in stop.history)


def test_early_stopping_rolls_out_an_lstm_from_the_validation_data_it_starts_from():
    pytest.importorskip("torch")
    from collocnode.compare.methods.registry import make_trainer

    val = truth(7.0)
    stop = EarlyStopping(val, every=1, patience=100)
    trainer = make_trainer("lstm", epochs=2, hidden=(8,), window=4, start="data", device="cpu")
    assert trainer.fit(VDP, VDP.generate(n_steps=40, n_train=40).train, callback=stop).status == (
        "success"
    )
    assert [i for i, _ in stop.history] == [1, 2]
    pred = trainer.predict(val.t, val.x[:4])
    if stop.best_iteration == 2:  # the trainer kept its last epoch: the same error
        assert stop.best_error == pytest.approx(float(np.mean((pred - val.x) ** 2)), rel=1e-9)


def test_early_stopping_refuses_a_validation_trajectory_with_another_state_count():
    t = np.linspace(0.0, 1.0, 11)
    three = Trajectory(t, np.zeros((11, 3)))
    message = r"validation has 3 states \(validation.x has shape \(11, 3\)\), the model has 2"
    with pytest.raises(ValueError, match=message):
        solve(vdp_problem(), RadauIIA(30, 3, ipopt=QUIET), seed=0, callback=EarlyStopping(three))
    pytest.importorskip("torch")
    from collocnode.compare.methods.registry import make_trainer

    trainer = make_trainer("fnode", epochs=2, hidden=(8, 8), device="cpu")
    with pytest.raises(ValueError, match=message):
        trainer.fit(VDP, VDP.generate(n_steps=20, n_train=20).train, callback=EarlyStopping(three))


def test_early_stopping_needs_a_model_and_checks_its_settings():
    val = truth(1.0)
    dop = DynamicOptimizationProblem(
        dynamics=lambda x, p, u, t: ca.vertcat(x[1], -x[0]),
        n_states=2,
        n_params=0,
        tspan=(0.0, 1.0),
        lagrange=lambda x, p, u, t: ca.sumsqr(x),
        x0=[2.0, 0.0],
        x_guess=[2.0, 0.0],
    )
    with pytest.raises(TypeError, match="EarlyStopping needs a model to simulate"):
        solve(dop, RadauIIA(5, 3, ipopt=QUIET), callback=EarlyStopping(val))
    with pytest.raises(TypeError, match="validation must be a Trajectory, got ndarray"):
        EarlyStopping(val.x)
    with pytest.raises(ValueError, match="validation must hold at least 2 samples"):
        EarlyStopping(Trajectory([0.0], [[2.0, 0.0]]))
    with pytest.raises(ValueError, match="every must be a positive integer, got 0"):
        EarlyStopping(val, every=0)
    with pytest.raises(ValueError, match="min_delta must be a non-negative"):
        EarlyStopping(val, min_delta=-1.0)


# ---- objective stagnation -----------------------------------------------------------------------
def test_stagnation_stops_a_long_solve_before_ipopt_s_tolerance_is_met():
    # IPOPT's own L-BFGS approximation converges linearly: unstopped this solve takes more than
    # 600 iterations, most of them moving the objective in its fifth digit
    alg = RadauIIA(
        15, 3, hessian="limited-memory", ipopt=IpoptOptions(print_level=0, max_iter=1000)
    )
    sol = solve(vdp_problem(), alg, seed=0, callback=StopOnStagnation(rtol=1e-4, window=10))
    assert sol.status == SolverStatus.STOPPED and not sol.status.ok
    assert sol.message == "objective stagnated: relative change < 1e-04 over 10 iterations"
    assert 10 < sol.iterations < 500
    last = np.array([h[2] for h in sol.history[-11:]])
    assert last.max() - last.min() <= 1e-4 * abs(last[-1])
    # IPOPT's tolerance was not met at the stopping iterate: its dual infeasibility is above tol
    _, it, objective, inf_pr, inf_du = sol.history[-1]
    assert it == sol.iterations and objective == sol.objective
    assert inf_pr <= 1e-4 and inf_du > IpoptOptions().tol


def test_a_stagnation_window_longer_than_the_iteration_limit_is_refused_before_the_build():
    alg = RadauIIA(30, 3, ipopt=IpoptOptions(print_level=0, max_iter=20))
    with pytest.raises(
        ValueError,
        match=r"window = 50 is longer than the iteration limit "
        r"\(max_iter = 20\)",
    ):
        solve(vdp_problem(), alg, seed=0, callback=StopOnStagnation(window=50))


class Fake:
    """A state with the shared protocol only (and an optional primal infeasibility)."""

    def __init__(self, iteration, objective, inf_pr=None):
        self.iteration, self.objective, self.elapsed_s = iteration, objective, 0.0
        if inf_pr is not None:
            self.inf_pr, self.inf_du = inf_pr, 0.0

    def params(self):
        return np.zeros(1)

    def predict(self, t, x0, u=None):
        return np.zeros((len(t), 1))


def test_the_stagnation_rule_counts_a_window_of_values_and_waits_for_feasibility():
    rule = StopOnStagnation(rtol=1e-3, window=3)
    rule.on_start(RunInfo(100, 1, 1))
    values = [10.0, 5.0, 1.0, 1.0004, 1.0002, 1.0001]
    stops = [rule(Fake(k, f)) for k, f in enumerate(values)]
    assert stops == [False, False, False, False, False, True]  # 4 values within 1e-3 at k = 5
    rule.on_start(RunInfo(100, 1, 1))
    assert not any(rule(Fake(k, 1.0, inf_pr=1.0)) for k in range(10))  # infeasible: no stop
    assert rule(Fake(10, 1.0, inf_pr=1e-6))
    rule.on_start(RunInfo(100, 1, 1, unit="epoch"))
    stops = [rule(Fake(k, f)) for k, f in enumerate([1.0, 1.0, math.nan, 1.0, 1.0, 1.0, 1.0])]
    assert stops == [False] * 6 + [True]  # a NaN restarts the window
    assert rule.reason == "objective stagnated: relative change < 1e-03 over 3 epochs"
    with pytest.raises(ValueError, match="rtol must be a positive"):
        StopOnStagnation(rtol=0.0)
    with pytest.raises(ValueError, match="window must be a positive integer"):
        StopOnStagnation(window=0)


# ---- progress bar and several callbacks ---------------------------------------------------------
def test_the_progress_bar_counts_iterations_and_shows_the_objective(monkeypatch):
    err = io.StringIO()
    monkeypatch.setattr("sys.stderr", err)
    bar = ProgressBar(desc="vdp")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # tqdm.auto may warn that no notebook is running
        bar.on_start(RunInfo(max_iterations=10, n_states=1, n_params=1))
        for k in range(4):
            bar(Fake(k, 2.0 / (k + 1), inf_pr=1e-3))
        bar.on_end()
    text = err.getvalue()
    # IPOPT's iterations are counted without a total: it stops when it converges
    assert "vdp: 3 iterations [" in text and "/10" not in text, text
    assert "objective=0.5" in text and "inf_pr=1.0e-03" in text
    assert bar.bar is None


def test_a_callback_list_stops_on_the_first_that_asks_with_its_reason():
    stagnation = StopOnStagnation(rtol=1e-3, window=2)
    seen = []
    combined = CallbackList([seen.append, stagnation])
    combined.on_start(RunInfo(10, 1, 1))
    stops = [combined(Fake(k, 1.0)) for k in range(3)]
    assert stops == [False, False, True] and len(seen) == 3
    assert combined.reason == stagnation.reason
    with pytest.raises(TypeError, match=r"callbacks\[1\] must be callable, got 3"):
        CallbackList([print, 3])
    sol = solve(
        vdp_problem(),
        RadauIIA(30, 3, ipopt=QUIET),
        seed=0,
        callback=CallbackList([lambda s: None, lambda s: s.iteration == 2]),
    )
    assert sol.status == SolverStatus.STOPPED and sol.iterations == 2
    assert sol.message == "stopped by the callback at iteration 2"
