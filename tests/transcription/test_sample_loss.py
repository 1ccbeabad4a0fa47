"""Data terms at sample times: the collocation polynomial of the sample's interval, evaluated at
the sample time, in the structured NLP (values, exact derivatives, sparsity, both backends)."""

import casadi as ca
import numpy as np
import pytest

from collocnode import (
    DynamicOptimizationProblem,
    HybridModel,
    Inputs,
    IpoptOptions,
    Mesh,
    NeuralODE,
    RadauIIA,
    TrainingProblem,
    Trajectory,
    solve,
)
from collocnode.nn import MLP
from collocnode.transcription import StructuredNLP
from collocnode.transcription._problem import Samples, Segment

MESHES = {
    "mixed": Mesh.from_grid([0.0, 0.3, 0.5, 1.2, 2.0], [1, 3, 2, 4]),
    "uniform": Mesh.equidistant(0.0, 2.0, 5, 3),
    "spectral": Mesh.spectral(0.0, 2.0, 9),
}


def sample_times(mesh: Mesh, rng: np.random.Generator) -> np.ndarray:
    """Irregular times with the awkward ones: both ends, a grid time, a collocation node."""
    special = [mesh.t0, mesh.tf, float(mesh.grid[mesh.n_intervals // 2]), mesh.node_times[2]]
    return np.concatenate([rng.uniform(mesh.t0, mesh.tf, 9), special])


def rich_problem(t_samples: np.ndarray, rng: np.random.Generator) -> DynamicOptimizationProblem:
    """Inputs, a node Lagrange term and a data term that is not quadratic and couples x, p, u."""

    def f(x, p, u, t):
        return ca.vertcat(p[0] * x[1], -p[1] * x[0] + u[0] * p[2] * x[0] * x[1])

    def data_term(x, p, u, t, d):
        fitted = d[0] * (x[0] - d[1]) ** 2 + d[2] * (p[0] * x[1] * u[0] - d[3]) ** 2
        return fitted + ca.sin(x[0] * x[1] * t)

    n = t_samples.size
    return DynamicOptimizationProblem(
        dynamics=f,
        n_states=2,
        n_params=3,
        tspan=(0.0, 2.0),
        lagrange=lambda x, p, u, t: x[0] ** 2 + p[2] * x[1],
        inputs=Inputs.from_function(lambda t: np.cos(3 * t)[:, None], 1),
        x_nominal=np.array([2.0, 0.5]),
        sample_loss=data_term,
        samples=Samples(t_samples, rng.uniform(0, 1, (n, 4)), rng.uniform(0.1, 1, n)),
    )


def reference_objective(dop, mesh, z_nlp) -> float:
    """The objective computed independently: dense output of the mesh at the sample times, the
    Radau quadrature over the nodes."""
    X, p = z_nlp
    ts, d, w = dop.samples.t, dop.samples.data, dop.samples.weights
    x = mesh.interpolate(X, ts)
    u = np.cos(3 * ts)
    terms = d[:, 0] * (x[:, 0] - d[:, 1]) ** 2 + d[:, 2] * (p[0] * x[:, 1] * u - d[:, 3]) ** 2
    terms += np.sin(x[:, 0] * x[:, 1] * ts)
    xc = X[mesh.collocation_index]
    return float(
        np.sum(w * terms) + np.sum(mesh.quadrature_weights * (xc[:, 0] ** 2 + p[2] * xc[:, 1]))
    )


def dense(sparsity: ca.Sparsity, nz) -> np.ndarray:
    return np.array(ca.DM(sparsity, np.asarray(nz).ravel()).full())


@pytest.fixture(params=sorted(MESHES))
def case(request, rng):
    mesh = MESHES[request.param]
    dop = rich_problem(sample_times(mesh, rng), rng)
    return dop, mesh, StructuredNLP(dop, mesh, threads=2)


def test_objective_is_the_dense_output_at_the_sample_times(case, rng):
    dop, mesh, nlp = case
    z = rng.uniform(-1, 1, nlp.layout.n_z)
    ref = reference_objective(dop, mesh, nlp.split(z))
    assert float(nlp.fn_f(z)) == pytest.approx(ref, rel=1e-13)


def test_each_sample_touches_only_its_interval(case):
    """The Hessian's state-state entries of the data terms stay inside one interval's nodes."""
    _, mesh, nlp = case
    rows, cols = nlp.hessian_structure()
    states = cols < nlp.layout.P0
    node_r, node_c = rows[states] // nlp.layout.nx, cols[states] // nlp.layout.nx
    # the interval of a node pair: x_i0 belongs to interval i - 1 and i, so compare ranges
    start = mesh.interval_start
    stop = start + mesh.stages
    same = np.zeros(node_r.size, bool)
    for a, b in zip(start, stop, strict=True):
        same |= (node_r >= a) & (node_r <= b) & (node_c >= a) & (node_c <= b)
    assert same.all()
    # and the data terms do add couplings between nodes (the node terms alone have none)
    assert np.any(node_r != node_c)


def test_derivatives_match_casadi_ad(case, rng):
    _, _, nlp = case
    z, lam, sigma = rng.uniform(-1, 1, nlp.layout.n_z), rng.uniform(-1, 1, nlp.layout.n_c), 0.7
    zs = nlp.graph.z
    ref_grad = np.array(ca.Function("g", [zs], [ca.gradient(nlp.graph.f, zs)])(z)).ravel()
    lag = sigma * nlp.graph.f + ca.dot(ca.DM(lam), nlp.graph.g)
    ref_hess = np.array(ca.Function("h", [zs], [ca.triu(ca.hessian(lag, zs)[0])])(z))
    np.testing.assert_allclose(nlp.fn_grad(z).full().ravel(), ref_grad, rtol=1e-12, atol=1e-12)
    H = dense(nlp.layout.hess_sparsity, nlp.fn_hess(z, sigma, lam).full())
    np.testing.assert_allclose(H, ref_hess, rtol=1e-12, atol=1e-12)


def test_derivatives_match_finite_differences(case, rng):
    _, _, nlp = case
    z, lam, sigma = rng.uniform(-1, 1, nlp.layout.n_z), rng.uniform(-1, 1, nlp.layout.n_c), 0.7
    f = lambda zz: float(nlp.fn_f(zz))  # noqa: E731

    def grad_lag(zz):
        J = dense(nlp.layout.jac_sparsity, nlp.fn_jac(zz).full())
        return sigma * nlp.fn_grad(zz).full().ravel() + J.T @ lam

    eps, E = 1e-6, np.eye(nlp.layout.n_z)
    fd_grad = np.array([(f(z + eps * e) - f(z - eps * e)) / (2 * eps) for e in E])
    fd_hess = np.column_stack(
        [(grad_lag(z + eps * e) - grad_lag(z - eps * e)) / (2 * eps) for e in E]
    )
    np.testing.assert_allclose(nlp.fn_grad(z).full().ravel(), fd_grad, rtol=1e-6, atol=1e-7)
    H = dense(nlp.layout.hess_sparsity, nlp.fn_hess(z, sigma, lam).full())
    np.testing.assert_allclose(H + np.triu(H, 1).T, fd_hess, rtol=1e-6, atol=1e-6)


def test_partial_quasi_newton_keeps_the_data_terms_exact(rng):
    """With a learned p-p block, everything but the node terms' p-p block is the exact Hessian:
    the data terms join the exact part outside the node Lagrangian."""
    mesh = MESHES["mixed"]
    dop = rich_problem(sample_times(mesh, rng), rng)
    exact = StructuredNLP(dop, mesh)
    partial = StructuredNLP(dop, mesh, hessian="partial-pp")
    z, lam, sigma = rng.uniform(-1, 1, exact.layout.n_z), rng.uniform(-1, 1, exact.layout.n_c), 0.7
    H = dense(exact.layout.hess_sparsity, exact.fn_hess(z, sigma, lam).full())
    node, rest = (
        dense(partial.layout.hess_sparsity, part.full())
        for part in partial.fn_hess_parts(z, sigma, lam)
    )
    diff = H - node - rest
    P0 = exact.layout.P0
    assert np.abs(diff[:P0, :]).max() <= 1e-13  # every state row is exact
    # what is left is the node Lagrangian's p-p block, which the update learns
    only_nodes = StructuredNLP(dop.remake(sample_loss=None, samples=None), mesh)
    H_nodes = dense(only_nodes.layout.hess_sparsity, only_nodes.fn_hess(z, sigma, lam).full())
    np.testing.assert_allclose(diff[P0:, P0:], H_nodes[P0:, P0:], rtol=1e-12, atol=1e-13)


def test_jit_gives_the_interpreted_values(rng, tmp_path, monkeypatch):
    monkeypatch.setenv("COLLOCNODE_CACHE", str(tmp_path))
    mesh = MESHES["mixed"]
    dop = rich_problem(sample_times(mesh, rng), rng)
    plain, jitted = StructuredNLP(dop, mesh), StructuredNLP(dop, mesh, jit=True)
    z, lam = rng.uniform(-1, 1, plain.layout.n_z), rng.uniform(-1, 1, plain.layout.n_c)
    for name, args in (("fn_f", (z,)), ("fn_grad", (z,)), ("fn_hess", (z, 0.3, lam))):
        np.testing.assert_allclose(
            getattr(plain, name)(*args).full(), getattr(jitted, name)(*args).full(), rtol=1e-13
        )


# ---- exact on polynomials ------------------------------------------------------------------------


def polynomial(t: np.ndarray, degree: int) -> np.ndarray:
    """Two states: a polynomial of ``degree`` and its negative plus 1, shape (n, 2)."""
    coef = np.array([0.3, -1.1, 0.7, 0.45, -0.2, 0.15, -0.05])[: degree + 1]
    q = np.polyval(coef[::-1], t)
    return np.column_stack([q, 1.0 - 2.0 * q])


def fitted_residual(mesh: Mesh, degree: int, t: np.ndarray) -> float:
    """RMS of x(t_s) - truth, read from a least-squares data term at the exact node states."""
    truth = polynomial(t, degree)
    dop = DynamicOptimizationProblem(
        dynamics=lambda x, p, u, t: ca.vertcat(x[1], -x[0]),
        n_states=2,
        n_params=0,
        tspan=(mesh.t0, mesh.tf),
        x_nominal=np.array([3.0, 0.25]),
        sample_loss=lambda x, p, u, t, d: ca.sumsqr(x - d),
        samples=Samples(t, truth),
    )
    nlp = StructuredNLP(dop, mesh)
    z = nlp.initial_guess(polynomial(mesh.node_times, degree), np.zeros(0))
    return float(np.sqrt(float(nlp.fn_f(z)) / t.size))


@pytest.mark.parametrize("stages", [1, 2, 3, 5])
def test_polynomials_of_degree_m_are_interpolated_exactly(stages, rng):
    mesh = Mesh.from_grid([0.0, 0.4, 0.45, 1.3, 2.0], stages)
    t = np.concatenate([rng.uniform(0, 2, 40), mesh.grid, mesh.node_times[1:4]])
    assert fitted_residual(mesh, stages, t) <= 1e-14
    # one degree more is not exact: the check above can fail
    assert fitted_residual(mesh, stages + 1, t) >= 1e-6


def test_mixed_stages_are_exact_up_to_the_smallest_degree(rng):
    mesh = MESHES["mixed"]
    t = rng.uniform(0, 2, 50)
    assert fitted_residual(mesh, 1, t) <= 1e-14
    assert fitted_residual(mesh, 2, t) >= 1e-6  # the one-stage interval is linear


# ---- several segments ----------------------------------------------------------------------------


def test_segments_have_their_own_sample_times(rng):
    """Two trajectories with different horizons and sample times: each sample sees its own
    segment's nodes."""

    def term(x, p, u, t, d):
        return (x[0] - d[0]) ** 2

    m0, m1 = Mesh.equidistant(0.0, 1.0, 3, 3), Mesh.equidistant(0.5, 3.0, 4, 2)
    t0, t1 = np.array([0.0, 0.2, 0.9]), np.array([0.5, 1.7, 2.2, 3.0])
    d0, d1 = rng.uniform(size=3), rng.uniform(size=4)
    dop = DynamicOptimizationProblem(
        dynamics=lambda x, p, u, t: -p[0] * x,
        n_states=1,
        n_params=1,
        tspan=(0.0, 1.0),
        sample_loss=term,
        segments=(
            Segment((0.0, 1.0), samples=Samples(t0, d0)),
            Segment((0.5, 3.0), samples=Samples(t1, d1, weights=np.arange(4.0))),
        ),
    )
    nlp = StructuredNLP(dop, [m0, m1])
    z = rng.uniform(-1, 1, nlp.layout.n_z)
    X0, X1 = nlp.segment_states(z)
    ref = np.sum((m0.interpolate(X0, t0)[:, 0] - d0) ** 2)
    ref += np.sum(np.arange(4.0) * (m1.interpolate(X1, t1)[:, 0] - d1) ** 2)
    assert float(nlp.fn_f(z)) == pytest.approx(ref, rel=1e-13)
    # a zero weight drops the sample
    assert sum(g.n for g in nlp.sample_groups) == 6


# ---- bad input -----------------------------------------------------------------------------------


def test_sample_times_outside_the_horizon_are_one_clear_error():
    base = dict(
        dynamics=lambda x, p, u, t: -x,
        n_states=1,
        n_params=0,
        tspan=(0.0, 1.0),
        sample_loss=lambda x, p, u, t, d: (x[0] - d[0]) ** 2,
    )
    with pytest.raises(
        ValueError, match=r"^samples\.t\[1\] = 1\.5 lies outside the horizon \[0\.0, 1\.0\]$"
    ):
        DynamicOptimizationProblem(**base, samples=Samples([0.2, 1.5], [1.0, 2.0]))
    with pytest.raises(ValueError, match=r"^segments\[1\]\.samples\.t\[0\] = -0\.5 lies outside"):
        DynamicOptimizationProblem(
            **base,
            segments=(Segment((0.0, 1.0)), Segment((0.0, 2.0), samples=Samples([-0.5], [1.0]))),
        )
    # a time a rounding error outside is moved onto the end
    ok = DynamicOptimizationProblem(**base, samples=Samples([1.0 + 1e-13], [1.0]))
    assert ok.samples.t[0] == 1.0


@pytest.mark.parametrize(
    "samples, error, match",
    [
        (Samples([0.2], [1.0]), None, None),
        ("x", TypeError, r"^samples must be a Samples object or None, got 'x'"),
    ],
)
def test_samples_must_be_samples(samples, error, match):
    kwargs = dict(
        dynamics=lambda x, p, u, t: -x,
        n_states=1,
        n_params=0,
        tspan=(0.0, 1.0),
        sample_loss=lambda x, p, u, t, d: d[0] * x[0],
        samples=samples,
    )
    if error is None:
        assert DynamicOptimizationProblem(**kwargs).n_sample_data == 1
    else:
        with pytest.raises(error, match=match):
            DynamicOptimizationProblem(**kwargs)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(t=[], data=np.zeros((0, 1))), r"^samples\.t must hold at least one time"),
        (dict(t=[0.1, np.nan], data=[1.0, 2.0]), r"^samples\.t must be finite"),
        (dict(t=[0.1, 0.2], data=[1.0]), r"^samples\.data must have shape \(2, n_data\)"),
        (dict(t=[0.1], data=[np.inf]), r"^samples\.data must be finite"),
        (dict(t=[0.1, 0.2], data=[1, 2], weights=[1, -1]), r"^samples\.weights must be >= 0"),
        (dict(t=[0.1, 0.2], data=[1, 2], weights=[1]), r"^samples\.weights must have shape"),
    ],
)
def test_bad_samples_give_one_clear_error(kwargs, match):
    with pytest.raises(ValueError, match=match):
        Samples(**kwargs)


