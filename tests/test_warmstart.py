"""Warm starts: derivative estimates, the regression on them, and the effect on training."""

import casadi as ca
import numpy as np
import pytest

from collocnode import (
    BlockConstraint,
    HybridModel,
    IpoptOptions,
    NeuralODE,
    Parameter,
    RadauIIA,
    SolverStatus,
    TrainingProblem,
    Trajectory,
    problems,
    simulate,
    solve,
)
from collocnode.nn import MLP
from collocnode.training._warmstart import (
    METHODS,
    fit_initial_guess,
    smooth,
    smooth_samples,
    warm_start,
)


def signal(t):
    return np.column_stack([np.sin(2 * t) + 0.3 * t, np.cos(3 * t)])


def signal_rate(t):
    return np.column_stack([2 * np.cos(2 * t) + 0.3, -3 * np.sin(3 * t)])


@pytest.mark.parametrize("method", METHODS)
def test_derivative_estimates_of_exact_data_converge(method):
    rms = []
    for n in (51, 101, 201, 401):
        t = np.linspace(0.0, 5.0, n)
        _, d = smooth_samples(t, signal(t), method)
        rms.append(np.sqrt(np.mean((d - signal_rate(t)) ** 2)))
    assert np.all(np.diff(rms) < 0), rms
    assert rms[-1] < rms[0] / 4
    assert rms[-1] < 0.03


def test_kernel_smoother_converges_at_second_order_up_to_the_ends():
    """The local-quadratic fit has no boundary bias: the max error (ends included) is O(dt²)."""
    errs = []
    for n in (101, 201, 401):
        t = np.linspace(0.0, 5.0, n)
        _, d = smooth_samples(t, signal(t), "kernel")
        errs.append(np.max(np.abs(d - signal_rate(t))))
    orders = np.log2(np.array(errs[:-1]) / np.array(errs[1:]))
    assert np.all(orders > 1.7), orders


@pytest.mark.parametrize("method", ["spline", "kernel"])
def test_smoothing_removes_most_of_the_noise(method):
    t = np.linspace(0.0, 5.0, 201)
    noisy = signal(t) + 0.05 * np.random.default_rng(0).standard_normal((t.size, 2))
    xs, d = smooth_samples(t, noisy, method)
    assert np.sqrt(np.mean((xs - signal(t)) ** 2)) < 0.4 * 0.05
    # raw central differences of this noise would have an RMS error of 0.05 / (√2 dt) ≈ 1.4
    assert np.sqrt(np.mean((d - signal_rate(t)) ** 2)) < 0.3


def test_kernel_bandwidth_scan_stops_at_the_same_choice_as_the_whole_scan(monkeypatch):
    """The early stop only skips bandwidths past the GCV minimum: the full scan (patience larger
    than the number of candidates) picks the same fit."""
    import collocnode.training._warmstart as ws

    t = np.linspace(0.0, 5.0, 401)
    noisy = signal(t) + 0.05 * np.random.default_rng(2).standard_normal((t.size, 2))
    early = smooth_samples(t, noisy, "kernel")
    monkeypatch.setattr(ws, "_KERNEL_PATIENCE", 10**6)
    full = smooth_samples(t, noisy, "kernel")
    for a, b in zip(early, full, strict=True):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("h", [0.0128, 0.05, 0.3])
def test_uniform_sampling_fast_path_equals_the_general_smoother(h):
    """One interior row and mirrored end rows give the per-sample rows' fit and rate."""
    from collocnode.training._warmstart import _UniformWindows, _Windows

    t = np.linspace(0.0, 5.0, 801)
    y = np.sin(3 * t) + 0.05 * np.random.default_rng(0).standard_normal(t.size)
    fast, general = _UniformWindows(t.size, t[1] - t[0], h), _Windows(t, h)
    for a, b in zip(fast.apply(y), general.apply(y), strict=True):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-10)
    assert fast.mean_diag == pytest.approx(general.mean_diag, abs=1e-14)


