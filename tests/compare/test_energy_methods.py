"""HNN and LNN, the energy-based baselines of the MBD-NODE paper: the field each derives from its
scalar network, their fit of the single mass-spring, and where they do not apply."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from collocnode import problems
from collocnode.compare.methods.base import NotApplicableError
from collocnode.compare.methods.lnn import LagrangianField
from collocnode.compare.methods.registry import make_trainer
from collocnode.nn import MLP
from collocnode.problems._layout import StateLayout
from collocnode.tools._fixed_step import DivergenceError

# float64 (the methods default to float32, as the authors' code): the tests compare the field
# with finite differences and the conserved quantity along a rollout to 1e-6
TINY = {"epochs": 1, "hidden": (8, 8), "device": "cpu", "dtype": "float64"}
# measured on sms (600 samples, 300 for training), seed 0 / seeds 1, 2:
#   hnn: test MSE 7.0e-4 / 9.9e-3, 1.8e-2; energy drift 2.0 % / 4.4 %, 3.1 %; 0.6-2 s fit
#   lnn: test MSE 5.0e-3 / 3.5e-3, 9.4e-4; energy drift 11.7 % / 9.3 %, 8.0 %; 1 s fit
# against a test MSE of 1.48 for the prediction x = 0
FIT = {
    "hnn": {"hidden": (32, 32), "epochs": 300, "device": "cpu", "dtype": "float64"},
    "lnn": {
        "hidden": (32, 32),
        "epochs": 300,
        "full_batch": True,
        "lr_decay": 1.0,
        "device": "cpu",
        "dtype": "float64",
    },
}


@pytest.fixture(scope="module")
def sms_split():
    return problems.get("sms"), problems.get("sms").generate(n_steps=600, n_train=300)


# ---- HNN: Greydanus eq. 2 ---------------------------------------------------------------------
def test_hnn_field_is_the_symplectic_gradient_of_its_scalar_network():
    system = problems.get("double_pendulum")  # two coordinates: the q and p halves differ
    trainer = make_trainer("hnn", **TINY)
    trainer.fit(system, system.generate(n_steps=20, n_train=20).train)
    assert list(trainer.blocks()) == ["H"] and trainer.blocks()["H"].sizes[-1] == 1
    spec, w = trainer.blocks()["H"], trainer.get_weights()["H"]
    z = np.random.default_rng(0).normal(size=(6, 4))
    h = 1e-6  # central differences of the numpy twin of the network, float64

    def energy(x):
        return spec.numpy(x, w)[:, 0]

    grad = np.column_stack([(energy(z + h * e) - energy(z - h * e)) / (2 * h) for e in np.eye(4)])
    expected = np.concatenate([grad[:, 2:], -grad[:, :2]], axis=1)  # (∂H/∂p, −∂H/∂q)
    zt, empty = torch.as_tensor(z), torch.zeros(6, 0, dtype=torch.float64)
    with torch.no_grad():  # the rollout's mode
        rollout_mode = trainer.field(zt, empty, empty).numpy()
    training_mode = trainer.field.time_derivative(zt).detach().numpy()
    np.testing.assert_allclose(rollout_mode, expected, rtol=1e-6, atol=1e-8)
    np.testing.assert_array_equal(training_mode, rollout_mode)


def test_hnn_refuses_leapfrog_and_trains_full_batch():
    for name in ("leapfrog", "rk4_mbdnode_code"):
        with pytest.raises(ValueError, match=rf"{name}.*∂H/∂p"):
            make_trainer("hnn", integrator=name)
    system = problems.get("sms")
    trainer = make_trainer("hnn", **TINY)
    trainer.fit(system, system.generate(n_steps=40, n_train=30).train)
    assert trainer.options.full_batch and trainer.options.batch_size == 30


# ---- LNN: Cranmer eq. 6 -----------------------------------------------------------------------
class KnownLagrangian(torch.nn.Module):
    """Stands in for the network: ``forward(z) = L(q, q')[..., None]``."""

    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, z):
        return self.fn(z)[..., None]