def test_samples_need_a_sample_loss_and_one_width():
    base = dict(dynamics=lambda x, p, u, t: -x, n_states=1, n_params=0, tspan=(0.0, 1.0))
    with pytest.raises(ValueError, match=r"^samples are given but sample_loss is None"):
        DynamicOptimizationProblem(**base, samples=Samples([0.5], [1.0]))
    with pytest.raises(ValueError, match=r"same number of data columns, got \[1, 2\]"):
        DynamicOptimizationProblem(
            **base,
            sample_loss=lambda x, p, u, t, d: d[0] * x[0],
            segments=(
                Segment((0.0, 1.0), samples=Samples([0.5], [1.0])),
                Segment((0.0, 1.0), samples=Samples([0.5], [[1.0, 2.0]])),
            ),
        )


# ---- training at the samples through both backends -----------------------------------------------


def output_model() -> HybridModel:
    """x' = [x1, -k x0 + net(x0)], observed through its acceleration y = x1' (a model output
    that depends on the parameters)."""
    from collocnode.models import Parameter

    def rhs(x, u, t, blocks, params):
        return ca.vertcat(x[1], -params["k"] * x[0] + blocks["net"](x[0]))

    return HybridModel(
        n_states=2,
        blocks={"net": MLP((1, 3, 1), "tanh")},
        rhs=rhs,
        outputs=lambda x, u, t, blocks, params: rhs(x, u, t, blocks, params)[1],
        n_outputs=1,
        parameters={"k": Parameter(0.5, fit=True, lb=0.0, ub=5.0)},
    )


