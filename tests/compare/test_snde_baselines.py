"""The SNDE paper's other baselines: the augmented NODE (ANODE), the stabilized ANODE (SANODE),
the tangent projection operator (TPO) and the HNN trained through the solver (App. D.1)."""

from __future__ import annotations

import itertools
from dataclasses import replace

import numpy as np
import pytest
import torch

from collocnode import problems
from collocnode.compare.methods import registry
from collocnode.compare.methods.node import NODEOptions
from collocnode.compare.methods.registry import make_trainer
from collocnode.compare.methods.snde import (
    ANODE,
    SANODE,
    SNDEOptions,
    _Project,
    constraint_functions,
    tangent_projection,
)

TINY = {"epochs": 1, "hidden": (8, 8), "batch_size": 16, "device": "cpu", "dtype": "float64"}


def _fitted(name, system, n_steps=20, n_train=10, **kw):
    split = system.generate(n_steps=n_steps, n_train=n_train)
    trainer = make_trainer(name, **{**TINY, **kw})
    res = trainer.fit(system, split.train)
    assert res.status == "success", res.message
    return trainer, split


def _layers(sizes, flat):
    """The flat MLP weights as [(W (out, in), b (out,)), ...] views."""
    out, k = [], 0
    for n_in, n_out in itertools.pairwise(sizes):
        W = flat[k : k + n_in * n_out].reshape(n_out, n_in)
        k += n_in * n_out
        out.append((W, flat[k : k + n_out]))
        k += n_out
    return out


# --- options and registry ---------------------------------------------------------------------
def test_options_are_validated_with_one_clear_error():
    with pytest.raises(ValueError, match="augment must be a non-negative integer, got -1"):
        NODEOptions(augment=-1)
    with pytest.raises(TypeError, match=r"augment must be a non-negative integer, got 1\.5"):
        NODEOptions(augment=1.5)
    with pytest.raises(ValueError, match="projection"):
        SNDEOptions(projection="normal")
    assert NODEOptions().augment == 0 and SNDEOptions().projection == "none"


def test_the_registry_lists_the_new_baselines_with_their_settings():
    names = registry.available()
    assert {"anode", "sanode", "tpo"} <= set(names)
    assert registry.method_class("anode") is ANODE
    assert registry.method_class("sanode") is SANODE
    assert registry.method_defaults("tpo") == {"projection": "tangent", "gamma": 0.0}
    # SNDE Table 4: augmented dimensions 2, 2, 1; the plain NODE keeps its own settings
    for problem, k in (("two_body", 2), ("rigid_body", 2), ("dcdc", 1)):
        assert make_trainer("anode", problem).options.augment == k
        sanode = make_trainer("sanode", problem).options
        assert sanode.augment == k and sanode.gamma == make_trainer("snde", problem).options.gamma
        assert make_trainer("node", problem).options.augment == 0
    assert make_trainer("anode", "two_body").options.shooting == 3
    assert make_trainer("anode").options.augment == 1
    # the SNDE code's loss fits the augmented states to zero; without a problem, the plain loss
    assert make_trainer("anode", "rigid_body").options.augmented_loss
    assert make_trainer("sanode", "rigid_body").options.augmented_loss
    assert not make_trainer("anode").options.augmented_loss
    tpo = make_trainer("tpo", "rigid_body").options
    assert tpo.projection == "tangent" and tpo.gamma == 0.0 and tpo.hidden == (64, 64)
    vdp = problems.get("vdp")
    assert make_trainer("anode").not_applicable(vdp) is None
    assert make_trainer("sanode").not_applicable(vdp) and make_trainer("tpo").not_applicable(vdp)


