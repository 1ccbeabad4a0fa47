"""The interface every method of the comparison implements, and its results.

A method is a `Trainer` built from a frozen options dataclass::

    trainer = make_trainer("fnode", epochs=450, device="auto")
    result = trainer.fit(system, split.train, budget_s=600, callback=print)
    x = trainer.predict(split.full.t, split.full.x[0])     # (len(t), n_states)

How a method trains is its own business: the PyTorch methods share the gradient-descent loop of
`GradientTrainer`; collocation solves one NLP with
IPOPT.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from ... import _validation as v
from ..._data import Trajectory
from .options import TrainerOptions, replace_options
from .status import MethodStatus

__all__ = [
    "Callback",
    "EpochAccess",
    "FitResult",
    "MethodStatus",
    "NotApplicableError",
    "Progress",
    "Trainer",
    "TrainerOptions",
    "as_trajectories",
    "replace_options",
]


class NotApplicableError(ValueError):
    """The method does not apply to this system (e.g. SNDE without constraints)."""


class EpochAccess:
    """How a `Progress` reads the trainer it reports on: ``trainer`` (for its rollout)
    and ``read_params()`` (its flat parameters), valid until the callback returns (``live``)."""

    def __init__(self, trainer: Any, read_params: Callable[[], np.ndarray]) -> None:
        self.trainer, self.read_params = trainer, read_params
        self.live = True

    def check(self, epoch: int) -> EpochAccess:
        if not self.live:
            raise RuntimeError(
                f"the progress of epoch {epoch} was read after its callback returned; the "
                f"weights are readable during the callback only (keep progress.params())"
            )
        return self


@dataclass(frozen=True)
class Progress:
    """What the training callback receives after every epoch (times exclude callback time).

    It follows the callback protocol of `collocnode.training._callbacks` (``iteration``,
    ``objective``, ``elapsed_s``, ``params()``, ``predict(t, x0, u)``), so one callback object
    (e.g. [`collocnode.EarlyStopping`][collocnode.EarlyStopping]) serves a collocation solve and a
    trainer alike. ``params`` and ``predict`` read the trainer while the callback runs.

    Attributes:
        elapsed_s: training wall time so far [s], without callbacks.
        epoch: the epoch just completed (from 1); also ``iteration``.
        epochs: the epoch limit.
        loss: the epoch's mean training loss; also ``objective``.
        best_loss: the lowest epoch loss so far.
    """

    elapsed_s: float
    epoch: int
    epochs: int
    loss: float
    best_loss: float
    access: EpochAccess | None = field(default=None, repr=False, compare=False)

    @property
    def iteration(self) -> int:
        return self.epoch

    @property
    def objective(self) -> float:
        return self.loss

    def _access(self) -> EpochAccess:
        if self.access is None:
            raise RuntimeError("this progress report carries no trainer")
        return self.access.check(self.epoch)

    def params(self) -> np.ndarray:
        """The trainable parameters after this epoch, flat float64 (a new array) in the order of
        the trainer's ``modules()`` (``trainer.get_weights()`` gives them per block)."""
        return self._access().read_params()

    def predict(
        self,
        t: np.ndarray,
        x0: np.ndarray,
        u: np.ndarray | Callable[[Any], Any] | None = None,
    ) -> np.ndarray:
        """The trainer's rollout at this epoch's weights (`Trainer.predict`): ``t``
        (n,) [s], ``x0`` (n_states,) or its first `start_samples` states, inputs ``u`` at
        ``t``; returns (n, n_states)."""
        return self._access().trainer.predict(t, x0, u)

    @property
    def start_samples(self) -> int:
        """How many leading states ``predict`` starts from (`Trainer.start_samples`)."""
        return self._access().trainer.start_samples


@dataclass
class FitResult:
    """The outcome of `Trainer.fit`.

    Attributes:
        method: registry name of the method.
        status: how the training ended (`MethodStatus`; its word is accepted too):
            ``SUCCESS``, ``BUDGET`` (wall-time budget ran out), ``INTERRUPTED``
            (KeyboardInterrupt; the best weights are kept), ``ITERATION_LIMIT``, ``STOPPED`` (the
            callback asked to stop; ``message`` says why), ``DIVERGED`` (non-finite loss) or
            ``FAILED`` (also when the callback raised).
        train_time_s: wall time of setup (targets, data) and optimisation, without callbacks.
        epochs: completed epochs (or iterations).
        n_params: trainable parameters.
        best_loss: lowest epoch-mean training loss (or final objective); its weights are kept.
        history: ``(wall_time_s, epoch, train_loss)`` after every epoch.
        message: human-readable detail.
    """

    method: str
    status: MethodStatus
    train_time_s: float
    epochs: int
    n_params: int
    best_loss: float = math.inf
    history: list[tuple[float, int, float]] = field(default_factory=list)
    message: str = ""

    def __post_init__(self) -> None:
        self.status = MethodStatus.of(self.status)


Callback = Callable[[Progress], Any]


def as_trajectories(train: Trajectory | Sequence[Trajectory]) -> list[Trajectory]:
    """One trajectory or a non-empty sequence of them, as a list."""
    if isinstance(train, Trajectory):
        return [train]
    if isinstance(train, Sequence) and train and all(isinstance(t, Trajectory) for t in train):
        return list(train)
    raise TypeError(f"train must be a Trajectory or a sequence of them, got {type(train).__name__}")


