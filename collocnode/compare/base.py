"""The trainer interface of the PyTorch side, its options and results, and the method registry.

Every method is a :class:`Trainer` built from a frozen options dataclass::

    trainer = make_trainer("fnode", epochs=450, device="auto")
    result = trainer.fit(system, split.train, budget_s=600, callback=print)
    x = trainer.predict(split.full.t, split.full.x[0])     # (len(t), n_states)

``fit`` trains with Adam (or AdamW) and an exponential learning-rate decay stepped once per epoch,
the schedule all four seed papers use, and keeps the weights of the epoch with the lowest training
loss (as the FNODE and MBD-NODE reference code does; there is no validation split).
"""

from __future__ import annotations

import copy
import math
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from importlib import import_module
from typing import Any, ClassVar

import numpy as np

from .. import _validation as v
from ..data import Trajectory
from .device import DTYPES, check_device_name

STATUSES = (
    "success",
    "budget",
    "interrupted",
    "iteration_limit",
    "diverged",
    "failed",
    "not applicable",
)


class NotApplicableError(ValueError):
    """The method does not apply to this system (e.g. SNDE without constraints)."""


@dataclass(frozen=True)
class TrainerOptions:
    """Options every trainer shares.

    Attributes:
        epochs: passes over the training samples.
        lr: initial learning rate of Adam.
        lr_decay: factor of the exponential learning-rate decay, applied once per epoch.
        weight_decay: L2 weight decay of Adam (decoupled when ``optimizer="adamw"``).
        grad_clip: clip the global gradient norm to this value (None: no clipping).
        batch_size: samples per optimizer step (the FNODE/MBD-NODE papers use 1).
        hidden: widths of the hidden layers of the network(s).
        activation: hidden-layer activation (see ``collocnode.nn.ACTIVATIONS``).
        init: weight initialisation of the MLP spec.
        optimizer: "adam" or "adamw".
        normalize: put the training data's input mean/std and output std into the MLP spec
            (``input_shift``/``input_scale``/``output_scale``) so the net sees order-one signals;
            the papers train on raw signals (False).
        param_inputs: names of system parameters μ appended to the network input (values from
            each trajectory's ``params``), e.g. a friction coefficient.
        device: "auto" (CUDA if available, else CPU), "cpu", "cuda" or "cuda:N".
        dtype: "float64" (default; the ODE-based methods need it) or "float32".
        seed: seed of the weight initialisation and the batch order.
    """

    epochs: int = 100
    lr: float = 1e-3
    lr_decay: float = 0.98
    weight_decay: float = 0.0
    grad_clip: float | None = None
    batch_size: int = 1
    hidden: tuple[int, ...] = (256, 256)
    activation: str = "tanh"
    init: str = "xavier_normal"
    optimizer: str = "adam"
    normalize: bool = False
    param_inputs: tuple[str, ...] = ()
    device: str = "auto"
    dtype: str = "float64"
    seed: int = 0

    def __post_init__(self) -> None:
        from ..nn.activations import ACTIVATIONS
        from ..nn.mlp import INITS

        v.positive_int("epochs", self.epochs)
        v.positive_float("lr", self.lr)
        decay = v.positive_float("lr_decay", self.lr_decay)
        if decay > 1.0:
            raise ValueError(f"lr_decay must be in (0, 1], got {self.lr_decay}")
        v.nonnegative_float("weight_decay", self.weight_decay)
        if self.grad_clip is not None:
            v.positive_float("grad_clip", self.grad_clip)
        v.positive_int("batch_size", self.batch_size)
        hidden = (self.hidden,) if isinstance(self.hidden, int) else tuple(self.hidden)
        for i, h in enumerate(hidden):
            v.positive_int(f"hidden[{i}]", h)
        object.__setattr__(self, "hidden", hidden)
        v.choice("activation", self.activation, ACTIVATIONS)
        v.choice("init", self.init, INITS)
        v.choice("optimizer", self.optimizer, ("adam", "adamw"))
        if not isinstance(self.normalize, bool):
            raise TypeError(f"normalize must be a bool, got {self.normalize!r}")
        names = (self.param_inputs,) if isinstance(self.param_inputs, str) else self.param_inputs
        object.__setattr__(self, "param_inputs", tuple(str(n) for n in names))
        check_device_name(self.device)
        v.choice("dtype", self.dtype, DTYPES)
        v.nonnegative_int("seed", self.seed)