# --- ANODE --------------------------------------------------------------------------------------
@pytest.mark.parametrize(("problem", "n_net_out"), [("vdp", 2), ("two_body", 2)])
def test_augmented_states_start_at_zero_and_are_dropped(problem, n_net_out, monkeypatch):
    system = problems.get(problem)
    trainer, split = _fitted("anode", system, augment=3, normalize=True)
    n = system.n_states
    spec = trainer.blocks()["f_augmented"]
    # [z, a, u, μ] -> [x' or q'', a']; the augmented inputs and outputs are not normalised
    assert spec.sizes[0] == n + 3 and spec.sizes[-1] == n_net_out + 3
    assert spec.input_shift[n : n + 3] == (0.0, 0.0, 0.0)
    assert spec.input_scale[n : n + 3] == (1.0, 1.0, 1.0)
    assert spec.output_scale[-3:] == (1.0, 1.0, 1.0)
    assert list(trainer.get_weights()) == ["f_augmented"]
    with pytest.raises(KeyError, match="f_augmented"):
        trainer.set_weights({"f": trainer.get_weights()["f_augmented"]})

    # every training chunk starts with zero augmented states; the loss sees the real ones
    starts = []
    solve = trainer._solve

    def spy(z0, *args):
        starts.append(z0.detach().clone())
        return solve(z0, *args)

    monkeypatch.setattr(trainer, "_solve", spy)
    trainer._loss(torch.arange(len(trainer._chunks)))
    z0 = torch.cat(starts)
    assert z0.shape == (len(trainer._chunks), n + 3)
    assert torch.all(z0[:, n:] == 0)
    np.testing.assert_array_equal(
        z0[:, :n].numpy(), np.stack([c[0].numpy() for c in trainer._chunks])
    )
    monkeypatch.undo()

    t, x0 = split.full.t, split.full.x[0]
    x = trainer.predict(t, x0)
    assert x.shape == (t.size, n) and np.all(np.isfinite(x))
    sig, mu = trainer._inputs(t, None), trainer._mu(None)
    a = trainer.augmented_states(t, x0)
    assert a.shape == (t.size, 3)
    np.testing.assert_array_equal(a[0], 0.0)
    assert np.any(a[-1] != 0.0)  # the network drives them
    za = trainer._rollout_model(t, x0, sig, mu, x0, keep_augmented=True)
    np.testing.assert_array_equal(za, np.hstack([x, a]))
    # the derivative of the real state along the rollout
    x2, dx = trainer.predict_with_derivatives(t, x0)
    np.testing.assert_array_equal(x2, x)
    assert dx.shape == (t.size, n)
    with torch.no_grad():
        full = trainer.field(torch.as_tensor(za), sig(torch.as_tensor(t)), mu).numpy()
    np.testing.assert_allclose(dx, full[:, :n], rtol=1e-14)


@pytest.mark.parametrize(
    ("problem", "solver", "tol"), [("vdp", "rk4", 1e-12), ("two_body", "dopri5", 1e-6)]
)
def test_an_anode_without_augmented_outputs_is_the_plain_node(problem, solver, tol):
    system = problems.get(problem)
    kw = {"normalize": True, "solver": solver, "shooting": 5}
    node, split = _fitted("node", system, **kw)
    anode, _ = _fitted("anode", system, augment=2, **kw)
    w_node = node.get_weights()["f"]
    spec = anode.blocks()["f_augmented"]
    w = np.random.default_rng(3).normal(size=spec.n_params)  # any augmented input weights
    n_in = node.blocks()["f"].sizes[0]
    n_z = node.layout.n_model
    plain = _layers(node.blocks()["f"].sizes, w_node)
    aug = _layers(spec.sizes, w)
    # the real inputs and every hidden and real output weight as the plain NODE's
    aug[0][0][:, :n_z] = plain[0][0][:, :n_z]
    aug[0][0][:, n_z + 2 :] = plain[0][0][:, n_z:n_in]
    aug[0][1][:] = plain[0][1]
    for (Wa, ba), (Wp, bp) in zip(aug[1:-1], plain[1:-1], strict=True):
        Wa[:], ba[:] = Wp, bp
    n_out = plain[-1][0].shape[0]
    aug[-1][0][:n_out], aug[-1][1][:n_out] = plain[-1]
    aug[-1][0][n_out:], aug[-1][1][n_out:] = 0.0, 0.0  # a' = 0: a stays at its zero start
    anode.set_weights({"f_augmented": w})
    t, x0 = split.full.t, split.full.x[0]
    np.testing.assert_allclose(anode.predict(t, x0), node.predict(t, x0), rtol=tol, atol=tol)


def test_the_augmented_states_enter_the_loss_against_zero_when_asked():
    system = problems.get("two_body")
    anode, _ = _fitted("anode", system, augment=2, shooting=5)
    idx = torch.arange(len(anode._chunks))
    apart = anode._loss(idx).item()
    anode.options = replace(anode.options, augmented_loss=True)
    with_augmented = anode._loss(idx).item()
    assert with_augmented > apart  # the trained a(t) is not zero along the chunks
    # with a' = 0 the augmented states stay at their zero start: nothing is added
    spec = anode.blocks()["f_augmented"]
    w = anode.get_weights()["f_augmented"].copy()
    last = _layers(spec.sizes, w)[-1]
    last[0][-2:], last[1][-2:] = 0.0, 0.0
    anode.set_weights({"f_augmented": w})
    zeroed = anode._loss(idx).item()
    anode.options = replace(anode.options, augmented_loss=False)
    assert zeroed == pytest.approx(anode._loss(idx).item(), rel=1e-12)
    with pytest.raises(TypeError, match="augmented_loss must be a bool, got 1"):
        NODEOptions(augmented_loss=1)