class Trainer(ABC):
    """A method of the comparison: the interface shared by every method.

    Subclasses set ``name`` and ``options_class`` (a frozen options dataclass:
    `TrainerOptions` or one derived from it, or collocation's own), may restrict
    `not_applicable`, and implement `fit`, `predict` and `n_params`.
    ``PAPER`` maps a problem name to the seed papers' option values for it and ``QUICK`` holds the
    overrides of a smoke-test run. ``predicts_while_fitting`` says whether `predict` works
    inside the training callback (the harness then records an error-vs-time curve during training).
    """

    name: ClassVar[str] = ""
    options_class: ClassVar[type] = TrainerOptions
    predicts_while_fitting: ClassVar[bool] = True
    PAPER: ClassVar[dict[str, dict[str, Any]]] = {}
    QUICK: ClassVar[dict[str, Any]] = {}

    def __init__(self, options: Any = None, **overrides: Any) -> None:
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
        """Raise `NotApplicableError` with the reason if the method does not apply."""
        reason = self.not_applicable(system)
        if reason:
            raise NotApplicableError(f"{self.name} does not apply to {system.name}: {reason}")

    #: what `epoch_limit` and a fit's ``epochs`` count: "epoch" or "iteration"
    unit: ClassVar[str] = "epoch"

    @property
    def epoch_limit(self) -> int:
        """The most epochs (or solver iterations) a fit runs: what a progress bar counts to."""
        return self.options.epochs

    @property
    def start_samples(self) -> int:
        """How many leading states of the data a rollout starts from: ``predict``'s ``x0`` is
        ``(n_states,)`` when 1 (every method but the LSTM with ``start="data"``), else
        ``(start_samples, n_states)``, which become the rollout's first samples."""
        return 1

    @classmethod
    def options_for(cls, problem: str | None = None, quick: bool = False, **overrides: Any) -> Any:
        """The seed papers' options for ``problem`` (defaults where they give none), optionally
        shrunk for a quick run, then ``overrides``."""
        values: dict[str, Any] = dict(cls.PAPER.get(problem or "", {}))
        if quick:
            values.update(cls.QUICK)
        values.update(overrides)
        return replace_options(cls.options_class(), **values)

    # --- the interface -----------------------------------------------------------------------
    @abstractmethod
    def fit(
        self,
        system: Any,
        train: Trajectory | Sequence[Trajectory],
        *,
        budget_s: float | None = None,
        callback: Callback | None = None,
    ) -> FitResult:
        """Train on ``train`` (one trajectory or several, e.g. for parameter inputs).

        ``budget_s`` limits the training wall time [s]; ``callback(Progress)``, where the method
        has epochs, runs after every epoch (its own time is not counted) and may return True to
        stop training (status ``STOPPED``); it follows the protocol of
        `collocnode.training._callbacks` (``on_start``, ``on_end``, ``reason``). Ctrl-C keeps
        the best model so far and returns status ``INTERRUPTED``.
        Raises `NotApplicableError` if the method does not apply to ``system``.
        """

    @abstractmethod
    def predict(
        self,
        t: np.ndarray,
        x0: np.ndarray,
        u: np.ndarray | Callable[[Any], Any] | None = None,
        *,
        params: Mapping[str, float] | None = None,
    ) -> np.ndarray:
        """Roll the trained model out from ``x0`` (``(n_states,)``; ``(k, n_states)``, the
        first k states, where `start_samples` is k > 1) over the times ``t``
        (``(n,)`` [s]); ``u`` holds the known inputs at ``t`` (``(n, n_inputs)``) or is a callable
        of t (default: the system's own inputs). ``params`` gives the parameter inputs μ (default:
        those of the first training trajectory). Returns ``(n, n_states)``; raises
        ``fixed_step.DivergenceError`` (with the step) if the rollout leaves the finite range."""

    @property
    @abstractmethod
    def n_params(self) -> int:
        """Number of trained parameters."""

    # --- argument checks shared by the implementations ---------------------------------------
    def _check_fit_args(
        self, system: Any, train: Trajectory | Sequence[Trajectory], budget_s: float | None
    ) -> tuple[list[Trajectory], float | None]:
        """The training trajectories as a list (every value present) and the budget [s], both
        checked; raises `NotApplicableError` first if the method does not apply to
        ``system``."""
        self._require_applicable(system)
        trajs = as_trajectories(train)
        for i, tr in enumerate(trajs):
            if tr.n_states != system.n_states:
                raise ValueError(
                    f"train[{i}] has {tr.n_states} states, {system.name} has {system.n_states}"
                )
            # the comparison's methods train on every sample (windows, finite differences,
            # rollouts against each value): a missing value is named here, not met as a NaN loss
            tr.require_complete(f"train[{i}]")
        if budget_s is not None:
            budget_s = v.positive_float("budget_s", budget_s)
        return trajs, budget_s

    def _require_fitted(self) -> None:
        if not self._fitted:
            raise RuntimeError(f"{self.name}: call fit() before predict()")

    def _check_predict_args(self, t: object, x0: object) -> tuple[np.ndarray, np.ndarray]:
        self._require_fitted()
        t = v.increasing("t", t)
        k, n = self.start_samples, self.system.n_states
        x0 = v.finite_array("x0", x0, shape=(n,) if k == 1 else (k, n))
        if k > 1 and t.size < k:
            raise ValueError(f"t has {t.size} times; a rollout of {self.name} starts from {k}")
        return t, x0
