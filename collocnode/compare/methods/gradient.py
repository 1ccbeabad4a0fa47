"""The gradient-descent loop shared by the PyTorch methods.

A `GradientTrainer` subclass writes only what makes its method: ``_setup`` (networks and
tensors for the data; returns the number of training samples), ``_loss`` (the mean loss of a
batch of sample indices), ``modules`` (the trained torch modules) and ``predict``. ``fit``
trains with Adam (or AdamW) and an exponential learning-rate decay stepped once per epoch, the
schedule all four seed papers use, and keeps the weights of the epoch with the lowest training
loss (as the FNODE and MBD-NODE reference code does; there is no validation split).

The callback follows the protocol of `collocnode.training._callbacks`: ``on_start(RunInfo)``
before the first epoch (its errors propagate from ``fit``), ``callback(Progress)`` after every epoch
(True stops with status ``STOPPED`` and the callback's ``reason`` as the message; an exception
stops with status ``FAILED`` and the exception in the message; the best weights are kept either
way),
``on_end()`` at the end.

``fit(..., checkpoint=path)`` keeps the whole training state in one file after epochs and
resumes from it exactly (`collocnode.compare.methods._checkpoint`); not with ``cuda_graph``.

Torch is imported when a trainer fits, not when this module loads.
"""

from __future__ import annotations

import copy
import math
import os
import time
from abc import abstractmethod
from collections.abc import Sequence
from dataclasses import replace
from typing import Any, ClassVar

import numpy as np

from ... import _validation as v
from ..._data import Trajectory
from ...training._callbacks import RunInfo, stop_requested
from ._checkpoint import (
    EpochCheckpoint,
    LiveState,
    data_fingerprint,
    options_json,
    system_fingerprint,
)
from .base import Callback, EpochAccess, FitResult, Progress, Trainer
from .graphed_step import GraphedStep, capturable_optimizer
from .options import GradientOptions, TrainerOptions
from .status import MethodStatus

__all__ = ["GradientOptions", "GradientTrainer"]


class _Clock:
    """Training wall time: from construction, without the time spent in callbacks."""

    def __init__(self) -> None:
        self.start = time.perf_counter()
        self.excluded = 0.0

    def elapsed(self) -> float:
        return time.perf_counter() - self.start - self.excluded

    def resume_at(self, elapsed_s: float) -> None:
        """Go on from ``elapsed_s`` of earlier training (a resumed fit's setup not counted)."""
        self.start, self.excluded = time.perf_counter() - elapsed_s, 0.0

    def call_excluded(self, fn: Callback, progress: Progress) -> Any:
        """``fn(progress)``, its time not counted as training time."""
        t0 = time.perf_counter()
        try:
            return fn(progress)
        finally:
            self.excluded += time.perf_counter() - t0


class _BestWeights:
    """The weights of the epoch with the lowest training loss so far."""

    def __init__(self, modules: list[Any]) -> None:
        self.modules = modules
        self.loss = math.inf
        self.state: list[dict[str, Any]] | None = None

    def offer(self, loss: float) -> None:
        if loss < self.loss:
            self.loss = loss
            self.state = [copy.deepcopy(m.state_dict()) for m in self.modules]

    def offer_partial(self, loss: float) -> None:
        """The loss of an epoch cut short: reported only when no epoch was completed."""
        if self.state is None:
            self.loss = loss

    def restore(self) -> None:
        if self.state is not None:
            for module, state in zip(self.modules, self.state, strict=True):
                module.load_state_dict(state)


