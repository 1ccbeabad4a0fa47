"""solve() on problems with known answers; backend agreement; honest statuses."""

import casadi as ca
import numpy as np
import pytest

from collocnode import (
    DynamicOptimizationProblem,
    Inputs,
    IpoptOptions,
    NeuralODE,
    RadauIIA,
    SolverStatus,
    TrainingProblem,
    Trajectory,
    solve,
)
from collocnode.nn import MLP
from tests.helpers import too_large_for_memory

QUIET = dict(print_level=0)


def decay(lam: float = -1.5, tf: float = 2.0) -> DynamicOptimizationProblem:
    return DynamicOptimizationProblem(
        dynamics=lambda x, p, u, t: lam * x,
        n_states=1,
        n_params=0,
        tspan=(0.0, tf),
        lagrange=lambda x, p, u, t: x[0] ** 2,
        x0=[1.0],
        x_guess=[1.0],
    )


@pytest.mark.parametrize("stages", [1, 2, 3])
def test_collocation_order_through_the_nlp(stages):
    """x' = λx solved as an NLP converges at t_f with Radau IIA's order 2m − 1."""
    errs = []
    for n in (4, 8):
        sol = solve(decay(), RadauIIA(n, stages, ipopt=IpoptOptions(tol=1e-14, **QUIET)))
        assert sol.status == SolverStatus.SUCCESS
        errs.append(abs(sol.x_nodes[-1, 0] - np.exp(-3.0)))
    order = np.log2(errs[0] / errs[1])
    assert order == pytest.approx(2 * stages - 1, abs=0.35)


def test_solution_does_not_depend_on_state_scaling():
    base = solve(decay(), RadauIIA(6, 3, ipopt=IpoptOptions(tol=1e-12, **QUIET)))
    scaled = solve(
        decay().remake(x_nominal=[1e-3]), RadauIIA(6, 3, ipopt=IpoptOptions(tol=1e-12, **QUIET))
    )
    np.testing.assert_allclose(scaled.x_nodes, base.x_nodes, rtol=1e-9, atol=1e-12)
    assert scaled.objective == pytest.approx(base.objective, rel=1e-9)


def test_lagrange_term_is_radau_quadrature():
    sol = solve(decay(), RadauIIA(10, 4, ipopt=IpoptOptions(tol=1e-14, **QUIET)))
    exact = (1 - np.exp(-6.0)) / 3.0  # ∫_0^2 e^{-3t} dt
    assert sol.objective == pytest.approx(exact, rel=1e-9)


def test_parameter_estimation_recovers_the_rate():
    t = np.linspace(0, 2, 41)
    data = Inputs.from_samples(t, np.exp(-2.0 * t), "cubic")
    dop = DynamicOptimizationProblem(
        dynamics=lambda x, p, u, t: -p[0] * x,
        n_states=1,
        n_params=1,
        tspan=(0.0, 2.0),
        lagrange=lambda x, p, u, t: (x[0] - u[0]) ** 2,
        inputs=data,
        x0=[1.0],
        x_guess=[1.0],
        p_guess=[0.5],
        p_lb=[0.0],
        p_ub=[10.0],
    )
    sol = solve(dop, RadauIIA(20, 3, ipopt=IpoptOptions(tol=1e-12, **QUIET)))
    assert sol.success
    assert sol.p[0] == pytest.approx(2.0, abs=1e-6)
    tt = np.linspace(0, 2, 17)
    np.testing.assert_allclose(sol(tt)[:, 0], np.exp(-2 * tt), atol=1e-6)


def small_training(backend: str, max_iter: int = 100) -> TrainingProblem:
    t = np.linspace(0, 3, 31)
    x = np.column_stack([np.cos(t), -np.sin(t)])
    model = NeuralODE(MLP((2, 4, 2), "tanh"))
    return TrainingProblem(model, Trajectory(t, x), regularization=1e-4, initial_state=x[0])


def test_backends_take_the_same_iterates():
    results = {}
    for backend in ("casadi", "cyipopt"):
        alg = RadauIIA(15, 3, ipopt=IpoptOptions(tol=1e-8, max_iter=60, backend=backend, **QUIET))
        results[backend] = solve(small_training(backend), alg, seed=3)
    a, b = results["casadi"], results["cyipopt"]
    assert a.iterations == b.iterations
    ha = np.array([h[2] for h in a.history])
    hb = np.array([h[2] for h in b.history])
    assert ha.shape == hb.shape
    np.testing.assert_allclose(ha, hb, rtol=1e-7, atol=1e-12)
    np.testing.assert_allclose(a.p, b.p, rtol=1e-5, atol=1e-7)


