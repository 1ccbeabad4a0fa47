"""Free controls, algebraic states and a free final time against problems with known optima.

Each reference is exact or a textbook solution: a finite-horizon LQR (Riccati equation,
integrated to 1e-12), the minimum-time double integrator (tf = 2, Bryson & Ho §3.9), the
Bryson–Denham problem with an active state constraint (J = 4 / (9 l), Bryson & Ho §3.11) and an
index-1 DAE with the solution x = 1 / (1 + t), z = x².
"""

import casadi as ca
import numpy as np
import pytest
from scipy.integrate import solve_ivp

from collocnode import (
    AlgebraicStates,
    Constraint,
    Controls,
    DynamicOptimizationProblem,
    IpoptOptions,
    Mesh,
    RadauIIA,
    SolverStatus,
    solve,
)

TIGHT = IpoptOptions(tol=1e-10, print_level=0)


def radau(intervals: int, stages: int = 3) -> RadauIIA:
    return RadauIIA(intervals, stages, ipopt=TIGHT)


# ---- finite-horizon LQR ------------------------------------------------------------------------
A = np.array([[0.0, 1.0], [-1.0, 0.0]])
B = np.array([[0.0], [1.0]])
Q, R, S = np.eye(2), np.array([[0.5]]), np.diag([2.0, 0.0])
T_LQR, X0_LQR = 2.0, np.array([1.0, 0.0])


def riccati() -> object:
    """P(t) of -P' = AᵀP + PA - PBR⁻¹BᵀP + Q, P(T) = S, as a dense solution."""

    def rhs(t, p):
        P = p.reshape(2, 2)
        return -(A.T @ P + P @ A - P @ B @ np.linalg.solve(R, B.T) @ P + Q).ravel()

    sol = solve_ivp(rhs, (T_LQR, 0.0), S.ravel(), rtol=1e-12, atol=1e-12, dense_output=True)
    return lambda t: sol.sol(t).reshape(2, 2)


def lqr_problem() -> DynamicOptimizationProblem:
    Am, Bm, Qm, Rm, Sm = (ca.DM(a) for a in (A, B, Q, R, S))
    return DynamicOptimizationProblem(
        dynamics=lambda x, p, u, t: ca.mtimes(Am, x) + ca.mtimes(Bm, u),
        n_states=2,
        n_params=0,
        tspan=(0.0, T_LQR),
        lagrange=lambda x, p, u, t: 0.5 * (ca.bilin(Qm, x, x) + ca.bilin(Rm, u, u)),
        mayer=lambda x0, xf, p: 0.5 * ca.bilin(Sm, xf, xf),
        x0=X0_LQR,
        controls=Controls(1),
    )


def test_lqr_matches_the_riccati_solution():
    P = riccati()
    sol = solve(lqr_problem(), radau(20))
    assert sol.status == SolverStatus.SUCCESS
    # optimal cost ½ x0ᵀ P(0) x0
    assert sol.objective == pytest.approx(0.5 * X0_LQR @ P(0.0) @ X0_LQR, rel=1e-7)
    # the optimal control is the feedback -R⁻¹BᵀP(t)x(t); the control polynomial has degree
    # m - 1, so it converges more slowly than the cost (measured: 1.6e-4, 2.5e-5, 6.2e-6 at
    # 10, 20, 40 intervals against 3.8e-7, 1.2e-8, 3.7e-10 for the cost)
    t = np.linspace(0.05, T_LQR, 17)
    feedback = np.array([-(np.linalg.solve(R, B.T) @ P(tk) @ sol(tk))[0] for tk in t])
    np.testing.assert_allclose(sol.controls(t)[:, 0], feedback, atol=5e-5)


# ---- minimum time, bang-bang -------------------------------------------------------------------
def min_time_problem(tf_guess: float = 1.5) -> DynamicOptimizationProblem:
    return DynamicOptimizationProblem(
        dynamics=lambda x, p, u, t: ca.vertcat(x[1], u[0]),
        n_states=2,
        n_params=0,
        tspan=(0.0, tf_guess),
        mayer=lambda x0, xf, p, tf: tf,
        boundary=Constraint.make("boundary", lambda x0, xf, p, tf: xf, 2),
        x0=[1.0, 0.0],
        controls=Controls(1, lb=-1.0, ub=1.0),
        tf_bounds=(0.5, 5.0),
    )


