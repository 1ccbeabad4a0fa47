"""The uncertainty of a trained model against known answers: a model linear in its parameters
(the least-squares and the ridge covariance), a linear ODE with a known sensitivity, and the
exact reduced Hessian against finite differences of the reduced objective."""

from dataclasses import replace

import casadi as ca
import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from collocnode import (
    HybridModel,
    IpoptOptions,
    NeuralODE,
    Parameter,
    RadauIIA,
    TrainingProblem,
    TrainingSolution,
    Trajectory,
    solve,
)
from collocnode.nn import MLP
from collocnode.training import ExtrapolationWarning
from collocnode.training._uncertainty.linearization import iterate, linearize

SIGMA = 0.05
HORIZON = 2.0
N_SAMPLES = 40
ALG = RadauIIA(20, 3, ipopt=IpoptOptions(tol=1e-12, print_level=0))


def grid(n=N_SAMPLES, horizon=HORIZON):
    return np.linspace(0.0, horizon, n + 1)


def midpoint_data(make, n=N_SAMPLES, horizon=HORIZON):
    """(data, mask, t_observed): ``make(t)`` at the centres of n equal cells of [0, horizon]
    plus an unobserved sample at each end (which makes the horizon): every observed value gets
    the same cell weight in the loss at the samples, so that the training objective is the
    plain least-squares sum."""
    centres = (np.arange(n) + 0.5) * horizon / n
    t = np.concatenate([[0.0], centres, [horizon]])
    x = make(t)
    mask = np.ones((t.size, 1), dtype=bool)
    mask[[0, -1]] = False
    return Trajectory(t=t, x=x[:, None]), mask, centres


def polynomial(t, x0=0.3, a=1.2, b=-0.7, seed=0):
    rng = np.random.default_rng(seed)
    return x0 + a * t + 0.5 * b * t**2 + SIGMA * rng.standard_normal(t.size)


def polynomial_model():
    """x' = a + b t with a, b fitted: x(t) = x0 + a t + b t²/2 is linear in (x0, a, b)."""
    return HybridModel(
        n_states=1,
        blocks={},
        rhs=lambda x, u, t, blocks, p: ca.vertcat(p["a"] + p["b"] * t),
        parameters={"a": Parameter(0.0, fit=True), "b": Parameter(0.0, fit=True)},
    )


def design(t, free_x0):
    columns = [t, 0.5 * t**2]
    return np.column_stack(([np.ones_like(t)] if free_x0 else []) + columns)


@pytest.mark.parametrize("loss", ["samples", "nodes"])
@pytest.mark.parametrize("hessian", ["gauss-newton", "exact"])
@pytest.mark.parametrize("free_x0", [False, True])
def test_covariance_of_a_model_linear_in_its_parameters_is_the_least_squares_one(
    loss, hessian, free_x0
):
    """The Fisher information of the samples, whatever the loss weights them by."""
    t = grid()
    data = Trajectory(t=t, x=polynomial(t)[:, None])
    problem = TrainingProblem(
        polynomial_model(), data, loss=loss, initial_state=None if free_x0 else np.array([0.3])
    )
    sol = solve(problem, ALG, seed=0)
    unc = sol.uncertainty(noise=SIGMA, hessian=hessian)
    X = design(t, free_x0)
    expected = SIGMA**2 * np.linalg.inv(X.T @ X)
    names = (["x0.x0"] if free_x0 else []) + ["a", "b"]
    order = [unc.quantities.index(n) for n in names]
    got = unc.covariance()[np.ix_(order, order)]
    np.testing.assert_allclose(got, expected, rtol=1e-7, atol=1e-14)
    # without a weight penalty the posterior is the data-only distribution
    np.testing.assert_allclose(
        unc.covariance(which="data")[np.ix_(order, order)], expected, rtol=1e-7
    )
    assert unc.converged and unc.identifiability.n_null == 0