def test_iteration_limit_is_not_success():
    alg = RadauIIA(15, 3, ipopt=IpoptOptions(max_iter=2, **QUIET))
    sol = solve(small_training("casadi"), alg, seed=0)
    assert sol.status == SolverStatus.ITERATION_LIMIT
    assert not sol.status.ok
    assert sol.solution.to_dict()["status"] == "iteration_limit"


def test_history_and_timings():
    sol = solve(small_training("casadi"), RadauIIA(10, 2, ipopt=IpoptOptions(**QUIET)), seed=1)
    times = [h[0] for h in sol.history]
    assert times == sorted(times) and len(times) == sol.iterations + 1
    t = sol.timings
    assert t["total"] >= t["build"] and min(t.values()) >= 0
    assert sol.size.nnz_jacobian > 0 and sol.size.nnz_hessian > 0


def test_dense_output_interpolates_the_nodes():
    sol = solve(decay(), RadauIIA(6, 3, ipopt=IpoptOptions(**QUIET)))
    np.testing.assert_allclose(sol(sol.t_nodes), sol.x_nodes, atol=1e-13)
    assert sol(0.5).shape == (1,)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(intervals=0), "intervals"),
        (dict(stages=-1), "stages"),
        (dict(ipopt={"tol": 1e-3}), "ipopt"),
    ],
)
def test_bad_algorithm(kwargs, match):
    with pytest.raises((ValueError, TypeError, AttributeError), match=match):
        RadauIIA(**kwargs)


@pytest.mark.parametrize(
    "kwargs, match",
    [(dict(tol=0.0), "tol"), (dict(max_iter=0), "max_iter"), (dict(backend="knitro"), "backend")],
)
def test_bad_ipopt_options(kwargs, match):
    with pytest.raises(ValueError, match=match):
        IpoptOptions(**kwargs)


def test_rk4_rollout_converges_with_order_four():
    """simulate(method="rk4") on x' = y, y' = -x + u(t), u = cos(2t): global error ~ h^4."""
    import casadi as ca

    from collocnode import HybridModel, simulate

    model = HybridModel(
        2, {}, rhs=lambda x, u, t, nets, p: ca.vertcat(x[1], -x[0] + u[0]), n_inputs=1
    )
    u = lambda t: np.cos(2 * np.asarray(t))[..., None]  # noqa: E731
    # exact: x = (4/3) cos t - (1/3) cos 2t from x(0) = 1, x'(0) = 0
    exact = lambda t: 4 / 3 * np.cos(t) - np.cos(2 * t) / 3  # noqa: E731
    errs = []
    for n in (41, 81):
        t = np.linspace(0, 4, n)
        sim = simulate(model, np.zeros(0), t, [1.0, 0.0], inputs=u, method="rk4", substeps=1)
        errs.append(np.max(np.abs(sim.x[:, 0] - exact(t))))
    assert np.log2(errs[0] / errs[1]) == pytest.approx(4.0, abs=0.3)
    adaptive = simulate(model, np.zeros(0), t, [1.0, 0.0], inputs=u)
    np.testing.assert_allclose(adaptive.x[:, 0], exact(t), atol=1e-8)


@pytest.mark.parametrize(
    ("seed", "error", "match"),
    [
        (True, TypeError, "seed must be None or a non-negative integer, got True"),
        (1.5, TypeError, "seed must be None or a non-negative integer, got 1.5"),
        ("0", TypeError, "seed must be None or a non-negative integer, got '0'"),
        (-1, ValueError, "seed must be a non-negative integer, got -1"),
    ],
)
def test_seed_must_be_a_non_negative_integer(seed, error, match):
    with pytest.raises(error, match=match):
        solve(small_training("casadi"), RadauIIA(4, 2, ipopt=IpoptOptions(**QUIET)), seed=seed)


