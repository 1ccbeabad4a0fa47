"""The symplectic MBD-NODE (the MBD-NODE paper's single mass-spring model) and the numerical
baseline of its Table 5: the separable Störmer–Verlet step against the textbook scheme, its order
and near-conservation, the Yoshida compositions of Table 13 (orders 4 and 6), a fit of the
mass-spring with each scheme, and the known equations stepped by the MBD-NODE code's first-order
"RK4", which gives the paper's 2.0e-3."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from collocnode import problems
from collocnode.compare.methods.base import NotApplicableError
from collocnode.compare.methods.mbdnode_symplectic import SEPARABLE_VERLET, SYMPLECTIC_SCHEMES
from collocnode.compare.methods.registry import make_trainer
from collocnode.tools._fixed_step import integrate

OMEGA2 = 5.0  # the single mass-spring: k / m = 50 / 10


def _spring(t, z):
    """``(q', p') = (F_p, −F_q)`` with ``F_q = ω² q``, ``F_p = p``: H = (p² + ω² q²) / 2."""
    return torch.cat([z[..., 1:], -OMEGA2 * z[..., :1]], dim=-1)


def test_the_step_is_stoermer_verlet_and_second_order():
    z0 = torch.tensor([1.0, 0.0], dtype=torch.float64)
    h = 0.1
    q, p = 1.0, 0.0  # textbook kick-drift-kick for H = p²/2 + ω² q²/2
    p_half = p - 0.5 * h * OMEGA2 * q
    q1 = q + h * p_half
    p1 = p_half - 0.5 * h * OMEGA2 * q1
    step = SEPARABLE_VERLET.step(_spring, 0.0, z0, h, 1).numpy()
    np.testing.assert_allclose(step, [q1, p1], rtol=1e-15)
    # global error at t = 2 falls by 4 when h halves; the energy error stays bounded (no drift)
    w = np.sqrt(OMEGA2)
    errors = []
    for n in (200, 400, 800):
        t = np.linspace(0.0, 2.0, n + 1)
        z = integrate(_spring, t, z0, SEPARABLE_VERLET, n_coords=1).numpy()
        errors.append(abs(z[-1, 0] - np.cos(w * 2.0)))
    assert 3.8 < errors[0] / errors[1] < 4.2 and 3.8 < errors[1] / errors[2] < 4.2
    t = np.arange(30001) * 0.01  # 300 s, about 107 periods
    z = integrate(_spring, t, z0, SEPARABLE_VERLET, n_coords=1).numpy()
    energy = 0.5 * (z[:, 1] ** 2 + OMEGA2 * z[:, 0] ** 2)
    assert np.max(np.abs(energy - 2.5)) < 2e-3 * 2.5  # O(h²) oscillation, no secular drift
    assert abs(energy[-1000:].mean() - energy[:1000].mean()) < 1e-5


@pytest.mark.parametrize(
    ("integrator", "order", "steps"),
    [
        ("leapfrog", 2, (40, 80, 160)),
        ("yoshida4", 4, (20, 40, 80)),
        ("fukushima6", 6, (10, 20, 40)),
    ],
)
def test_each_scheme_converges_with_its_order_and_keeps_the_energy(integrator, order, steps):
    scheme = SYMPLECTIC_SCHEMES[integrator]
    assert scheme.order == order and scheme.symplectic
    z0 = torch.tensor([1.0, 0.0], dtype=torch.float64)
    w = np.sqrt(OMEGA2)
    exact = np.array([np.cos(2.0 * w), -w * np.sin(2.0 * w)])
    errors = []
    for n in steps:  # global error at t = 2 s (about 0.7 periods)
        z = integrate(_spring, np.linspace(0.0, 2.0, n + 1), z0, scheme, n_coords=1).numpy()
        errors.append(np.linalg.norm(z[-1] - exact))
    observed = np.log2(np.array(errors[:-1]) / np.array(errors[1:]))
    np.testing.assert_allclose(observed, order, atol=0.1)
    t = np.arange(10001) * 0.05  # 500 s, about 180 periods
    z = integrate(_spring, t, z0, scheme, n_coords=1).numpy()
    energy = 0.5 * (z[:, 1] ** 2 + OMEGA2 * z[:, 0] ** 2)
    bound = {2: 5e-3, 4: 5e-5, 6: 5e-8}[order]  # O(h^order) oscillation, no secular drift
    assert np.max(np.abs(energy - 2.5)) < bound * 2.5
    assert abs(energy[-1000:].mean() - energy[:1000].mean()) < 0.01 * bound * 2.5


def test_the_default_scheme_is_stoermer_verlet_and_others_are_validated():
    trainer = make_trainer("mbdnode_symplectic")
    assert trainer.options.integrator == "leapfrog"
    assert SYMPLECTIC_SCHEMES["leapfrog"] is SEPARABLE_VERLET
    for bad in ("rk4", "yoshida", 4):
        with pytest.raises(ValueError, match=r"integrator .*valid: leapfrog, yoshida4, fukushima6"):
            make_trainer("mbdnode_symplectic", integrator=bad)


@pytest.mark.parametrize("integrator", ["leapfrog", "yoshida4", "fukushima6"])
def test_a_short_fit_runs_with_each_scheme(integrator):
    system = problems.get("sms")
    split = system.generate(n_steps=200, n_train=40)
    options = {"epochs": 3, "hidden": (8,), "window": 3, "batch_size": 16, "lr": 1e-3}
    trainer = make_trainer("mbdnode_symplectic", device="cpu", integrator=integrator, **options)
    result = trainer.fit(system, split.train)
    assert result.status == "success" and len(result.history) == 3
    assert all(np.isfinite(h[2]) for h in result.history)
    x = trainer.predict(split.full.t[:50], split.full.x[0])
    assert x.shape == (50, 2) and np.all(np.isfinite(x))


def test_it_fits_the_mass_spring_and_applies_to_conservative_systems_only():
    system = problems.get("sms")
    split = system.generate(n_steps=400, n_train=120)
    options = {"epochs": 40, "hidden": (32, 32), "window": 4, "batch_size": 8, "lr": 3e-3}
    trainer = make_trainer("mbdnode_symplectic", device="cpu", **options)
    result = trainer.fit(system, split.train)
    losses = [h[2] for h in result.history]
    assert result.status == "success" and losses[-1] < 0.05 * losses[0]
    assert trainer.n_params == 2 * 32 + 32 + 32 * 32 + 32 + 32 * 2 + 2  # two outputs: F_q, F_p
    x = trainer.predict(split.full.t, split.full.x[0])
    assert x.shape == split.full.x.shape and np.all(np.isfinite(x))
    n = split.train.n_samples  # its rollout follows the training window (under half a period)
    assert np.mean((x[:n] - split.train.x) ** 2) < 0.01 * np.mean(split.train.x**2)
    # the field (q', p') = (F_p, −F_q) is the network's output, swapped and negated
    z = torch.as_tensor(split.full.x[:5], dtype=torch.float32)
    empty = torch.zeros(5, 0)
    out = trainer.field.output(z, empty, empty).detach()
    field = trainer.field(z, empty, empty).detach()
    torch.testing.assert_close(field, torch.cat([out[:, 1:], -out[:, :1]], dim=1))
    for name in ("vdp", "cart_pole", "slider_crank"):
        with pytest.raises(NotApplicableError):
            make_trainer("mbdnode_symplectic", device="cpu").fit(
                problems.get(name), problems.get(name).generate(n_steps=20, n_train=20).train
            )
    with pytest.raises(ValueError, match="window"):
        make_trainer("mbdnode_symplectic", window=1)


@pytest.mark.parametrize(
    ("integrator", "expected", "rtol"),
    # MBD-NODE Table 5, "Numerical, Cartesian, RK4": 2.0e-3 over 30 s; the textbook RK4 is
    # exact to the data's rounding
    [("rk4_mbdnode_code", 2.0e-3, 0.02), ("rk4", 0.0, None)],
)
def test_the_numerical_baseline_steps_the_known_equations(integrator, expected, rtol):
    system = problems.get("sms")
    split = system.generate()  # 3000 samples of 0.01 s
    trainer = make_trainer("numerical", "sms", integrator=integrator)
    result = trainer.fit(system, split.train)
    assert result.status == "success" and trainer.n_params == 0
    x = trainer.predict(split.full.t, split.full.x[0])
    full = np.mean((x - split.full.x) ** 2)
    if rtol is None:
        assert full < 1e-12
    else:
        assert full == pytest.approx(expected, rel=rtol)
    with pytest.raises(ValueError, match="second-order"):
        make_trainer("numerical", integrator="leapfrog").fit(
            problems.get("vdp"), problems.get("vdp").generate(n_steps=20, n_train=20).train
        )
