"""Epoch checkpoints of the PyTorch trainers (``fit(..., checkpoint=path)``): a fit stopped and
resumed from its file is bitwise the uninterrupted one on the CPU; a finished file returns its
result without training; a file of another training, a damaged one and a failed write leave the
file as it was; saves follow ``checkpoint_every_s`` and every stop."""

from __future__ import annotations

import dataclasses
import os
from fractions import Fraction

import numpy as np
import pytest
import torch

from collocnode import problems
from collocnode._data import Trajectory
from collocnode.compare.methods.registry import make_trainer
from collocnode.compare.methods.status import MethodStatus

# fast methods of both kinds: vector fields (FNODE, MBD-NODE) and a sequence baseline whose
# setup draws from torch's global random state (the LSTM)
METHODS = ["fnode", "mbdnode", "lstm"]
EPOCHS = 6
OPTIONS = {"epochs": EPOCHS, "hidden": (8, 8), "batch_size": 16, "device": "cpu"}
QUICKER = {"lstm": {"hidden": (8,), "window": 4}}
NEVER = 1e9  # checkpoint_every_s: only the stops and the last epoch save


@pytest.fixture(scope="module")
def problem():
    system = problems.get("vdp")
    return system, system.generate(n_steps=40, n_train=30).train


def _trainer(name, **kw):
    return make_trainer(name, **{**OPTIONS, **QUICKER.get(name, {}), **kw})


def _stop_at(epoch):
    return lambda progress: progress.epoch == epoch


def _stored(path):
    return torch.load(path, weights_only=True)


def _weights(trainer):
    return [
        (name, value.clone())
        for module in trainer.modules()
        for name, value in module.state_dict().items()
    ]


def _assert_same_training(a, res_a, b, res_b):
    """Bitwise equal weights, best loss and (epoch, loss) history."""
    wa, wb = _weights(a), _weights(b)
    assert [n for n, _ in wa] == [n for n, _ in wb]
    assert all(torch.equal(x, y) for (_, x), (_, y) in zip(wa, wb, strict=True))
    assert res_a.best_loss == res_b.best_loss
    assert [h[1:] for h in res_a.history] == [h[1:] for h in res_b.history]
    assert res_a.epochs == res_b.epochs


@pytest.mark.parametrize("name", METHODS)
def test_a_fit_stopped_and_resumed_from_its_checkpoint_is_the_uninterrupted_fit(
    name, problem, tmp_path
):
    system, train = problem
    straight = _trainer(name)
    whole = straight.fit(system, train)
    path = tmp_path / "fit.pt"
    # a stop is a save point even when checkpoint_every_s has not passed
    first = _trainer(name).fit(
        system, train, callback=_stop_at(3), checkpoint=path, checkpoint_every_s=NEVER
    )
    assert first.status == MethodStatus.STOPPED and first.epochs == 3
    stored = _stored(path)
    assert stored["epoch"] == 3 and len(stored["history"]) == 3
    resumed_trainer = _trainer(name)
    resumed = resumed_trainer.fit(system, train, checkpoint=path, checkpoint_every_s=NEVER)
    assert resumed.status == MethodStatus.SUCCESS
    assert f"resumed from epoch 3 of {path}" in resumed.message
    _assert_same_training(straight, whole, resumed_trainer, resumed)
    # the stored training time goes on: a budget counts the whole training
    assert resumed.train_time_s >= stored["elapsed_s"]
    times = [h[0] for h in resumed.history]
    assert times == sorted(times) and times[:3] == [h[0] for h in first.history]
    assert _stored(path)["epoch"] == EPOCHS  # the last epoch is a save point