@dataclass(frozen=True)
class Progress:
    """What the training callback receives after every epoch (times exclude callback time)."""

    elapsed_s: float
    epoch: int
    epochs: int
    loss: float
    best_loss: float


@dataclass
class FitResult:
    """The outcome of :meth:`Trainer.fit`.

    Attributes:
        method: registry name of the method.
        status: "success", "budget" (wall-time budget ran out), "interrupted"
            (KeyboardInterrupt; the best weights are kept), "diverged" (non-finite loss) or
            "failed".
        train_time_s: wall time of setup (targets, data) and optimisation, without callbacks.
        epochs: completed epochs.
        n_params: trainable parameters.
        best_loss: lowest epoch-mean training loss; its weights are the ones kept.
        history: ``(wall_time_s, epoch, train_loss)`` after every epoch.
        message: human-readable detail.
    """

    method: str
    status: str
    train_time_s: float
    epochs: int
    n_params: int
    best_loss: float = math.inf
    history: list[tuple[float, int, float]] = field(default_factory=list)
    message: str = ""


Callback = Callable[[Progress], Any]


def as_trajectories(train: Trajectory | Sequence[Trajectory]) -> list[Trajectory]:
    """One trajectory or a non-empty sequence of them, as a list."""
    if isinstance(train, Trajectory):
        return [train]
    if isinstance(train, Sequence) and train and all(isinstance(t, Trajectory) for t in train):
        return list(train)
    raise TypeError(f"train must be a Trajectory or a sequence of them, got {type(train).__name__}")


class Trainer(ABC):
    """A PyTorch training method with the interface shared by every method of the comparison.

    Subclasses set ``name`` and ``options_class``, may restrict :meth:`not_applicable`, and
    implement :meth:`_setup` (build networks and tensors for the data; returns the number of
    training samples), :meth:`_loss` (mean loss of a batch of sample indices) and
    :meth:`predict`. ``PAPER`` maps a problem name to the seed papers' option values for it and
    ``QUICK`` holds the overrides of a smoke-test run.
    """

    name: ClassVar[str] = ""
    options_class: ClassVar[type[TrainerOptions]] = TrainerOptions
    PAPER: ClassVar[dict[str, dict[str, Any]]] = {}
    QUICK: ClassVar[dict[str, Any]] = {"epochs": 20, "batch_size": 16, "hidden": (64, 64)}

    def __init__(self, options: TrainerOptions | None = None, **overrides: Any) -> None:
        opts = self.options_class() if options is None else options
        if not isinstance(opts, self.options_class):
            raise TypeError(
                f"options of {self.name} must be {self.options_class.__name__}, "
                f"got {type(opts).__name__}"
            )
        if overrides:
            opts = replace_options(opts, **overrides)
        self.options = opts
        self.system: Any = None
        self._fitted = False

    # --- applicability and settings ----------------------------------------------------------
    @classmethod
    def not_applicable(cls, system: Any) -> str | None:
        """Why the method does not apply to ``system``, or None when it does."""
        return None

    def _require_applicable(self, system: Any) -> None:
        """Raise :class:`NotApplicableError` with the reason if the method does not apply."""
        reason = self.not_applicable(system)
        if reason:
            raise NotApplicableError(f"{self.name} does not apply to {system.name}: {reason}")

    @classmethod
    def options_for(
        cls, problem: str | None = None, quick: bool = False, **overrides: Any
    ) -> TrainerOptions:
        """The seed papers' options for ``problem`` (defaults where they give none), optionally
        shrunk for a quick run, then ``overrides``."""
        values: dict[str, Any] = dict(cls.PAPER.get(problem or "", {}))
        if quick:
            values.update(cls.QUICK)
        values.update(overrides)
        return replace_options(cls.options_class(), **values)

    # --- the interface -----------------------------------------------------------------------
    def fit(
        self,
        system: Any,
        train: Trajectory | Sequence[Trajectory],
        *,
        budget_s: float | None = None,
        callback: Callback | None = None,
    ) -> FitResult:
        """Train on ``train`` (one trajectory or several, e.g. for parameter inputs).

        ``budget_s`` limits the training wall time [s]; ``callback(Progress)`` runs after every
        epoch (its own time is not counted) and may return True to stop training.
        Raises :class:`NotApplicableError` if the method does not apply to ``system``.
        """
        import torch

        from .device import resolve_device, resolve_dtype

        self._require_applicable(system)
        trajs = as_trajectories(train)
        for i, tr in enumerate(trajs):
            if tr.n_states != system.n_states:
                raise ValueError(
                    f"train[{i}] has {tr.n_states} states, {system.name} has {system.n_states}"
                )
        if budget_s is not None:
            budget_s = v.positive_float("budget_s", budget_s)
        self.system = system
        self.device = resolve_device(self.options.device)
        self.dtype = resolve_dtype(self.options.dtype)
        torch.manual_seed(self.options.seed)
        self._rng = torch.Generator().manual_seed(self.options.seed)
        start = time.perf_counter()
        n_samples = self._setup(system, trajs)
        self._fitted = True
        return _train_loop(self, n_samples, start, budget_s, callback)

    @abstractmethod
    def _setup(self, system: Any, trajs: list[Trajectory]) -> int: ...

    @abstractmethod
    def _loss(self, idx: Any) -> Any: ...

    @abstractmethod
    def modules(self) -> list[Any]:
        """The torch modules whose parameters are trained."""

    @abstractmethod
    def predict(
        self,
        t: np.ndarray,
        x0: np.ndarray,
        u: np.ndarray | Callable[[Any], Any] | None = None,
        *,
        params: Mapping[str, float] | None = None,
    ) -> np.ndarray:
        """Roll the trained model out from ``x0`` (``(n_states,)``) over the times ``t``
        (``(n,)`` [s]); ``u`` holds the known inputs at ``t`` (``(n, n_inputs)``) or is a callable
        of t (default: the system's own inputs). ``params`` gives the parameter inputs μ (default:
        those of the first training trajectory). Returns ``(n, n_states)``; raises
        ``integrators.DivergenceError`` (with the step) if the rollout leaves the finite range."""

    @property
    def n_params(self) -> int:
        return sum(p.numel() for m in self.modules() for p in m.parameters() if p.requires_grad)

    def _require_fitted(self) -> None:
        if not self._fitted:
            raise RuntimeError(f"{self.name}: call fit() before predict()")

    def _check_predict_args(self, t: object, x0: object) -> tuple[np.ndarray, np.ndarray]:
        self._require_fitted()
        t = v.increasing("t", t)
        x0 = v.finite_array("x0", x0, shape=(self.system.n_states,))
        return t, x0