def test_estimated_noise_is_the_residual_variance_of_least_squares():
    data, mask, t = midpoint_data(lambda tt: polynomial(tt, seed=3))
    problem = TrainingProblem(
        polynomial_model(), data, loss="samples", mask=mask, initial_state=None
    )
    sol = solve(problem, ALG, seed=0)
    unc = sol.uncertainty()
    X = design(t, True)
    coef, rss, *_ = np.linalg.lstsq(X, data.x[1:-1, 0], rcond=None)
    np.testing.assert_allclose(
        [unc.quantities.values[unc.quantities.index(n)] for n in ("x0.x0", "a", "b")],
        coef,
        rtol=1e-8,
    )
    s2 = rss[0] / (t.size - 3)
    assert unc.laplace.estimated
    np.testing.assert_allclose(unc.laplace.noise[0] ** 2, s2, rtol=1e-7)
    np.testing.assert_allclose(unc.laplace.effective, 3.0, rtol=1e-9)
    np.testing.assert_allclose(
        unc.covariance(["a", "b"]), s2 * np.linalg.inv(X.T @ X)[1:, 1:], rtol=1e-6
    )
    lo, hi = unc.interval("a", level=0.9)
    half = 1.6448536269514722 * np.sqrt(s2 * np.linalg.inv(X.T @ X)[1, 1])
    np.testing.assert_allclose([lo, hi], [coef[1] - half, coef[1] + half], rtol=1e-6)


def test_the_weight_penalty_is_the_ridge_prior():
    """x' = w₀ t + w₁ (an affine block of the time, penalised by λ‖w‖²): the posterior is the
    ridge posterior with the prior precision λ n / (σ² W) the objective's temperature gives."""
    t = grid()
    data = Trajectory(t=t, x=polynomial(t, x0=0.0)[:, None])
    lam = 0.05
    model = HybridModel(
        n_states=1,
        blocks={"r": MLP((1, 1))},
        rhs=lambda x, u, tt, blocks, p: blocks["r"](tt),
    )
    problem = TrainingProblem(model, data, initial_state=np.array([0.0]), regularization=lam)
    sol = solve(problem, ALG, seed=0)
    unc = sol.uncertainty(noise=SIGMA)
    X = np.column_stack([0.5 * t**2, t])  # d x / d(w₀, w₁) (MLP layout: weight, then bias)
    prior_precision = lam * t.size / (SIGMA**2 * HORIZON)
    posterior = np.linalg.inv(X.T @ X / SIGMA**2 + prior_precision * np.eye(2))
    np.testing.assert_allclose(unc.covariance(), posterior, rtol=1e-7)
    np.testing.assert_allclose(
        unc.covariance(which="data"), SIGMA**2 * np.linalg.inv(X.T @ X), rtol=1e-7
    )
    np.testing.assert_allclose(unc.laplace.prior_std, prior_precision**-0.5, rtol=1e-12)
    # the band of the block (the learned right-hand side) over an input range
    s = np.linspace(-1.0, 3.0, 9)
    with pytest.warns(ExtrapolationWarning, match="of the band of block 'r' lie outside"):
        band = unc.block_band("r", s)
    # the block's input is the time: trained over [0, HORIZON], the rest extrapolates
    margin = 0.05 * HORIZON
    np.testing.assert_array_equal(band.extrapolated, (s < -margin) | (s > HORIZON + margin))
    A = np.column_stack([s, np.ones_like(s)])
    np.testing.assert_allclose(
        band.std, np.sqrt(np.einsum("ij,jk,ik->i", A, posterior, A)), rtol=1e-7
    )
    np.testing.assert_allclose(band.upper - band.value, 1.959963984540054 * band.std, rtol=1e-12)
    # the trajectory band inside the horizon
    tt = np.linspace(0.0, HORIZON, 7)
    traj = unc.trajectory_band(tt, method="collocation")
    np.testing.assert_allclose(unc.trajectory_band(tt).std, traj.std, rtol=1e-6, atol=1e-12)
    G = np.column_stack([0.5 * tt**2, tt])
    np.testing.assert_allclose(
        traj.std[:, 0], np.sqrt(np.einsum("ij,jk,ik->i", G, posterior, G)), rtol=1e-6, atol=1e-15
    )


def decay(k=1.3, x0=1.5, seed=0, sigma=0.02):
    rng = np.random.default_rng(seed)
    data, mask, _ = midpoint_data(
        lambda t: x0 * np.exp(-k * t) + sigma * rng.standard_normal(t.size), 40, 2.0
    )
    model = HybridModel(
        n_states=1,
        blocks={},
        rhs=lambda x, u, tt, blocks, p: ca.vertcat(-p["k"] * x[0]),
        parameters={"k": Parameter(0.5, fit=True)},
    )
    return TrainingProblem(model, data, loss="samples", mask=mask, initial_state=np.array([x0]))


