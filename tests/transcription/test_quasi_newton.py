"""Partial quasi-Newton Hessians: exact parts, Lagrangian gradients, secant equations."""

import casadi as ca
import numpy as np
import pytest
from test_nlp import MESHES, dense, rich_problem

from collocnode import (
    DynamicOptimizationProblem,
    IpoptOptions,
    Mesh,
    NeuralODE,
    PartialQuasiNewton,
    RadauIIA,
    TrainingProblem,
    solve,
)
from collocnode.nn import MLP
from collocnode.transcription import StructuredNLP
from collocnode.transcription._nlp.quasi_newton import PartialQuasiNewtonHessian

MODES = {"pp": "partial-pp", "xp+pp": "partial-xp-pp"}


def sym(sparsity: ca.Sparsity, nz: np.ndarray) -> np.ndarray:
    upper = dense(sparsity, nz)
    return upper + np.triu(upper, 1).T


def regions(nlp: StructuredNLP) -> tuple[np.ndarray, np.ndarray]:
    """Masks of the x-p and p-p regions of the (n_z, n_z) Hessian."""
    is_p = np.arange(nlp.layout.n_z) >= nlp.layout.P0
    pp = is_p[:, None] & is_p[None, :]
    xp = is_p[:, None] ^ is_p[None, :]
    return xp, pp


def node_lagrangian(nlp: StructuredNLP, z: np.ndarray, sigma: float, lam: np.ndarray) -> float:
    vals = nlp.node_values(z)
    N, rows = nlp.layout.N, nlp.layout.nx + nlp.layout.ng
    lam_nodes = lam[: N * rows].reshape(N, rows).T
    return sigma * vals["obj"].sum() + float(
        np.sum(lam_nodes * np.vstack([vals["res"], vals["g"]]))
    )


@pytest.fixture(params=sorted(MODES))
def blocks(request):
    return request.param


@pytest.fixture(params=sorted(MESHES))
def mesh(request):
    return MESHES[request.param]


def test_exact_part_matches_exact_hessian(rng, blocks, mesh):
    exact = StructuredNLP(rich_problem(), mesh)
    partial = StructuredNLP(rich_problem(), mesh, hessian=MODES[blocks])
    z, lam = rng.uniform(-1, 1, exact.layout.n_z), rng.uniform(-1, 1, exact.layout.n_c)
    H = sym(exact.layout.hess_sparsity, exact.fn_hess(z, 0.7, lam).full().ravel())
    Hp = sym(partial.layout.hess_sparsity, partial.fn_hess(z, 0.7, lam).full().ravel())
    xp, pp = regions(exact)
    learned = pp | (xp if blocks == "xp+pp" else np.zeros_like(pp))
    np.testing.assert_allclose(Hp[~learned], H[~learned], rtol=1e-12, atol=1e-12)
    # the learned blocks' pattern covers the exact one
    pat = sym(exact.layout.hess_sparsity, np.ones(exact.layout.hess_sparsity.nnz())) != 0
    pat_p = sym(partial.layout.hess_sparsity, np.ones(partial.layout.hess_sparsity.nnz())) != 0
    assert np.all(pat_p[pat])


def test_lagrangian_gradient_against_finite_differences(rng, blocks, mesh):
    nlp = StructuredNLP(rich_problem(), mesh, hessian=MODES[blocks])
    qn = PartialQuasiNewtonHessian(nlp, PartialQuasiNewton(blocks=blocks))
    z, lam = rng.uniform(-1, 1, nlp.layout.n_z), rng.uniform(-1, 1, nlp.layout.n_c)
    g = qn._lag_grad(z, 0.7, lam)
    eps = 1e-6
    fd = np.array(
        [
            (
                node_lagrangian(nlp, z + eps * e, 0.7, lam)
                - node_lagrangian(nlp, z - eps * e, 0.7, lam)
            )
            / (2 * eps)
            for e in np.eye(nlp.layout.n_z)
        ]
    )
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-7)


def test_sr1_satisfies_the_secant_equation(rng, blocks, mesh):
    """After an update, the learned rows reproduce the change of the node Lagrangian gradient
    (B s = y): the rows of the learned p-p groups, and with "xp+pp" also every state row."""
    nlp = StructuredNLP(rich_problem(), mesh, hessian=MODES[blocks])
    qn = PartialQuasiNewtonHessian(nlp, PartialQuasiNewton("sr1", blocks))
    z0, lam = rng.uniform(-1, 1, nlp.layout.n_z), rng.uniform(-1, 1, nlp.layout.n_c)
    z1 = z0 + 0.1 * rng.uniform(-1, 1, nlp.layout.n_z)
    qn(z0, 0.7, lam)
    H1 = sym(nlp.layout.hess_sparsity, qn(z1, 0.7, lam))
    _, bnd = (np.asarray(o).ravel() for o in nlp.fn_hess_parts(z1, 0.7, lam))
    Hnode = H1 - sym(nlp.layout.hess_sparsity, bnd)
    s = z1 - z0
    y = qn._lag_grad(z1, 0.7, lam) - qn._lag_grad(z0, 0.7, lam)
    rows = np.zeros(nlp.layout.n_z, bool)
    rows[nlp.layout.P0 + np.concatenate(nlp.layout.pp_blocks)] = True
    rows[: nlp.layout.P0] = blocks == "xp+pp"
    assert qn.n_skipped == 0
    np.testing.assert_allclose((Hnode @ s)[rows], y[rows], rtol=1e-9, atol=1e-10)