def test_ctrl_c_inside_an_epoch_saves_the_last_completed_one(problem, tmp_path, monkeypatch):
    system, train = problem
    straight = _trainer("fnode")
    whole = straight.fit(system, train)
    steps_per_epoch = -(-train.n_samples // OPTIONS["batch_size"])
    trainer = _trainer("fnode")
    step, calls = trainer._train_step, []

    def interrupted_step(*args):
        calls.append(1)
        if len(calls) == 3 * steps_per_epoch + 1:  # the second step of epoch 4
            raise KeyboardInterrupt
        return step(*args)

    monkeypatch.setattr(trainer, "_train_step", interrupted_step)
    path = tmp_path / "fit.pt"
    res = trainer.fit(system, train, checkpoint=path, checkpoint_every_s=NEVER)
    assert res.status == MethodStatus.INTERRUPTED and res.epochs == 3
    assert _stored(path)["epoch"] == 3
    resumed_trainer = _trainer("fnode")
    resumed = resumed_trainer.fit(system, train, checkpoint=path)
    _assert_same_training(straight, whole, resumed_trainer, resumed)


def test_a_finished_checkpoint_returns_its_result_without_training(problem, tmp_path):
    system, train = problem
    path = tmp_path / "fit.pt"
    first_trainer = _trainer("fnode")
    first = first_trainer.fit(system, train, checkpoint=path)
    before = path.read_bytes()
    again_trainer = _trainer("fnode")

    def no_training(*args, **kwargs):
        raise AssertionError("a finished checkpoint trained again")

    again_trainer._epoch = no_training
    seen = []
    again = again_trainer.fit(system, train, checkpoint=path, callback=seen.append)
    assert again.status == MethodStatus.SUCCESS and again.epochs == EPOCHS and not seen
    assert again.message.endswith(f"; resumed from epoch {EPOCHS} of {path}")
    _assert_same_training(first_trainer, first, again_trainer, again)  # the best weights
    assert path.read_bytes() == before
    x = again_trainer.predict(train.t, train.x[0])
    np.testing.assert_array_equal(x, first_trainer.predict(train.t, train.x[0]))


def _other_data(train):
    x = train.x.copy()
    x[5, 0] += 1e-9
    return Trajectory(train.t, x, state_names=train.state_names)


@pytest.mark.parametrize(
    ("change", "field", "stored", "current"),
    [
        ({"lr": 2e-3}, "options.lr", "0.001", "0.002"),
        ({"epochs": 9}, "options.epochs", "6", "9"),
        ({"name": "mbdnode"}, "method", "'fnode'", "'mbdnode'"),
        ({"data": _other_data}, "data", "'", "'"),
    ],
)
def test_a_checkpoint_of_another_training_is_refused_and_left_unchanged(
    problem, tmp_path, change, field, stored, current
):
    system, train = problem
    path = tmp_path / "fit.pt"
    _trainer("fnode").fit(system, train, checkpoint=path, callback=_stop_at(2))
    before, mtime = path.read_bytes(), path.stat().st_mtime_ns
    change = dict(change)
    name = change.pop("name", "fnode")
    data = change.pop("data", lambda tr: tr)(train)
    with pytest.raises(ValueError) as err:
        _trainer(name, **change).fit(system, data, checkpoint=path)
    text = str(err.value)
    assert f"{field} differs (stored {stored}" in text and f"current {current}" in text
    assert str(path) in text and "left unchanged" in text
    assert text.count("differs") == 1
    assert path.read_bytes() == before and path.stat().st_mtime_ns == mtime


def test_a_damaged_or_foreign_file_is_a_clear_error_and_left_unchanged(problem, tmp_path):
    system, train = problem
    path = tmp_path / "fit.pt"
    _trainer("fnode").fit(system, train, checkpoint=path, callback=_stop_at(2))
    good = path.read_bytes()

    foreign = tmp_path / "foreign.pt"
    torch.save({"weights": torch.zeros(3)}, foreign)
    pickled = tmp_path / "pickled.pt"
    # a pickled object of a class torch does not allow: weights_only refuses to load it
    torch.save({"format": "x", "object": Fraction(1, 3)}, pickled)
    cases = {
        "truncated.pt": (good[: len(good) // 2], "cannot be read as an epoch checkpoint"),
        "text.pt": (b"not a checkpoint\n", "cannot be read as an epoch checkpoint"),
        "foreign.pt": (foreign.read_bytes(), "is not an epoch checkpoint of collocnode"),
        "pickled.pt": (pickled.read_bytes(), "cannot be read as an epoch checkpoint"),
    }
    for file, (content, why) in cases.items():
        damaged = tmp_path / file
        damaged.write_bytes(content)
        with pytest.raises(ValueError, match=why) as err:
            _trainer("fnode").fit(system, train, checkpoint=damaged)
        assert str(damaged) in str(err.value)
        assert damaged.read_bytes() == content


def test_the_checkpoint_is_replaced_atomically(problem, tmp_path, monkeypatch):
    system, train = problem
    path = tmp_path / "fit.pt"
    _trainer("fnode").fit(system, train, checkpoint=path, callback=_stop_at(2))
    assert sorted(os.listdir(tmp_path)) == ["fit.pt"]  # no temporary file stays
    before = path.read_bytes()

    def failing_replace(src, dst):
        raise OSError(5, "simulated failure")

    monkeypatch.setattr(os, "replace", failing_replace)
    with pytest.raises(OSError, match="simulated failure"):
        _trainer("fnode").fit(system, train, checkpoint=path, checkpoint_every_s=0.0)
    monkeypatch.undo()
    assert path.read_bytes() == before and sorted(os.listdir(tmp_path)) == ["fit.pt"]


def test_checkpoint_every_s_spaces_the_saves(problem, tmp_path):
    system, train = problem

    def stored_epochs(path, every_s):
        seen = []  # the file's epoch as each epoch's callback runs (saves follow it)
        _trainer("fnode").fit(
            system,
            train,
            checkpoint=path,
            checkpoint_every_s=every_s,
            callback=lambda p: seen.append(_stored(path)["epoch"] if path.exists() else None),
        )
        return seen, _stored(path)["epoch"]

    assert stored_epochs(tmp_path / "each.pt", 0.0) == ([None, 1, 2, 3, 4, 5], EPOCHS)
    assert stored_epochs(tmp_path / "end.pt", NEVER) == ([None] * EPOCHS, EPOCHS)


def test_a_divergence_keeps_the_last_good_checkpoint(problem, tmp_path):
    system, train = problem
    path = tmp_path / "fit.pt"
    _trainer("fnode").fit(system, train, checkpoint=path, callback=_stop_at(2))
    before = path.read_bytes()
    trainer = _trainer("fnode")
    epoch = trainer._epoch

    def diverging(number, n, *args):
        if number == 4:
            return float("nan"), n, MethodStatus.DIVERGED, "non-finite in epoch 4"
        return epoch(number, n, *args)

    trainer._epoch = diverging
    res = trainer.fit(system, train, checkpoint=path, checkpoint_every_s=NEVER)
    assert res.status == MethodStatus.DIVERGED and res.epochs == 3
    assert path.read_bytes() == before  # epoch 3 was not due; the diverged state is never saved


def test_checkpoint_arguments_are_checked(problem, tmp_path):
    system, train = problem
    with pytest.raises(ValueError, match="checkpoint_every_s"):
        _trainer("fnode").fit(system, train, checkpoint=tmp_path / "a.pt", checkpoint_every_s=-1)
    with pytest.raises(TypeError, match="checkpoint must be a path"):
        _trainer("fnode").fit(system, train, checkpoint=3)
    graphed = _trainer("lstm")
    # cuda_graph needs CUDA to build a trainer; set here only to reach fit's refusal
    graphed.options = dataclasses.replace(graphed.options, cuda_graph=True)
    with pytest.raises(ValueError, match="cuda_graph"):
        graphed.fit(system, train, checkpoint=tmp_path / "g.pt")
    assert not os.listdir(tmp_path)
