"""The structured NLP: every callback against CasADi's own AD and finite differences."""

import math

import casadi as ca
import numpy as np
import pytest

from collocnode import (
    AlgebraicStates,
    Constraint,
    Controls,
    DynamicOptimizationProblem,
    Inputs,
    Mesh,
)
from collocnode.transcription import StructuredNLP
from collocnode.transcription._nlp import node_map as node_map_module


def rich_problem() -> DynamicOptimizationProblem:
    """Every ingredient at once: inputs, path and boundary constraints, Lagrange and Mayer."""

    def f(x, p, u, t):
        return ca.vertcat(
            p[0] * x[1] + ca.sin(u[0]) * x[0] * p[2], -p[1] * x[0] + x[0] * x[1] * p[2] + t
        )

    return DynamicOptimizationProblem(
        dynamics=f,
        n_states=2,
        n_params=3,
        tspan=(0.0, 2.0),
        lagrange=lambda x, p, u, t: (x[0] - u[0]) ** 2 + p[0] * x[1] ** 2 + ca.exp(p[1] * t),
        mayer=lambda x0, xf, p: ca.dot(p, p) + xf[0] * x0[0] + ca.sin(xf[1] * p[2]),
        path=Constraint.make("path", lambda x, p, u, t: x[0] ** 2 + p[1] * x[1] * u[0], 1, -1, 4),
        boundary=Constraint.make(
            "boundary", lambda x0, xf, p: ca.vertcat(x0[0] - 1, xf[1] * p[2] * x0[1]), 2
        ),
        inputs=Inputs.from_function(lambda t: np.cos(3 * t)[:, None], 1),
        x_guess=np.array([1.0, 0.5]),
        p_guess=np.array([0.3, -0.2, 0.7]),
        x_nominal=np.array([2.0, 0.5]),
    )


def controlled_problem() -> DynamicOptimizationProblem:
    """The rich problem with two controls (bounded, rate-penalised, scaled) and an algebraic
    state: the dynamics, path constraint and Lagrange term see u = [known input, controls] and
    z as a fifth argument."""
    base = rich_problem()

    def f(x, p, u, t, z):
        return base.dynamics(x, p, u[:1], t) + ca.vertcat(u[1] * z[0], x[0] * u[2] * p[1])

    return base.remake(
        dynamics=f,
        lagrange=lambda x, p, u, t, z: base.lagrange(x, p, u, t) + u[1] ** 2 * z[0] + u[2] ** 4,
        path=Constraint.make(
            "path", lambda x, p, u, t, z: x[0] ** 2 + p[1] * z[0] * u[2], 1, -1, 4
        ),
        algebraic=AlgebraicStates(
            fn=lambda x, p, u, t, z: z[0] ** 3 + z[0] - x[1] * p[0] - u[1], n=1, nominal=2.0
        ),
        controls=Controls(2, lb=-2.0, ub=[3.0, 1.0], nominal=[1.0, 0.5], rate_penalty=0.3),
    )


def free_time_problem() -> DynamicOptimizationProblem:
    """A controlled problem whose final time is a decision variable (time scaling): the
    dynamics and Lagrange term depend on time, Mayer and boundary terms on tf."""
    return DynamicOptimizationProblem(
        dynamics=lambda x, p, u, t: ca.vertcat(x[1] * p[0], u[0] - ca.sin(x[0]) * t),
        n_states=2,
        n_params=1,
        tspan=(0.5, 2.0),
        lagrange=lambda x, p, u, t: u[0] ** 2 * t + x[0] * x[1],
        mayer=lambda x0, xf, p, tf: tf**2 * p[0] + xf[0] * x0[1],
        boundary=Constraint.make("boundary", lambda x0, xf, p, tf: xf[1] * tf - x0[0], 1),
        controls=Controls(1, lb=-1, ub=1),
        tf_bounds=(1.0, 4.0),
        p_guess=[0.4],
    )


