"""Numerics of the mechanical benchmark systems: exact solutions, invariants, constraint residuals,
Jacobians and the papers' equations."""

from __future__ import annotations

import numpy as np
import pytest

from collocnode import problems
from collocnode.problems._vehicle import PARAM_RANGES, Vehicle4DOF


def _fd_jacobian(f, x, h=1e-6):
    """Central differences of f: (n,) -> (m,); returns (m, n)."""
    cols = []
    for j in range(x.size):
        e = np.zeros_like(x)
        e[j] = h
        cols.append((f(x + e) - f(x - e)) / (2 * h))
    return np.stack(cols, axis=-1)


# --- linear chains: exact solutions ---------------------------------------------------------------
@pytest.mark.parametrize(
    ("name", "preset"),
    [("sms", None), ("smsd", None), ("tmsd", None), ("tmsd", "mbdnode_code")],
)
def test_exact_solution_matches_integrator(name, preset):
    system = problems.get(name, preset)
    t = system.time_grid()
    exact = system.simulate(t)
    numeric = system.simulate(t, use_exact=False)
    scale = np.max(np.abs(exact.x))
    assert np.max(np.abs(exact.x - numeric.x)) <= 1e-9 * scale
    assert system.exact_solution(t, system.x0) is not None


def test_sms_exact_solution_is_the_harmonic_oscillator():
    system = problems.get("sms", x0=0.3, v0=-2.0)
    t = system.time_grid()
    w = np.sqrt(50.0 / 10.0)
    x = 0.3 * np.cos(w * t) - 2.0 / w * np.sin(w * t)
    np.testing.assert_allclose(system.simulate(t).x[:, 0], x, atol=1e-11)
    # the exact solution also holds from a shifted start time
    shifted = system.exact_solution(t + 5.0, system.x0)
    np.testing.assert_allclose(shifted[:, 0], x, atol=1e-11)


def test_cubic_smsd_and_code_coupling_forces():
    cubic = problems.get("smsd", "mbdnode_cubic")
    assert cubic.exact_solution(np.arange(3.0), cubic.x0) is None
    x = np.array([0.8, -0.3])
    assert cubic.rhs(0, x)[1] == pytest.approx(-(50 * 0.8 + 2 * -0.3 + 0.1 * 0.8**3) / 10)
    paper, code = problems.get("tmsd"), problems.get("tmsd", "mbdnode_code")
    s = np.array([0.1, -0.2, 0.5, 0.3, 0.0, -0.4])
    extra = -(50 * (0.5 + 0.2) + 2 * (-0.4 - 0.0)) / 100
    assert code.rhs(0, s)[3] - paper.rhs(0, s)[3] == pytest.approx(extra)
    np.testing.assert_allclose(code.rhs(0, s)[4:], paper.rhs(0, s)[4:])
    _, d, k = paper.matrices()
    np.testing.assert_allclose(d, d.T)  # the wall damper acts on x1' alone (FNODE eq. 34)
    assert d[0, 0] == 4.0 and k[0, 0] == 100.0


# --- invariants ---------------------------------------------------------------------------------
CONSERVATIVE = [
    ("sms", None, {}, {}),
    ("sms", None, {}, {"use_exact": False}),
    ("pendulum", None, {"c": 0.0}, {}),
    ("double_pendulum", "fnode", {}, {}),
    ("double_pendulum", "mbdnode", {}, {}),
    ("double_pendulum", "fnode_code", {}, {}),
    ("double_pendulum", "snde", {}, {}),
    ("cart_pole", "fnode", {}, {}),
    ("cart_pole", "mbdnode", {}, {}),
    ("slider_crank", "fnode", {"c12": 0.0, "c_slide": 0.0}, {}),
    pytest.param(
        "slider_crank", "mbdnode", {"tau_amp": 0.0, "F_amp": 0.0}, {}, marks=pytest.mark.slow
    ),
]