def output_problem(fit: object = "outputs") -> TrainingProblem:
    t = np.sort(np.r_[0.0, np.random.default_rng(4).uniform(0, 3, 17), 3.0])
    x = np.column_stack([np.cos(t), -np.sin(t)])
    y = -x[:, :1] + 0.05 * np.random.default_rng(5).standard_normal((t.size, 1))
    return TrainingProblem(
        output_model(),
        Trajectory(t, x, y=y),
        fit=fit,
        regularization=1e-3,
        initial_state=x[0],
        state_guess="data",
        loss="samples",
    )


def test_outputs_at_the_samples_couple_the_states_with_p(rng):
    prob = output_problem()
    dop = prob.to_dop(params_guess=prob.model.init_params(0))
    nlp = StructuredNLP(dop, Mesh.equidistant(0.0, 3.0, 4, 3))
    (group,) = nlp.sample_groups
    assert group.fn.hxp[0].size and group.fn.hpp[0].size
    z, lam, sigma = (
        nlp.initial_guess() + rng.uniform(-0.3, 0.3, nlp.layout.n_z),
        rng.uniform(-1, 1, nlp.layout.n_c),
        0.7,
    )

    def grad_lag(zz):
        J = dense(nlp.layout.jac_sparsity, nlp.fn_jac(zz).full())
        return sigma * nlp.fn_grad(zz).full().ravel() + J.T @ lam

    eps, E = 1e-6, np.eye(nlp.layout.n_z)
    fd = np.column_stack([(grad_lag(z + eps * e) - grad_lag(z - eps * e)) / (2 * eps) for e in E])
    H = dense(nlp.layout.hess_sparsity, nlp.fn_hess(z, sigma, lam).full())
    np.testing.assert_allclose(H + np.triu(H, 1).T, fd, rtol=1e-6, atol=1e-6)