def two_trajectories(x_guess_second: float) -> DynamicOptimizationProblem:
    """x' = -sqrt(x) on [0, 1] and on [5, 6]: a negative state guess of the second trajectory
    makes its dynamics NaN at the initial point."""
    from collocnode.transcription._problem import Segment

    return DynamicOptimizationProblem(
        dynamics=lambda x, p, u, t: -ca.sqrt(x),
        n_states=1,
        n_params=0,
        tspan=(0.0, 1.0),
        lagrange=lambda x, p, u, t: x[0] ** 2,
        segments=(
            Segment((0.0, 1.0), x0=[1.0], x_guess=[1.0]),
            Segment((5.0, 6.0), x_guess=[x_guess_second]),
        ),
    )


@pytest.mark.parametrize("backend", ["casadi", "cyipopt"])
def test_an_evaluation_error_in_the_second_trajectory_names_it_and_its_time(backend):
    alg = RadauIIA(4, 2, ipopt=IpoptOptions(backend=backend, **QUIET))
    sol = solve(two_trajectories(-1.0), alg)
    assert sol.status == SolverStatus.EVALUATION_ERROR
    assert "trajectory 1" in sol.message, sol.message
    t = float(sol.message.split("(t = ")[1].split(")")[0])
    assert 5.0 < t <= 6.0
    # the cause and the lever follow the place
    assert "likely cause" in sol.message and "x_guess" in sol.message, sol.message


def test_a_non_finite_state_of_the_second_trajectory_is_located_in_its_mesh():
    """A global node index past the first trajectory's nodes was looked up in its mesh."""
    from collocnode.transcription import Mesh, StructuredNLP
    from collocnode.transcription._collocation import locate_non_finite

    meshes = [Mesh.equidistant(0.0, 1.0, 4, 2), Mesh.equidistant(5.0, 6.0, 4, 2)]
    nlp = StructuredNLP(two_trajectories(1.0), meshes, threads=1)
    z = nlp.initial_guess()
    z[(meshes[0].n_nodes + 3) * nlp.layout.nx] = np.nan  # node 3 of trajectory 1
    t3 = meshes[1].node_times[3]
    assert locate_non_finite(nlp, z) == "non-finite state x[0] at node 3 of trajectory 1 " + (
        f"(t = {t3:.6g})"
    )


def sqrt_decay() -> DynamicOptimizationProblem:
    """x' = -p sqrt(x) fitted to 1 - t on [0, 2]: IPOPT's steps make x negative, and
    evaluations at such trial points return NaN."""
    return DynamicOptimizationProblem(
        dynamics=lambda x, p, u, t: -p[0] * ca.sqrt(x),
        n_states=1,
        n_params=1,
        tspan=(0.0, 2.0),
        lagrange=lambda x, p, u, t: (x[0] - (1 - t)) ** 2,
        x0=[1.0],
        x_guess=[1.0],
        p_guess=[0.1],
    )


@pytest.mark.parametrize("backend", ["casadi", "cyipopt"])
def test_nan_evaluations_are_counted_in_the_solution_not_printed(backend, capfd):
    alg = RadauIIA(10, 3, ipopt=IpoptOptions(max_iter=40, backend=backend, **QUIET))
    sol = solve(sqrt_decay(), alg)
    out, err = capfd.readouterr()
    assert "NaN detected" not in out + err
    assert out + err == ""  # print_level 0 is silent
    assert sol.non_finite_evaluations > 10
    assert sol.to_dict()["non_finite_evaluations"] == sol.non_finite_evaluations


def test_an_nlp_too_large_for_memory_is_refused_before_it_is_built():
    dop = too_large_for_memory()
    with pytest.raises(ValueError, match=r"GB this process may use") as err:
        solve(dop, RadauIIA(10, 3))
    text = str(err.value)
    assert "30 collocation nodes" in text and "n_params = 2000000" in text
    assert "parameter block (n_params² / 2) 2e+12" in text


def test_the_memory_estimate_counts_nodes_states_and_parameters(monkeypatch):
    """The guard compares the estimate with the machine's memory: here a machine of 10 MB."""
    from collocnode import _validation

    monkeypatch.setattr(_validation, "physical_memory_bytes", lambda: 10_000_000)
    small = RadauIIA(10, 2, ipopt=IpoptOptions(**QUIET))
    assert solve(decay(), small).success
    sizes = r"2000 collocation nodes x \(n_states = 2, n_params = 22\)"
    with pytest.raises(ValueError, match=sizes):
        solve(small_training("casadi"), RadauIIA(1000, 2, ipopt=IpoptOptions(**QUIET)), seed=0)
