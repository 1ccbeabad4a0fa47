"""The trainer interface apart from the gradient-descent loop, the options split between them,
and the one method registry."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import fields

import numpy as np
import pytest
import torch

from collocnode import problems
from collocnode.compare.methods import registry
from collocnode.compare.methods.base import FitResult, Trainer, TrainerOptions
from collocnode.compare.methods.gradient import GradientOptions, GradientTrainer
from collocnode.compare.methods.options import gradient_settings, replace_options
from collocnode.compare.methods.status import MethodStatus
from collocnode.problems._base import System

GRADIENT_ONLY = {"lr", "lr_decay", "weight_decay", "grad_clip", "batch_size", "optimizer"}
GRADIENT_ONLY |= {"device", "dtype", "cuda_graph"}


class ConstantModel(Trainer):
    """A method that is not trained by gradient descent writes fit, predict and n_params only."""

    name = "constant"

    def fit(self, system, train, *, budget_s=None, callback=None):
        self.system, self._fitted = system, True
        return FitResult(self.name, "success", 0.0, 0, 0)

    def predict(self, t, x0, u=None, *, params=None):
        t, x0 = self._check_predict_args(t, x0)
        return np.tile(x0, (t.size, 1))

    @property
    def n_params(self):
        return 0


class LinearDecay(GradientTrainer):
    """x' = -k x with one trained rate k, fitted to finite differences: a gradient method writes
    _setup, _loss, modules and predict only."""

    name = "linear_decay"

    def _setup(self, system, trajs):
        x = np.concatenate([tr.x[:-1] for tr in trajs])
        dx = np.concatenate([np.diff(tr.x, axis=0) / np.diff(tr.t)[:, None] for tr in trajs])
        self.k = torch.nn.Linear(1, 1, bias=False, dtype=self.dtype)
        torch.nn.init.zeros_(self.k.weight)
        self._x = torch.as_tensor(x, dtype=self.dtype)
        self._dx = torch.as_tensor(dx, dtype=self.dtype)
        return x.shape[0]

    def _loss(self, idx):
        err = -self.k(self._x[idx]) - self._dx[idx]
        return (err * err).mean()

    def modules(self):
        return [self.k]

    def predict(self, t, x0, u=None, *, params=None):
        t, x0 = self._check_predict_args(t, x0)
        rate = float(self.k.weight.detach()[0, 0])
        return x0[None, :] * np.exp(-rate * (t - t[0]))[:, None]


class Decay(System):
    name = "decay"
    state_names = ("x",)
    PRESETS = {"default": {"k": 0.7}}
    dt = 0.05
    n_steps = 41
    n_train = 41

    @property
    def x0(self):
        return np.array([1.0])

    def rhs(self, t, x, u=None):
        return -self.params["k"] * np.asarray(x, dtype=float)


def test_a_method_without_a_gradient_loop_needs_no_stubs():
    model = ConstantModel()
    system = problems.get("vdp")
    split = system.generate(n_steps=10, n_train=10)
    assert model.fit(system, split.train).status == "success"
    assert model.predict(split.full.t, split.full.x[0]).shape == (10, 2)


def test_a_gradient_method_writes_only_its_loss_and_gets_the_loop():
    system = Decay()
    train = system.generate().train
    trainer = LinearDecay(epochs=60, lr=0.05, lr_decay=1.0, batch_size=8, device="cpu")
    seen = []
    result = trainer.fit(system, train, callback=lambda p: seen.append(p.epoch))
    assert result.status == "success" and result.epochs == 60 and seen == list(range(1, 61))
    assert result.n_params == trainer.n_params == 1
    # the kept weights are those of the best epoch, and they fit the decay rate
    assert result.best_loss == min(h[2] for h in result.history)
    assert float(trainer.k.weight.detach()[0, 0]) == pytest.approx(0.7, rel=0.05)


def test_gradient_settings_live_on_the_gradient_options_only():
    shared = {f.name for f in fields(TrainerOptions)}
    assert set(gradient_settings()) == GRADIENT_ONLY
    assert not shared & GRADIENT_ONLY
    assert {"epochs", "hidden", "activation", "seed"} <= shared
    assert GRADIENT_ONLY <= {f.name for f in fields(GradientOptions)}


def test_options_without_gradient_settings_accept_and_check_them():
    opts = replace_options(TrainerOptions(), lr=1e-2, device="cpu", epochs=7)
    assert type(opts) is TrainerOptions and opts.epochs == 7
    with pytest.raises(ValueError, match="lr must be a positive finite number, got -1"):
        replace_options(TrainerOptions(), lr=-1.0)
    with pytest.raises(ValueError, match="unknown device 'tpu'"):
        replace_options(TrainerOptions(), device="tpu")
    with pytest.raises(ValueError, match="unknown option 'stages' of TrainerOptions"):
        replace_options(TrainerOptions(), stages=3)
    with pytest.raises(ValueError, match="unknown option 'epoch' of GradientOptions"):
        replace_options(GradientOptions(), epoch=3)


def test_one_registry_names_every_method_its_defaults_and_specialisations():
    assert sorted(registry.available()) == registry.METHODS.names()
    assert registry.available()[:2] == ["collocation", "fnode"]  # the comparison's own order
    assert registry.METHODS.entry("fnode").ref == "collocnode.compare.methods.fnode:FNODE"
    for name in registry.available():
        cls = registry.method_class(name)
        assert issubclass(cls, Trainer)
        # collocation solves one NLP, numerical trains nothing, sindy regresses: every other
        # one descends
        assert issubclass(cls, GradientTrainer) is (
            name not in ("collocation", "numerical", "sindy")
        ), name
    assert registry.method_defaults("node_adjoint") == {"adjoint": True}
    # one collocation adapter: the problem's recipe, not another class, makes the hybrid model
    assert registry.method_class("collocation", "qvm") is registry.method_class("collocation")
    with pytest.raises(ValueError, match="unknown method 'pysr'"):
        registry.method_class("pysr")


def test_every_method_accepts_the_comparison_wide_settings():
    for name in registry.available():
        trainer = registry.make_trainer(name, "vdp", quick=True, device="cpu", seed=1)
        assert trainer.options.seed == 1


def test_importing_the_comparison_loads_no_torch():
    code = (
        "import sys; import collocnode.compare, collocnode.compare._run.harness, "
        "collocnode.compare.methods.gradient, collocnode.tools._plotting; "
        "print('torch' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# ---- the callback protocol shared with collocation (collocnode.training._callbacks) ---------
def _decay_fit(callback, epochs=60, noise=0.0, batch_size=8):
    system = Decay()
    trainer = LinearDecay(epochs=epochs, lr=0.05, lr_decay=1.0, batch_size=batch_size)
    train = system.generate(noise=noise, seed=0).train
    return trainer, trainer.fit(system, train, callback=callback)


def test_progress_keeps_its_fields_and_offers_the_shared_protocol():
    seen = []

    def watch(p):
        rate = float(p.params()[0])
        t = np.linspace(0.0, 1.0, 5)
        seen.append((p.epoch, p.iteration, p.loss, p.objective, p.epochs, p.best_loss, rate))
        # predict rolls the trainer out at this epoch's weight: x0 exp(-k t)
        np.testing.assert_allclose(p.predict(t, [2.0]), 2.0 * np.exp(-rate * t)[:, None])
        if p.epoch == 3:
            seen.append(p)

    _, result = _decay_fit(watch, epochs=5)
    assert result.status == "success" and [s[0] for s in seen[:3]] == [1, 2, 3]
    for epoch, iteration, loss, objective, epochs, best_loss, _ in seen[:3] + seen[4:]:
        assert iteration == epoch and objective == loss and epochs == 5 and best_loss <= loss
    rates = [s[6] for s in seen if isinstance(s, tuple)]
    assert len(set(rates)) == 5  # the weight moved every epoch and params() followed it
    with pytest.raises(RuntimeError, match="read after its callback returned"):
        seen[3].params()


class StopAtEpoch:
    def __init__(self, epoch):
        self.epoch, self.events, self.reason = epoch, [], ""

    def on_start(self, info):
        self.events.append(info)

    def on_end(self):
        self.events.append("end")

    def __call__(self, p):
        if p.epoch == self.epoch:
            self.reason = f"enough after epoch {p.epoch}"
            return True
        return False


def test_a_callback_stop_is_its_own_status_with_its_reason():
    from collocnode.training._callbacks import RunInfo

    stop = StopAtEpoch(4)
    _, result = _decay_fit(stop)
    assert result.status == "stopped" and result.epochs == 4
    assert result.message == "enough after epoch 4"
    assert stop.events == [RunInfo(60, 1, 1, unit="epoch", can_predict=True), "end"]
    assert result.status is MethodStatus.STOPPED and result.status == "stopped"


def test_a_raising_callback_fails_the_fit_with_its_error_and_keeps_the_best_weights():
    def broken(p):
        if p.epoch == 2:
            raise KeyError("validation")

    trainer, result = _decay_fit(broken)
    assert result.status == "failed" and result.epochs == 2
    assert result.message.startswith("the callback raised KeyError in epoch 2: 'validation'")
    assert np.isfinite(float(trainer.k.weight.detach()[0, 0]))


def test_stagnation_stops_the_epoch_loop_and_a_window_beyond_the_epochs_is_refused():
    from collocnode.training._callbacks import StopOnStagnation

    # full batches on noisy data: the loss settles on its noise floor within ~120 epochs
    stagnation = StopOnStagnation(rtol=1e-4, window=10)
    _, result = _decay_fit(stagnation, epochs=400, noise=0.01, batch_size=64)
    assert result.status == "stopped" and 10 < result.epochs < 200
    assert result.message == "objective stagnated: relative change < 1e-04 over 10 epochs"
    losses = [h[2] for h in result.history[-11:]]
    assert max(losses) - min(losses) <= 1e-4 * losses[-1]
    with pytest.raises(ValueError, match=r"window = 500 is longer than the iteration limit "):
        _decay_fit(StopOnStagnation(window=500), epochs=400)


def test_the_report_shows_why_a_method_was_stopped():
    from collocnode.compare._run.report import markdown, summary_line
    from collocnode.compare._run.results import CompareReport, MethodRow

    row = MethodRow("fnode", "stopped", 1.0, 12, 10, message="early stopping: validation MSE")
    assert not row.unfinished
    assert summary_line(row).startswith("fnode: stopped,")
    assert "(early stopping: validation MSE)" in summary_line(row)
    meta = {"preset": "default", "n_train": 10, "n_total": 20, "dt": 0.1, "device": "cpu"}
    meta |= {"seed": 0, "quick": True, "mse": "x"}
    table = markdown(CompareReport("vdp", meta, [row]))
    assert "| stopped |" in table and "early stopping: validation MSE |" in table


@pytest.mark.parametrize(
    ("args", "error", "message"),
    [
        (("fnode", "nope"), ValueError, "unknown problem 'nope'; valid: "),
        (("fnode", ""), ValueError, "unknown problem ''"),
        (("fnode", 5), ValueError, "unknown problem 5"),
        (("fnode", "smsd", "yes"), TypeError, "quick must be a bool, got 'yes'"),
        (("fnode", "smsd", None), TypeError, "quick must be a bool, got None"),
    ],
)
def test_make_trainer_checks_problem_and_quick(args, error, message):
    with pytest.raises(error, match=message):
        registry.make_trainer(*args)


@pytest.mark.parametrize("hidden", [None, "16", 2.5])
def test_hidden_of_the_wrong_type_names_the_field(hidden):
    with pytest.raises(TypeError, match="hidden must be an int or a sequence of ints"):
        registry.make_trainer("fnode", "smsd", hidden=hidden)


@pytest.mark.parametrize("method", ["fnode", "node", "lstm", "sindy"])
def test_a_missing_value_is_named_before_training(method):
    from collocnode import Trajectory

    if method == "sindy":
        pytest.importorskip("pysindy")
    system = problems.get("vdp")
    t = np.linspace(0.0, 1.0, 11)
    x = np.column_stack([np.cos(t), -np.sin(t)])
    x[4, 1] = np.nan
    trainer = registry.make_trainer(method, "vdp", quick=True)
    with pytest.raises(ValueError, match=r"^train\[0\]\.x\[4, 1\] \('y'\) is NaN"):
        trainer.fit(system, [Trajectory(t, x, state_names=("x", "y"))])