def test_backends_take_the_same_iterates_at_the_samples():
    """Irregular samples with missing values of one state, through both IPOPT backends."""
    t = np.sort(np.r_[0.0, np.random.default_rng(4).uniform(0, 3, 17), 3.0])
    x = np.column_stack([np.cos(t), -np.sin(t)])
    mask = np.ones((t.size, 2), bool)
    mask[3:9, 1] = False
    results = {}
    for backend in ("casadi", "cyipopt"):
        prob = TrainingProblem(
            NeuralODE(MLP((2, 4, 2), "tanh")),
            Trajectory(t, x),
            regularization=1e-4,
            initial_state=x[0],
            loss="samples",
            mask=mask,
        )
        opts = IpoptOptions(tol=1e-8, max_iter=60, backend=backend, print_level=0)
        results[backend] = solve(prob, RadauIIA(15, 3, ipopt=opts), seed=3)
    a, b = results["casadi"], results["cyipopt"]
    assert a.success and a.iterations == b.iterations
    # the same NLP evaluated in a different order of sums: the objectives agree to a few
    # parts in 1e9 at every iterate
    ha, hb = (np.array([h[2] for h in s.history]) for s in (a, b))
    np.testing.assert_allclose(ha, hb, rtol=2e-8, atol=1e-14)
    np.testing.assert_allclose(a.p, b.p, rtol=1e-8, atol=1e-12)


