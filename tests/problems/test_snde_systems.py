"""The SNDE benchmark systems: invariants, constraints and their Jacobians, ground truth, data."""

from __future__ import annotations

import casadi as ca
import numpy as np
import pytest
from scipy.integrate import solve_ivp

from collocnode import problems

SNDE = ["two_body", "rigid_body", "dcdc", "robot_arm"]
# (train samples, test-horizon samples, dt) as the SNDE paper uses them
SAMPLING = {
    "two_body": (63, 2001, 0.1),
    "rigid_body": (151, 16_001, 0.1),
    "dcdc": (101, 1601, 0.1),
    "robot_arm": (51, 1001, 0.1),
}


def states_near_data(system, rng, n=8):
    """Random initial conditions of the papers plus a perturbation off the manifold."""
    x = np.stack([system.sample_x0(rng) for _ in range(n)])
    return x + 0.05 * rng.normal(size=x.shape)


def integrate(system, t, x0):
    """DOP853 at rtol 1e-12 on the numpy rhs (restarted at every switch for the converter)."""
    if system.name == "dcdc":
        return system.integrate_piecewise(t, x0).x
    sol = solve_ivp(
        lambda s, x: system.rhs(s, x), (t[0], t[-1]), x0, "DOP853", t, rtol=1e-12, atol=1e-12
    )
    assert sol.success
    return sol.y.T


@pytest.mark.parametrize("name", SNDE)
def test_registry_round_trip_and_sampling(name):
    system = problems.get(name)
    n_train, n_steps, dt = SAMPLING[name]
    assert (system.n_train, system.n_steps, system.dt) == (n_train, n_steps, dt)
    split = system.generate(n_steps=30, n_train=20)
    assert split.train.x.shape == (20, system.n_states)
    assert split.full.x.shape == (30, system.n_states)
    assert split.train.u.shape == (20, system.n_inputs)
    assert np.all(np.isfinite(split.full.x))
    assert system.constraints(split.full.x, split.full.t).shape == (30, system.n_constraints)
    noisy = system.generate(noise=0.01, seed=1, n_steps=30, n_train=20)
    assert 0.005 < np.std(noisy.full.x - split.full.x) < 0.02


@pytest.mark.parametrize("name", SNDE)
def test_invariants_and_constraints_hold_over_the_test_horizon(name):
    system = problems.get(name)
    # the whole test horizon; samples every second are enough to see any drift
    t = np.arange(0.0, system.dt * (system.n_steps - 1) + 1e-9, 1.0)
    x = integrate(system, t, system.x0)
    for key, values in system.invariants(x).items():
        drift = np.abs(values / values[0] - 1.0).max()
        assert drift <= 1e-8, (key, drift)
    assert np.abs(system.constraints(x, t)).max() <= 1e-8  # all invariants and e(θ) are O(1)


@pytest.mark.parametrize("name", SNDE)
def test_ground_truth_data_keeps_the_constraint(name, rng):
    system = problems.get(name)
    x0 = system.sample_x0(rng)
    t = system.time_grid(n_steps=system.n_train)
    traj = system.simulate(t, x0)
    assert np.abs(system.constraints(traj.x, t, x0=x0)).max() <= 1e-9
    np.testing.assert_allclose(system.constraints(x0, 0.0, x0=x0), 0.0, atol=1e-15)


@pytest.mark.parametrize("name", SNDE)
def test_constraint_jacobian_matches_finite_differences(name, rng):
    system = problems.get(name)
    x = states_near_data(system, rng)
    t = 0.37
    jac = system.constraint_jacobian(x, t)
    assert jac.shape == (x.shape[0], system.n_constraints, system.n_states)
    np.testing.assert_allclose(system.constraint_jacobian(x[0], t), jac[0], rtol=1e-15)
    h = 1e-6
    for j in range(system.n_states):
        e = np.zeros(system.n_states)
        e[j] = h
        fd = (system.constraints(x + e, t) - system.constraints(x - e, t)) / (2 * h)
        np.testing.assert_allclose(jac[..., j], fd, rtol=1e-7, atol=1e-8)


def casadi_constraint(system, x):
    """The constraint functions written independently with CasADi symbols (up to constants)."""
    p = system.params
    if system.name == "two_body":
        return x[0] * x[3] - x[1] * x[2]
    if system.name == "rigid_body":
        return 0.5 * ca.sumsqr(x)
    if system.name == "dcdc":
        return 0.5 * (p["C1"] * x[0] ** 2 + p["C2"] * x[1] ** 2 + p["L3"] * x[2] ** 2)
    ell = [p["l1"], p["l2"], p["l3"]]
    return ca.vertcat(
        sum(ell[j] * ca.cos(x[j]) for j in range(3)), sum(ell[j] * ca.sin(x[j]) for j in range(3))
    )


@pytest.mark.parametrize("name", SNDE)
def test_constraint_jacobian_matches_casadi_autodiff(name, rng):
    system = problems.get(name)
    xs = ca.SX.sym("x", system.n_states)
    jac = ca.Function("J", [xs], [ca.jacobian(casadi_constraint(system, xs), xs)])
    for x in states_near_data(system, rng):
        np.testing.assert_allclose(
            system.constraint_jacobian(x, 1.3), np.array(jac(x)), rtol=1e-14, atol=1e-15
        )


@pytest.mark.parametrize("name", SNDE)
def test_vector_field_is_tangent_to_the_constraint_manifold(name, rng):
    # d/dt g(x(t), t) = G f + ∂g/∂t vanishes: G f = 0 for conserved quantities, = ṗ for the arm
    system = problems.get(name)
    x = states_near_data(system, rng)
    for t in (0.2, 2.0):
        u = system.inputs(t) if system.n_inputs else None
        rate = np.einsum("bij,bj->bi", system.constraint_jacobian(x, t), system.rhs(t, x, u))
        if name == "robot_arm":
            rate = rate - system.inputs(t)
        np.testing.assert_allclose(rate, 0.0, atol=1e-12)