# --- SANODE -------------------------------------------------------------------------------------
def test_sanode_stabilizes_the_real_state_only():
    system = problems.get("rigid_body")
    trainer, _ = _fitted("sanode", system, augment=2, gamma=4.0)
    x0 = np.array([0.6, 0.0, 0.8])
    ref = trainer._reference(x0, 0.0)
    rng = np.random.default_rng(1)
    on = rng.normal(size=(5, 3))
    on /= np.linalg.norm(on, axis=1, keepdims=True)  # |x| = 1: on the manifold of x0
    off = on * 1.3
    a = rng.normal(size=(5, 2))
    ctx = {
        "t0": torch.zeros(5, dtype=torch.float64),
        "signal": trainer._inputs(np.zeros(1), None),
        "mu": trainer._mu(None)[None, :],
        "ref": torch.as_tensor(ref)[None, :],
    }
    t0 = torch.zeros((), dtype=torch.float64)
    for x, vanishes in ((on, True), (off, False)):
        z = torch.as_tensor(np.hstack([x, a]), dtype=torch.float64).requires_grad_(True)
        rhs = trainer._rhs_batch(t0, z, ctx)
        field = trainer.field(z, ctx["signal"](ctx["t0"]), ctx["mu"])
        diff = rhs - field  # = −γ F g, F with zero rows for the augmented states
        assert torch.all(diff[:, 3:] == 0)
        if vanishes:
            assert diff.abs().max() < 1e-12
        else:
            g = 0.5 * (1.3**2 - 1.0)  # Casimir |x|²/2 relative to x0's
            expected = -4.0 * g * x / np.sum(x * x, axis=1, keepdims=True)  # −γ G⁺ g, G = xᵀ
            np.testing.assert_allclose(diff[:, :3].detach().numpy(), expected, rtol=1e-10)
        # backward: the augmented rows' gradient is the field's alone
        (g_rhs,) = torch.autograd.grad(rhs[:, 3:].sum(), z, retain_graph=True)
        (g_field,) = torch.autograd.grad(field[:, 3:].sum(), z)
        torch.testing.assert_close(g_rhs, g_field, rtol=0, atol=0)


# --- TPO ----------------------------------------------------------------------------------------
def test_tangent_projection_is_eq_30_on_the_sphere_and_general():
    system = problems.get("rigid_body")
    funcs = constraint_functions(system)
    rng = np.random.default_rng(0)
    x, f = rng.normal(size=(4, 3)), rng.normal(size=(4, 3))
    P = np.eye(3) - np.einsum("bi,bj->bij", x, x) / np.sum(x * x, axis=1)[:, None, None]
    np.testing.assert_allclose(
        tangent_projection(funcs, x, np.zeros(4), f), np.einsum("bij,bj->bi", P, f), rtol=1e-12
    )
    # two constraints (two-body: angular momentum and energy): G P f = 0, P P f = P f
    orbit = problems.get("two_body")
    funcs = constraint_functions(orbit)
    x = orbit.x0 + 0.1 * rng.normal(size=(4, 4))
    f = rng.normal(size=(4, 4))
    pf = tangent_projection(funcs, x, np.zeros(4), f)
    G = funcs[1](x, np.zeros(4))
    assert np.max(np.abs(np.einsum("bmn,bn->bm", G, pf))) < 1e-12
    np.testing.assert_allclose(tangent_projection(funcs, x, np.zeros(4), pf), pf, atol=1e-12)


def test_tangent_projection_gradient_matches_finite_differences():
    funcs = constraint_functions(problems.get("rigid_body"))
    rng = np.random.default_rng(2)
    x = torch.as_tensor(rng.normal(size=(3, 3)), dtype=torch.float64).requires_grad_(True)
    f = torch.as_tensor(rng.normal(size=(3, 3)), dtype=torch.float64).requires_grad_(True)
    t = torch.zeros(3, dtype=torch.float64)
    assert torch.autograd.gradcheck(
        lambda x, f: _Project.apply(x, f, t, funcs, 1e-6), (x, f), eps=1e-6, atol=1e-6
    )


def test_tpo_model_gradient_matches_finite_differences():
    # the whole right-hand side u' = P(u) f_Θ(u) (+ augmented rows) in the state and the weights
    system = problems.get("rigid_body")
    trainer, _ = _fitted("tpo", system, augment=1)
    ctx = {
        "t0": torch.zeros(2, dtype=torch.float64),
        "signal": trainer._inputs(np.zeros(1), None),
        "mu": trainer._mu(None)[None, :],
        "ref": None,
    }
    t0 = torch.zeros((), dtype=torch.float64)
    z = torch.as_tensor(np.random.default_rng(4).normal(size=(2, 4)), dtype=torch.float64)
    z.requires_grad_(True)
    assert torch.autograd.gradcheck(
        lambda z: trainer._rhs_batch(t0, z, ctx), (z,), eps=1e-6, atol=1e-6
    )
    w = next(trainer.field.parameters())
    base = w.detach().clone()
    (grad,) = torch.autograd.grad(trainer._rhs_batch(t0, z, ctx).square().sum(), w)
    i, j, h = 1, 2, 1e-6
    vals = []
    for s in (h, -h):
        with torch.no_grad():
            w.copy_(base)
            w[i, j] += s
            vals.append(trainer._rhs_batch(t0, z, ctx).square().sum().item())
    with torch.no_grad():
        w.copy_(base)
    assert grad[i, j].item() == pytest.approx((vals[0] - vals[1]) / (2 * h), rel=1e-6)