# ---- the size of the data terms, estimated before anything is built -------------------------
@pytest.mark.parametrize("mesh", sorted(MESHES))
def test_the_estimate_counts_every_nonzero_of_the_data_terms(mesh, rng):
    from collocnode.transcription._nlp.build import sample_nonzeros

    dop = rich_problem(sample_times(MESHES[mesh], rng), rng)
    nlp = StructuredNLP(dop, MESHES[mesh], threads=2)
    built = sum(
        g.n * (g.hxx[0].size + g.hxp[0].size + g.n_local) for g in nlp.layout.samples
    )  # per sample: its Hessian entries over (states, p) and its gradient over the states
    assert sample_nonzeros(dop, [MESHES[mesh]]) == (dop.samples.t.size, built)


def many_samples(n: int) -> TrainingProblem:
    t = np.linspace(0.0, 2.0, n)
    data = Trajectory(t, np.column_stack([np.exp(-t), -np.exp(-t)]))
    return TrainingProblem(NeuralODE([MLP((2, 4, 2), "tanh")]), data, loss="samples")


def test_too_many_samples_for_memory_are_refused_before_the_build(monkeypatch):
    from collocnode import _validation

    monkeypatch.setattr(_validation, "physical_memory_bytes", lambda: 200 * 10**6)
    alg = RadauIIA(20, 3, ipopt=IpoptOptions(max_iter=3, print_level=0))
    assert solve(many_samples(1_000), alg, seed=0, check=False).iterations <= 3
    with pytest.raises(ValueError, match=r"200000 data terms at sample times") as err:
        solve(many_samples(200_000), alg, seed=0, check=False)
    assert "more than the 0.2 GB this process may use" in str(err.value)
    assert "use fewer samples (or loss='nodes')" in str(err.value)