@pytest.mark.parametrize(("name", "preset", "params", "kwargs"), CONSERVATIVE)
def test_invariants_hold_over_the_full_horizon(name, preset, params, kwargs):
    system = problems.get(name, preset, **params)
    traj = system.simulate(system.time_grid(), **kwargs)
    drift = system.invariant_drift(traj.x)
    assert drift, f"{name} reports no invariant"
    for key, value in drift.items():
        assert value <= 1e-8, f"{name} {key} drifted by {value:.2e}"
    # and the invariant is not trivially constant: it varies off the trajectory
    moved = traj.x + 0.01
    assert any(np.ptp(val) > 0 for val in system.invariants(np.vstack([traj.x, moved])).values())


@pytest.mark.parametrize(
    ("name", "preset", "params"),
    [
        ("smsd", None, {}),
        ("tmsd", None, {}),
        ("pendulum", None, {}),
        ("slider_crank", "fnode", {}),
        ("slider_crank", "fnode_friction", {}),
    ],
)
def test_dissipative_systems_lose_energy(name, preset, params):
    system = problems.get(name, preset, **params)
    assert system.invariants(system.x0[None]) == {}
    n = 1000 if name == "slider_crank" else None
    x = system.simulate(system.time_grid(n_steps=n)).x
    energy = system.energy(x)
    assert np.all(np.diff(energy) <= 1e-9 * energy[0])
    assert energy[-1] < 0.9 * energy[0]


# --- pendulums and cart-pole against the papers' equations ---------------------------------------
def test_pendulum_is_mbdnode_eq_31(rng):
    system = problems.get("pendulum")
    x = rng.normal(size=(5, 2))
    acc = system.acceleration(0, x)[:, 0]
    resid = acc + 9.81 / 1.0 * np.sin(x[:, 0]) + 0.1 / (1.0 * 1.0) * x[:, 1]
    np.testing.assert_allclose(resid, 0, atol=1e-13)
    np.testing.assert_allclose(system.x0, [0.0, np.pi])


@pytest.mark.parametrize("preset", ["fnode", "mbdnode", "snde"])
def test_double_pendulum_matches_hamiltonian_form(preset, rng):
    """θ' and p' of FNODE eqs. 46-51 equal the Lagrangian right-hand side mapped by eqs. 44-45."""
    system = problems.get("double_pendulum", preset, m2=0.7, l1=1.3)
    for x in rng.normal(size=(5, 4)):
        z = np.concatenate([x[:2], system.momenta(x)])
        ham = system.hamiltonian_rhs(z)
        np.testing.assert_allclose(ham[:2], x[2:], rtol=1e-12, atol=1e-12)
        h = 1e-6
        f = system.rhs(0, x)
        pdot = (system.momenta(x + h * f) - system.momenta(x - h * f)) / (2 * h)
        np.testing.assert_allclose(ham[2:], pdot, rtol=1e-7, atol=1e-7)


def test_double_pendulum_presets_and_random_initial_states():
    fnode = problems.get("double_pendulum")
    assert fnode.preset == "fnode" and fnode.params["g"] == 9.81
    np.testing.assert_allclose(fnode.x0, [3 * np.pi / 7, 3 * np.pi / 4, 0, 0])
    np.testing.assert_allclose(
        problems.get("double_pendulum", "mbdnode").x0[:2], [np.pi / 2, np.pi / 4]
    )
    snde = problems.get("double_pendulum", "snde")
    assert (snde.dt, snde.n_steps) == (0.05, 201)
    draws = np.array([snde.sample_x0(seed) for seed in range(50)])
    assert np.all((draws[:, 0] >= np.pi / 4) & (draws[:, 0] <= 3 * np.pi / 4))
    np.testing.assert_array_equal(draws[:, 0], draws[:, 1])
    np.testing.assert_array_equal(draws[:, 2:], 0)
    np.testing.assert_array_equal(snde.sample_x0(7), snde.sample_x0(7))


def test_cart_pole_satisfies_eq_35(rng):
    for preset in ("fnode", "mbdnode"):
        system = problems.get("cart_pole", preset)
        big_m, m, l, g = (system.params[k] for k in ("M", "m", "l", "g"))
        x, u = rng.normal(size=(6, 4)), rng.normal(size=(6, 1)) * 10
        th, w = x[:, 0], x[:, 2]
        thdd, xdd = system.acceleration(0, x, u).T
        r1 = m * l**2 * thdd + m * l * np.cos(th) * xdd - m * g * l * np.sin(th)
        r2 = m * l * np.cos(th) * thdd + (big_m + m) * xdd - m * l * w**2 * np.sin(th) - u[:, 0]
        np.testing.assert_allclose(r1, 0, atol=1e-11)
        np.testing.assert_allclose(r2, 0, atol=1e-11)