PROBLEMS = {"rich": rich_problem, "controlled": controlled_problem, "free-tf": free_time_problem}

MESHES = {
    "mixed": Mesh.from_grid([0.0, 0.3, 0.5, 1.2, 2.0], [1, 3, 2, 4]),
    "uniform": Mesh.equidistant(0.0, 2.0, 5, 3),
    "spectral": Mesh.spectral(0.0, 2.0, 9),
}


def dense(sparsity: ca.Sparsity, nz: np.ndarray) -> np.ndarray:
    return np.array(ca.DM(sparsity, nz).full())


def scaled(mesh: Mesh, t0: float, tf: float) -> Mesh:
    """The same mesh moved onto [t0, tf]."""
    return Mesh.from_grid(t0 + (mesh.grid - mesh.t0) * (tf - t0) / (mesh.tf - mesh.t0), mesh.stages)


@pytest.fixture(params=[(p, m) for p in PROBLEMS for m in sorted(MESHES)], ids="-".join)
def nlp(request):
    problem_name, mesh_name = request.param
    dop = PROBLEMS[problem_name]()
    return StructuredNLP(dop, scaled(MESHES[mesh_name], *dop.tspan), threads=2)


@pytest.fixture
def point(rng, nlp):
    z = rng.uniform(-1, 1, nlp.layout.n_z)
    lam = rng.uniform(-1, 1, nlp.layout.n_c)
    return z, lam, 0.7


def test_sizes(nlp):
    mesh, dop = nlp.mesh, nlp.dop
    n_node_rows = dop.n_states + dop.n_algebraic + (dop.path.n if dop.path else 0)
    assert nlp.layout.n_z == mesh.n_nodes * dop.node_width + dop.n_params + int(dop.free_final_time)
    assert nlp.layout.n_c == mesh.n_collocation * n_node_rows + (
        dop.boundary.n if dop.boundary else 0
    )
    assert nlp.layout.size.nnz_hessian == nlp.layout.hess_sparsity.nnz()
    rows, cols = nlp.hessian_structure()
    assert np.all(rows <= cols), "Hessian must be the upper triangle"


def test_callbacks_match_casadi_ad(nlp, point):
    """The assembled derivatives equal CasADi's AD of the very same f/g expression graph."""
    z, lam, sigma = point
    zs = nlp.graph.z
    ref_grad = ca.Function("g", [zs], [ca.gradient(nlp.graph.f, zs)])(z)
    ref_jac = ca.Function("j", [zs], [ca.jacobian(nlp.graph.g, zs)])(z)
    lag = sigma * nlp.graph.f + ca.dot(ca.DM(lam), nlp.graph.g)
    ref_hess = ca.Function("h", [zs], [ca.triu(ca.hessian(lag, zs)[0])])(z)
    np.testing.assert_allclose(
        nlp.fn_grad(z).full().ravel(), np.array(ref_grad).ravel(), rtol=1e-12, atol=1e-12
    )
    np.testing.assert_allclose(
        dense(nlp.layout.jac_sparsity, nlp.fn_jac(z).full().ravel()),
        np.array(ref_jac),
        rtol=1e-12,
        atol=1e-12,
    )
    np.testing.assert_allclose(
        dense(nlp.layout.hess_sparsity, nlp.fn_hess(z, sigma, lam).full().ravel()),
        np.array(ref_hess),
        rtol=1e-12,
        atol=1e-12,
    )


