"""Every method fits a tiny problem on the CPU and predicts a finite rollout of the right shape;
the trainer interface handles budgets, interrupts, divergence and inapplicable methods."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from collocnode import problems
from collocnode.compare.methods import registry
from collocnode.compare.methods.base import FitResult, NotApplicableError
from collocnode.compare.methods.registry import make_trainer
from collocnode.compare.methods.snde import _Stabilize, constraint_functions, stabilization
from collocnode.tools._fixed_step import DivergenceError

# collocation is tested in test_collocation_method, sindy (no epochs) in test_sindy_method,
# numerical (nothing to train) in test_mbdnode_symplectic
ALL = [m for m in registry.available() if m not in ("collocation", "numerical", "sindy")]
# SNDE needs constraints or invariants, HNN and LNN a second-order system: not the Van der Pol
FIRST_ORDER = [
    m for m in ALL if registry.method_class(m).not_applicable(problems.get("vdp")) is None
]
QUICKER = {
    "node": {"shooting": 5},
    "node_adjoint": {"shooting": 5},
    "anode": {"shooting": 5},
    "mnn": {"horizon": 4},
    "lstm": {"hidden": (8,), "window": 4},
}


TINY = {"epochs": 2, "hidden": (8, 8), "batch_size": 16, "device": "cpu"}


def _fit(name, system, train, **kw):
    trainer = make_trainer(name, **{**TINY, **QUICKER.get(name, {}), **kw})
    return trainer, trainer.fit(system, train)


@pytest.mark.parametrize("name", FIRST_ORDER)
def test_every_method_fits_and_predicts_on_a_first_order_system(name):
    system = problems.get("vdp")
    split = system.generate(n_steps=40, n_train=30)
    trainer, res = _fit(name, system, split.train)
    assert isinstance(res, FitResult)
    assert res.status == "success", res.message
    assert res.epochs == TINY["epochs"] and len(res.history) == TINY["epochs"]
    assert res.n_params == trainer.n_params > 0
    assert res.train_time_s > 0
    x = trainer.predict(split.full.t, split.full.x[0])
    assert x.shape == (split.full.n_samples, 2)
    assert np.all(np.isfinite(x))
    if name != "fcnn":  # the FCNN maps time to state and ignores x0 (as in the papers)
        np.testing.assert_allclose(x[0], split.full.x[0], atol=1e-6)


@pytest.mark.parametrize("name", ["fnode", "mbdnode", "node", "mnn", "lstm"])
def test_second_order_methods_with_an_input_signal(name, oscillator):
    split = oscillator.generate()
    trainer, res = _fit(name, oscillator, split.train)
    assert res.status == "success"
    t, x0 = split.full.t, split.full.x[0]
    by_default = trainer.predict(t, x0)  # the system's own inputs
    by_samples = trainer.predict(t, x0, split.full.u)
    by_callable = trainer.predict(t, x0, oscillator.inputs)
    assert by_default.shape == (t.size, 2)
    np.testing.assert_allclose(by_default, by_callable, rtol=1e-12, atol=1e-12)
    # the samples are interpolated linearly between grid points (integrator stages)
    np.testing.assert_allclose(by_samples, by_callable, atol=1e-2)
    zero = trainer.predict(t, x0, np.zeros((t.size, 1)))
    assert not np.allclose(zero, by_callable)


def test_the_lstm_started_from_data_trains_on_whole_windows_and_rolls_out_from_the_data():
    system = problems.get("vdp")
    split = system.generate(n_steps=40, n_train=30)
    w = QUICKER["lstm"]["window"]
    padded, _ = _fit("lstm", system, split.train)
    data, res = _fit("lstm", system, split.train, start="data")
    assert res.status == "success"
    assert (padded.start_samples, data.start_samples) == (1, w)
    # the authors' code's windows: those inside the data, 30 - w of them (padded: 29)
    assert (padded._S.shape[0], data._S.shape[0]) == (29, 30 - w)
    t, x = split.full.t, split.full.x
    pred = data.predict(t, x[:w])
    np.testing.assert_array_equal(pred[:w], x[:w])
    assert np.all(np.isfinite(pred)) and not np.allclose(pred[w:], x[w:], atol=1e-9)
    # each later state depends on the whole given window, not on its first state alone
    nudged = x[:w].copy()
    nudged[w - 1] += 0.1
    assert not np.allclose(data.predict(t, nudged)[w], pred[w])
    with pytest.raises(ValueError, match=r"x0 must have shape \(4, 2\)"):
        data.predict(t, x[0])
    with pytest.raises(ValueError, match="starts from 4"):
        data.predict(t[:3], x[:w])
    short = system.generate(n_steps=6, n_train=w).train
    with pytest.raises(ValueError, match=r"train\[0\] has 4 samples.*needs more than 4"):
        make_trainer("lstm", **{**TINY, **QUICKER["lstm"]}, start="data").fit(system, short)
    with pytest.raises(ValueError, match="start"):
        make_trainer("lstm", start="history")


def test_the_fcnn_reads_time_scaled_to_the_window_or_in_a_fixed_unit():
    system = problems.get("vdp")
    split = system.generate(n_steps=40, n_train=30)
    window, _ = _fit("fcnn", system, split.train)
    unit, res = _fit("fcnn", system, split.train, time_unit=0.1)
    assert res.status == "success"
    span = split.train.t[-1] - split.train.t[0]
    assert window.blocks()["f"].input_shift == (split.train.t[0],)
    assert window.blocks()["f"].input_scale == pytest.approx((span,))
    assert (unit.blocks()["f"].input_shift, unit.blocks()["f"].input_scale) == ((0.0,), (0.1,))
    # the trained network is the block it reports: t = 10 s enters as 10 / 0.1
    f, weights = unit.blocks()["f"], unit.get_weights()["f"]
    np.testing.assert_allclose(
        unit.predict(np.array([0.0, 10.0]), split.full.x[0]),
        f.numpy(np.array([[0.0], [10.0]]), weights),
        rtol=1e-5,
        atol=1e-6,
    )
    with pytest.raises(ValueError, match="time_unit"):
        make_trainer("fcnn", time_unit=0.0)


def test_the_partitioned_lstm_learns_the_independent_coordinates_and_keeps_the_constraints():
    system = problems.get("slider_crank")
    split = system.generate(n_steps=40, n_train=30)
    full, res = _fit("lstm", system, split.train)
    part, res_part = _fit("lstm", system, split.train, partition=True)
    assert res.status == res_part.status == "success"
    # (theta1, theta1') and the inputs in, (theta1, theta1') out; every state without it
    n_u = system.n_inputs
    assert part._S.shape[-1] == 2 + n_u and full._S.shape[-1] == system.n_states + n_u
    assert part.net.head(torch.zeros(1, 8)).shape == (1, 2)
    t, x0 = split.full.t, split.full.x[0]
    x = part.predict(t, x0)
    assert x.shape == (t.size, system.n_states) and np.all(np.isfinite(x))
    np.testing.assert_allclose(x[0], x0, atol=1e-9)
    # the dependent coordinates come from the constraints, at every sample
    n_q = system.n_coords
    assert max(np.abs(system.phi(q)).max() for q in x[:, :n_q]) < 1e-8
    assert np.abs(full.predict(t, x0)[:, :n_q][1:] - x[:, :n_q][1:]).max() > 1e-6
    # a system without holonomic constraints is unchanged by it
    vdp = problems.get("vdp").generate(n_steps=40, n_train=30)
    plain, _ = _fit("lstm", problems.get("vdp"), vdp.train, partition=True)
    assert plain._S.shape[-1] == 2


def test_the_methods_for_first_order_systems_are_the_expected_ones():
    assert set(ALL) - set(FIRST_ORDER) == {
        "snde",
        "sanode",
        "tpo",
        "hnn",
        "lnn",
        "mbdnode_symplectic",
    }


@pytest.mark.parametrize("name", [m for m in ALL if m not in FIRST_ORDER])
def test_a_method_that_does_not_apply_says_why_and_refuses_to_fit(name):
    system = problems.get("vdp")
    trainer = make_trainer(name, **TINY)
    assert trainer.not_applicable(system)
    with pytest.raises(NotApplicableError, match=f"{name} does not apply to vdp: "):
        trainer.fit(system, system.generate(n_steps=20, n_train=10).train)


def test_snde_is_not_applicable_without_constraints():
    system = problems.get("vdp")
    trainer = make_trainer("snde", **TINY)
    reason = trainer.not_applicable(system)
    assert reason and "constraint" in reason
    with pytest.raises(NotApplicableError, match="snde does not apply to vdp"):
        trainer.fit(system, system.generate(n_steps=20, n_train=10).train)


@pytest.mark.parametrize("stabilizer", ["pinv", "transpose"])
def test_snde_fits_and_stays_near_the_constraint(circle, stabilizer):
    split = circle.generate()
    # G = (2x, 2y) has norm 2 on the circle, so F = Gᵀ is 4× stronger than F = G⁺
    gamma = 32.0 if stabilizer == "pinv" else 8.0
    trainer, res = _fit(
        "snde", circle, split.train, stabilizer=stabilizer, gamma=gamma, epochs=3, shooting=3
    )
    assert res.status == "success"
    t = np.arange(200) * 0.1  # 20 s, far beyond the 4 s of training
    x = trainer.predict(t, split.full.x[0])
    assert x.shape == (200, 2) and np.all(np.isfinite(x))
    g = circle.constraints(x)[:, 0]
    plain = make_trainer("snde", **{**TINY, "gamma": 0.0, "epochs": 1, "shooting": 3})
    plain.fit(circle, split.train)
    plain.set_weights(trainer.get_weights())  # same field, no stabilization
    g0 = circle.constraints(plain.predict(t, split.full.x[0]))[:, 0]
    assert np.max(np.abs(g)) < 0.05
    assert np.max(np.abs(g)) < np.max(np.abs(g0))


def test_stabilization_term_is_the_pseudo_inverse_correction(circle):
    x = np.array([[1.2, 0.3], [0.1, -0.9]])
    g = circle.constraints(x)[:, 0]
    G = np.stack([circle.constraint_jacobian(xi) for xi in x])[:, 0]  # (B, 2)
    funcs = constraint_functions(circle)
    pinv = stabilization(funcs, x, np.zeros(2), None, "pinv")
    np.testing.assert_allclose(pinv, G * (g / np.sum(G * G, axis=1))[:, None], rtol=1e-12)
    trans = stabilization(funcs, x, np.zeros(2), None, "transpose")
    np.testing.assert_allclose(trans, G * g[:, None], rtol=1e-12)
    # the stabilization vanishes on the manifold (SNDE Thm. 1)
    on = np.array([[np.cos(0.4), np.sin(0.4)]])
    assert np.max(np.abs(stabilization(funcs, on, np.zeros(1), None, "pinv"))) < 1e-15


def test_snde_uses_conserved_quantities_when_there_are_no_constraints():
    system = problems.get("sms")  # undamped: the energy is conserved
    assert system.n_constraints == 0
    assert make_trainer("snde").not_applicable(system) is None
    g, G = constraint_functions(system)
    x = np.array([[0.3, -1.2], [1.0, 0.5]])
    k, m = system.params["k"], system.params["m"]
    np.testing.assert_allclose(
        g(x, np.zeros(2))[:, 0], 0.5 * k * x[:, 0] ** 2 + 0.5 * m * x[:, 1] ** 2
    )
    np.testing.assert_allclose(
        G(x, np.zeros(2))[:, 0], np.column_stack([k * x[:, 0], m * x[:, 1]]), rtol=1e-8
    )
    split = system.generate(n_steps=40, n_train=30)
    trainer, res = _fit("snde", system, split.train, epochs=1)
    assert res.status == "success"
    assert np.all(np.isfinite(trainer.predict(split.full.t, split.full.x[0])))


@pytest.mark.parametrize("kind", ["pinv", "transpose"])
def test_stabilization_gradient(circle, kind):
    funcs = constraint_functions(circle)
    x = torch.tensor([[1.2, 0.3], [0.1, -0.9]], dtype=torch.float64, requires_grad=True)
    t = torch.zeros(2, dtype=torch.float64)
    assert torch.autograd.gradcheck(
        lambda x: _Stabilize.apply(x, t, None, funcs, kind, 1e-6), (x,), atol=1e-6
    )


def test_partitioned_methods_recover_the_dependent_coordinates():
    system = problems.get("slider_crank")
    split = system.generate(n_steps=60, n_train=50)
    for name in ("fnode", "mbdnode"):
        trainer, res = _fit(name, system, split.train, epochs=1)
        assert res.status == "success"
        assert trainer.layout.partitioned and trainer.layout.n_model == 2
        assert trainer.blocks()["f"].sizes[0] == 2 + system.n_inputs
        x = trainer.predict(split.full.t, split.full.x[0])
        assert x.shape == (60, 18)
        assert np.max(np.abs(system.constraints(x))) < 1e-10
        assert np.max(np.abs(system.velocity_constraints(x))) < 1e-10


def test_parameter_inputs_change_the_prediction():
    system = problems.get("vdp")
    trajs = [problems.get("vdp", mu=mu).generate(n_steps=30, n_train=30).train for mu in (0.5, 1.5)]
    trainer, res = _fit("fnode", system, trajs, param_inputs=("mu",), epochs=3)
    assert res.status == "success" and len(res.history) == 3
    assert trainer.blocks()["f"].sizes[0] == 3
    t = trajs[0].t
    a = trainer.predict(t, trajs[0].x[0], params={"mu": 0.5})
    b = trainer.predict(t, trajs[0].x[0], params={"mu": 1.5})
    assert not np.allclose(a, b)
    np.testing.assert_array_equal(a, trainer.predict(t, trajs[0].x[0]))  # default: first traj
    with pytest.raises(ValueError, match="lacks parameter"):
        trainer.predict(t, trajs[0].x[0], params={"nu": 1.0})


def test_budget_interrupt_and_divergence_statuses(monkeypatch):
    system = problems.get("vdp")
    train = system.generate(n_steps=40, n_train=40).train
    trainer = make_trainer("fnode", **{**TINY, "epochs": 10_000, "batch_size": 1})
    res = trainer.fit(system, train, budget_s=0.2)
    assert res.status == "budget" and res.epochs < 10_000 and "budget" in res.message

    def interrupt(progress):
        if progress.epoch == 3:
            raise KeyboardInterrupt

    trainer = make_trainer("fnode", **{**TINY, "epochs": 50})
    res = trainer.fit(system, train, callback=interrupt)
    assert res.status == "interrupted" and res.epochs == 3
    assert np.all(np.isfinite(trainer.predict(train.t, train.x[0])))

    stops = []
    trainer = make_trainer("fnode", **{**TINY, "epochs": 50})
    res = trainer.fit(system, train, callback=lambda p: stops.append(p.epoch) or p.epoch == 4)
    assert res.status == "stopped" and res.epochs == 4 and stops == [1, 2, 3, 4]

    trainer = make_trainer("fnode", **TINY)

    # a loss that turns non-finite in the middle of the first epoch, as a real one would
    def nan_loss(self, idx):
        return self.field.net(self._X[idx]).sum() * float("nan")

    monkeypatch.setattr(type(trainer), "_loss", nan_loss)
    res = trainer.fit(system, train)
    assert res.status == "diverged" and "non-finite" in res.message


def test_callback_time_is_not_training_time():
    import time

    system = problems.get("vdp")
    train = system.generate(n_steps=30, n_train=30).train
    trainer = make_trainer("fnode", **{**TINY, "epochs": 3})
    res = trainer.fit(system, train, callback=lambda p: time.sleep(0.3))
    assert res.train_time_s < 0.6
    assert [h[1] for h in res.history] == [1, 2, 3]


def test_diverging_rollout_raises_with_the_step():
    system = problems.get("vdp")
    train = system.generate(n_steps=30, n_train=30).train
    trainer, _ = _fit("mbdnode", system, train, epochs=1)
    # a constant field x' = 1e9: x = 2 + 3.5e7 k after k steps of 0.035 s exceeds 1e8 at k = 3
    w = np.zeros_like(trainer.get_weights()["f"])
    w[-2:] = 1e9  # the output bias is the last entry of the flat layout
    trainer.set_weights({"f": w})
    with pytest.raises(DivergenceError) as info:
        trainer.predict(np.arange(20) * 0.035, np.array([2.0, 0.0]))
    assert info.value.step == 3
    assert info.value.t == pytest.approx(3 * 0.035)


def test_unknown_method_and_option_name_the_valid_ones():
    with pytest.raises(
        ValueError, match="unknown method 'pysr'; valid: collocation, fnode, mbdnode"
    ):
        make_trainer("pysr")
    with pytest.raises(ValueError, match="unknown option 'epoch' of FNODEOptions"):
        make_trainer("fnode", epoch=3)
    with pytest.raises(ValueError, match="lr_decay"):
        make_trainer("mbdnode", lr_decay=1.5)
    with pytest.raises(ValueError, match="integrator"):
        make_trainer("mbdnode", integrator="rk45")
    with pytest.raises(ValueError, match="leapfrog"):
        make_trainer("fnode", integrator="leapfrog", **TINY).fit(
            problems.get("vdp"), problems.get("vdp").generate(n_steps=20, n_train=20).train
        )
    with pytest.raises(ValueError, match="device"):
        make_trainer("fnode", device="tpu")


def test_predict_before_fit_and_bad_x0():
    trainer = make_trainer("fnode", **TINY)
    with pytest.raises(RuntimeError, match="fit"):
        trainer.predict(np.arange(3.0), np.zeros(2))
    system = problems.get("vdp")
    trainer.fit(system, system.generate(n_steps=20, n_train=20).train)
    with pytest.raises(ValueError, match="x0"):
        trainer.predict(np.arange(3.0), np.zeros(3))


def test_paper_settings_are_applied_per_problem():
    fn = make_trainer("fnode", "double_pendulum")
    assert fn.options.lr == 3e-3 and fn.options.targets == "fd" and fn.options.epochs == 450
    mb = make_trainer("mbdnode", "cart_pole")
    assert mb.options.epochs == 400 and mb.options.integrator == "rk4"
    assert make_trainer("fnode", "slider_crank").options.hidden == (256, 256, 256)
    quick = make_trainer("fnode", "smsd", quick=True)
    assert quick.options.epochs < 450 and quick.options.weight_decay == 9e-5
    assert make_trainer("node_adjoint").options.adjoint is True


def test_test_systems_are_sane(circle, oscillator):
    x = circle.generate().full.x
    assert np.max(np.abs(circle.constraints(x))) < 1e-12
    assert oscillator.generate().full.u.shape == (80, 1)


def test_only_holonomic_mechanisms_are_partitioned():
    from collocnode.problems._layout import StateLayout

    crank = StateLayout.for_system(problems.get("slider_crank"))
    assert crank.partitioned and crank.independent == (2,) and crank.n_model == 2
    assert not StateLayout.for_system(problems.get("slider_crank"), partition=False).partitioned
    orbit = problems.get("two_body")  # second order with a conserved angular momentum
    assert orbit.n_constraints > 0
    layout = StateLayout.for_system(orbit)
    assert not layout.partitioned and layout.n_model == orbit.n_states
    with pytest.raises(ValueError, match="no holonomic position constraints"):
        StateLayout.for_system(orbit, independent=(0,))