@pytest.mark.parametrize("name", SNDE)
def test_casadi_rhs_matches_numpy(name, rng):
    system = problems.get(name)
    xs = ca.SX.sym("x", system.n_states)
    us = ca.SX.sym("u", max(system.n_inputs, 1))
    fun = ca.Function("f", [xs, us], [system.casadi_rhs(xs, us, 0.0)])
    u = system.inputs(0.7) if system.n_inputs else np.zeros(1)
    for x in states_near_data(system, rng):
        expected = system.rhs(0.7, x, u if system.n_inputs else None)
        np.testing.assert_allclose(np.array(fun(x, u)).ravel(), expected, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("name", SNDE)
def test_batched_rhs_matches_rows(name, rng):
    system = problems.get(name)
    x = states_near_data(system, rng)
    u = system.inputs(0.4) if system.n_inputs else None
    batch = system.rhs(0.4, x, u)
    assert batch.shape == x.shape
    for k in range(x.shape[0]):
        np.testing.assert_allclose(batch[k], system.rhs(0.4, x[k], u), rtol=1e-14)


@pytest.mark.parametrize("name", SNDE)
def test_sample_x0_is_seeded_and_in_range(name):
    system = problems.get(name)
    a = np.stack([system.sample_x0(np.random.default_rng(5)) for _ in range(2)])
    np.testing.assert_array_equal(a[0], a[1])
    draws = np.stack([system.sample_x0(np.random.default_rng(s)) for s in range(200)])
    if name == "two_body":
        e = 1.0 - draws[:, 0]
        assert e.min() >= 0.5 and e.max() <= 0.7 and np.all(draws[:, 1:3] == 0)
        np.testing.assert_allclose(draws[:, 3], np.sqrt((1 + e) / (1 - e)))
    elif name == "rigid_body":
        phi = np.arctan2(draws[:, 2], draws[:, 0])
        assert phi.min() >= 0.5 and phi.max() <= 1.5 and np.all(draws[:, 1] == 0)
    elif name == "dcdc":
        assert draws.min() >= 0.0 and draws.max() <= 1.0
    else:
        th = draws[:, 0]
        assert th.min() >= np.pi / 4 and th.max() <= 3 * np.pi / 8
        np.testing.assert_array_equal(draws[:, 1], -th)
        np.testing.assert_array_equal(draws[:, 2], th)


def test_two_body_exact_solution_matches_the_integrator(rng):
    system = problems.get("two_body")
    t = np.arange(0.0, 200.0 + 1e-9, 0.5)
    for x0 in (system.sample_x0(rng), np.array([0.3, -0.9, 0.8, 0.4])):
        exact = system.exact_solution(t, x0)
        np.testing.assert_allclose(exact[0], x0, atol=1e-15)
        # DOP853 at 1e-12 accumulates a phase error of ~1e-7 over 30 orbits
        np.testing.assert_allclose(integrate(system, t, x0), exact, rtol=0, atol=1e-6)
    one_period = system.exact_solution(np.array([0.0, 2 * np.pi]), system.x0)
    np.testing.assert_allclose(one_period[1], system.x0, atol=1e-13)  # a = 1: period 2π
    assert system.exact_solution(t, np.array([1.0, 0.0, 0.0, 1.5])) is None  # unbound


def test_dcdc_switch_and_exact_piecewise_solution():
    system = problems.get("dcdc")
    np.testing.assert_array_equal(
        system.switch([0.0, 1.49, 1.5, 2.9, 3.0, 4.6]), [0, 0, 1, 1, 0, 1]
    )
    np.testing.assert_allclose(system.switch_times(0.0, 7.0), [1.5, 3.0, 4.5, 6.0])
    t = np.arange(0.0, 160.0 + 1e-9, 0.1)
    exact = system.simulate(t).x  # closed form
    np.testing.assert_allclose(system.integrate_piecewise(t).x, exact, rtol=0, atol=1e-9)
    integrated = system.simulate(t[:200], use_exact=False).x
    np.testing.assert_allclose(integrated, exact[:200], rtol=0, atol=1e-10)
    # away from the switches the closed form solves the ODE (central differences)
    s = np.array([0.7, 2.2, 5.1, 100.3])
    h = 1e-5
    grid = np.sort(np.concatenate([[0.0], s - h, s, s + h]))
    x = system.exact_solution(grid, system.x0)
    fd = (x[3::3] - x[1::3]) / (2 * h)
    np.testing.assert_allclose(fd, system.rhs(s, x[2::3]), rtol=1e-8, atol=1e-9)


@pytest.mark.parametrize(
    "name, kwargs, field",
    [
        ("two_body", {"e": 1.2}, "e"),
        ("two_body", {"e": -0.1}, "e"),
        ("two_body", {"e_min": 0.8}, "e_min"),
        ("rigid_body", {"I1": -1.6}, "I1"),
        ("rigid_body", {"phi_min": 2.0}, "phi_min"),
        ("dcdc", {"C1": 0.0}, "C1"),
        ("dcdc", {"L3": -0.5}, "L3"),
        ("dcdc", {"duty": 1.5}, "duty"),
        ("dcdc", {"period": -3.0}, "period"),
        ("robot_arm", {"l2": 0.0}, "l2"),
        ("robot_arm", {"theta0_min": 2.0}, "theta0_min"),
        ("robot_arm", {"mass": 1.0}, "mass"),
    ],
)
def test_invalid_parameters_name_the_field(name, kwargs, field):
    with pytest.raises(ValueError, match=field):
        problems.get(name, **kwargs)