def test_smooth_accepts_a_trajectory_and_one_dimensional_samples():
    t = np.linspace(0.0, 5.0, 101)
    xs, d = smooth(Trajectory(t, signal(t)))
    assert xs.shape == d.shape == (101, 2)
    y1, d1 = smooth_samples(t, signal(t)[:, 0])
    assert y1.shape == d1.shape == (101,)
    np.testing.assert_allclose(d1, d[:, 0])


@pytest.mark.parametrize(
    ("args", "error", "match"),
    [
        ((np.arange(10.0), np.zeros(10), "wavelet"), ValueError, "smoothing method"),
        ((np.arange(4.0), np.zeros(4), "spline"), ValueError, "at least 5 samples"),
        ((np.arange(10.0), np.zeros(9), "spline"), ValueError, "shape"),
        ((np.r_[0.0, 2.0, 1.0, 3.0, 4.0], np.zeros(5), "spline"), ValueError, "increasing"),
        ((np.r_[0.0, 1.0, 3.0, 4.0, 5.0], np.zeros(5), "fft"), ValueError, "uniformly"),
    ],
)
def test_smoothing_input_errors(args, error, match):
    with pytest.raises(error, match=match):
        smooth_samples(*args)


def test_smooth_rejects_non_trajectories():
    with pytest.raises(TypeError, match="Trajectory"):
        smooth(np.zeros((10, 2)))


# ---- regression ------------------------------------------------------------------------------


def _own_trajectory(n: int = 201):
    """A 2-3-2 tanh neural ODE whose own trajectory identifies its weights (seed chosen for a
    well-conditioned regression: smallest/largest singular value of the residual Jacobian
    ≈ 6e-3) and that trajectory, sampled exactly."""
    net = MLP((2, 3, 2), "tanh")
    model = NeuralODE(net)
    rng = np.random.default_rng(70)
    p_true = 2.0 * net.init_weights(rng)
    p_true[6:9] = rng.normal(0.0, 0.5, 3)  # hidden biases
    traj = simulate(model, p_true, np.linspace(0.0, 8.0, n), np.array([1.0, -0.5]))
    return model, p_true, traj


@pytest.mark.parametrize("method", ["spline", "kernel"])
def test_regression_recovers_the_weights_of_a_network_from_its_own_trajectory(method):
    model, p_true, traj = _own_trajectory()
    p0 = p_true + 0.2 * np.random.default_rng(1).standard_normal(p_true.size)
    ws = fit_initial_guess(TrainingProblem(model, traj, params_guess=p0), method)
    assert ws.status == SolverStatus.SUCCESS
    err = np.max(np.abs(ws.p - p_true))
    assert err < 0.05
    assert err < 0.2 * np.max(np.abs(p0 - p_true))


def test_regression_uses_every_trajectory_of_a_multi_trajectory_problem():
    model, p_true, first = _own_trajectory()
    second = simulate(model, p_true, np.linspace(0.0, 5.0, 151), np.array([-0.8, 0.6]))
    p0 = p_true + 0.2 * np.random.default_rng(1).standard_normal(p_true.size)
    problem = TrainingProblem(model, [first, second], params_guess=p0)
    ws = fit_initial_guess(problem)
    assert ws.status == SolverStatus.SUCCESS
    assert ws.t.size == first.n_samples + second.n_samples
    assert np.max(np.abs(ws.p - p_true)) < 0.05
    # one smoothed state guess per trajectory, each on its own horizon
    guesses = ws.problem.state_guess
    assert len(guesses) == 2
    for guess, traj in zip(guesses, (first, second), strict=True):
        assert np.max(np.abs(guess(traj.t) - traj.x)) < 1e-3
    sol = solve(ws.problem, RadauIIA(20, 3, ipopt=IpoptOptions(max_iter=30, print_level=0)))
    assert sol.status.ok


def test_regression_error_shrinks_with_the_sampling_step():
    errs = []
    for n in (101, 401):
        model, p_true, traj = _own_trajectory(n)
        p0 = p_true + 0.05 * np.random.default_rng(1).standard_normal(p_true.size)
        ws = fit_initial_guess(TrainingProblem(model, traj, params_guess=p0))
        errs.append(np.max(np.abs(ws.p - p_true)))
    assert errs[1] < errs[0] / 2