def test_minimum_time_double_integrator_reaches_the_analytic_final_time():
    # an even number of equal intervals puts the switch (at tf / 2) on a grid point
    sol = solve(min_time_problem(), radau(20))
    assert sol.status == SolverStatus.SUCCESS
    assert sol.tf == pytest.approx(2.0, abs=1e-7)
    assert sol.mesh.tf == pytest.approx(sol.tf)  # the mesh is stretched to the solved tf
    u = sol.controls(np.array([0.2, 0.9, 1.1, 1.8]))[:, 0]
    np.testing.assert_allclose(u, [-1.0, -1.0, 1.0, 1.0], atol=1e-6)
    # x1 = 1 - t²/2 on the first arc
    np.testing.assert_allclose(sol(np.array([0.5, 1.0]))[:, 0], [0.875, 0.5], atol=1e-7)


# ---- Bryson–Denham: a state constraint with a boundary arc -------------------------------------
def bryson_denham(limit: float = 1.0 / 9.0) -> DynamicOptimizationProblem:
    return DynamicOptimizationProblem(
        dynamics=lambda x, p, u, t: ca.vertcat(x[1], u[0]),
        n_states=2,
        n_params=0,
        tspan=(0.0, 1.0),
        lagrange=lambda x, p, u, t: 0.5 * u[0] ** 2,
        boundary=Constraint.make("boundary", lambda x0, xf, p: xf - ca.DM([0.0, -1.0]), 2),
        x0=[0.0, 1.0],
        x_ub=[limit, np.inf],
        controls=Controls(1),
    )


def bryson_denham_control(t: np.ndarray, limit: float) -> np.ndarray:
    a = 3 * limit
    return np.where(
        t < a, -2 / a * (1 - t / a), np.where(t > 1 - a, -2 / a * (1 - (1 - t) / a), 0.0)
    )


def test_bryson_denham_reaches_the_analytic_optimum():
    limit = 1.0 / 9.0
    # 30 intervals put the junctions 3l = 1/3 and 1 - 3l on grid points
    sol = solve(bryson_denham(limit), radau(30))
    assert sol.status == SolverStatus.SUCCESS
    # IPOPT relaxes bounds by 1e-8 (bound_relax_factor), which is what is left here
    assert sol.objective == pytest.approx(4.0 / (9.0 * limit), rel=1e-6)
    t = np.linspace(0.01, 0.99, 25)
    # on the boundary arc the barrier and IPOPT's bound relaxation leave |u| ~ 6e-5
    np.testing.assert_allclose(sol.controls(t)[:, 0], bryson_denham_control(t, limit), atol=2e-4)
    assert np.max(sol(t)[:, 0]) <= limit + 1e-8


def test_bryson_denham_converges_with_the_mesh_when_junctions_fall_inside_intervals():
    limit = 1.0 / 9.0
    errors = [
        abs(solve(bryson_denham(limit), radau(n)).objective - 4.0 / (9.0 * limit))
        for n in (8, 16, 32)
    ]
    # a junction inside an interval limits the order (the control has a kink), yet it converges
    assert errors[2] < errors[1] < errors[0] < 1e-2


# ---- an index-1 DAE ----------------------------------------------------------------------------
def dae_problem(intervals_tf: float = 2.0) -> DynamicOptimizationProblem:
    """x' = -z, 0 = z³ + z - x⁶ - x² (so z = x², ∂g/∂z = 3z² + 1 > 0): x = 1 / (1 + t)."""
    return DynamicOptimizationProblem(
        dynamics=lambda x, p, u, t, z: -z[0],
        n_states=1,
        n_params=0,
        tspan=(0.0, intervals_tf),
        x0=[1.0],
        algebraic=AlgebraicStates(
            fn=lambda x, p, u, t, z: z[0] ** 3 + z[0] - x[0] ** 6 - x[0] ** 2, n=1, guess=0.5
        ),
    )


