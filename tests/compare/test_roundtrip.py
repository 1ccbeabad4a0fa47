"""A network trained in torch evaluates identically through the CasADi function of its spec, and
weights set from the CasADi/numpy side drive the torch rollout exactly as numpy would."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from collocnode import problems
from collocnode.compare.methods.registry import make_trainer
from collocnode.tools._fixed_step import integrate

# float64: the torch network must equal its CasADi function to 1e-12
TINY = {"epochs": 3, "hidden": (16, 16), "batch_size": 8, "device": "cpu", "dtype": "float64"}


@pytest.mark.parametrize(
    ("name", "problem", "extra"),
    [
        ("fnode", "vdp", {}),
        ("fnode", "smsd", {"normalize": True}),
        ("mbdnode", "cart_pole", {"activation": "softplus"}),
        ("node", "smsd", {"shooting": 5}),
        ("mnn", "vdp", {"horizon": 4}),
        ("fcnn", "vdp", {}),
        # scalar networks (an energy "H", a Lagrangian "L"): the CasADi side can evaluate them,
        # though it cannot load them as its field
        ("hnn", "sms", {"normalize": True}),
        ("lnn", "smsd", {}),
    ],
)
def test_trained_torch_network_equals_its_casadi_function(name, problem, extra):
    system = problems.get(problem)
    split = system.generate(n_steps=40, n_train=30)
    trainer = make_trainer(name, **{**TINY, **extra})
    trainer.fit(system, split.train)
    rng = np.random.default_rng(0)
    for block, spec in trainer.blocks().items():
        w = trainer.get_weights()[block]
        assert w.shape == (spec.n_params,)
        f = spec.casadi_function()
        x = rng.normal(size=(7, spec.n_in))
        via_casadi = np.column_stack([np.asarray(f(xi, w)).ravel() for xi in x]).T
        module = trainer.modules()[0]
        net = getattr(module, "net", module)
        with torch.no_grad():
            via_torch = net(torch.as_tensor(x, dtype=torch.float64)).numpy()
        np.testing.assert_allclose(via_torch, via_casadi, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(spec.numpy(x, w), via_casadi, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("integrator", ["rk4", "leapfrog"])
def test_weights_from_the_other_side_drive_the_same_rollout(integrator):
    system = problems.get("smsd")
    split = system.generate(n_steps=60, n_train=40)
    trainer = make_trainer("fnode", **TINY, integrator=integrator)
    trainer.fit(system, split.train)
    spec = trainer.blocks()["f"]
    w = spec.init_weights(np.random.default_rng(7)) * 0.5  # e.g. fitted by IPOPT
    trainer.set_weights({"f": w})
    np.testing.assert_array_equal(trainer.get_weights()["f"], w)
    t, x0 = split.full.t, split.full.x[0]
    ours = trainer.predict(t, x0)

    def field(_t, x):  # numpy twin: q'' = net(q, q')
        return np.concatenate([x[..., 1:], spec.numpy(x, w)], axis=-1)

    ref = integrate(field, t, x0, integrator, n_coords=1)
    np.testing.assert_allclose(ours, ref, rtol=1e-12, atol=1e-12)