def replace_options(opts: TrainerOptions, **changes: Any) -> TrainerOptions:
    """``dataclasses.replace`` that names an unknown option and lists the valid ones."""
    valid = [f.name for f in fields(opts)]
    for key in changes:
        if key not in valid:
            raise ValueError(
                f"unknown option {key!r} of {type(opts).__name__}; valid: {', '.join(valid)}"
            )
    return replace(opts, **changes)


def _train_loop(
    trainer: Trainer, n: int, start: float, budget_s: float | None, callback: Callback | None
) -> FitResult:
    """Adam + exponential decay per epoch; keep the best-epoch weights; honour the budget,
    KeyboardInterrupt, non-finite losses and the callback's stop request."""
    import torch

    opts = trainer.options
    params = [p for m in trainer.modules() for p in m.parameters() if p.requires_grad]
    opt_cls = torch.optim.AdamW if opts.optimizer == "adamw" else torch.optim.Adam
    optimizer = opt_cls(params, lr=opts.lr, weight_decay=opts.weight_decay)
    scheduler = torch.optim.lr_scheduler.ExponentialLR(optimizer, gamma=opts.lr_decay)
    n_params = sum(p.numel() for p in params)

    excluded = 0.0  # time spent in callbacks, not training

    def elapsed() -> float:
        return time.perf_counter() - start - excluded

    def snapshot() -> list[dict[str, Any]]:
        return [copy.deepcopy(m.state_dict()) for m in trainer.modules()]

    def restore(state: list[dict[str, Any]] | None) -> None:
        if state is not None:
            for m, s in zip(trainer.modules(), state, strict=True):
                m.load_state_dict(s)

    best, best_state = math.inf, None
    history: list[tuple[float, int, float]] = []
    status, message, done = "success", "", 0
    try:
        for epoch in range(1, opts.epochs + 1):
            perm = torch.randperm(n, generator=trainer._rng)
            total, seen = 0.0, 0
            for idx in perm.to(trainer.device).split(opts.batch_size):
                optimizer.zero_grad(set_to_none=True)
                loss = trainer._loss(idx)
                value = float(loss.detach())
                if not math.isfinite(value):
                    status = "diverged"
                    message = f"training loss became non-finite in epoch {epoch}"
                    break
                loss.backward()
                if opts.grad_clip is not None:
                    torch.nn.utils.clip_grad_norm_(params, opts.grad_clip)
                optimizer.step()
                total += value * idx.numel()
                seen += idx.numel()
                if budget_s is not None and elapsed() > budget_s:
                    status = "budget"
                    message = f"wall-time budget of {budget_s:g} s ran out in epoch {epoch}"
                    break
            if status == "diverged":
                break
            epoch_loss = total / max(seen, 1)
            if status == "budget" and seen < n:
                if best_state is None:  # no complete epoch: keep what we have
                    best = epoch_loss
                break
            done = epoch
            if epoch_loss < best:
                best, best_state = epoch_loss, snapshot()
            scheduler.step()
            history.append((elapsed(), epoch, epoch_loss))
            if status == "budget":
                break
            if callback is not None:
                t0 = time.perf_counter()
                stop = callback(Progress(history[-1][0], epoch, opts.epochs, epoch_loss, best))
                excluded += time.perf_counter() - t0
                if stop is True:
                    message = f"stopped by the callback after epoch {epoch}"
                    break
    except KeyboardInterrupt:
        status = "interrupted"
        message = f"interrupted in epoch {done + 1}; kept the best weights (epoch loss {best:.3g})"
    restore(best_state)
    if status == "success" and not message:
        message = f"{done} epochs, best training loss {best:.3g}"
    return FitResult(
        method=trainer.name,
        status=status,
        train_time_s=elapsed(),
        epochs=done,
        n_params=n_params,
        best_loss=best,
        history=history,
        message=message,
    )