@pytest.mark.parametrize("hessian", ["gauss-newton", "exact"])
def test_linear_ode_with_a_known_sensitivity(hessian):
    """x' = -k x: ∂x/∂k = -t x₀ e^{-kt}, ∂²x/∂k² = t² x₀ e^{-kt}; the Fisher information
    Σ (∂x/∂k)² / σ² and the observed one, which subtracts Σ r ∂²x/∂k² / σ²."""
    sigma, x0 = 0.02, 1.5
    problem = decay(x0=x0, sigma=sigma)
    sol = solve(problem, RadauIIA(60, 4, ipopt=IpoptOptions(tol=1e-12, print_level=0)), seed=0)
    unc = sol.uncertainty(noise=sigma, hessian=hessian)
    k = sol.p[0]
    t = problem.trajectories[0].t[1:-1]
    x = x0 * np.exp(-k * t)
    info = np.sum((t * x) ** 2) / sigma**2
    if hessian == "exact":
        r = problem.trajectories[0].x[1:-1, 0] - x
        info -= np.sum(r * t**2 * x) / sigma**2
    np.testing.assert_allclose(unc.std("k"), info**-0.5, rtol=1e-8)


def feasible(nlp, z_star, theta_cols, theta):
    """z with θ set and the collocation equations solved for the node states by Newton's
    method (the NLP's own residual and Jacobian)."""
    z = z_star.copy()
    z[theta_cols] = theta
    free = np.setdiff1d(np.arange(nlp.layout.P0), theta_cols)
    free = free[nlp.lbz[free] < nlp.ubz[free]]
    rows, cols = nlp.jacobian_structure()
    n_dyn = nlp.layout.N * nlp.layout.nd
    for _ in range(30):
        g = np.asarray(nlp.fn_g(z)).ravel()[:n_dyn]
        if np.abs(g).max() < 1e-14:
            break
        J = sp.csc_matrix(
            (np.asarray(nlp.fn_jac(z)).ravel(), (rows, cols)),
            shape=(nlp.layout.n_c, nlp.layout.n_z),
        ).tocsr()[:n_dyn][:, free]
        z[free] -= spla.spsolve(J.tocsc(), g)
    return z


def test_exact_reduced_hessian_and_sensitivities_match_finite_differences():
    """A small neural ODE (a 1-3-1 tanh network, 10 weights) away from its optimum: the reduced
    Hessian Zᵀ∇²ℒZ with the adjoint multipliers is the second derivative of the reduced
    objective f(x(θ), θ), and Zᵀ∇f its gradient, also where the solution is not stationary."""
    t = np.linspace(0.0, 1.0, 11)
    data = Trajectory(t=t, x=np.column_stack([np.cos(2 * t)]))
    model = NeuralODE(MLP((1, 3, 1), "tanh"))
    problem = TrainingProblem(model, data, initial_state="data", regularization=1e-3)
    sol = solve(problem, RadauIIA(8, 3, ipopt=IpoptOptions(tol=1e-10, print_level=0)), seed=1)
    nlp = sol.solution.nlp
    cols = nlp.layout.P0 + np.arange(model.n_params)
    z_star = iterate(nlp, sol)
    # a feasible point away from the optimum: weights moved, states solved for
    theta = z_star[cols] + 0.05 * np.random.default_rng(0).standard_normal(cols.size)
    z = feasible(nlp, z_star, cols, theta)
    states = nlp.segment_states(z)
    moved = TrainingSolution(
        replace(sol.solution, p=theta, segment_states=states, x_nodes=states[0]), problem
    )
    lin = linearize(moved, exact=True)
    f = lambda th: float(nlp.fn_f(feasible(nlp, z, cols, th)))  # noqa: E731
    h, n = 1e-4, theta.size
    E = np.eye(n) * h
    fd = np.array(
        [
            [
                (
                    f(theta + E[i] + E[j])
                    - f(theta + E[i] - E[j])
                    - f(theta - E[i] + E[j])
                    + f(theta - E[i] - E[j])
                )
                / (4 * h * h)
                for j in range(n)
            ]
            for i in range(n)
        ]
    )
    np.testing.assert_allclose(lin.objective_hessian, fd, rtol=1e-5, atol=1e-7 * np.abs(fd).max())
    grad_fd = np.array([(f(theta + E[i]) - f(theta - E[i])) / (2 * h) for i in range(n)])
    np.testing.assert_allclose(lin.reduced_gradient, grad_fd, rtol=1e-7, atol=1e-12)
    assert np.abs(lin.reduced_gradient).max() > 1e-3  # indeed not stationary