class GradientTrainer(Trainer):
    """A method trained by mini-batch gradient descent; see the module docstring."""

    options_class: ClassVar[type[TrainerOptions]] = GradientOptions
    QUICK: ClassVar[dict[str, Any]] = {"epochs": 20, "batch_size": 16, "hidden": (64, 64)}
    # whether ``_loss`` is a fixed sequence of device operations (no host synchronisation, no
    # data-dependent shape), so that a whole training step can be captured as a CUDA graph
    CUDA_GRAPH: ClassVar[bool] = False

    options: GradientOptions

    def __init__(self, options: TrainerOptions | None = None, **overrides: Any) -> None:
        super().__init__(options, **overrides)
        from .device import resolve_device

        # CUDA asked for on a machine without it is an error here, not after the data exists
        device = resolve_device(self.options.device)
        if self.options.cuda_graph:
            if not self.CUDA_GRAPH:
                raise ValueError(
                    f"cuda_graph=True: the training step of method {self.name!r} cannot be "
                    "captured as a CUDA graph (methods that can: see GradientOptions.cuda_graph)"
                )
            if device.type != "cuda":
                name = self.options.device
                where = "" if name == device.type else f" (the {device.type} here)"
                raise ValueError(f"cuda_graph=True needs a CUDA device, got device={name!r}{where}")

    # --- what a method writes ------------------------------------------------------------------
    @abstractmethod
    def _setup(self, system: Any, trajs: list[Trajectory]) -> int:
        """Build the networks and the training tensors; return the number of samples."""

    @abstractmethod
    def _loss(self, idx: Any) -> Any:
        """Mean loss (a scalar tensor) of the samples ``idx`` (a 1-d index tensor)."""

    @abstractmethod
    def modules(self) -> list[Any]:
        """The torch modules whose parameters are trained."""

    # --- the shared part -----------------------------------------------------------------------
    @property
    def n_params(self) -> int:
        return sum(p.numel() for p in self._trainable())

    def _trainable(self) -> list[Any]:
        return [p for m in self.modules() for p in m.parameters() if p.requires_grad]

    def fit(
        self,
        system: Any,
        train: Trajectory | Sequence[Trajectory],
        *,
        budget_s: float | None = None,
        callback: Callback | None = None,
        checkpoint: str | os.PathLike[str] | None = None,
        checkpoint_every_s: float = 60.0,
    ) -> FitResult:
        """Train on ``train``; see the module docstring for the loop and the callback.

        ``checkpoint`` (a file) keeps the training state after epochs
        (`collocnode.compare.methods._checkpoint`): at least ``checkpoint_every_s`` seconds of
        training time apart, and at the last epoch and any stop (callback, budget, Ctrl-C;
        not on divergence, which keeps the last good file). A fit given an existing file
        resumes it from the epoch after the stored one, bitwise as the uninterrupted fit on
        the CPU, once it has checked that the file was written for this method, options,
        system and data (a ``ValueError`` names what differs and leaves the file unchanged).
        ``budget_s`` then counts the stored training time too.
        """
        import torch

        from .device import resolve_device, resolve_dtype

        trajs, budget_s = self._check_fit_args(system, train, budget_s)
        saver = self._checkpoint(system, trajs, checkpoint, checkpoint_every_s)
        self.system = system
        self.device = resolve_device(self.options.device)
        self.dtype = resolve_dtype(self.options.dtype)
        torch.manual_seed(self.options.seed)
        self._rng = torch.Generator().manual_seed(self.options.seed)
        clock = _Clock()
        n_samples = self._setup(system, trajs)
        if saver is not None:
            saver.check_samples(n_samples)
        self._fitted = True
        if callback is None:
            return self._descend(n_samples, clock, budget_s, None, saver)
        info = RunInfo(
            max_iterations=self.options.epochs,
            n_states=system.n_states,
            n_params=self.n_params,
            unit="epoch",
            can_predict=True,
        )
        _hook(callback, "on_start", info)
        try:
            return self._descend(n_samples, clock, budget_s, callback, saver)
        finally:
            _hook(callback, "on_end")

    def _checkpoint(
        self,
        system: Any,
        trajs: list[Trajectory],
        path: str | os.PathLike[str] | None,
        every_s: float,
    ) -> EpochCheckpoint | None:
        """The checkpoint of this fit (the stored one read and checked), or None without one."""
        every_s = v.nonnegative_float("checkpoint_every_s", every_s)
        if path is None:
            return None
        if not isinstance(path, str | os.PathLike):
            raise TypeError(f"checkpoint must be a path or None, got {type(path).__name__}")
        if self.options.cuda_graph:
            # the captured graph's static tensors and capturable optimizer state would need a
            # restore of their own; refused rather than resumed inexactly
            raise ValueError(
                "checkpoint is not supported with cuda_graph=True; train with cuda_graph=False "
                "to keep epoch checkpoints"
            )
        identity = {
            "method": self.name,
            "system": system_fingerprint(system),
            "options": options_json(self.options),
            "data": data_fingerprint(trajs),
        }
        return EpochCheckpoint(path, every_s, identity)

    def _flat_params(self) -> np.ndarray:
        """The trainable parameters, flat float64 in ``modules()`` order (a new array)."""
        parts = [p.detach().cpu().double().reshape(-1).numpy() for p in self._trainable()]
        return np.concatenate(parts) if parts else np.zeros(0)

    def _descend(
        self,
        n: int,
        clock: _Clock,
        budget_s: float | None,
        callback: Callback | None,
        saver: EpochCheckpoint | None = None,
    ) -> FitResult:
        """Epochs until done, out of budget, diverged, stopped by the callback or Ctrl-C; the
        best-epoch weights are restored in every case. With ``saver``, resumed from its stored
        state if it has one, and the state saved after epochs (`EpochCheckpoint`)."""
        opts = self.options
        params = self._trainable()
        optimizer, scheduler, graphed = self._optimizer(params)
        best = _BestWeights(self.modules())
        history: list[tuple[float, int, float]] = []
        live = LiveState(
            self.modules(), optimizer, scheduler, self._rng, best, history, clock, self.device
        )
        start = saver.restore(live) if saver is not None and saver.stored is not None else 0
        status, message, done = MethodStatus.SUCCESS, "", start
        try:
            for epoch in range(start + 1, opts.epochs + 1):
                loss, seen, status, message = self._epoch(
                    epoch, n, optimizer, params, clock, budget_s, graphed
                )
                if status == MethodStatus.DIVERGED:
                    break
                if status == MethodStatus.BUDGET and seen < n:
                    best.offer_partial(loss)
                    break
                done = epoch
                best.offer(loss)
                scheduler.step()
                if graphed is not None:
                    graphed.keep_learning_rate()
                history.append((clock.elapsed(), epoch, loss))
                if saver is not None:
                    saver.snapshot(live, epoch)
                if status == MethodStatus.SUCCESS and callback is not None:
                    progress = Progress(history[-1][0], epoch, opts.epochs, loss, best.loss)
                    status, message = self._call_back(callback, clock, progress)
                if saver is not None and saver.due():
                    saver.save()
                if status != MethodStatus.SUCCESS:
                    break
        except KeyboardInterrupt:
            status = MethodStatus.INTERRUPTED
            message = (
                f"interrupted in epoch {done + 1}; kept the best weights "
                f"(epoch loss {best.loss:.3g})"
            )
        if saver is not None and status != MethodStatus.DIVERGED:
            # the last epoch and every stop are save points whatever the time since the last
            # save: the last completed epoch (a diverged one keeps the last good file)
            saver.save()
        best.restore()
        return self._result(status, message, done, best, history, clock, params, saver)

    def _optimizer(self, params: list[Any]) -> tuple[Any, Any, GraphedStep | None]:
        """The optimizer, its learning-rate schedule and, with ``cuda_graph``, the captured
        training step."""
        import torch

        opts = self.options
        graphed = None
        if opts.cuda_graph:
            optimizer = _optimizer(opts, params, capturable_on=self.device)
            graphed = GraphedStep(
                lambda idx: self._train_step(idx, optimizer, params),
                optimizer,
                opts.batch_size,
                self.device,
            )
        else:
            optimizer = _optimizer(opts, params)
        scheduler = torch.optim.lr_scheduler.ExponentialLR(optimizer, gamma=opts.lr_decay)
        return optimizer, scheduler, graphed

    def _result(
        self,
        status: MethodStatus,
        message: str,
        done: int,
        best: _BestWeights,
        history: list[tuple[float, int, float]],
        clock: _Clock,
        params: list[Any],
        saver: EpochCheckpoint | None,
    ) -> FitResult:
        """The `FitResult` of a training that completed ``done`` epochs and ended with
        ``status``; its message says whether it resumed from a checkpoint."""
        if status == MethodStatus.FAILED:
            message += f"; kept the best weights (epoch loss {best.loss:.3g})"
        if status == MethodStatus.SUCCESS and not message:
            message = f"{done} epochs, best training loss {best.loss:.3g}"
        if saver is not None and saver.stored is not None:
            message += f"; resumed from epoch {int(saver.stored['epoch'])} of {saver.path}"
        return FitResult(
            method=self.name,
            status=status,
            train_time_s=clock.elapsed(),
            epochs=done,
            n_params=sum(p.numel() for p in params),
            best_loss=best.loss,
            history=history,
            message=message,
        )

    def _call_back(
        self, callback: Callback, clock: _Clock, progress: Progress
    ) -> tuple[MethodStatus, str]:
        """Run the callback on ``progress`` (given access to this trainer): (``SUCCESS``, "") to
        go on, (``STOPPED``, why) when it asked to stop, (``FAILED``, what it raised) if it
        raised."""
        epoch = progress.epoch
        access = EpochAccess(self, self._flat_params)
        progress = replace(progress, access=access)
        try:
            returned = clock.call_excluded(callback, progress)
        except Exception as exc:  # a Ctrl-C (KeyboardInterrupt) is handled by the loop
            return (
                MethodStatus.FAILED,
                f"the callback raised {type(exc).__name__} in epoch {epoch}: {exc}",
            )
        finally:
            access.live = False
        if not stop_requested(returned):
            return MethodStatus.SUCCESS, ""
        reason = getattr(callback, "reason", None)
        if isinstance(reason, str) and reason:
            return MethodStatus.STOPPED, reason
        return MethodStatus.STOPPED, f"stopped by the callback after epoch {epoch}"

    def _epoch(
        self,
        epoch: int,
        n: int,
        optimizer: Any,
        params: list[Any],
        clock: _Clock,
        budget_s: float | None,
        graphed: GraphedStep | None = None,
    ) -> tuple[float, int, MethodStatus, str]:
        """One pass over the ``n`` samples in random batches: the mean loss of the samples seen,
        their number, and ``SUCCESS``, or ``DIVERGED``/``BUDGET`` with why the pass stopped
        early. With ``graphed``, its captured step replaces the eager one."""
        import torch

        opts = self.options
        perm = torch.randperm(n, generator=self._rng)
        # The step losses stay on the device and are read once per epoch: reading each one
        # (``loss.item()``) waits for the device after every step, which on CUDA costs more
        # than the step. A non-finite loss is therefore found at the end of its epoch; the
        # steps after it only spoil weights that the best-epoch restore discards.
        sums: list[Any] = []
        seen, status, why = 0, MethodStatus.SUCCESS, ""
        if graphed is not None:
            graphed.start_epoch()
        for idx in perm.to(self.device).split(opts.batch_size):
            if graphed is None:
                optimizer.zero_grad(set_to_none=True)
                sums.append(self._train_step(idx, optimizer, params))
            else:
                graphed(idx)
            seen += idx.numel()
            if budget_s is not None and clock.elapsed() > budget_s:
                status = MethodStatus.BUDGET
                why = f"wall-time budget of {budget_s:g} s ran out in epoch {epoch}"
                break
        if graphed is not None and graphed.total is not None:
            sums = [graphed.total]
        total = float(torch.stack(sums).sum()) if sums else 0.0
        if not math.isfinite(total):
            why = f"training loss became non-finite in epoch {epoch}"
            return math.nan, seen, MethodStatus.DIVERGED, why
        return total / max(seen, 1), seen, status, why

    def _train_step(self, idx: Any, optimizer: Any, params: list[Any]) -> Any:
        """Loss, backward pass, gradient clipping and update on the batch ``idx`` (gradients
        zeroed by the caller): the batch's loss times its size, a device tensor not read here."""
        import torch

        loss = self._loss(idx)
        loss.backward()
        if self.options.grad_clip is not None:
            torch.nn.utils.clip_grad_norm_(params, self.options.grad_clip, foreach=True)
        optimizer.step()
        return loss.detach() * idx.numel()


