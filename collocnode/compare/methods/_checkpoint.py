"""Epoch checkpoints of a `GradientTrainer`: the whole training state in one file, and an exact
resume from it.

``GradientTrainer.fit(..., checkpoint=path)`` writes, after an epoch, everything the next epoch
depends on: every module's ``state_dict``, the optimizer's and the learning-rate schedule's,
the batch-order generator's state and torch's global random state (CUDA's too on a CUDA
device), the completed epoch, the best loss and its weights, the loss history and the training
time so far. Beside it the file names what it was trained for: the method, its options (JSON),
the system, a SHA-256 of the training data and the number of training samples. A ``fit`` given
an existing file checks that all of these match (a mismatch is one ``ValueError`` naming the
field and the file, which is left unchanged), restores the state and trains on from the next
epoch; on the CPU the result is bitwise the one of an uninterrupted fit.

The file is written by ``torch.save`` to a temporary sibling, flushed and renamed over the old
one, and read with ``torch.load(weights_only=True)``: tensors and plain data only (options as a
JSON string, the history as tuples of numbers), never pickled code, so a file from elsewhere
cannot run anything when it is loaded.

Torch is imported when a checkpoint is written or read, not when this module loads.
"""

from __future__ import annotations

import copy
import hashlib
import io
import json
import os
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ..._data import Trajectory
from ...tools._io import atomic_write_bytes

__all__ = ["EpochCheckpoint", "LiveState", "data_fingerprint", "system_fingerprint"]

# the tag of the file format; a file without it is not read as a checkpoint
FORMAT = "collocnode.epoch_checkpoint/1"
_STATE_KEYS = (
    "epoch",
    "modules",
    "optimizer",
    "scheduler",
    "batch_rng",
    "torch_rng",
    "cuda_rng",
    "best_loss",
    "best_state",
    "history",
    "elapsed_s",
)
# the fields that say what a checkpoint was trained for, in the order they are compared
_IDENTITY = ("method", "system", "options", "data", "n_samples")


@dataclass
class LiveState:
    """The objects of a training in progress that a checkpoint saves and restores.

    Attributes:
        modules: the trained torch modules (``GradientTrainer.modules()``).
        optimizer: the torch optimizer; ``scheduler`` its learning-rate schedule.
        generator: the ``torch.Generator`` that draws each epoch's batch order.
        best: the best-epoch weights (``.loss``, ``.state``: a list of state dicts or None).
        history: ``(wall_time_s, epoch, loss)`` per completed epoch (appended to, never edited).
        clock: the training clock (``.elapsed()`` [s], ``.resume_at(elapsed_s)``).
        device: the ``torch.device`` the modules live on.
    """

    modules: list[Any]
    optimizer: Any
    scheduler: Any
    generator: Any
    best: Any
    history: list[tuple[float, int, float]]
    clock: Any
    device: Any


def data_fingerprint(trajs: Sequence[Trajectory]) -> str:
    """SHA-256 (hex) of the training trajectories: every array's dtype, shape and bytes, the
    column names and the conditions ``params``."""
    import numpy as np

    h = hashlib.sha256()
    for tr in trajs:
        for name in ("t", "x", "u", "y"):
            a = getattr(tr, name, None)
            if a is None:
                h.update(f"{name}:none;".encode())
                continue
            a = np.ascontiguousarray(a)
            h.update(f"{name}:{a.dtype.str}{a.shape};".encode())
            h.update(a.tobytes())
        names = [getattr(tr, k, None) for k in ("state_names", "input_names", "output_names")]
        h.update(json.dumps([names, tr.params], sort_keys=True, default=str).encode())
    return h.hexdigest()


def system_fingerprint(system: Any) -> str:
    """The system's class, ``name`` and parameter values, as one line."""
    cls = type(system)
    params = json.dumps(getattr(system, "params", None), sort_keys=True, default=str)
    return f"{cls.__module__}.{cls.__qualname__} {getattr(system, 'name', '')!r} {params}"


def options_json(options: Any) -> str:
    """The options dataclass as a JSON object (sorted keys; a value JSON lacks, as its str)."""
    return json.dumps(asdict(options), sort_keys=True, default=str)


def _short(value: Any, limit: int = 70) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


