"""Quarter-vehicle model: force elements, CasADi/numpy agreement, exact linear solution, data."""

from __future__ import annotations

import casadi as ca
import numpy as np
import pytest
from scipy.integrate import solve_ivp
from scipy.linalg import expm

from collocnode import problems
from collocnode.problems._qvm import NOISE_ROBUST, QuarterVehicle
from collocnode.problems._road import ISO8608Road

PRESETS = ["kamp2023", "efmi2025"]
MODELS = ["nonlinear", "linear"]


def random_states(rng, n=20):
    """States of the size the benchmark visits: heights ~1 cm, velocities ~0.1 m/s."""
    scale = np.array([0.02, 0.02, 0.2, 0.2, 0.03])
    return rng.normal(size=(n, 5)) * scale, rng.normal(size=n) * 0.2


def test_registry_and_layout():
    qvm = problems.get("qvm")
    assert isinstance(qvm, QuarterVehicle)
    assert problems.presets("qvm") == PRESETS
    assert qvm.state_names == ("z_b", "z_w", "v_b", "v_w", "z_r")
    assert qvm.input_names == ("dz_r",) and qvm.output_names == ("a_b", "a_w")
    assert qvm.model == "nonlinear" and qvm.params["d_t"] == 100.0
    assert (qvm.dt, qvm.n_steps) == (1e-3, 42_001)
    np.testing.assert_array_equal(qvm.x0, np.zeros(5))


@pytest.mark.parametrize("preset", PRESETS)
def test_forces_vanish_at_zero_and_friction_is_odd(preset, rng):
    qvm = QuarterVehicle(preset)
    assert qvm.friction(0.0) == 0.0 and qvm.spring(0.0) == 0.0
    assert float(qvm.casadi_friction(ca.DM(0.0))) == 0.0
    assert float(qvm.casadi_spring(ca.DM(0.0))) == 0.0
    dv = rng.uniform(-0.5, 0.5, 50)
    np.testing.assert_allclose(qvm.friction(-dv), -qvm.friction(dv), rtol=1e-14)


def test_kamp2023_force_values():
    qvm = QuarterVehicle()
    # spring fit of the paper's Fig. 2b: 1000 Δz + 490 000 Δz² (Δz ≥ 0), + 250 000 Δz² below
    np.testing.assert_allclose(
        qvm.spring(np.array([0.04, -0.04, 0.01, -0.01])), [824.0, 360.0, 59.0, 15.0], rtol=1e-12
    )
    # friction: the Stribeck bump peaks at v_brk/2 = 0.01 m/s with height F_brk − F_C = 10 N
    expected = 10.0 + 30.0 * np.tanh(5.0) + 150.0 * 0.01
    assert qvm.friction(0.01) == pytest.approx(expected, rel=1e-14)
    dv = np.linspace(0.002, 0.03, 2801)
    stribeck = qvm.friction(dv) - 30.0 * np.tanh(dv / 0.002) - 150.0 * dv
    assert dv[np.argmax(stribeck)] == pytest.approx(0.01, abs=1e-5)


def test_efmi2025_spring_is_the_modelica_law_with_flipped_sign():
    qvm = QuarterVehicle("efmi2025")
    dz = np.linspace(-0.04, 0.04, 9)
    s = -dz  # extension s = z_b − z_w; Modelica f = (c1 (s + s_u))² + c2 s − (c1 s_u)²
    f = (500.0 * (s + 0.03)) ** 2 - (500.0 * 0.03) ** 2
    np.testing.assert_allclose(qvm.spring(dz), -f, rtol=1e-12, atol=1e-12)
    assert qvm.params["d_t"] == 0.0 and qvm.params["F_brk"] == 45.0


@pytest.mark.parametrize("preset", PRESETS)
@pytest.mark.parametrize("smoothing", [0.0, 1e-3])
def test_casadi_forces_match_numpy(preset, smoothing, rng):
    qvm = QuarterVehicle(preset)
    s = ca.SX.sym("s")
    fr = ca.Function("fr", [s], [qvm.casadi_friction(s)])
    pr = ca.Function("pr", [s], [qvm.casadi_spring(s, smoothing)])
    dv, dz = rng.uniform(-0.5, 0.5, 40), rng.uniform(-0.04, 0.04, 40)
    np.testing.assert_allclose(
        np.array(fr(dv[None, :])).ravel(), qvm.friction(dv), rtol=1e-13, atol=1e-12
    )
    np.testing.assert_allclose(
        np.array(pr(dz[None, :])).ravel(), qvm.spring(dz, smoothing), rtol=1e-13, atol=1e-12
    )


