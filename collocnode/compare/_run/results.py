"""What a comparison produces: the score of one trained model, one row per method, the report.

The row and the report are dataclasses that also read as the JSON objects they are written as
(``row["test_mse"]``, ``report["rows"]``), so code that reads ``compare.json`` reads a report
returned by `collocnode.compare._run.harness.run` the same way.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, MutableMapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..methods.base import FitResult
from ..methods.status import MethodStatus

# the columns every row has, in the order compare.json lists them
BASE_COLUMNS = (
    "method",
    "status",
    "train_time_s",
    "epochs",
    "train_mse",
    "test_mse",
    "full_mse",
    "n_params",
    "message",
)


@dataclass(frozen=True)
class Divergence:
    """Where a rollout of a trained model left the finite range."""

    step: int
    t: float
    message: str


@dataclass
class Score:
    """An evaluation of one trained model.

    Attributes:
        columns: the scenario's row columns (e.g. ``train_mse``, ``test_mse``,
            ``test_road_rmse``; None where the model could not be scored).
        arrays: what ``<method>.npz`` keeps: ``t`` ``(n,)``, ``x_data`` ``(n, n_states)`` and,
            when the rollout succeeded, ``x_pred`` (and ``a_data``/``a_pred`` for scenarios
            scored on accelerations).
        divergence: set when the rollout diverged (the row's status becomes ``DIVERGED``).

    Unpacks as ``(fields, arrays)``, where ``fields`` are the columns the row takes, with
    ``status``, ``diverged_step``, ``diverged_t`` and ``message`` of a divergence.
    """

    columns: dict[str, Any]
    arrays: dict[str, np.ndarray] = field(default_factory=dict)
    divergence: Divergence | None = None

    def row_fields(self) -> dict[str, Any]:
        fields = dict(self.columns)
        if self.divergence is not None:
            d = self.divergence
            fields.update(
                status=MethodStatus.DIVERGED,
                diverged_step=d.step,
                diverged_t=d.t,
                message=d.message,
            )
        return fields

    def __iter__(self) -> Iterator[Any]:
        return iter((self.row_fields(), self.arrays))


@dataclass(eq=False)
class MethodRow(Mapping[str, Any]):
    """The outcome of one method of a comparison.

    Attributes:
        method: registry name.
        status: how the method ended (`MethodStatus`; its word is accepted too, as a
            row read back from a stored task has it): ``DIVERGED`` when the rollout left the
            finite range, ``FAILED`` when the method raised (see ``traceback``), otherwise the
            fit's status or ``NOT_APPLICABLE``.
        train_time_s: training wall time without callbacks [s].
        epochs: completed epochs, or IPOPT iterations.
        n_params: trained parameters.
        message: what happened, in words.
        options: the method's options after the paper settings, ``--quick`` and overrides.
        best_loss: lowest training loss (None if none was finite).
        curve: ``(train time [s], test error)`` during training, when recorded.
        scores: the scenario's columns (`Score.columns`).
        diverged_step, diverged_t: where the rollout diverged.
        traceback: of a failure.
        time_to_target_s: training time at which the test error first reached collocation's.
        unit: what ``epochs`` counts: "epoch" (a gradient-descent trainer) or "iteration"
            (collocation's IPOPT iterations).
        limit: the most epochs (iterations) the training was allowed.
        ended: how the training ended, in words (`training_ended`).
    """

    method: str
    status: MethodStatus = MethodStatus.FAILED
    train_time_s: float | None = None
    epochs: int | None = None
    n_params: int | None = None
    message: str = ""
    options: dict[str, Any] | None = None
    best_loss: float | None = None
    curve: list[tuple[float, float | None]] | None = None
    scores: dict[str, Any] = field(default_factory=dict)
    diverged_step: int | None = None
    diverged_t: float | None = None
    traceback: str | None = None
    time_to_target_s: float | None = None
    unit: str | None = None
    limit: int | None = None
    ended: str | None = None

    def __setattr__(self, name: str, value: Any) -> None:
        # a status set by word (a row read back from a stored task) is checked and typed here,
        # whoever sets it
        if name == "status":
            value = MethodStatus.of(value)
        super().__setattr__(name, value)

    @property
    def unfinished(self) -> bool:
        """True for ``FAILED`` and ``INTERRUPTED``: the method did not run to an end of its own."""
        return self.status.unfinished

    def record_fit(self, result: FitResult) -> None:
        """The training fields of the fit's ``result`` (a best loss that is not finite is
        None: strict JSON has no NaN or infinity)."""
        self.status, self.message = result.status, result.message
        self.train_time_s, self.epochs = result.train_time_s, result.epochs
        self.n_params = result.n_params
        self.best_loss = result.best_loss if math.isfinite(result.best_loss) else None
        self.ended = training_ended(self.status, self.unit or "epoch")

    def record_score(self, score: Score) -> None:
        self.scores.update(score.columns)
        if score.divergence is not None:
            d = score.divergence
            self.status, self.message = MethodStatus.DIVERGED, d.message
            self.diverged_step, self.diverged_t = d.step, d.t

    def to_json(self) -> dict[str, Any]:
        """The row as ``compare.json`` holds it (optional fields only when set)."""
        out: dict[str, Any] = {
            "method": self.method,
            "status": self.status,
            "train_time_s": self.train_time_s,
            "epochs": self.epochs,
            "train_mse": self.scores.get("train_mse"),
            "test_mse": self.scores.get("test_mse"),
            "full_mse": self.scores.get("full_mse"),
            "n_params": self.n_params,
            "message": self.message,
        }
        out.update(unit=self.unit, limit=self.limit, ended=self.ended)
        for key in ("options", "best_loss", "curve"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        out.update((k, val) for k, val in self.scores.items() if k not in out)
        for key in ("diverged_step", "diverged_t", "traceback"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        out["time_to_target_s"] = self.time_to_target_s
        return out

    # read-only mapping over to_json()
    def __getitem__(self, key: str) -> Any:
        return self.to_json()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.to_json())

    def __len__(self) -> int:
        return len(self.to_json())


def training_ended(status: MethodStatus, unit: str) -> str:
    """How a training that ended with ``status`` ended, in words: whether it converged (a
    solver's success) or ran out of its epochs, iterations or time."""
    status = MethodStatus.of(status)
    if status == MethodStatus.SUCCESS:
        return "converged" if unit == "iteration" else f"ran all its {unit}s"
    return {
        MethodStatus.BUDGET: "ran out of time",
        MethodStatus.ITERATION_LIMIT: f"ran out of {unit}s",
        MethodStatus.STOPPED: "stopped by a callback",
        MethodStatus.DIVERGED: "loss diverged",
    }.get(status, str(status))


@dataclass(eq=False)
class CompareReport(Mapping[str, Any]):
    """A comparison: the problem, its settings and data (``meta``) and one row per method."""

    problem: str
    meta: dict[str, Any]
    rows: list[MethodRow] = field(default_factory=list)

    @property
    def failed(self) -> list[str]:
        """Methods whose status is ``FAILED``."""
        return [r.method for r in self.rows if r.status == MethodStatus.FAILED]

    @property
    def interrupted(self) -> list[str]:
        """Methods whose status is ``INTERRUPTED`` (stopped by Ctrl-C, or skipped after it)."""
        return [r.method for r in self.rows if r.status == MethodStatus.INTERRUPTED]

    def to_json(self) -> dict[str, Any]:
        return {
            "problem": self.problem,
            "meta": self.meta,
            "rows": [r.to_json() for r in self.rows],
        }

    def __getitem__(self, key: str) -> Any:
        return {"problem": self.problem, "meta": self.meta, "rows": self.rows}[key]

    def __iter__(self) -> Iterator[str]:
        return iter(("problem", "meta", "rows"))

    def __len__(self) -> int:
        return 3


def time_to_target(rows: Sequence[Mapping[str, Any]], metric: str = "test_mse") -> list[Any]:
    """Per row, the training time at which the method's test error (``metric``, the quantity
    its curve records) first reached the collocation row's final one (None if it never did, or
    if no curve was recorded). Collocation's own value is its training time."""
    target_row = next((r for r in rows if r["method"] == "collocation"), None)
    target = target_row.get(metric) if target_row is not None else None
    out: list[Any] = []
    for row in rows:
        if target is None:
            out.append(None)
            continue
        if row is target_row:
            out.append(row.get("train_time_s"))
            continue
        curve = row.get("curve") or []
        hit = [t for t, err in curve if err is not None and err <= target]
        final = row.get(metric)
        if not hit and not curve and final is not None and final <= target:
            hit = [row.get("train_time_s")]
        out.append(hit[0] if hit else None)
    return out


def add_time_to_target(rows: Sequence[MutableMapping[str, Any]], metric: str = "test_mse") -> None:
    """Set ``time_to_target_s`` (see `time_to_target`) in each of the row dicts."""
    for row, value in zip(rows, time_to_target(rows, metric), strict=True):
        row["time_to_target_s"] = value
