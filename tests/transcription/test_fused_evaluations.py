"""One evaluation for f, g, the gradient and the Jacobian: the fused Functions give the separate
Functions' numbers, the cyipopt backend's cache answers each iterate from one evaluation and a
new one at a new iterate, and both backends take the same iterates with each way of evaluating."""

import casadi as ca
import numpy as np
import pytest

from collocnode import Constraint, DynamicOptimizationProblem, Inputs, IpoptOptions, Mesh
from collocnode.transcription import StructuredNLP
from collocnode.transcription._ipopt import backends
from collocnode.transcription._ipopt.backends import EVALUATIONS, solve_ipopt
from collocnode.transcription._problem import Samples

MESH = Mesh.from_grid([0.0, 0.3, 0.5, 1.2, 2.0], [1, 3, 2, 4])


def everything_problem(rng: np.random.Generator) -> DynamicOptimizationProblem:
    """Inputs, a path and a boundary constraint, Lagrange and Mayer terms and data terms at
    sample times (one of them at a collocation node)."""

    def f(x, p, u, t):
        return ca.vertcat(
            p[0] * x[1] + ca.sin(u[0]) * x[0] * p[2], -p[1] * x[0] + x[0] * x[1] * p[2] + t
        )

    def data_term(x, p, u, t, d):
        return d[0] * (x[0] - d[1]) ** 2 + ca.sin(x[0] * x[1] * t * p[1])

    t_samples = np.concatenate([rng.uniform(0, 2, 7), [0.0, 2.0, MESH.node_times[2]]])
    n = t_samples.size
    return DynamicOptimizationProblem(
        dynamics=f,
        n_states=2,
        n_params=3,
        tspan=(0.0, 2.0),
        lagrange=lambda x, p, u, t: (x[0] - u[0]) ** 2 + x[1] ** 2 + (p[0] * x[1]) ** 2,
        mayer=lambda x0, xf, p: ca.dot(p, p) + xf[0] * x0[0],
        path=Constraint.make("path", lambda x, p, u, t: x[0] ** 2 + p[1] * x[1] * u[0], 1, -1, 4),
        boundary=Constraint.make("boundary", lambda x0, xf, p: x0[0] - 1, 1),
        inputs=Inputs.from_function(lambda t: np.cos(3 * t)[:, None], 1),
        x_guess=np.array([1.0, 0.5]),
        p_guess=np.array([0.3, -0.2, 0.7]),
        x_nominal=np.array([2.0, 0.5]),
        sample_loss=data_term,
        samples=Samples(t_samples, rng.uniform(0, 1, (n, 2)), rng.uniform(0.1, 1, n)),
    )


def build(rng: np.random.Generator, threads: int = 1, proximal: bool = False) -> StructuredNLP:
    dop = everything_problem(rng)
    if not proximal:
        return StructuredNLP(dop, MESH, threads=threads)
    plain = StructuredNLP(dop, MESH, threads=1)
    S = np.array([plain.layout.P0, 3 * plain.layout.nx + 1, plain.layout.P0 - plain.layout.nx])
    nlp = StructuredNLP(dop, MESH, threads=threads, proximal=S)
    nlp.set_proximal(np.array([1.0, 2.0, 0.5]), rng.normal(size=3))
    return nlp


def outputs(fn: ca.Function, *args: object) -> list[np.ndarray]:
    return [np.asarray(o).ravel() for o in fn.call([ca.DM(a) for a in args])]