def test_callbacks_match_finite_differences(nlp, point):
    z, lam, sigma = point
    f = lambda zz: float(nlp.fn_f(zz))  # noqa: E731
    g = lambda zz: nlp.fn_g(zz).full().ravel()  # noqa: E731
    J = dense(nlp.layout.jac_sparsity, nlp.fn_jac(z).full().ravel())

    def grad_lag(zz):
        Jz = dense(nlp.layout.jac_sparsity, nlp.fn_jac(zz).full().ravel())
        return sigma * nlp.fn_grad(zz).full().ravel() + Jz.T @ lam

    eps = 1e-6
    E = np.eye(nlp.layout.n_z)
    fd_grad = np.array([(f(z + eps * e) - f(z - eps * e)) / (2 * eps) for e in E])
    fd_jac = np.column_stack([(g(z + eps * e) - g(z - eps * e)) / (2 * eps) for e in E])
    fd_hess = np.column_stack(
        [(grad_lag(z + eps * e) - grad_lag(z - eps * e)) / (2 * eps) for e in E]
    )
    np.testing.assert_allclose(nlp.fn_grad(z).full().ravel(), fd_grad, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(J, fd_jac, rtol=1e-6, atol=1e-7)
    H = dense(nlp.layout.hess_sparsity, nlp.fn_hess(z, sigma, lam).full().ravel())
    H = H + np.triu(H, 1).T
    np.testing.assert_allclose(H, fd_hess, rtol=1e-6, atol=1e-6)


def test_jit_callbacks_equal_interpreted(rng, tmp_path, monkeypatch):
    monkeypatch.setenv("COLLOCNODE_CACHE", str(tmp_path))
    mesh = MESHES["mixed"]
    plain = StructuredNLP(rich_problem(), mesh)
    jitted = StructuredNLP(rich_problem(), mesh, jit=True)
    assert list(tmp_path.glob("*.so")), "the compiled library is cached on disk"
    z, lam = rng.uniform(-1, 1, plain.layout.n_z), rng.uniform(-1, 1, plain.layout.n_c)
    for name, args in (("fn_grad", (z,)), ("fn_jac", (z,)), ("fn_hess", (z, 0.3, lam))):
        a = getattr(plain, name)(*args).full()
        b = getattr(jitted, name)(*args).full()
        np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-13)


def test_constraint_values_are_collocation_equations(rng):
    """Row (k, s) of g is Σ_l D_jl x_il − h f_s(x_ij): check one node by hand."""
    dop = rich_problem()
    mesh = MESHES["mixed"]
    nlp = StructuredNLP(dop, mesh)
    z = rng.uniform(-1, 1, nlp.layout.n_z)
    X, p = nlp.split(z)
    g = nlp.fn_g(z).full().ravel()
    from collocnode.transcription import radau_table

    i, j = 3, 2  # interval 3 (4 stages), stage 2 (1-based)
    k = int(np.flatnonzero((mesh.collocation_interval == i) & (mesh.collocation_stage == j))[0])
    tab = radau_table(4)
    start = mesh.interval_start[i]
    node = mesh.collocation_index[k]
    t = mesh.node_times[node]
    u = np.cos(3 * t)
    x = X[node]
    f = np.array([p[0] * x[1] + np.sin(u) * x[0] * p[2], -p[1] * x[0] + x[0] * x[1] * p[2] + t])
    # rows are divided by the nominal state values (the NLP works with x / x_nominal)
    expected = (tab.D[j - 1] @ X[start : start + 5] - mesh.h[i] * f) / dop.x_nominal
    np.testing.assert_allclose(g[k * 3 : k * 3 + 2], expected, rtol=1e-12, atol=1e-12)
    assert g[k * 3 + 2] == pytest.approx(x[0] ** 2 + p[1] * x[1] * u)


@pytest.mark.parametrize("mesh", sorted(MESHES))
def test_structured_equals_naive_transcription(mesh, rng):
    """An independent loop-over-nodes transcription gives the same objective and constraints."""
    from collocnode.transcription._nlp.naive import naive_nlp

    dop, m = rich_problem(), MESHES[mesh]
    nlp = StructuredNLP(dop, m)
    ref = naive_nlp(dop, m)
    fg = ca.Function("fg", [ref["x"]], [ref["f"], ref["g"]])
    z = rng.uniform(-1, 1, nlp.layout.n_z)
    f_ref, g_ref = fg(z)
    assert float(nlp.fn_f(z)) == pytest.approx(float(f_ref), rel=1e-13)
    np.testing.assert_allclose(
        nlp.fn_g(z).full().ravel(), np.array(g_ref).ravel(), rtol=1e-13, atol=1e-13
    )