def test_cart_pole_fnode_code_preset_is_the_authors_generator(rng):
    # force_cp of the FNODE authors' Model/force_fun.py (u = 0), as its closed form:
    #   x''  = (-m g sin θ cos θ - m l θ'² sin θ) / (M + m sin² θ)
    #   θ''  = ((M + m) g sin θ + m l θ'² sin θ cos θ) / (l (M + m sin² θ))
    system = problems.get("cart_pole", "fnode_code")
    big_m, m, l, g = 10.0, 10.0, 0.5, 9.81
    assert [system.params[k] for k in ("M", "m", "l", "g")] == [big_m, m, l, g]
    np.testing.assert_allclose(system.x0, [np.pi / 6, 1.0, 0.0, 0.0])
    x = rng.normal(size=(8, 4))
    th, w = x[:, 0], x[:, 2]
    s, c = np.sin(th), np.cos(th)
    den = big_m + m * s**2
    xdd = (-m * g * s * c - m * l * w**2 * s) / den
    thdd = ((big_m + m) * g * s + m * l * w**2 * s * c) / (l * den)
    np.testing.assert_allclose(system.acceleration(0, x).T, [thdd, xdd], rtol=1e-13, atol=1e-13)
    # it differs from the papers' eq. 35 only through the θ'² terms
    paper = problems.get("cart_pole", "fnode")
    at_rest = x.copy()
    at_rest[:, 2] = 0.0
    np.testing.assert_allclose(system.acceleration(0, at_rest), paper.acceleration(0, at_rest))
    assert not np.allclose(system.acceleration(0, x), paper.acceleration(0, x))
    assert system.invariants(x) == {}  # not a mechanical system: nothing is conserved


def test_cart_pole_linearization_is_the_jacobian_at_upright():
    system = problems.get("cart_pole", "mbdnode")
    a, b = system.linearization()
    np.testing.assert_allclose(
        a, _fd_jacobian(lambda z: system.rhs(0, z, [0.0]), np.zeros(4)), atol=1e-8
    )
    fd_b = _fd_jacobian(lambda u: system.rhs(0, np.zeros(4), u), np.zeros(1))
    np.testing.assert_allclose(b, fd_b, atol=1e-8)


# --- slider-crank --------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def crank_runs():
    """Default-horizon ground truth of the slider-crank presets (computed once)."""
    out = {}
    for preset, n in (
        ("fnode", None),
        ("fnode_friction", None),
        ("mbdnode", 1500),
        ("fnode_bb", 1000),
    ):
        system = problems.get("slider_crank", preset)
        out[preset] = (system, system.simulate(system.time_grid(n_steps=n)))
    return out


@pytest.mark.parametrize("preset", ["fnode", "fnode_friction", "mbdnode", "fnode_bb"])
def test_slider_crank_stays_on_the_constraints(preset, crank_runs):
    system, traj = crank_runs[preset]
    assert np.max(np.abs(system.constraints(traj.x))) <= 1e-8
    assert np.max(np.abs(system.velocity_constraints(traj.x))) <= 1e-8
    # and it moves: the data is not a resting mechanism
    assert np.ptp(traj.x[:, 2]) > 0.5


@pytest.mark.slow
def test_slider_crank_constraints_over_the_full_mbdnode_horizon():
    system = problems.get("slider_crank", "mbdnode")
    traj = system.simulate(system.time_grid())
    assert np.max(np.abs(system.state_constraints(traj.x))) <= 1e-8


