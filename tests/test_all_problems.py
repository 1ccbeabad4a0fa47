"""Every registered problem, transcribed on a tiny mesh: every NLP callback against central finite
differences (objective gradient, constraint Jacobian, Hessian of the Lagrangian)."""

from __future__ import annotations

import numpy as np
import pytest

from collocnode import BlockConstraint, NeuralODE, TrainingProblem, problems
from collocnode.nn import MLP
from collocnode.transcription import Mesh, StructuredNLP

N_SAMPLES = 12  # a short window of each system's data
MESH = (2, 2)  # intervals, stages: 5 nodes
EPS = 1e-6


def training_problem(name: str) -> TrainingProblem:
    """A small training problem on the first samples of the system's (noisy) data."""
    system = problems.get(name)
    data = system.generate(noise=0.01, seed=1, n_steps=N_SAMPLES, n_train=N_SAMPLES).train
    if name == "qvm":
        from collocnode.recipes import qvm

        friction = MLP((1, 3, 1), "squareplus", input_scale=(0.1,), output_scale=(50.0,))
        spring = MLP((1, 3, 1), "squareplus", input_scale=(0.005,), output_scale=(50.0,))
        model = qvm.hybrid_model(system, friction, spring)
        return TrainingProblem(
            model,
            data,
            fit="outputs",
            scale="std",
            regularization=1e-3,
            initial_state=np.zeros(5),
            inputs=qvm.road_inputs(system.road),
            block_constraints=(BlockConstraint("friction", 0.0), BlockConstraint("spring", 0.0)),
        )
    nx, nu = system.n_states, system.n_inputs
    # one tiny network for the whole state, fed [x, u]; inputs come from the data
    model = NeuralODE(MLP((nx + nu, 3, nx), "tanh"), n_inputs=nu)
    return TrainingProblem(model, data, regularization=1e-3, scale="std" if nx > 1 else "none")


def dense(sparsity, nz: np.ndarray) -> np.ndarray:
    import casadi as ca

    return np.array(ca.DM(sparsity, nz).full())


@pytest.mark.parametrize("name", problems.available())
def test_callbacks_match_finite_differences(name):
    problem = training_problem(name)
    dop = problem.to_dop(params_guess=problem.model.init_params(0))
    nlp = StructuredNLP(dop, Mesh.equidistant(*dop.tspan, *MESH), threads=1)
    rng = np.random.default_rng(sum(map(ord, name)))
    # a random point near the initial guess (scaled states are O(1)), random multipliers
    z = nlp.initial_guess() + rng.uniform(-0.5, 0.5, nlp.layout.n_z)
    lam = rng.uniform(-1.0, 1.0, nlp.layout.n_c)
    sigma = 0.7

    def f(zz):
        return float(nlp.fn_f(zz))

    def g(zz):
        return nlp.fn_g(zz).full().ravel()

    def jac(zz):
        return dense(nlp.layout.jac_sparsity, nlp.fn_jac(zz).full().ravel())

    def grad_lag(zz):
        return sigma * nlp.fn_grad(zz).full().ravel() + jac(zz).T @ lam

    E = np.eye(nlp.layout.n_z)
    fd_grad = np.array([(f(z + EPS * e) - f(z - EPS * e)) / (2 * EPS) for e in E])
    fd_jac = np.column_stack([(g(z + EPS * e) - g(z - EPS * e)) / (2 * EPS) for e in E])
    fd_hess = np.column_stack(
        [(grad_lag(z + EPS * e) - grad_lag(z - EPS * e)) / (2 * EPS) for e in E]
    )

    H = dense(nlp.layout.hess_sparsity, nlp.fn_hess(z, sigma, lam).full().ravel())
    H = H + np.triu(H, 1).T
    for what, exact, fd in (
        ("gradient", nlp.fn_grad(z).full().ravel(), fd_grad),
        ("Jacobian", jac(z), fd_jac),
        ("Hessian", H, fd_hess),
    ):
        assert np.all(np.isfinite(exact)), f"{name}: non-finite {what}"
        # central differences are accurate to ~EPS² |f'''| + eps_mach |f| / EPS
        scale = max(1.0, float(np.max(np.abs(fd))))
        np.testing.assert_allclose(
            exact, fd, rtol=1e-6, atol=1e-7 * scale, err_msg=f"{name}: {what}"
        )
    # the sparsity patterns hold every nonzero the finite differences see
    assert np.all(
        fd_jac[dense(nlp.layout.jac_sparsity, np.ones(nlp.layout.jac_sparsity.nnz())) == 0] == 0
    )
    pattern = dense(nlp.layout.hess_sparsity, np.ones(nlp.layout.hess_sparsity.nnz()))
    pattern = pattern + pattern.T
    assert np.all(np.abs(fd_hess[pattern == 0]) <= 1e-6 * max(1.0, np.abs(fd_hess).max()))