def _lagrangian_field(n_q, fn):
    layout = StateLayout(2 * n_q, n_q)
    spec = MLP((2 * n_q, 4, 1), "softplus")
    field = LagrangianField(spec, layout, spec.init_weights(0), torch.float64, "cpu")
    field.net = KnownLagrangian(fn)  # the formula, not the network, is under test
    return field


def _spring(z, m=10.0, k=50.0):
    return 0.5 * m * z[..., 1] ** 2 - 0.5 * k * z[..., 0] ** 2


def _pendulum(z, m=2.0, length=0.7, g=9.81):
    return 0.5 * m * length**2 * z[..., 1] ** 2 + m * g * length * torch.cos(z[..., 0])


def _varying_mass(z):
    # L = (1 + q²) q'²/2 − q²/2: its mixed term ∂²L/∂q'∂q = 2 q q' enters the acceleration
    return 0.5 * (1 + z[..., 0] ** 2) * z[..., 1] ** 2 - 0.5 * z[..., 0] ** 2


@pytest.mark.parametrize(
    ("fn", "expected"),
    [
        (_spring, lambda q, v: -5.0 * q),
        (_pendulum, lambda q, v: -9.81 / 0.7 * np.sin(q)),
        (_varying_mass, lambda q, v: -q * (1 + v**2) / (1 + q**2)),
    ],
)
@pytest.mark.parametrize("grad_mode", [True, False])
def test_lnn_acceleration_of_known_lagrangians(fn, expected, grad_mode):
    field = _lagrangian_field(1, fn)
    z = np.random.default_rng(1).normal(size=(7, 2))
    with torch.set_grad_enabled(grad_mode):  # training and rollout
        acc = field.acceleration(torch.as_tensor(z)).detach().numpy()
    np.testing.assert_allclose(acc[:, 0], expected(z[:, 0], z[:, 1]), rtol=1e-12, atol=1e-12)


def test_lnn_acceleration_of_the_double_pendulum_lagrangian():
    # coupled mass matrix and a non-symmetric mixed term: the index order of eq. 6 matters
    system = problems.get("double_pendulum", m1=1.3, m2=0.7, l1=0.9, l2=1.2)
    p = system.params
    m1, m2, l1, l2, g = p["m1"], p["m2"], p["l1"], p["l2"], p["g"]

    def lagrangian(z):
        th1, th2, w1, w2 = z.unbind(-1)
        kinetic = 0.5 * (m1 + m2) * l1**2 * w1**2 + 0.5 * m2 * l2**2 * w2**2
        kinetic = kinetic + m2 * l1 * l2 * w1 * w2 * torch.cos(th1 - th2)
        potential = -(m1 + m2) * g * l1 * torch.cos(th1) - m2 * g * l2 * torch.cos(th2)
        return kinetic - potential

    field = _lagrangian_field(2, lagrangian)
    x = np.random.default_rng(2).normal(size=(5, 4))
    acc = field.acceleration(torch.as_tensor(x)).detach().numpy()
    np.testing.assert_allclose(acc, system.acceleration(0.0, x), rtol=1e-10, atol=1e-10)
    # a single state, as in a rollout: no batch axis
    one = field(torch.as_tensor(x[0]), torch.zeros(0), torch.zeros(0)).detach().numpy()
    np.testing.assert_allclose(one, np.concatenate([x[0, 2:], acc[0]]), rtol=1e-12)


def test_a_singular_lagrangian_gives_nan_and_a_diverged_rollout(sms_split):
    field = _lagrangian_field(1, lambda z: 0.5 * z[..., 0] ** 2)  # no q' in L: ∂²L/∂q'² = 0
    acc = field.acceleration(torch.tensor([[0.3, 1.0], [1.0, -2.0]], dtype=torch.float64))
    assert torch.isnan(acc).all()
    system, split = sms_split
    trainer = make_trainer("lnn", **TINY)
    trainer.fit(system, split.train)
    assert list(trainer.blocks()) == ["L"]
    trainer.set_weights({"L": np.zeros_like(trainer.get_weights()["L"])})  # L ≡ 0
    with pytest.raises(DivergenceError, match="non-finite") as info:
        trainer.predict(split.full.t[:10], split.full.x[0])
    assert info.value.step == 1