def test_spring_is_c1_not_c2_and_smoothing_is_close():
    qvm = QuarterVehicle()
    h = 1e-7
    left = (qvm.spring(0.0) - qvm.spring(-h)) / h
    right = (qvm.spring(h) - qvm.spring(0.0)) / h
    assert left == pytest.approx(right, abs=0.1)  # continuous slope k_pr = 1000 N/m
    s = ca.SX.sym("s")
    hess = ca.Function("h", [s], [ca.hessian(qvm.casadi_spring(s), s)[0]])
    assert float(hess(1e-9)) == pytest.approx(2 * 490_000.0)
    assert float(hess(-1e-9)) == pytest.approx(2 * 250_000.0)  # the curvature jumps
    eps = 2e-3
    dz = np.linspace(-0.05, 0.05, 2001)
    gap = np.abs(qvm.spring(dz, eps) - qvm.spring(dz)).max()
    assert gap <= 0.121 * (490_000.0 - 250_000.0) * eps**2  # max s²(1 − tanh s)/2 = 0.1207
    smooth = ca.Function("h", [s], [ca.hessian(qvm.casadi_spring(s, eps), s)[0]])
    assert float(smooth(1e-9)) == pytest.approx(float(smooth(-1e-9)), rel=1e-5)


@pytest.mark.parametrize("sym", [ca.SX, ca.MX])
@pytest.mark.parametrize("preset", PRESETS)
def test_physics_rhs_casadi_matches_numpy(sym, preset, rng):
    qvm = QuarterVehicle(preset)
    x, u, f1, f2 = sym.sym("x", 5), sym.sym("u"), sym.sym("f1"), sym.sym("f2")
    xdot, y = qvm.physics_rhs(x, u, f1, f2)
    assert xdot.shape == (5, 1) and y.shape == (2, 1)
    fun = ca.Function("f", [x, u, f1, f2], [xdot, y])
    xs, us = random_states(rng)
    forces = rng.normal(size=(2, us.size)) * 50
    xd_np, y_np = qvm.physics_rhs_np(xs, us, forces[0], forces[1])
    assert xd_np.shape == (us.size, 5) and y_np.shape == (us.size, 2)
    for k in range(us.size):
        xd_ca, y_ca = fun(xs[k], us[k], forces[0, k], forces[1, k])
        np.testing.assert_allclose(np.array(xd_ca).ravel(), xd_np[k], rtol=1e-13, atol=1e-13)
        np.testing.assert_allclose(np.array(y_ca).ravel(), y_np[k], rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("preset", PRESETS)
def test_casadi_rhs_matches_numpy_rhs(model, preset, rng):
    qvm = QuarterVehicle(preset, model=model)
    x, u = ca.SX.sym("x", 5), ca.SX.sym("u")
    fun = ca.Function("f", [x, u], [qvm.casadi_rhs(x, u, 0.0)])
    xs, us = random_states(rng)
    np_rhs = qvm.rhs(0.0, xs, us)
    for k in range(us.size):
        np.testing.assert_allclose(
            np.array(fun(xs[k], us[k])).ravel(), np_rhs[k], rtol=1e-12, atol=1e-12
        )


def test_eq14_by_hand_and_momentum_balance(rng):
    qvm = QuarterVehicle(model="linear")
    p = qvm.params
    xs, us = random_states(rng)
    z_b, z_w, v_b, v_w, z_r = xs.T
    a_b = (p["c_s"] * (z_w - z_b) + p["d_s"] * (v_w - v_b)) / p["m_b"]
    tire = p["c_t"] * (z_r - z_w) + p["d_t"] * (us - v_w)
    a_w = (tire - p["c_s"] * (z_w - z_b) - p["d_s"] * (v_w - v_b)) / p["m_w"]
    np.testing.assert_allclose(qvm.outputs(xs, us), np.stack([a_b, a_w], 1), rtol=1e-13)
    # whatever the suspension forces, m_b a_b + m_w a_w equals the tire force (eq. 15)
    y = QuarterVehicle().physics_rhs_np(xs, us, 37.0, -12.0)[1]
    np.testing.assert_allclose(y @ [p["m_b"], p["m_w"]], tire, rtol=1e-12, atol=1e-9)


def linear_exact(qvm, road, t):
    """Exact solution of x' = A x + B u with u = Σ w_i sin(ω_i t + φ_i), x0 = 0.

    x_p = Im Σ_i (iω_i − A)⁻¹ B w_i e^{i(ω_i t + φ_i)} and x = e^{At} (x0 − x_p(0)) + x_p(t);
    A and B are written from eq. 14 by hand."""
    p = qvm.params
    mb, mw, cs, ds, ct, dt = (p[k] for k in ("m_b", "m_w", "c_s", "d_s", "c_t", "d_t"))
    A = np.array(
        [
            [0, 0, 1, 0, 0],
            [0, 0, 0, 1, 0],
            [-cs / mb, cs / mb, -ds / mb, ds / mb, 0],
            [cs / mw, -(cs + ct) / mw, ds / mw, -(ds + dt) / mw, ct / mw],
            [0, 0, 0, 0, 0],
        ]
    )
    B = np.array([0, 0, 0, dt / mw, 1.0])
    omega, w = road.omegas, -road.amplitudes * road.omegas
    X = np.linalg.solve(1j * omega[:, None, None] * np.eye(5) - A, B[None, :, None])[..., 0]
    coef = X * (w * np.exp(1j * road.phases))[:, None]
    xp = (np.exp(1j * np.multiply.outer(t, omega)) @ coef).imag
    return np.stack([expm(A * s) @ (-xp[0]) for s in t]) + xp


@pytest.mark.parametrize("preset", PRESETS)
def test_linear_model_matches_the_exact_solution(preset):
    qvm = QuarterVehicle(preset, model="linear")
    t = np.linspace(0.0, 2.0, 201)
    traj = qvm.simulate(t)
    exact = linear_exact(qvm, qvm.road, t)
    scale = np.abs(exact).max(axis=0)
    np.testing.assert_allclose(traj.x, exact, rtol=0, atol=1e-8 * scale.max())
    assert np.abs(traj.x - exact).max(axis=0).max() / scale.min() < 1e-6
    # the road state is the road height relative to t = 0, known in closed form
    z_r = qvm.road.elevation(t) - qvm.road.elevation(0.0)
    np.testing.assert_allclose(traj.x[:, 4], z_r, rtol=0, atol=1e-11)


def test_nonlinear_ground_truth_matches_an_independent_tight_integration():
    qvm = QuarterVehicle()
    t = np.linspace(0.0, 0.5, 51)
    fast = qvm.simulate(t)
    # the generic numpy rhs with the exact harmonic sum, DOP853 at a 100x tighter tolerance
    ref = solve_ivp(
        lambda s, x: qvm.rhs(s, x), (0, 0.5), np.zeros(5), "DOP853", t, rtol=1e-12, atol=1e-14
    )
    scale = np.abs(ref.y).max(axis=1)
    assert np.max(np.abs(fast.x - ref.y.T) / scale) < 1e-7
    np.testing.assert_allclose(fast.u[:, 0], qvm.road.velocity(t), rtol=0, atol=1e-12)
    np.testing.assert_allclose(fast.y, qvm.outputs(fast.x, fast.u), rtol=1e-12, atol=1e-12)


def test_plugged_forces_reproduce_the_models():
    qvm = QuarterVehicle()
    t = np.linspace(0.0, 0.3, 31)
    same = qvm.simulate(t, friction=qvm.friction, spring=qvm.spring)
    # numpy vs scalar-math force evaluations differ in the last bit, which changes the adaptive
    # step sequence; at rtol 1e-10 the ground truth is good to ~1e-7 of each state's range
    ref = qvm.simulate(t).x
    assert np.max(np.abs(same.x - ref).max(axis=0) / np.abs(ref).max(axis=0)) < 3e-7
    # a road velocity passed as a plain input signal drives the same trajectory
    signal = qvm.simulate(t, inputs=lambda s: qvm.road.velocity(s)[None])
    assert np.max(np.abs(signal.x - ref).max(axis=0) / np.abs(ref).max(axis=0)) < 3e-7
    np.testing.assert_allclose(signal.u, qvm.simulate(t).u, rtol=0, atol=1e-12)
    zero = qvm.simulate(t, friction=np.zeros_like, spring=np.zeros_like)
    linear = QuarterVehicle(model="linear").simulate(t)
    np.testing.assert_allclose(zero.x, linear.x, rtol=0, atol=1e-14)
    np.testing.assert_allclose(zero.y, linear.y, rtol=0, atol=1e-12)


def test_the_true_model_on_a_road_is_simulated_once_and_handed_out_as_copies():
    qvm = problems.get("qvm")
    t = qvm.time_grid(501)
    first = qvm.simulate(t)
    first.x[:] = np.nan  # the caller's copy: the next answer must not see this
    again = qvm.simulate(t)
    fresh = solve_ivp(
        qvm._fast_rhs(qvm.road.scalar_evaluator(derivative=1, t_max=float(t[-1])), None, None),
        (t[0], t[-1]),
        np.zeros(5),
        method="DOP853",
        t_eval=t,
        rtol=1e-10,
        atol=1e-12,
    )
    np.testing.assert_array_equal(again.x, fresh.y.T)
    # anything that decides the trajectory is part of its key
    for other in (
        qvm.simulate(t, road=qvm.test_road),
        qvm.simulate(t, x0=np.full(5, 1e-3)),
        qvm.simulate(t, rtol=1e-8),
        qvm.simulate(t, friction=lambda dv: 0.0 * dv),
        QuarterVehicle("kamp2023", model="linear").simulate(t),
    ):
        assert not np.array_equal(other.x, again.x)


def test_default_roads_train_d_test_c():
    qvm = QuarterVehicle()
    assert qvm.road == ISO8608Road.paper_calibrated("D", seed=0)
    assert qvm.test_road == ISO8608Road.paper_calibrated("C", seed=1)
    assert qvm.test_road.gd == pytest.approx(16e-6)
    classed = QuarterVehicle(road=ISO8608Road(road_class="D", convention="angular", seed=4))
    assert classed.test_road.road_class == "C" and classed.test_road.convention == "angular"
    assert classed.test_road.seed == 5


def test_generate_shapes_noise_and_unseen_road():
    qvm = QuarterVehicle()
    n = 1001
    clean = qvm.generate(noise=0.0, duration=1.0, n_train=600)
    noisy = qvm.generate(n_steps=n, n_train=600, seed=3)
    assert clean.train.x.shape == (600, 5) and clean.full.x.shape == (n, 5)
    assert clean.train.u.shape == (600, 1) and clean.train.y.shape == (600, 2)
    assert clean.test.x.shape == (n, 5) and clean.test.y.shape == (n, 2)
    assert clean.train.output_names == ("a_b", "a_w")
    # the test trajectory is driven by the other road
    np.testing.assert_allclose(clean.test.u[:, 0], qvm.test_road.velocity(clean.test.t), atol=1e-12)
    assert not np.allclose(clean.test.u, clean.full.u)
    # noise: 2 % of each signal's std on states and outputs, none on the known input
    for name in ("x", "y"):
        c, z = getattr(clean.full, name), getattr(noisy.full, name)
        ratio = np.std(z - c, axis=0) / np.std(c, axis=0)
        np.testing.assert_allclose(ratio, 0.02, rtol=0.1)
    np.testing.assert_array_equal(noisy.full.u, clean.full.u)
    robust = qvm.generate(noise=NOISE_ROBUST, n_steps=n, seed=3)
    np.testing.assert_allclose(
        np.std(robust.full.y - clean.full.y, axis=0) / np.std(clean.full.y, axis=0), 0.1, rtol=0.1
    )
    again = qvm.generate(n_steps=n, n_train=600, seed=3)
    np.testing.assert_array_equal(again.test.y, noisy.test.y)


def test_short_run_stays_bounded():
    traj = QuarterVehicle().simulate(np.arange(0.0, 2.0, 1e-3))
    dz = traj.x[:, 1] - traj.x[:, 0]
    assert np.all(np.isfinite(traj.x)) and np.all(np.isfinite(traj.y))
    assert np.abs(dz).max() < 0.022  # the total suspension stiffness stays positive
    assert np.abs(traj.x[:, 0]).max() < 0.05


@pytest.mark.parametrize(
    "kwargs, field",
    [
        ({"m_b": -350.0}, "m_b"),
        ({"c_t": 0.0}, "c_t"),
        ({"d_s": -1.0}, "d_s"),
        ({"d_t": -100.0}, "d_t"),
        ({"v_brk": 0.0}, "v_brk"),
        ({"model": "quadratic"}, "model"),
        ({"preset": "kamp2024"}, "preset"),
        ({"m_x": 1.0}, "m_x"),
    ],
)
def test_bad_parameters_name_the_field(kwargs, field):
    with pytest.raises(ValueError, match=field):
        QuarterVehicle(**kwargs)


def test_bad_data_requests_name_the_value():
    qvm = QuarterVehicle()
    with pytest.raises(ValueError, match=r"t = 50\.0 s lies outside the road horizon"):
        qvm.simulate(np.array([0.0, 50.0]))
    with pytest.raises(ValueError, match=r"sampling to t = 50 s does not fit the road"):
        qvm.generate(n_steps=50_001)
    with pytest.raises(ValueError, match=r"duration must be a positive finite number, got -42"):
        qvm.generate(duration=-42.0)
    with pytest.raises(ValueError, match=r"n_steps = 100 samples at dt = 0\.001 s cover 0\.099 s"):
        qvm.generate(duration=2.0, n_steps=100)
    with pytest.raises(ValueError, match=r"sampling to t = 50 s does not fit the road"):
        qvm.generate(duration=50.0)
    with pytest.raises(ValueError, match="noise"):
        qvm.generate(noise=-0.02, n_steps=10)
    with pytest.raises(ValueError, match="dt"):
        qvm.generate(dt=-1e-3, n_steps=10)
    with pytest.raises(TypeError, match="road"):
        QuarterVehicle(road="D")
    short = ISO8608Road.paper_calibrated("C", seed=1, length=100.0)
    with pytest.raises(ValueError, match="test_road"):
        QuarterVehicle(test_road=short).generate(n_steps=12_001)


@pytest.mark.slow
def test_default_data_reproduces_the_paper_input_statistics():
    """Paper Fig. 2: σ(Δv_s) ≈ 0.139 m/s, σ(Δz_s) ≈ 5.77 mm (we get ~0.123 and ~4.95)."""
    qvm = QuarterVehicle()
    stats = qvm.input_statistics()
    assert stats["std_dz_s"] == pytest.approx(5.77e-3, rel=0.2)
    assert stats["std_dv_s"] == pytest.approx(0.139, rel=0.2)
    assert stats["std_dv_s"] / stats["std_dz_s"] == pytest.approx(24.1, rel=0.1)
    assert -0.022 < stats["min_dz_s"] and stats["max_dz_s"] < 0.022
    split = qvm.generate()
    assert split.train.x.shape == (42_001, 5) and split.test.y.shape == (42_001, 2)
    assert np.all(np.isfinite(split.test.x))


def test_a_long_truth_is_kept_on_disk_for_the_next_run(tmp_path, monkeypatch):
    from collocnode.problems import _qvm as module

    monkeypatch.setenv("COLLOCNODE_CACHE", str(tmp_path))
    monkeypatch.setattr(module, "_TRUTH_STORED_AFTER_S", 0.0)
    qvm = problems.get("qvm")
    t = qvm.time_grid(301)
    module._TRUTHS.clear()
    first = qvm.simulate(t, rtol=1e-9)
    assert len(list((tmp_path / "qvm-truths").glob("*.npz"))) == 1
    module._TRUTHS.clear()  # a new process: only the disk remembers

    def no_integration(*args, **kwargs):
        raise AssertionError("integrated again")

    monkeypatch.setattr(QuarterVehicle, "_integrate", no_integration)
    again = qvm.simulate(t, rtol=1e-9)
    np.testing.assert_array_equal(again.x, first.x)
    np.testing.assert_array_equal(again.y, first.y)
    with pytest.raises(AssertionError, match="integrated again"):  # another key: no file
        qvm.simulate(t, rtol=1e-8)