def test_an_address_space_limit_is_the_memory_a_process_may_use():
    import resource

    from collocnode import _validation

    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    if soft != resource.RLIM_INFINITY:
        pytest.skip("the tests run under an address-space limit already")
    mapped = _validation._mapped_bytes()
    resource.setrlimit(resource.RLIMIT_AS, (mapped + 10**9, hard))
    try:
        assert 0.9e9 < _validation.memory_limit_bytes() <= 1e9
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def test_a_build_slower_than_the_time_limit_is_refused_before_it_starts():
    alg = RadauIIA(20, 3, ipopt=IpoptOptions(max_wall_time=0.05, print_level=0))
    with pytest.raises(
        ValueError, match=r"building the NLP would take at least [\d.]+ s, more"
    ) as err:
        solve(many_samples(1_000_000), alg, seed=0, check=False)
    assert "more than the 0.05 s the solve may take" in str(err.value)


def test_sample_groups_build_each_observable_alone_with_the_same_values(rng):
    """Two observables selected by a one-hot pair of data columns, one of x0 and p0, the other
    of x1 and p1: grouped by those columns, each group's term holds only its own derivatives
    (fewer Hessian nonzeros evaluated per sample; the NLP's pattern, their union, is the same)
    and the objective, gradient and Hessian are unchanged."""

    def f(x, p, u, t):
        return ca.vertcat(-p[0] * x[0], -p[1] * x[1])

    def data_term(x, p, u, t, d):
        first = ca.if_else(d[1] > 0.5, (p[0] * x[0] ** 2 - d[0]) ** 2, 0.0)
        return first + ca.if_else(d[2] > 0.5, (p[1] * x[1] ** 3 - d[0]) ** 2, 0.0)

    mesh = MESHES["uniform"]
    t = rng.uniform(0.0, 2.0, 30)
    which = rng.integers(0, 2, t.size)
    data = np.column_stack([rng.uniform(0, 1, t.size), which == 0, which == 1]).astype(float)

    def nlp(groups):
        dop = DynamicOptimizationProblem(
            dynamics=f,
            n_states=2,
            n_params=2,
            tspan=(0.0, 2.0),
            sample_loss=data_term,
            samples=Samples(t, data),
            sample_groups=groups,
        )
        return StructuredNLP(dop, mesh, threads=1)

    one, grouped = nlp(()), nlp((1, 2))
    assert len(grouped.sample_groups) > len(one.sample_groups)

    def evaluated(nlp):
        return sum(
            g.n * sum(len(h[0]) for h in (g.fn.hxx, g.fn.hxp, g.fn.hpp)) for g in nlp.sample_groups
        )

    assert evaluated(grouped) < 0.6 * evaluated(one)
    assert grouped.layout.hess_sparsity.nnz() == one.layout.hess_sparsity.nnz()
    z, lam = rng.uniform(-1, 1, one.layout.n_z), rng.uniform(-1, 1, one.layout.n_c)
    assert float(grouped.fn_f(z)) == pytest.approx(float(one.fn_f(z)), rel=1e-13)
    np.testing.assert_allclose(grouped.fn_grad(z).full(), one.fn_grad(z).full(), rtol=1e-12)
    h_one = dense(one.layout.hess_sparsity, one.fn_hess(z, 0.7, lam).full())
    h_grouped = dense(grouped.layout.hess_sparsity, grouped.fn_hess(z, 0.7, lam).full())
    np.testing.assert_allclose(h_grouped, h_one, rtol=1e-12, atol=1e-14)


def test_sample_groups_must_be_data_columns():
    with pytest.raises(ValueError, match="sample_groups must be column indices"):
        DynamicOptimizationProblem(
            dynamics=lambda x, p, u, t: -x,
            n_states=1,
            n_params=0,
            tspan=(0.0, 1.0),
            sample_loss=lambda x, p, u, t, d: (x[0] - d[0]) ** 2,
            samples=Samples(np.array([0.5]), np.array([[1.0]])),
            sample_groups=(3,),
        )