def test_gauss_newton_hessian_reaches_the_exact_hessians_optimum():
    """At a zero-residual optimum the Gauss-Newton Hessian is the exact one: both reach the
    true weights."""
    model, p_true, traj = _own_trajectory()
    p0 = p_true + 0.2 * np.random.default_rng(1).standard_normal(p_true.size)
    problem = TrainingProblem(model, traj, params_guess=p0)
    exact = fit_initial_guess(problem, "kernel")
    gn = fit_initial_guess(problem, "kernel", hessian="gauss-newton")
    assert gn.status == exact.status == SolverStatus.SUCCESS
    np.testing.assert_allclose(gn.p, exact.p, atol=1e-6)
    assert np.max(np.abs(gn.p - p_true)) < 0.05


def test_stride_keeps_every_kth_sample_and_the_whole_horizon():
    model, p_true, traj = _own_trajectory(401)
    p0 = p_true + 0.05 * np.random.default_rng(1).standard_normal(p_true.size)
    problem = TrainingProblem(model, traj, params_guess=p0)
    ws = fit_initial_guess(problem, stride=7)
    np.testing.assert_array_equal(ws.t, np.r_[traj.t[::7], traj.t[-1]])
    assert ws.success
    # every 7th of 401 exact samples still identifies the weights
    assert np.max(np.abs(ws.p - p_true)) < 0.05
    with pytest.raises(ValueError, match="stride"):
        fit_initial_guess(problem, stride=0)
    with pytest.raises(ValueError, match="hessian"):
        fit_initial_guess(problem, hessian="bfgs")
    with pytest.raises(ValueError, match=r"ipopt.mumps_ordering of the regression.*OrderingTrial"):
        fit_initial_guess(problem, ipopt=IpoptOptions(mumps_ordering="trial"))
    with pytest.raises(TypeError, match="jit must be True, False or 'auto', got 0"):
        fit_initial_guess(problem, jit=0)


def test_warm_start_sets_smoothed_states_and_regressed_weights():
    model, _, traj = _own_trajectory()
    problem = TrainingProblem(model, traj)
    ws = fit_initial_guess(problem, seed=3)
    warm = ws.problem
    np.testing.assert_array_equal(warm.params_guess, ws.p)
    t = np.linspace(0.0, 8.0, 57)
    guess = warm.to_dop().state_guess(t)
    np.testing.assert_allclose(
        guess,
        simulate(model, ws.p * 0 + _own_trajectory()[1], t, np.array([1.0, -0.5])).x,
        atol=2e-3,
    )
    # without params_guess the regression starts from the same draw solve(seed=3) would use
    assert warm_start(problem, seed=3).params_guess == pytest.approx(ws.p)
    assert ws.timings["total"] >= ws.timings["smooth"] > 0


def decaying_output_model():
    """x' = −c x with a fitted c, observed only through y = c x (no network)."""
    return HybridModel(
        n_states=1,
        blocks={},
        rhs=lambda x, u, t, nets, par: -par["c"] * x,
        outputs=lambda x, u, t, nets, par: par["c"] * x,
        n_outputs=1,
        parameters={"c": Parameter(0.5, fit=True, lb=0.0, ub=10.0)},
    )


def test_output_regression_uses_the_state_guess_and_fits_physical_parameters():
    t = np.linspace(0.0, 2.0, 81)
    x = np.exp(-2.0 * t)[:, None]
    data = Trajectory(t, x, y=2.0 * x)
    model = decaying_output_model()
    ws = fit_initial_guess(TrainingProblem(model, data, fit="outputs", state_guess="data"))
    assert ws.success
    # y = c x at the smoothed data states: exact but for the smoother's bias on exp(-2t)
    assert ws.p[0] == pytest.approx(2.0, abs=2e-4)
    assert not np.allclose(ws.p[0], 2.0, atol=1e-8)  # the states were smoothed, not copied
    both = fit_initial_guess(TrainingProblem(model, data, fit=("x0", "y0"), state_guess="data"))
    # x̂' = −c x̂ from the smoothed states: the spline's end bias costs ~1e-3
    assert both.p[0] == pytest.approx(2.0, abs=5e-3)


