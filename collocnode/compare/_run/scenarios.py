"""Where a comparison's data comes from and how its trained models are scored.

A *scenario* gives a problem its data, its evaluation, its default methods and its table
columns. Every problem uses the generic `StateRolloutScenario` (a rollout from the first
sample, scored on the training window and the extrapolation window after it) unless
``SCENARIOS`` names its own: the quarter vehicle trains on its preset's road and is scored on
accelerations on an unseen road (`collocnode.compare._run.qvm.QVMScenario`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol

from ...tools._registry import Registry
from ..methods.status import MethodStatus
from .metrics import evaluate
from .results import Divergence, Score

# problem -> the scenario class of a problem that has its own, loaded on first use; every other
# problem is a StateRolloutScenario
SCENARIOS: Registry[type[Scenario]] = Registry(
    "scenario", {"qvm": "collocnode.compare._run.qvm:QVMScenario"}
)

# (row key, Markdown header) of the generic table
STATE_COLUMNS = (
    ("method", "method"),
    ("status", "status"),
    ("train_time_s", "train time [s]"),
    ("epochs", "trained for"),
    ("limit", "budget"),
    ("ended", "training ended"),
    ("train_mse", "train MSE"),
    ("test_mse", "test MSE (extrapolation)"),
    ("full_mse", "full-window MSE (papers' tables)"),
    ("n_params", "params"),
    ("time_to_target_s", "time to collocation's test MSE [s]"),
)
# the columns of the generic table (each row has them all; report.py words "epochs" and "limit"
# with the row's unit and the run's time budget)
COLUMNS = tuple(key for key, _ in STATE_COLUMNS)


class Evaluation(Protocol):
    """Scores trained models of one scenario."""

    #: the row column that the error-vs-time curve records and time-to-target compares
    metric: str

    def curve_value(self, trainer: Any) -> float | None:
        """The test error during training (None if the model cannot be scored now)."""
        ...

    def score(self, trainer: Any) -> Score: ...

    def meta(self) -> dict[str, Any]:
        """What the report's ``meta`` says about the data and the errors."""
        ...


@dataclass(frozen=True)
class ScenarioData:
    """A scenario's system, data split (``split.train`` is what every method trains on) and
    evaluation."""

    system: Any
    split: Any
    evaluation: Evaluation


class Scenario(ABC):
    """How a comparison of one problem gets its data and scores its models.

    Attributes:
        methods: the methods run unless the caller names others.
        columns: (row key, Markdown header) of the report's table.
        errors_label: the word that introduces ``meta["mse"]`` under the table.
    """

    methods: ClassVar[tuple[str, ...]]
    columns: ClassVar[tuple[tuple[str, str], ...]]
    errors_label: ClassVar[str] = "Errors"

    @abstractmethod
    def load(
        self, problem: str, preset: str | None, quick: bool, seed: int, noise: float | None
    ) -> ScenarioData:
        """The system, data and evaluation (``quick``: CI-sized data)."""

    def curve_every(self, quick: bool) -> float:
        """Default cadence of the error-vs-time curve [s]."""
        return 1.0

    def threads(self, quick: bool) -> int | None:
        """Torch CPU threads unless the caller says otherwise (None: torch's default)."""
        return None


class StateRolloutScenario(Scenario):
    """The generic scenario: the problem's own data split (shrunk to at most 200 training and
    100 extrapolation samples when ``quick``), scored by `StateRollout`."""

    # collocation first: the library's own method is what the others are compared with
    methods: ClassVar[tuple[str, ...]] = ("collocation", "fnode", "mbdnode")
    columns: ClassVar[tuple[tuple[str, str], ...]] = STATE_COLUMNS
    errors_label: ClassVar[str] = "MSE"

    def load(
        self, problem: str, preset: str | None, quick: bool, seed: int, noise: float | None
    ) -> ScenarioData:
        from ... import problems

        system = problems.get(problem, preset)
        kw: dict[str, Any] = {} if noise is None else {"noise": noise}
        if quick:
            n_train = min(system.n_train, 200)
            kw |= {
                "n_train": n_train,
                "n_steps": n_train + min(system.n_steps - system.n_train, 100),
            }
        split = system.generate(seed=seed, **kw)
        return ScenarioData(system, split, StateRollout(system, split))


class StateRollout:
    """The generic evaluation: a rollout from the first sample over the whole trajectory,
    scored on the training window and the extrapolation window after it (``metrics``)."""

    metric = "test_mse"

    def __init__(self, system: Any, split: Any) -> None:
        self.system, self.split = system, split
        self.n_train = split.train.n_samples

    def curve_value(self, trainer: Any) -> float | None:
        return evaluate(trainer, self.system, self.split.full, self.n_train).test_mse

    def score(self, trainer: Any) -> Score:
        full = self.split.full
        m = evaluate(trainer, self.system, full, self.n_train, subsets=_subsets(self.system))
        columns: dict[str, Any] = dict(m.extra)
        columns.update(
            train_mse=m.train_mse,
            test_mse=m.test_mse,
            test_rmse=m.test_rmse,
            full_mse=m.full_mse,
            constraint_violation=m.constraint_violation,
            invariant_drift=m.invariant_drift,
            predict_time_s=m.predict_time_s,
        )
        divergence = None
        if m.status == MethodStatus.DIVERGED:  # then metrics sets diverged_step and diverged_t
            divergence = Divergence(m.diverged_step, m.diverged_t, m.message)
        arrays: dict[str, Any] = {"t": full.t, "x_data": full.x}
        if m.prediction is not None:
            arrays["x_pred"] = m.prediction
        return Score(columns, arrays, divergence)

    def meta(self) -> dict[str, Any]:
        return {
            "mse": "mean over samples and state components; train = first n_train samples, "
            "test = the samples after them (extrapolation), full = all samples (the window of "
            "MBD-NODE Table 4 and FNODE's baseline tables)"
        }


def _subsets(system: Any) -> dict[str, list[int]]:
    """Column subsets scored separately: the independent coordinates and their velocities of a
    constrained mechanism (FNODE reports the slider-crank error on the crank angle)."""
    ind = tuple(getattr(system, "independent", ()) or ())
    if not ind or not system.n_coords:
        return {}
    return {"independent": [*ind, *(system.n_coords + i for i in ind)]}


def scenario_for(problem: str) -> Scenario:
    """The scenario of ``problem``: its own (``SCENARIOS``) or the generic state rollout."""
    entry = SCENARIOS.get(problem)
    return StateRolloutScenario() if entry is None else entry.load()()