@pytest.mark.parametrize("stages", [2, 3])
def test_index_one_dae_matches_its_closed_form_and_converges_at_the_radau_order(stages):
    errors = []
    for n in (5, 10, 20):
        sol = solve(dae_problem(), radau(n, stages))
        assert sol.status == SolverStatus.SUCCESS
        t = sol.mesh.grid
        errors.append(np.max(np.abs(sol(t)[:, 0] - 1 / (1 + t))))
        t_mid = sol.mesh.node_times[1:]
        np.testing.assert_allclose(sol.algebraic(t_mid)[:, 0], sol(t_mid)[:, 0] ** 2, atol=1e-9)
    # Radau IIA: order 2m - 1 at the grid points
    rates = np.log2(np.array(errors[:-1]) / np.array(errors[1:]))
    assert np.all(rates > 2 * stages - 1 - 0.5), rates
    assert errors[-1] < {2: 1e-4, 3: 1e-9}[stages]


# ---- controls between nodes and the rate penalty -----------------------------------------------
def test_controls_between_nodes_are_the_collocation_polynomial():
    mesh = Mesh.equidistant(0.0, 1.0, 4, 3)
    values = np.sin(mesh.node_times[1:])[:, None]
    # a degree-2 polynomial per interval through its three collocation values
    out = mesh.interpolate_collocation(values, mesh.node_times[1:])
    np.testing.assert_allclose(out, values)
    poly = lambda t: 1 - 2 * t + 3 * t**2  # noqa: E731
    np.testing.assert_allclose(
        mesh.interpolate_collocation(poly(mesh.node_times[1:]), np.linspace(0, 1, 11)),
        poly(np.linspace(0, 1, 11)),
        atol=1e-12,
    )


def test_rate_penalty_is_added_to_the_objective_and_smooths_the_control():
    def roughness(sol):
        t = sol.mesh.node_times[1:]
        return float(np.sum(np.diff(sol.controls(t)[:, 0]) ** 2 / np.diff(t)))

    def effort(sol):
        # ½∫u² by the Radau quadrature of the transcription
        u = sol.controls(sol.mesh.node_times[1:])[:, 0]
        return float(np.sum(sol.mesh.quadrature_weights * 0.5 * u**2))

    solutions = {
        rho: solve(bryson_denham().remake(controls=Controls(1, rate_penalty=rho)), radau(16))
        for rho in (0.0, 0.01, 0.1)
    }
    for rho, sol in solutions.items():
        assert sol.status == SolverStatus.SUCCESS
        assert sol.objective == pytest.approx(effort(sol) + rho * roughness(sol), rel=1e-9)
    rough = [roughness(sol) for sol in solutions.values()]
    assert rough[2] < rough[1] < rough[0]


# ---- what is reported as what ------------------------------------------------------------------
def test_an_infeasible_control_problem_is_reported_as_infeasible():
    dop = bryson_denham().remake(
        controls=Controls(1, lb=-1.0, ub=1.0),
        boundary=Constraint.make("boundary", lambda x0, xf, p: xf[0] - 10.0, 1),
        x_ub=None,
    )
    sol = solve(dop, RadauIIA(10, 3, ipopt=IpoptOptions(print_level=0, max_iter=300)))
    assert sol.status == SolverStatus.INFEASIBLE, sol.ipopt_status
    assert not sol.success


@pytest.mark.parametrize(
    ("changes", "match"),
    [
        ({"tf_bounds": (0.5, np.inf)}, "tf_bounds must be finite"),
        ({"tf_bounds": (1.5, 3.0)}, r"tspan\[1\] = 1.0 .* must lie in tf_bounds"),
        ({"controls": "u"}, "controls must be a Controls"),
    ],
)
def test_bad_control_problem_input_gives_one_clear_error(changes, match):
    with pytest.raises((ValueError, TypeError), match=match):
        bryson_denham().remake(**changes)


def test_controls_lb_above_ub_names_the_field():
    with pytest.raises(ValueError, match=r"controls.lb\[1\] = 3.0 > controls.ub\[1\] = 1.0"):
        Controls(2, lb=[0.0, 3.0], ub=1.0)


def test_free_final_time_refuses_inputs_it_would_move():
    with pytest.raises(ValueError, match="control rate penalty"):
        min_time_problem().remake(controls=Controls(1, lb=-1, ub=1, rate_penalty=1.0))