def test_output_regression_refuses_a_constant_state_guess():
    t = np.linspace(0.0, 2.0, 81)
    x = np.exp(-2.0 * t)[:, None]
    problem = TrainingProblem(decaying_output_model(), Trajectory(t, x, y=2.0 * x), fit="outputs")
    with pytest.raises(ValueError, match="state_guess is 'constant'"):
        warm_start(problem)


def test_regression_keeps_block_constraints_and_bounds():
    system = problems.get("vdp")
    data = system.generate(seed=0).train
    nets = [MLP((2, 4, 1), "sigmoid") for _ in range(2)]
    constraints = (BlockConstraint("f0", at=[0.0, 0.0]), BlockConstraint("f1", at=[0.0, 0.0]))
    problem = TrainingProblem(
        NeuralODE(nets), data, regularization=1e-4, block_constraints=constraints
    )
    ws = fit_initial_guess(problem, seed=0)
    assert ws.success
    f = problem.model.function
    at_origin = np.asarray(f(ca.DM.zeros(2), ws.p, ca.DM(0, 1), 0.0)[0]).ravel()
    np.testing.assert_allclose(at_origin, 0.0, atol=1e-7)


def test_stop_rtol_ends_a_creeping_regression_early_and_says_so():
    """On a plateau the objective-change stop saves iterations at a price in objective (here
    15x: a too loose ``stop_rtol`` stops on a plateau, which is why it is off by default)."""
    system = problems.get("vdp")
    data = system.generate(seed=0, noise=0.1).train
    nets = [MLP((2, 8, 8, 1), "sigmoid") for _ in range(2)]
    constraints = (BlockConstraint("f0", at=[0.0, 0.0]), BlockConstraint("f1", at=[0.0, 0.0]))
    problem = TrainingProblem(
        NeuralODE(nets), data, regularization=1e-6, block_constraints=constraints
    )
    full = fit_initial_guess(problem, "kernel", seed=0, hessian="gauss-newton")
    early = fit_initial_guess(problem, "kernel", seed=0, hessian="gauss-newton", stop_rtol=1e-3)
    assert early.status == SolverStatus.ACCEPTABLE
    assert early.iterations < full.iterations / 2
    assert early.objective > full.objective
    with pytest.raises(ValueError, match="stop_rtol"):
        fit_initial_guess(problem, stop_rtol=0.0)


def test_warm_started_training_needs_fewer_iterations_than_cold():
    """The claim of docs/collocation_extensions.md, on a small mesh (fixed seeds)."""
    system = problems.get("vdp")
    data = system.generate(noise=0.0, seed=0).train
    model = NeuralODE([MLP((2, 5, 5, 1), "sigmoid") for _ in range(2)])
    problem = TrainingProblem(model, data, regularization=1e-4, initial_state=system.x0)
    alg = RadauIIA(20, 3, ipopt=IpoptOptions(tol=1e-7, max_iter=200, print_level=0))
    cold = solve(problem, alg, seed=1)
    warm = solve(warm_start(problem, seed=1), alg)
    assert cold.status == warm.status == SolverStatus.SUCCESS
    assert warm.iterations < cold.iterations / 2
    t = np.linspace(0.0, 7.0, 201)
    err = warm.simulate(t, system.x0).x - system.simulate(t).x
    assert np.sqrt(np.mean(err**2)) < 0.05


def test_warm_start_argument_errors():
    model, _, traj = _own_trajectory(51)
    problem = TrainingProblem(model, traj)
    with pytest.raises(TypeError, match="TrainingProblem"):
        warm_start(problem.to_dop())
    with pytest.raises(ValueError, match="smoothing method"):
        warm_start(problem, "loess")
    with pytest.raises(TypeError, match="IpoptOptions"):
        warm_start(problem, ipopt={"tol": 1e-3})