# threads=3 pads the node map (a node count that 3 does not divide): padded nodes must add nothing
@pytest.mark.parametrize("threads", [1, 3])
@pytest.mark.parametrize("proximal", [False, True], ids=["plain", "proximal"])
def test_fused_functions_give_the_separate_functions_numbers(rng, threads, proximal):
    nlp = build(rng, threads, proximal)
    assert nlp.layout.N % 3 != 0
    assert nlp.sample_groups and nlp.dop.path and nlp.dop.boundary
    for _ in range(3):
        z = rng.uniform(-1, 1, nlp.layout.n_z)
        separate = [outputs(getattr(nlp, f"fn_{k}"), z)[0] for k in ("f", "g", "grad", "jac")]
        fused = outputs(nlp.fn_fused, z)
        for a, b in zip(separate, fused, strict=True):
            np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-12)
        # nlpsol's callbacks, fused and separate
        fused_cb, separate_cb = nlp.casadi_callbacks(), nlp.casadi_callbacks(fused=False)
        for name in ("grad_f", "jac_g"):
            a = outputs(separate_cb[name], z, nlp.prm_values)
            b = outputs(fused_cb[name], z, nlp.prm_values)
            for x, y in zip(a, b, strict=True):
                np.testing.assert_allclose(y, x, rtol=1e-12, atol=1e-12)


def test_fused_functions_compiled_give_the_interpreted_numbers(rng, tmp_path, monkeypatch):
    monkeypatch.setenv("COLLOCNODE_CACHE", str(tmp_path / "cache"))
    dop = everything_problem(rng)
    interpreted = StructuredNLP(dop, MESH, threads=1)
    compiled = StructuredNLP(dop, MESH, threads=1, jit=True)
    z = rng.uniform(-1, 1, interpreted.layout.n_z)
    for a, b in zip(outputs(interpreted.fn_fused, z), outputs(compiled.fn_fused, z), strict=True):
        np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("evaluations", EVALUATIONS)
def test_the_cache_answers_an_iterate_once_and_a_new_iterate_afresh(rng, evaluations):
    nlp = build(rng)
    problem = backends._CyipoptProblem(nlp, recorder=None, evaluations=evaluations)
    z = rng.uniform(-1, 1, nlp.layout.n_z)
    for step in range(3):
        if step:
            z[5] += 0.1 * step  # the same array, changed in place: a new iterate
        expected = [outputs(getattr(nlp, f"fn_{k}"), z)[0] for k in ("f", "g", "grad", "jac")]
        before = sum(e.evaluations for e in problem.functions.values())
        got = [
            problem.constraints(z.copy()),
            np.atleast_1d(problem.objective(z)),
            problem.gradient(z.copy()),
            problem.jacobian(z),
            problem.objective(z.copy()),
        ]
        got = [got[1], got[0], got[2], got[3]]
        for a, b in zip(expected, got, strict=True):
            np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-12)
        runs = sum(e.evaluations for e in problem.functions.values()) - before
        assert runs == {"fused": 1, "separate": 4}[evaluations]


def test_the_hessian_is_evaluated_at_every_new_multiplier(rng):
    nlp = build(rng)
    problem = backends._CyipoptProblem(nlp, recorder=None)
    z = rng.uniform(-1, 1, nlp.layout.n_z)
    lam = rng.uniform(-1, 1, nlp.layout.n_c)
    for sigma in (1.0, 0.5):
        lam[0] += 1.0
        expected = outputs(nlp.fn_hess, z, sigma, lam)[0]
        np.testing.assert_allclose(problem.hessian(z, lam, sigma), expected, rtol=1e-12, atol=0)


def test_unknown_evaluations_are_refused(rng):
    nlp = build(rng)
    with pytest.raises(ValueError, match="evaluations must be one of"):
        solve_ipopt(nlp, nlp.initial_guess(), IpoptOptions(print_level=0), evaluations="all")


@pytest.mark.parametrize("backend", ["casadi", "cyipopt"])
def test_each_way_of_evaluating_takes_the_same_iterates(rng, backend):
    nlp = build(rng, threads=2)
    z0 = nlp.initial_guess()
    options = IpoptOptions(tol=1e-9, max_iter=200, print_level=0, backend=backend)
    results = {e: solve_ipopt(nlp, z0, options, evaluations=e) for e in EVALUATIONS}
    ref = results["separate"]
    assert ref.status.ok and ref.iterations > 3
    for res in results.values():
        assert res.iterations == ref.iterations
        objectives = np.array([h[2] for h in res.history])
        np.testing.assert_allclose(objectives, [h[2] for h in ref.history], rtol=1e-10)
        np.testing.assert_allclose(res.z, ref.z, rtol=1e-8, atol=1e-10)
