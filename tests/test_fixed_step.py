"""Every fixed-step integrator converges with its declared order (this catches an RK4 whose
stages 3 and 4 reuse a stale velocity, the MBD-NODE reference bug)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from collocnode.tools._fixed_step import (
    INTEGRATORS,
    DivergenceError,
    check_integrator,
    get_integrator,
    integrate,
)


def oscillator(t, x):  # q'' = -q - 0.3 q' + sin(t): velocity-dependent and time-dependent
    q, v = x[..., :1], x[..., 1:]
    a = (
        -q
        - 0.3 * v
        + (
            np.sin(t)
            if isinstance(x, np.ndarray)
            else torch.sin(torch.tensor(t, dtype=torch.float64))
        )
    )
    return np.concatenate([v, a], -1) if isinstance(x, np.ndarray) else torch.cat([v, a], -1)


def pendulum(t, x):  # separable: a = a(q)
    q, v = x[..., :1], x[..., 1:]
    lib = np if isinstance(x, np.ndarray) else torch
    return lib.concatenate([v, -lib.sin(q)], -1) if lib is np else torch.cat([v, -torch.sin(q)], -1)


def _reference(f, x0, T):
    return integrate(f, np.linspace(0.0, T, 2), x0, "rk4", n_coords=1, substeps=4000)[-1]


@pytest.mark.parametrize("name", sorted(INTEGRATORS))
@pytest.mark.parametrize("field", [oscillator, pendulum], ids=["damped-forced", "pendulum"])
@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_convergence_order(name, field, backend):
    method = get_integrator(name)
    x0 = np.array([1.0, 0.5])
    T = 2.0
    ref = _reference(field, x0, T)
    errs = []
    ns = (40, 80, 160)  # asymptotic for every scheme (the code RK4 is pre-asymptotic at 20)
    for n in ns:
        start = x0 if backend == "numpy" else torch.tensor(x0, dtype=torch.float64)
        x = integrate(field, np.linspace(0.0, T, n + 1), start, name, n_coords=1)[-1]
        x = np.asarray(x)
        errs.append(np.max(np.abs(x - ref)))
    slopes = np.diff(np.log(errs)) / np.diff(np.log(1.0 / np.array(ns)))
    assert np.all(np.abs(slopes - method.order) < 0.25), (name, slopes)


def test_leapfrog_is_symplectic_on_a_separable_field():
    # the energy error of Störmer–Verlet stays bounded over long times; RK4's drifts
    t = np.linspace(0.0, 1000.0, 2001)  # h = 0.5
    x0 = np.array([1.0, 0.0])

    def harmonic(t, x):
        return np.concatenate([x[..., 1:], -x[..., :1]], -1)

    energy = {}
    for name in ("leapfrog", "rk4"):
        x = integrate(harmonic, t, x0, name, n_coords=1)
        e = 0.5 * (x[:, 0] ** 2 + x[:, 1] ** 2)
        energy[name] = abs(e[-1] - e[0])
    assert energy["leapfrog"] < 4e-2
    assert energy["rk4"] > 3 * energy["leapfrog"]


def test_leapfrog_refuses_first_order_systems():
    with pytest.raises(ValueError, match="second-order"):
        check_integrator("leapfrog", 0)
    with pytest.raises(ValueError, match="n_coords"):
        get_integrator("leapfrog").step(lambda t, x: x, 0.0, np.ones(3), 0.1, n_coords=1)


def test_unknown_integrator_lists_valid_names():
    with pytest.raises(ValueError, match="euler, midpoint, rk4, leapfrog"):
        get_integrator("rk45")


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_divergence_reports_the_step(backend):
    t = np.arange(30) * 0.1
    x0 = np.array([1.0]) if backend == "numpy" else torch.tensor([1.0], dtype=torch.float64)
    with pytest.raises(DivergenceError) as info:
        integrate(lambda t, x: 200.0 * x, t, x0, "euler", blowup=1e8)
    # x_k = 21^k exceeds 1e8 first at k = 7
    assert info.value.step == 7
    assert info.value.t == pytest.approx(0.7)
    assert info.value.partial.shape == (7, 1)
    assert "step 7" in str(info.value)


def test_substeps_and_nonuniform_grid():
    t = np.array([0.0, 0.1, 0.35, 0.4, 1.0])
    x = integrate(lambda t, x: -x, t, np.array([1.0]), "rk4", substeps=50)
    assert np.allclose(x[:, 0], np.exp(-t), atol=1e-10)