class EpochCheckpoint:
    """One checkpoint file of one ``fit``: read and checked on creation, written after epochs.

    ``every_s`` [s of training time] is the least time between two periodic saves; a stop
    (callback, budget, Ctrl-C) and the last epoch save whatever the time. The state of every
    completed epoch is copied in memory (weights and optimizer moments: about three times the
    parameters), so that a stop inside an epoch saves the last completed one.
    """

    def __init__(
        self, path: str | os.PathLike[str], every_s: float, identity: dict[str, Any]
    ) -> None:
        self.path = Path(path)
        self.every_s = every_s
        self.identity = identity
        self._pending: dict[str, Any] | None = None
        self._saved_epoch = -1
        self._saved_at = 0.0
        self._history: list[tuple[float, int, float]] = []
        self.stored = self._read() if self.path.exists() else None
        if self.stored is not None:
            self._check({k: v for k, v in identity.items() if k != "n_samples"})

    # --- reading ---------------------------------------------------------------------------------
    def _fail(self, why: str) -> ValueError:
        return ValueError(f"checkpoint {str(self.path)!r}: {why}")

    def _read(self) -> dict[str, Any]:
        import torch

        try:
            stored = torch.load(self.path, map_location="cpu", weights_only=True)
        except Exception as exc:  # torch raises many kinds for a damaged or foreign file
            detail = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
            raise self._fail(
                f"cannot be read as an epoch checkpoint ({type(exc).__name__}: "
                f"{_short(detail, 120)}); it is left unchanged: delete it to train anew"
            ) from None
        missing = (
            [k for k in (*_STATE_KEYS, *_IDENTITY) if k not in stored]
            if isinstance(stored, dict) and stored.get("format") == FORMAT
            else ["format"]
        )
        if missing:
            raise self._fail(
                f"is not an epoch checkpoint of collocnode ({FORMAT}; lacks "
                f"{', '.join(missing)}); it is left unchanged: delete it to train anew"
            )
        return stored

    def _check(self, current: dict[str, Any]) -> None:
        """One ValueError naming the first field of ``current`` the stored file differs in."""
        assert self.stored is not None
        for field, now in current.items():
            then = self.stored[field]
            if type(then) is type(now) and then == now:
                continue
            if field == "options":
                field, then, now = _option_difference(then, now)
            raise self._fail(
                f"was written for another training: {field} differs (stored {_short(then)}, "
                f"current {_short(now)}); nothing is resumed and the file is left unchanged: "
                "pass another checkpoint path, or delete the file to train anew"
            )

    def check_samples(self, n_samples: int) -> None:
        """Check the number of training samples (known after the trainer's setup)."""
        self.identity["n_samples"] = n_samples
        if self.stored is not None:
            self._check({"n_samples": n_samples})

    # --- restoring -------------------------------------------------------------------------------
    def restore(self, live: LiveState) -> int:
        """Put the stored state into ``live``; returns the stored (completed) epoch."""
        import torch

        s = self.stored
        assert s is not None
        try:
            for module, state in zip(live.modules, s["modules"], strict=True):
                module.load_state_dict(state)
            live.optimizer.load_state_dict(s["optimizer"])
            live.scheduler.load_state_dict(s["scheduler"])
            live.generator.set_state(s["batch_rng"])
            torch.set_rng_state(s["torch_rng"])
            if s["cuda_rng"] is not None and live.device.type == "cuda":
                torch.cuda.set_rng_state(s["cuda_rng"], live.device)
            history = [(float(t), int(e), float(loss)) for t, e, loss in s["history"]]
            best_loss, elapsed = float(s["best_loss"]), float(s["elapsed_s"])
        except (RuntimeError, KeyError, TypeError, ValueError) as exc:
            why = _short(str(exc), 160)
            raise self._fail(f"does not fit this trainer's model: {why}") from None
        live.best.loss, live.best.state = best_loss, s["best_state"]
        live.history[:] = history
        live.clock.resume_at(elapsed)
        self._saved_epoch, self._saved_at = int(s["epoch"]), elapsed
        return self._saved_epoch

    # --- writing ---------------------------------------------------------------------------------
    def snapshot(self, live: LiveState, epoch: int) -> None:
        """Copy the state after the completed ``epoch`` (the next one's starting point)."""
        import torch

        cuda = live.device.type == "cuda"
        self._pending = {
            "epoch": epoch,
            "modules": [copy.deepcopy(m.state_dict()) for m in live.modules],
            "optimizer": copy.deepcopy(live.optimizer.state_dict()),
            "scheduler": copy.deepcopy(live.scheduler.state_dict()),
            "batch_rng": live.generator.get_state(),
            "torch_rng": torch.get_rng_state(),
            "cuda_rng": torch.cuda.get_rng_state(live.device) if cuda else None,
            "best_loss": float(live.best.loss),
            # _BestWeights replaces its state on an improvement and never edits it in place
            "best_state": live.best.state,
            "n_history": len(live.history),
            "elapsed_s": float(live.clock.elapsed()),
        }
        self._history = live.history

    def due(self) -> bool:
        """Whether ``every_s`` of training time passed since the last save."""
        pending = self._pending
        return pending is not None and pending["elapsed_s"] - self._saved_at >= self.every_s

    def save(self) -> None:
        """Write the last snapshot (if newer than the file) atomically."""
        import torch

        pending = self._pending
        if pending is None or pending["epoch"] <= self._saved_epoch:
            return
        state = {k: v for k, v in pending.items() if k != "n_history"}
        state["history"] = [tuple(h) for h in self._history[: pending["n_history"]]]
        buffer = io.BytesIO()
        torch.save({"format": FORMAT, **self.identity, **state}, buffer)
        atomic_write_bytes(self.path, buffer.getvalue())
        self._saved_epoch, self._saved_at = pending["epoch"], pending["elapsed_s"]


def _option_difference(stored: str, current: str) -> tuple[str, Any, Any]:
    """The first option whose value differs between two `options_json` strings, as
    (``options.<name>``, stored value, current value); the whole strings if they do not parse."""
    try:
        then, now = json.loads(stored), json.loads(current)
    except (TypeError, ValueError):
        return "options", stored, current
    if not isinstance(then, dict) or not isinstance(now, dict):
        return "options", stored, current
    for key in sorted(set(then) | set(now)):
        if then.get(key, "<absent>") != now.get(key, "<absent>"):
            return f"options.{key}", then.get(key, "<absent>"), now.get(key, "<absent>")
    return "options", stored, current