# --- the method registry ---------------------------------------------------------------------
# name -> (module, class, option overrides). Modules load on first use (importing this package
# imports no torch).
_METHODS: dict[str, tuple[str, str, dict[str, Any]]] = {
    "collocation": ("collocation", "Collocation", {}),
    "fnode": ("fnode", "FNODE", {}),
    "mbdnode": ("mbdnode", "MBDNODE", {}),
    "snde": ("snde", "SNDE", {}),
    "mnn": ("mnn", "MNN", {}),
    "node": ("node", "NODE", {}),
    "node_adjoint": ("node", "NODE", {"adjoint": True}),
    "lstm": ("baselines", "LSTM", {}),
    "fcnn": ("baselines", "FCNN", {}),
}


# (method, problem) -> (module, class): a problem-specific trainer that stands in for the
# method's generic one. The quarter vehicle is the paper's hybrid model, not a black-box ODE, so
# its collocation row is the quarter-vehicle experiment behind the trainer interface.
_SPECIALIZED: dict[tuple[str, str], tuple[str, str]] = {
    ("collocation", "qvm"): ("qvm_collocation", "QVMCollocation"),
}


def available() -> list[str]:
    """Names of the registered methods."""
    return list(_METHODS)


def method_class(name: str, problem: str | None = None) -> type[Trainer]:
    """The trainer class of method ``name`` (for ``problem``, when it has a specialized one);
    a ValueError lists the valid names."""
    v.choice("method", name, _METHODS)
    module, cls, _ = _METHODS[name]
    module, cls = _SPECIALIZED.get((name, problem or ""), (module, cls))
    return getattr(import_module(f"{__package__}.{module}"), cls)


def method_defaults(name: str) -> dict[str, Any]:
    """Option overrides that the registry entry ``name`` adds (e.g. ``node_adjoint``)."""
    v.choice("method", name, _METHODS)
    return dict(_METHODS[name][2])


def make_trainer(
    name: str, problem: str | None = None, quick: bool = False, **options: Any
) -> Trainer:
    """A trainer for method ``name`` with the paper options for ``problem``, shrunk if
    ``quick``, then ``options``."""
    cls = method_class(name, problem)
    opts = cls.options_for(problem, quick=quick, **{**method_defaults(name), **options})
    trainer = cls(opts)
    trainer.name = name
    return trainer