@pytest.mark.parametrize("threads", [1, 2])
def test_node_map_bounds_the_buffer_of_summed_outputs(monkeypatch, threads):
    """CasADi sums a mapped output after every node's copy exists: a large summed output (the
    parameter block of a network's Hessian) over many nodes must be summed block by block."""
    x, p = ca.SX.sym("x", 3), ca.SX.sym("p", 60)
    big = ca.vec(p @ p.T) * ca.sum1(x)  # 3,600 numbers per node, summed
    f = ca.Function("f", [x, p], [big, 2 * x])
    n = 997  # prime: the blocks do not divide it, the padding must be neutral
    X = np.random.default_rng(0).normal(size=(3, n))
    P = np.random.default_rng(1).normal(size=60)
    plain = f.map("plain", "serial", n, [1], [0], {})
    monkeypatch.setattr(node_map_module, "REDUCE_BUFFER_BYTES", 8 * 3_600 * 20)  # 20 nodes' copies
    node_map = node_map_module.NodeMap(n, threads, reduced_nnz=3_600)
    assert node_map.block == 20 and node_map.pad >= 0  # fewer than √(n / threads)
    padded = ca.horzcat(X, np.zeros((3, node_map.pad)))  # zero states add zero to the sum
    summed, rows = node_map.wrap(f, [1], [0])(padded, P)
    expected_sum, expected_rows = plain(X, P)
    np.testing.assert_allclose(np.asarray(summed), np.asarray(expected_sum), rtol=1e-12)
    np.testing.assert_array_equal(np.asarray(rows), np.asarray(expected_rows))
    # the buffer for the per-node copies: about one block and one copy per block, not n copies
    assert node_map.function(f, [1], [0]).sz_w() < 0.2 * plain.sz_w()


@pytest.mark.parametrize("threads", [1, 2])
def test_a_summing_map_is_nested_as_blocks_of_blocks(threads):
    """A map with summed outputs is about √N blocks of √N nodes per thread (a flat summing map
    of a compiled function takes time per node to construct that grows with N); the sums equal
    the flat map's, and a map without sums stays one serial map per thread."""
    x, p = ca.SX.sym("x", 2), ca.SX.sym("p", 4)
    f = ca.Function("f", [x, p], [ca.sin(p) * ca.sum1(x**2), x * ca.sum1(p)])
    n = 2_500  # the Van der Pol benchmark's nodes
    node_map = node_map_module.NodeMap(n, threads, reduced_nnz=4)
    per_thread = n // threads
    assert node_map.block == math.isqrt(per_thread - 1) + 1
    assert node_map.chunk // node_map.block <= node_map.block
    X = np.random.default_rng(0).normal(size=(2, n))
    padded = ca.horzcat(X, np.zeros((2, node_map.pad)))
    summed, rows = node_map.wrap(f, [1], [0])(padded, np.arange(1.0, 5.0))
    flat_sum, flat_rows = f.map("flat", "serial", n, [1], [0], {})(X, np.arange(1.0, 5.0))
    np.testing.assert_allclose(np.asarray(summed), np.asarray(flat_sum), rtol=1e-13)
    np.testing.assert_array_equal(np.asarray(rows), np.asarray(flat_rows))
    unsummed = node_map_module.NodeMap(n, threads, reduced_nnz=0)
    assert (unsummed.block, unsummed.chunk, unsummed.pad) == (per_thread, per_thread, 0)