@pytest.mark.parametrize("preset", ["fnode", "mbdnode", "fnode_bb"])
def test_slider_crank_matches_closed_form_kinematics(preset, crank_runs):
    system, traj = crank_runs[preset]
    r, l = system.params["r"], system.params["l"]
    th1, w1 = traj.x[:, 2], traj.x[:, 11]
    th2 = -np.arcsin(r / l * np.sin(th1))
    w2 = -r * np.cos(th1) * w1 / (l * np.cos(th2))
    np.testing.assert_allclose(traj.x[:, 5], th2, atol=1e-12)
    np.testing.assert_allclose(traj.x[:, 6], 2 * r * np.cos(th1) + 2 * l * np.cos(th2), atol=1e-11)
    np.testing.assert_allclose(traj.x[:, 14], w2, atol=1e-11)
    np.testing.assert_allclose(
        traj.x[:, 15], -2 * r * np.sin(th1) * w1 - 2 * l * np.sin(th2) * w2, atol=1e-10
    )
    np.testing.assert_allclose(traj.x[:, [7, 8, 16, 17]], 0, atol=1e-14)


@pytest.mark.parametrize("preset", ["fnode", "fnode_friction", "mbdnode", "fnode_bb"])
def test_slider_crank_minimal_and_full_odes_agree(preset):
    """The index-1 ODE of all 18 states, integrated directly over 2 s, follows the partitioned
    ground truth (it only drifts off the manifold at the integrator's tolerance)."""
    from scipy.integrate import solve_ivp

    system = problems.get("slider_crank", preset)
    t = system.time_grid(n_steps=201)
    ref = system.simulate(t)
    sol = solve_ivp(
        lambda tt, xx: system.rhs(tt, xx, system.inputs(tt)),
        (t[0], t[-1]),
        system.x0,
        method="DOP853",
        t_eval=t,
        rtol=1e-12,
        atol=1e-12,
    )
    np.testing.assert_allclose(sol.y.T, ref.x, atol=1e-8)


def test_slider_crank_jacobians(rng):
    ca = pytest.importorskip("casadi")
    system = problems.get("slider_crank", r=0.7, l=2.3)
    qs = ca.SX.sym("q", 9)
    jac_fn = ca.Function("j", [qs], [ca.jacobian(system.casadi_phi(qs), qs)])
    for q in rng.normal(size=(4, 9)):
        jq = system.phi_q(q)
        np.testing.assert_allclose(jq, _fd_jacobian(system.phi, q), atol=1e-8)
        np.testing.assert_allclose(jq, np.asarray(jac_fn(q)), atol=1e-14)
        np.testing.assert_allclose(np.asarray(system.casadi_phi_q(ca.DM(q))), jq, atol=1e-14)
        qd = rng.normal(size=9)
        fd = _fd_jacobian(lambda qq, qd=qd: system.phi_q(qq) @ qd, q)
        np.testing.assert_allclose(system.phi_q_dot_q(q, qd), fd, atol=1e-8)
    x = rng.normal(size=18)
    fd = _fd_jacobian(system.state_constraints, x)
    np.testing.assert_allclose(system.state_constraint_jacobian(x), fd, atol=1e-8)
    assert system.constraint_jacobian(x).shape == (8, 18)


@pytest.mark.parametrize(
    ("preset", "params"),
    [
        ("fnode", {}),
        ("fnode_friction", {}),
        ("mbdnode", {}),
        ("fnode_bb", {}),
        ("fnode_bb", {"mu": 0.3, "c01": 0.1}),  # friction under gravity's normal load
    ],
)
def test_slider_crank_accelerations(preset, params, rng):
    """q'' satisfies Φ_q q'' = γ, the crank partition is never singular, and the power balance
    holds: d/dt(energy) equals the power of dampers, inputs and (for μ > 0) Coulomb friction."""
    system = problems.get("slider_crank", preset, **params)
    p = system.params
    z = np.stack([rng.uniform(0, 2 * np.pi, 20), rng.normal(0, 2, 20)], axis=-1)
    x = system.recover(z)
    from collocnode.problems._partition import check_partition

    assert np.all(check_partition(system.phi_q, system.positions(x), system.independent) < 1e3)
    u = rng.normal(size=(20, 2))
    qdd, lam = system.accelerations(0.0, x, u)
    q, qd = system.positions(x), system.velocities(x)
    np.testing.assert_allclose(
        np.einsum("nij,nj->ni", system.phi_q(q), qdd), system.gamma(q, qd), atol=1e-10
    )
    mass = system.mass_matrix(q)
    v3, w1, w2 = qd[:, 6], qd[:, 2], qd[:, 5]
    power = (
        np.einsum("ni,ij,nj->n", qd, mass, qdd)
        + p["k"] * (q[:, 6] - p["x3_rest"]) * v3
        + p["k_wall"] * (p["x3_max"] - q[:, 6]) * v3
        + p["g"] * (p["m1"] * qd[:, 1] + p["m2"] * qd[:, 4] + p["m3"] * qd[:, 7])
    )
    applied = (
        u[:, 0] * w1
        + u[:, 1] * v3
        - p["c01"] * w1**2
        - p["c12"] * (w1 - w2) * (w1 - p["damper_reaction"] * w2)
        - p["c_slide"] * v3**2
        - p["mu"] * np.abs(lam[:, 6]) * np.tanh(v3 / p["eps"]) * v3
    )
    np.testing.assert_allclose(power, applied, atol=1e-9)