# ---- both fit the single mass-spring ----------------------------------------------------------
def _conserved(trainer, x):
    """The scalar that the model's own flow conserves, along the states ``x``: H for the HNN,
    the energy function q' ∂L/∂q' − L for the LNN."""
    z = torch.as_tensor(x).requires_grad_(True)
    s = trainer.field.scalar(z)
    if trainer.name == "hnn":
        return s.detach().numpy()
    (g,) = torch.autograd.grad(s.sum(), z)
    return (z[:, 1] * g[:, 1] - s).detach().numpy()


@pytest.mark.parametrize(
    ("name", "max_mse", "max_drift"), [("hnn", 0.05, 0.1), ("lnn", 0.05, 0.25)]
)
def test_energy_methods_fit_the_single_mass_spring(sms_split, name, max_mse, max_drift):
    system, split = sms_split
    trainer = make_trainer(name, **FIT[name])
    result = trainer.fit(system, split.train)
    assert result.status == "success" and result.epochs == FIT[name]["epochs"]
    x = trainer.predict(split.full.t, split.full.x[0])
    n = split.train.n_samples
    assert x.shape == split.full.x.shape and np.all(np.isfinite(x))
    test, ref = x[n:], split.full.x[n:]
    assert np.mean((test - ref) ** 2) < max_mse * np.mean(ref**2)  # against x = 0
    energy = system.energy(test)
    e0 = system.energy(split.full.x[0])
    assert np.max(np.abs(energy - e0)) < max_drift * e0
    # the model's own conserved quantity holds along its RK4 rollout (any weights: structure),
    # to 1e-6 of its spread over a box of states (measured: 1.5e-9 HNN, 1.0e-9 LNN)
    box = np.random.default_rng(3).uniform([-2.0, -4.0], [2.0, 4.0], size=(200, 2))
    spread = np.std(_conserved(trainer, box))
    own = _conserved(trainer, x)
    assert np.max(np.abs(own - own[0])) < 1e-6 * spread


# ---- applicability ----------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["hnn", "lnn"])
def test_energy_methods_need_a_second_order_system_without_inputs(name, oscillator, sms_split):
    vdp = problems.get("vdp")
    trainer = make_trainer(name, **TINY)
    assert "second-order" in trainer.not_applicable(vdp)
    with pytest.raises(NotApplicableError, match=f"{name} does not apply to vdp"):
        trainer.fit(vdp, vdp.generate(n_steps=20, n_train=20).train)
    assert "known inputs (F)" in trainer.not_applicable(oscillator)
    with pytest.raises(NotApplicableError, match=f"{name} does not apply to oscillator"):
        trainer.fit(oscillator, oscillator.generate().train)
    system, split = sms_split
    assert trainer.not_applicable(system) is None
    with pytest.raises(NotApplicableError, match="parameter inputs"):
        make_trainer(name, param_inputs=("k",), **TINY).fit(system, split.train)


def test_paper_settings_of_the_single_mass_spring():
    hnn = make_trainer("hnn", "sms").options
    assert (hnn.epochs, hnn.lr, hnn.lr_decay, hnn.weight_decay) == (30_000, 1e-3, 1.0, 1e-4)
    assert hnn.full_batch and hnn.hidden == (256, 256) and hnn.integrator == "rk4"
    lnn = make_trainer("lnn", "sms").options
    assert (lnn.epochs, lnn.lr, lnn.lr_decay, lnn.batch_size) == (400, 1e-4, 0.98, 1)
    assert lnn.activation == "softplus" and not lnn.full_batch and lnn.grad_clip is None
    assert hnn.targets == lnn.targets == "fd"