@pytest.mark.parametrize("problem_name", ["rich", "controlled"])
@pytest.mark.parametrize("backend", ["casadi", "cyipopt"])
def test_proximal_term_is_exact_and_its_parameters_change_without_rebuild(
    problem_name, backend, rng
):
    """The proximal term ½ Σ rho_i (z_{S_i} - c_i)²: objective, gradient and Hessian equal the
    plain NLP's plus the term's own (by formula and by finite differences), new values take
    effect without a rebuild, and a large rho pins the unknowns to c in a solve."""
    from collocnode.transcription._ipopt.backends import IpoptOptions, solve_ipopt

    dop = PROBLEMS[problem_name]()
    mesh = scaled(MESHES["mixed"], *dop.tspan)
    plain = StructuredNLP(dop, mesh, threads=1)
    # two parameters, a state of node 3 and the first state of the last node
    S = np.array(
        [
            plain.layout.P0,
            plain.layout.P0 + 2,
            3 * plain.layout.nx + 1,
            plain.layout.P0 - plain.layout.nx,
        ]
    )
    prox = StructuredNLP(dop, mesh, threads=1, proximal=S)
    z, lam, sigma = rng.uniform(-1, 1, plain.layout.n_z), rng.uniform(-1, 1, plain.layout.n_c), 0.7
    for rho, c in [
        (np.array([1.0, 2.0, 0.5, 3.0]), rng.normal(size=4)),
        (np.ones(4) * 7, 0 * z[:4]),
    ]:
        prox.set_proximal(rho, c)
        gap = z[S] - c
        assert float(prox.fn_f(z)) == pytest.approx(
            float(plain.fn_f(z)) + 0.5 * np.sum(rho * gap**2), rel=1e-13
        )
        grad = plain.fn_grad(z).full().ravel()
        grad[S] += rho * gap
        np.testing.assert_allclose(prox.fn_grad(z).full().ravel(), grad, rtol=1e-13, atol=1e-13)
        H = dense(prox.layout.hess_sparsity, prox.fn_hess(z, sigma, lam).full().ravel())
        H0 = dense(plain.layout.hess_sparsity, plain.fn_hess(z, sigma, lam).full().ravel())
        H0[S, S] += sigma * rho
        np.testing.assert_allclose(H, H0, rtol=1e-13, atol=1e-13)
        eps = 1e-6
        fd = [
            (float(prox.fn_f(z + eps * e)) - float(prox.fn_f(z - eps * e))) / (2 * eps)
            for e in np.eye(prox.layout.n_z)[S]
        ]
        np.testing.assert_allclose(prox.fn_grad(z).full().ravel()[S], fd, rtol=1e-6, atol=1e-7)
    # in a solve (the backend gets the values as NLP parameters), a stiff proximal term on two
    # parameters pins them to the centre
    pinned = StructuredNLP(dop, mesh, threads=1, proximal=S[:2])
    center = pinned.initial_guess()[S[:2]] + np.array([0.05, -0.02])
    pinned.set_proximal(np.full(2, 1e8), center)
    res = solve_ipopt(pinned, pinned.initial_guess(), IpoptOptions(backend=backend, tol=1e-10))
    assert res.status.ok, res.message
    np.testing.assert_allclose(res.z[S[:2]], center, atol=1e-6)


def test_proximal_term_refuses_bad_indices_and_values():
    dop = rich_problem()
    mesh = scaled(MESHES["uniform"], *dop.tspan)
    with pytest.raises(ValueError, match="distinct and in"):
        StructuredNLP(dop, mesh, proximal=np.array([0, 0]))
    with pytest.raises(ValueError, match="distinct and in"):
        StructuredNLP(dop, mesh, proximal=np.array([10**6]))
    with pytest.raises(ValueError, match="1-d array"):
        StructuredNLP(dop, mesh, proximal=np.array([0.5]))
    nlp = StructuredNLP(dop, mesh, proximal=np.array([1, 2]))
    with pytest.raises(ValueError, match="shape"):
        nlp.set_proximal(np.ones(3), np.zeros(3))
    with pytest.raises(ValueError, match=">= 0"):
        nlp.set_proximal(np.array([-1.0, 1.0]), np.zeros(2))