def _optimizer(opts: GradientOptions, params: list[Any], capturable_on: Any = None) -> Any:
    """Adam or AdamW with the options' learning rate and weight decay, in torch's fused form
    (one kernel for all parameters, on the CPU too since torch 2.4): the same update as the
    per-tensor loop the seed papers' code runs by default, with less overhead per step (the
    FNODE and MBD-NODE papers take one step per sample; ``benchmarks/epoch_time.py``). Older
    torch without a fused CPU kernel gets the default form. With ``capturable_on`` (a CUDA
    device), the capturable form a CUDA graph can replay
    (`collocnode.compare.methods.graphed_step`)."""
    import torch

    cls = torch.optim.AdamW if opts.optimizer == "adamw" else torch.optim.Adam
    if capturable_on is not None:
        return capturable_optimizer(
            cls, params, opts.lr, capturable_on, weight_decay=opts.weight_decay
        )
    kw = {"lr": opts.lr, "weight_decay": opts.weight_decay}
    try:
        return cls(params, fused=True, **kw)
    except (RuntimeError, ValueError, TypeError):
        return cls(params, **kw)


def _hook(callback: Any, name: str, *args: Any) -> None:
    """Call the callback's optional ``on_start``/``on_end`` hook if it has one."""
    hook = getattr(callback, name, None)
    if callable(hook):
        hook(*args)