def test_slider_crank_friction_changes_the_motion(crank_runs):
    _, smooth = crank_runs["fnode"]
    _, rough = crank_runs["fnode_friction"]
    assert np.max(np.abs(smooth.x[:, 2] - rough.x[:, 2])) > 1e-2


def test_slider_crank_rejects_inconsistent_states_and_geometry():
    system = problems.get("slider_crank")
    bad = system.x0.copy()
    bad[6] += 0.1
    with pytest.raises(ValueError, match="x0 violates"):
        system.simulate(system.time_grid(n_steps=3), x0=bad)
    with pytest.raises(ValueError, match=r"\bl\b"):
        problems.get("slider_crank", r=2.0, l=1.0)
    with pytest.raises(ValueError, match="z"):
        system.recover(np.zeros(3))


# --- vehicle -------------------------------------------------------------------------------------
def test_vehicle_grid_and_table_10():
    grid = Vehicle4DOF.parameter_grid()
    assert list(grid) == list(PARAM_RANGES)
    for key, (lo, hi) in PARAM_RANGES.items():
        np.testing.assert_allclose(grid[key], np.linspace(lo, hi, 4))
    assert Vehicle4DOF.grid_size() == 4**9 == 262144
    # tests 1 and 2 of Table 10 are the low and high corners of the grid
    assert Vehicle4DOF.grid_point(0) == pytest.approx(problems.get("vehicle4dof", "test1").params)
    last = Vehicle4DOF.grid_point(4**9 - 1)
    assert last == pytest.approx(problems.get("vehicle4dof", "test2").params)
    for preset in ("test3", "test4"):
        params = problems.get("vehicle4dof", preset).params
        for key, (lo, hi) in PARAM_RANGES.items():
            assert lo < params[key] < hi
    with pytest.raises(ValueError, match="index"):
        Vehicle4DOF.grid_point(4**9)
    vehicle = problems.get("vehicle4dof", **Vehicle4DOF.grid_point(12345))
    assert vehicle.parameter_vector().shape == (9,)


def test_vehicle_is_fnode_eq_38(rng):
    vehicle = problems.get("vehicle4dof", "test3")
    p = vehicle.params
    x, u = rng.uniform(0, 20, size=(5, 4)), rng.uniform(-1, 1, size=(5, 2))
    dx = vehicle.rhs(0.0, x, u)
    wm = x[:, 3] / (p["R_wheel"] * p["gamma"])
    torque = u[:, 0] * p["tau0"] * (1 - wm / p["omega0"]) - p["c1"] * wm - p["c0"]
    np.testing.assert_allclose(dx[:, 0], x[:, 3] * np.cos(x[:, 2]))
    np.testing.assert_allclose(dx[:, 2], x[:, 3] * np.tan(p["beta"] * u[:, 1]) / p["l"])
    np.testing.assert_allclose(dx[:, 3], 2 * torque * p["gamma"] * p["R_wheel"] / p["I_wheel"])
    traj = vehicle.simulate(vehicle.time_grid(n_steps=300))
    np.testing.assert_allclose(traj.u, vehicle.inputs(traj.t))
    assert np.all(traj.u[:, 0] >= 0) and np.all(traj.u[:, 0] <= 1)