def bilinear_problem() -> DynamicOptimizationProblem:
    """A node Lagrangian quadratic in p: its p-p Hessian is constant while x and λ stay."""
    return DynamicOptimizationProblem(
        dynamics=lambda x, p, u, t: ca.vertcat(p[0] * p[1] * x[1] + p[2] ** 2, -x[0] + p[1] * p[2]),
        n_states=2,
        n_params=3,
        tspan=(0.0, 1.0),
        lagrange=lambda x, p, u, t: (x[0] - 1) ** 2 + p[0] ** 2 * x[1],
        mayer=lambda x0, xf, p: 1e-2 * ca.dot(p, p),
        x_guess=np.array([1.0, 0.5]),
        p_guess=np.zeros(3),
    )


@pytest.mark.parametrize("update", ["sr1", "bfgs"])
def test_recovers_a_constant_parameter_hessian(rng, update):
    """n_p independent parameter steps determine a constant H_pp: SR1 recovers it exactly.
    BFGS cannot where the true block is indefinite; it must stay symmetric positive definite."""
    mesh = Mesh.equidistant(0.0, 1.0, 4, 2)
    exact = StructuredNLP(bilinear_problem(), mesh)
    nlp = StructuredNLP(bilinear_problem(), mesh, hessian="partial-pp")
    qn = PartialQuasiNewtonHessian(nlp, PartialQuasiNewton(update, "pp"))
    z, lam = rng.uniform(-1, 1, nlp.layout.n_z), rng.uniform(-1, 1, nlp.layout.n_c)
    for _ in range(nlp.layout.np + 1):
        z = z.copy()
        z[nlp.layout.P0 :] = rng.uniform(-1, 1, nlp.layout.np)
        H = sym(nlp.layout.hess_sparsity, qn(z, 1.0, lam))
    true = sym(exact.layout.hess_sparsity, exact.fn_hess(z, 1.0, lam).full().ravel())
    _, pp = regions(nlp)
    n = nlp.layout.np
    if update == "sr1":
        np.testing.assert_allclose(H[pp], true[pp], rtol=1e-8, atol=1e-10)
    else:
        B = H[pp].reshape(n, n)
        np.testing.assert_allclose(B, B.T)
        assert np.linalg.eigvalsh(B).min() > 0


@pytest.mark.parametrize(
    "hidden, groups",
    [
        # one hidden layer: unit j's (w_j0, w_j1, b_j, v_j) are coupled only among themselves;
        # the output bias enters linearly and has no Hessian entry at all
        ((3,), [4] * 3 + [4] * 3),
        # two hidden layers couple every weight of a network but its output bias
        ((3, 3), [9 + 12 + 3, 9 + 12 + 3]),
    ],
)
def test_groups_follow_the_networks(hidden, groups):
    from collocnode import Trajectory

    model = NeuralODE([MLP((2, *hidden, 1), "tanh"), MLP((2, *hidden, 1), "tanh")])
    t = np.linspace(0, 1, 11)
    prob = TrainingProblem(model, Trajectory(t, np.column_stack([np.cos(t), np.sin(t)])))
    dop = prob.to_dop(params_guess=model.init_params(np.random.default_rng(0)))
    nlp = StructuredNLP(dop, Mesh.equidistant(0, 1, 5, 2), hessian="partial-pp")
    assert sorted(g.size for g in nlp.layout.pp_blocks) == groups


def vdp_solution(hessian, backend="cyipopt", max_iter=400):
    from collocnode import problems

    data = problems.get("vdp").generate(noise=0.0, seed=0).train
    model = NeuralODE([MLP((2, 5, 5, 1), "sigmoid"), MLP((2, 5, 5, 1), "sigmoid")])
    alg = RadauIIA(
        40,
        3,
        hessian=hessian,
        ipopt=IpoptOptions(tol=1e-4, max_iter=max_iter, print_level=0, backend=backend),
    )
    return solve(TrainingProblem(model, data, regularization=1e-4), alg, seed=0)


@pytest.mark.slow
@pytest.mark.parametrize("update", ["sr1", "bfgs"])
def test_training_with_partial_quasi_newton(update):
    exact = vdp_solution("exact")
    qn = vdp_solution(PartialQuasiNewton(update, "pp"))
    assert exact.status.name == "SUCCESS"
    assert qn.status.name == "SUCCESS", qn.ipopt_status
    assert qn.objective == pytest.approx(exact.objective, rel=0.05)


@pytest.mark.parametrize("backend", ["casadi", "cyipopt"])
def test_both_backends_accept_every_hessian(backend):
    for hessian in (
        "limited-memory",
        PartialQuasiNewton("sr1", "pp"),
        PartialQuasiNewton("bfgs", "xp+pp"),
    ):
        sol = vdp_solution(hessian, backend, max_iter=5)
        assert sol.iterations == 5
        assert np.isfinite(sol.objective)


def test_bad_hessian_option_is_named():
    with pytest.raises(ValueError, match="hessian"):
        RadauIIA(10, 3, hessian="sr1")
    with pytest.raises(ValueError, match="update"):
        PartialQuasiNewton(update="dfp")
    with pytest.raises(ValueError, match="blocks"):
        PartialQuasiNewton(blocks="xx")
