"""FNODE derivative targets against analytic accelerations, and no leakage past the window."""

from __future__ import annotations

import numpy as np
import pytest

from collocnode import problems
from collocnode.compare.methods.fnode import FNODEOptions, fnode_targets
from collocnode.problems._layout import StateLayout
from collocnode.tools import _derivatives as tg

# damped oscillator q'' = -5 q - 0.2 q' (the SMSD of FNODE §3.2), exact solution
W0, ZETA = np.sqrt(5.0), 0.2 / (2 * np.sqrt(5.0))
WD = W0 * np.sqrt(1 - ZETA**2)


def exact(t):
    e = np.exp(-ZETA * W0 * t)
    q = e * (np.cos(WD * t) + ZETA * W0 / WD * np.sin(WD * t))
    v = -e * (W0**2 / WD) * np.sin(WD * t)
    return q, v, -5.0 * q - 0.2 * v


def test_fd_is_second_order_inside_and_first_order_at_the_ends():
    errs_in, errs_end = [], []
    for dt in (0.02, 0.01, 0.005):
        t = np.arange(0.0, 3.0, dt)
        _, v, a = exact(t)
        d = tg.fd_derivative(v, dt)
        errs_in.append(np.max(np.abs(d - a)[1:-1]))
        errs_end.append(abs(d[0] - a[0]))
    assert np.allclose(np.diff(np.log2(errs_in)), -2.0, atol=0.1)
    assert np.allclose(np.diff(np.log2(errs_end)), -1.0, atol=0.15)


@pytest.mark.parametrize(
    ("method", "kw", "tol_interior", "tol_all"),
    [
        ("fft", {"reflection": "odd", "sigma": np.inf}, 1e-3, 0.03),
        ("hybrid", {"reflection": "odd", "sigma": np.inf}, 1e-3, 0.02),
        ("hybrid", {"reflection": "odd"}, 0.1, 0.1),  # the Gaussian filter costs accuracy here
        ("hybrid", {}, 0.6, 0.6),  # eq. 19 as printed: the even mirror leaves a kink at the ends
        ("fd", {}, 5e-4, 0.02),
    ],
)
def test_targets_match_analytic_accelerations(method, kw, tol_interior, tol_all):
    dt = 0.01
    t = np.arange(300) * dt
    _, v, a = exact(t)
    d = tg.derivative(v, dt, method, **kw)
    assert d.shape == v.shape
    err = np.abs(d - a)
    assert np.max(err[6:-6]) < tol_interior
    assert np.max(err) < tol_all


def test_spectral_derivative_of_a_smooth_periodic_signal_is_exact_inside():
    dt = 0.01
    t = np.arange(400) * dt
    y = np.column_stack([np.sin(2 * t), 3 + 0.5 * t + np.cos(t)])  # trend is removed and restored
    d = tg.fft_derivative(y, dt, reflection="odd", sigma=np.inf)
    ref = np.column_stack([2 * np.cos(2 * t), 0.5 - np.sin(t)])
    assert np.max(np.abs(d - ref)[20:-20]) < 1e-3


def test_bad_input_names_the_field():
    with pytest.raises(ValueError, match="dt"):
        tg.fd_derivative(np.ones(10), -0.1)
    with pytest.raises(ValueError, match="at least 3 samples"):
        tg.fft_derivative(np.ones(2), 0.1)
    with pytest.raises(ValueError, match="target method"):
        tg.derivative(np.ones(10), 0.1, "spline")
    with pytest.raises(ValueError, match="uniformly sampled"):
        tg.uniform_step(np.array([0.0, 0.1, 0.3]))


@pytest.mark.parametrize("targets", ["hybrid", "fft", "fd"])
def test_training_targets_never_depend_on_samples_after_the_window(targets):
    system = problems.get("smsd")
    split = system.generate()
    n = split.train.n_samples
    # same training window, different future: perturb everything after it
    other = split.full._replace(
        x=np.concatenate([split.full.x[:n], split.full.x[n:] + 0.3], axis=0)
    )
    layout = StateLayout.for_system(system)
    opts = FNODEOptions(targets=targets)
    a = fnode_targets(system, split.train, layout, opts)
    b = fnode_targets(system, other.head(n), layout, opts)
    assert a.shape == (n, 1)
    np.testing.assert_array_equal(a, b)
    # the reference code's leak: differentiating the full series changes the training labels
    leaky_a = tg.derivative(split.full.x[:, 1:], system.dt, targets)[:n]
    leaky_b = tg.derivative(other.x[:, 1:], system.dt, targets)[:n]
    if targets != "fd":  # central differences only leak at the last training sample
        assert np.max(np.abs(leaky_a - leaky_b)) > 1e-6
    else:
        assert np.max(np.abs(leaky_a - leaky_b)[:-1]) == 0.0


def test_exact_targets_are_the_system_accelerations():
    system = problems.get("smsd")
    train = system.generate().train
    layout = StateLayout.for_system(system)
    a = fnode_targets(system, train, layout, FNODEOptions(targets="exact"))
    np.testing.assert_allclose(a[:, 0], system.acceleration(0.0, train.x)[:, 0])