def test_tpo_keeps_the_casimir_of_an_untrained_model():
    system = problems.get("rigid_body")
    tpo, split = _fitted("tpo", system)
    node, _ = _fitted("node", system, shooting=3)
    node.set_weights(tpo.get_weights())  # the same untrained field, without the projection
    t = np.arange(201) * 0.1  # 20 s
    x0 = split.full.x[0]

    def drift(x):
        c = system.invariants(x)["casimir"]
        return np.max(np.abs(c - c[0])) / c[0]

    x = tpo.predict(t, x0)
    assert np.all(np.isfinite(x)) and drift(x) < 1e-7  # the solver's tolerance (1e-9)
    assert drift(node.predict(t, x0)) > 1e-3  # the free field leaves the sphere


# --- the HNN trained through the solver (SNDE App. D.1) ---------------------------------------
@pytest.mark.parametrize(("inputs", "block"), [("state", "H"), ("squares", "H_of_squares")])
def test_a_hamiltonian_node_field_is_the_symplectic_gradient_of_its_network(inputs, block):
    system = problems.get("two_body")
    trainer, _ = _fitted("node", system, shooting=3, hamiltonian=inputs)
    assert list(trainer.blocks()) == [block] and trainer.blocks()[block].sizes == (4, 8, 8, 1)
    spec, w = trainer.blocks()[block], trainer.get_weights()[block]
    z = np.random.default_rng(0).normal(size=(6, 4))
    h = 1e-6  # central differences of the numpy twin of the network, float64

    def energy(x):
        return spec.numpy(x * x if inputs == "squares" else x, w)[:, 0]

    grad = np.column_stack([(energy(z + h * e) - energy(z - h * e)) / (2 * h) for e in np.eye(4)])
    expected = np.concatenate([grad[:, 2:], -grad[:, :2]], axis=1)  # (∂H/∂p, −∂H/∂q)
    empty = torch.zeros(6, 0, dtype=torch.float64)
    with torch.no_grad():  # the rollout's mode
        field = trainer.field(torch.as_tensor(z), empty, empty).numpy()
    np.testing.assert_allclose(field, expected, rtol=1e-6, atol=1e-8)
    if inputs == "squares":  # a network of z ⊙ z is even in every coordinate
        np.testing.assert_array_equal(energy(z), energy(-z))


def test_a_hamiltonian_node_trains_through_the_solver_and_conserves_its_hamiltonian():
    system = problems.get("two_body")
    split = system.generate(n_steps=20, n_train=10)
    losses = []
    for epochs in (1, 40):
        trainer = make_trainer(
            "node",
            **{**TINY, "epochs": epochs, "shooting": 3, "hamiltonian": "squares", "lr": 1e-2},
        )
        res = trainer.fit(system, split.train)
        assert res.status == "success", res.message
        losses.append(res.best_loss)
    assert losses[1] < 0.5 * losses[0]  # 0.70 -> 0.20: fitted through odeint
    t = np.arange(101) * 0.1
    x = trainer.predict(t, split.full.x[0])
    with torch.no_grad():
        H = trainer.field.scalar(torch.as_tensor(x)).numpy()
    assert np.all(np.isfinite(x)) and np.ptp(H) < 1e-6 * max(1.0, np.abs(H).max())
    # the plain NODE from the same data does not keep a Hamiltonian: it is a different model
    assert not np.allclose(x, _fitted("node", system, shooting=3)[0].predict(t, x[0]))


def test_a_hamiltonian_node_refuses_what_it_cannot_model():
    with pytest.raises(ValueError, match="unknown hamiltonian 'energy'; valid: state, squares"):
        NODEOptions(hamiltonian="energy")
    with pytest.raises(ValueError, match="does not take augmented states, got augment=2"):
        NODEOptions(hamiltonian="state", augment=2)
    system = problems.get("rigid_body")
    trainer = make_trainer("node", **{**TINY, "hamiltonian": "state"})
    with pytest.raises(ValueError, match="hamiltonian='state' does not apply: rigid_body is first"):
        trainer.fit(system, system.generate(n_steps=20, n_train=10).train)
