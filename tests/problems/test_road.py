"""ISO 8608 road synthesis: spectrum, conventions, exact derivative, fast evaluator, bad input."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.signal import welch

from collocnode.problems._road import (
    ISO8608Road,
    angular_to_cycles,
    class_gd,
    cycles_to_angular,
)

CLASSES = "ABCDEFGH"


@pytest.mark.parametrize("k, letter", list(enumerate(CLASSES)))
def test_class_table_in_both_conventions(k, letter):
    assert class_gd(letter, "cycles") == pytest.approx(16e-6 * 4**k, rel=1e-15)
    assert class_gd(letter, "angular") == pytest.approx(1e-6 * 4**k, rel=1e-15)


def test_reference_class_values():
    assert class_gd("C") == pytest.approx(256e-6)
    assert class_gd("D") == pytest.approx(1024e-6)
    assert class_gd("C", "angular") == pytest.approx(16e-6)
    assert class_gd("D", "angular") == pytest.approx(64e-6)


def test_conversion_factor_is_50_over_pi_and_inverts():
    # Gd_n(n0) = 2π Gd_Ω(Ω0) (2π n0/Ω0)^-2 with n0 = 0.1 cycles/m, Ω0 = 1 rad/m
    assert angular_to_cycles(1.0) == pytest.approx(50.0 / np.pi, rel=1e-14)
    for gd in (1e-6, 16e-6, 3.3e-5):
        assert cycles_to_angular(angular_to_cycles(gd)) == pytest.approx(gd, rel=1e-14)
    # the tables are the same roads up to the rounding of 50/π ≈ 15.9 to 16
    for letter in CLASSES:
        ratio = angular_to_cycles(class_gd(letter, "angular")) / class_gd(letter, "cycles")
        assert ratio == pytest.approx(50.0 / np.pi / 16.0, rel=1e-14)
        assert abs(ratio - 1.0) < 0.006


def test_explicitly_converted_angular_road_is_the_same_road():
    gd_angular = 16e-6
    angular = ISO8608Road(gd=gd_angular, convention="angular", seed=7)
    cycles = ISO8608Road(gd=angular_to_cycles(gd_angular), convention="cycles", seed=7)
    t = np.linspace(0.0, angular.horizon, 501)
    np.testing.assert_allclose(angular.amplitudes, cycles.amplitudes, rtol=1e-14)
    np.testing.assert_allclose(angular.elevation(t), cycles.elevation(t), rtol=0, atol=1e-15)


def test_angular_class_road_matches_cycles_class_road_within_table_rounding():
    a = ISO8608Road(road_class="C", convention="angular", seed=3)
    c = ISO8608Road(road_class="C", convention="cycles", seed=3)
    t = np.linspace(0.0, 42.0, 301)
    za, zc = a.elevation(t), c.elevation(t)
    # same phases and frequencies; amplitudes differ by sqrt(16 (50/π) / 256) only
    np.testing.assert_allclose(za / zc, np.sqrt(50.0 / np.pi / 16.0), rtol=1e-9)


def test_angular_synthesis_formula_gives_the_same_amplitudes():
    # Agostinacchio's form: A_i = sqrt(2 Gd_Ω(Ω_i) ΔΩ), Ω_i = 2π n_i, ΔΩ = 2π Δn
    road = ISO8608Road(road_class="D", convention="angular", seed=1)
    omega = 2 * np.pi * road.frequencies
    gd_omega = class_gd("D", "angular") * (omega / 1.0) ** -2.0
    expected = np.sqrt(2 * gd_omega * 2 * np.pi * road.delta_n)
    np.testing.assert_allclose(road.amplitudes, expected, rtol=1e-13)
    np.testing.assert_allclose(road.psd_angular(omega), gd_omega, rtol=1e-13)


def test_angular_value_read_as_cycles_is_two_classes_smoother():
    calibrated = ISO8608Road.paper_calibrated("D")
    assert calibrated.gd_n0 == pytest.approx(64e-6)
    assert calibrated.gd_n0 == pytest.approx(ISO8608Road(road_class="B").gd_n0)
    true_d = ISO8608Road(road_class="D", convention="angular")
    assert true_d.gd_n0 / calibrated.gd_n0 == pytest.approx(50.0 / np.pi, rel=1e-14)


def test_default_road_is_the_paper_calibration():
    road = ISO8608Road()
    assert road == ISO8608Road.paper_calibrated("D", seed=0)
    assert (road.gd, road.convention, road.speed, road.length) == (64e-6, "cycles", 10.0, 420.0)
    assert road.horizon == pytest.approx(42.0)
    assert 1000 <= road.n_harmonics <= 1300


def test_periodogram_of_one_period_equals_gd_at_every_harmonic():
    # deterministic amplitudes on the grid k/L: the periodogram is exact, not only in expectation
    road = ISO8608Road(road_class="C", seed=5, length=100.0)
    m = 1024
    x = np.arange(m) * road.length / m
    spectrum = np.fft.rfft(road.profile(x)) / m
    psd = 2.0 * np.abs(spectrum) ** 2 * road.length
    k = np.rint(road.frequencies * road.length).astype(int)
    np.testing.assert_allclose(psd[k], road.psd(road.frequencies), rtol=1e-9)
    others = np.setdiff1d(np.arange(1, psd.size), k)
    assert psd[others].max() < 1e-12 * psd[k].max()


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_welch_psd_matches_gd_within_statistical_tolerance(seed):
    road = ISO8608Road(road_class="C", seed=seed)
    dx = 0.05
    z = road.profile(np.arange(0.0, road.length, dx))
    f, p = welch(z, fs=1.0 / dx, nperseg=2**11)
    edges = np.geomspace(0.05, 2.5, 8)
    for lo, hi in itertools.pairwise(edges):
        band = (f >= lo) & (f < hi)
        ratio = p[band].mean() / road.psd(f[band]).mean()
        assert 0.75 < ratio < 1.33, (lo, hi, ratio)


def test_variance_is_the_integral_of_the_psd():
    road = ISO8608Road(road_class="D")
    gd0, n0 = road.gd_n0, 0.1
    integral = gd0 * n0**2 * (1 / road.n_min - 1 / road.n_max)
    assert road.std**2 == pytest.approx(integral, rel=0.03)
    # more than 2 k_max samples per period average a trigonometric polynomial exactly
    t = np.linspace(0.0, road.horizon, 3001)[:-1]
    assert np.sqrt(np.mean(road.elevation(t) ** 2)) == pytest.approx(road.std, rel=1e-10)


def test_profile_is_periodic_in_its_length():
    road = ISO8608Road(seed=2)
    x = np.array([0.0, 13.7, 100.0])
    np.testing.assert_allclose(road.profile(x + road.length), road.profile(x), atol=1e-12)


@pytest.mark.parametrize("road_class", ["C", "D"])
def test_velocity_is_the_time_derivative_of_elevation(road_class, rng):
    road = ISO8608Road(road_class=road_class, speed=15.0, length=300.0, seed=4)
    t = rng.uniform(0.01, road.horizon - 0.01, 50)
    h = 1e-6  # truncation ~h² ω³ z/6 and round-off ~1e-16 z/h both stay below 1e-8
    fd = (road.elevation(t + h) - road.elevation(t - h)) / (2 * h)
    scale = road.velocity_std
    np.testing.assert_allclose(road.velocity(t), fd, rtol=0, atol=1e-7 * scale)
    # and the other way: the integral of ż_r over [0, T] is z_r(T) − z_r(0)
    tt = np.linspace(0.0, 1.0, 10001)
    zd = road.velocity(tt)
    integral = np.sum((zd[1:] + zd[:-1]) / 2) * (tt[1] - tt[0])  # trapezoid error ~1e-8
    assert integral == pytest.approx(road.elevation(1.0) - road.elevation(0.0), abs=1e-6)


def test_vectorised_shapes():
    road = ISO8608Road()
    assert road.elevation(1.0).shape == ()
    assert road.velocity(np.zeros((3, 4))).shape == (3, 4)
    t = np.linspace(0, 5, 7)
    np.testing.assert_allclose(
        road.velocity(t), [road.velocity(s) for s in t], rtol=1e-13, atol=1e-15
    )


@pytest.mark.parametrize("derivative", [0, 1])
def test_fast_scalar_evaluator_agrees_with_the_harmonic_sum(derivative, rng):
    road = ISO8608Road(road_class="C", seed=9)
    fast = road.scalar_evaluator(derivative)
    exact = road.elevation if derivative == 0 else road.velocity
    t = np.concatenate([rng.uniform(0.0, road.horizon, 400), [0.0, road.horizon, 21.0]])
    ref = exact(t)
    scalar = np.array([fast(s) for s in t])
    tol = 1e-11 * np.abs(ref).max()
    np.testing.assert_allclose(scalar, ref, rtol=0, atol=tol)
    np.testing.assert_allclose(fast.evaluate(t), scalar, rtol=0, atol=1e-15 * np.abs(ref).max())
    # an evaluator for a shorter span is as exact there
    short = road.scalar_evaluator(derivative, t_max=3.0)
    ts = t[t <= 3.0]
    np.testing.assert_allclose([short(s) for s in ts], exact(ts), rtol=0, atol=tol)
    with pytest.raises(ValueError, match="t_max = 50"):
        road.scalar_evaluator(derivative, t_max=50.0)


@pytest.mark.parametrize(
    "kwargs, field, value",
    [
        ({"road_class": "I"}, "road_class", "'I'"),
        ({"road_class": "c"}, "road_class", "'c'"),
        ({"speed": -10.0}, "speed", "-10.0"),
        ({"speed": 0.0}, "speed", "0.0"),
        ({"length": -420.0}, "length", "-420.0"),
        ({"gd": -1e-6}, "gd", "-1e-06"),
        ({"convention": "radians", "gd": 1e-6}, "convention", "'radians'"),
        ({"n_min": 3.0}, "n_max", "2.83"),
        ({"spacing": 10.0}, "spacing", "10.0"),
        ({"road_class": "C", "gd": 1e-6}, "road_class", "'C'"),
        ({"convention": "angular"}, "road_class", "angular"),
        ({"seed": -1}, "seed", "-1"),
    ],
)
def test_bad_road_input_names_field_and_value(kwargs, field, value):
    with pytest.raises(ValueError) as err:
        ISO8608Road(**kwargs)
    assert field in str(err.value) and value in str(err.value)


def test_times_outside_the_horizon_raise_with_the_value():
    road = ISO8608Road()
    with pytest.raises(ValueError, match=r"t = 50\.0 s lies outside the road horizon \[0, 42\]"):
        road.elevation(np.array([1.0, 50.0]))
    with pytest.raises(ValueError, match=r"t = -1\.0 s"):
        road.velocity(-1.0)
    with pytest.raises(ValueError, match="road_class"):
        class_gd("Z")
