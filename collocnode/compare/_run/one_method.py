"""One method of a comparison run: its trainer made, trained (its error-vs-time curve recorded
on the way) and scored, and what happened written into its row.

`run_method` never raises for the method: a method that does not apply is recorded as
``NOT_APPLICABLE`` with the reason, one that raises as ``FAILED`` with the error and its
traceback, a rollout that diverges as ``DIVERGED`` with its step, and Ctrl-C, wherever it lands
(training or scoring), as ``INTERRUPTED`` with what the method has (its best weights, when
training had started).
"""

from __future__ import annotations

import contextlib
import math
import os
import sys
import traceback
from dataclasses import asdict
from pathlib import Path
from typing import Any

from ...tools._progress import watching
from ...training._callbacks import bar_count
from ..methods.base import NotApplicableError, Progress
from ..methods.registry import make_trainer
from ..methods.status import MethodStatus
from .config import CompareConfig
from .report import save_arrays
from .results import MethodRow
from .scenarios import Evaluation, StateRollout

#: a point of the error-vs-time curve: (training time [s], test error; None if not scorable)
CurvePoint = tuple[float, float | None]


def run_method(
    name: str,
    system: Any,
    split: Any,
    cfg: CompareConfig,
    progress: bool = True,
    out_dir: str | os.PathLike[str] | None = None,
    evaluation: Evaluation | None = None,
) -> MethodRow:
    """Train and score method ``name`` on ``split.train``; never raises for the method's
    failures or Ctrl-C (see the module docstring).

    ``evaluation`` scores the trained model (default: `StateRollout` of ``split``).
    With ``out_dir``, the rollout and the flat network weights go to ``<method>.npz`` there."""
    if evaluation is None:
        evaluation = StateRollout(system, split)
    row = MethodRow(name)
    try:
        _train_and_score(row, system, split, cfg, evaluation, progress, out_dir)
    except NotApplicableError as exc:
        row.status, row.message = MethodStatus.NOT_APPLICABLE, str(exc)
    except KeyboardInterrupt:
        where = "after training" if row.train_time_s is not None else "before training ended"
        row.status = MethodStatus.INTERRUPTED
        row.message = f"interrupted {where}" + (f"; {row.message}" if row.message else "")
    except Exception as exc:  # one failing method must not stop the comparison
        row.status, row.message = MethodStatus.FAILED, f"{type(exc).__name__}: {exc}"
        row.traceback = traceback.format_exc(limit=8)
    return row


def _train_and_score(
    row: MethodRow,
    system: Any,
    split: Any,
    cfg: CompareConfig,
    evaluation: Evaluation,
    progress: bool,
    out_dir: str | os.PathLike[str] | None,
) -> None:
    """The method's way through the run, each step filling ``row``; raises what the method
    raises."""
    name = row.method
    trainer = make_trainer(name, cfg.problem, quick=cfg.quick, **cfg.method_options(name))
    reason = trainer.not_applicable(system)
    if reason:
        row.status, row.message = MethodStatus.NOT_APPLICABLE, reason
        return
    row.options = _jsonable_options(trainer.options)
    row.unit, row.limit = trainer.unit, trainer.epoch_limit
    monitor = TrainingMonitor(trainer, cfg, evaluation, progress)
    try:
        # the monitor also watches the phases of a collocation solve (build, compile, solve)
        with watching(monitor) if monitor.shows else contextlib.nullcontext():
            result = trainer.fit(system, split.train, budget_s=cfg.budget_s, callback=monitor)
    finally:
        monitor.close()
    row.record_fit(result)
    if cfg.records_curve:
        row.curve = monitor.curve
    score = evaluation.score(trainer)
    row.record_score(score)
    if out_dir is not None:
        save_arrays(Path(out_dir) / f"{name}.npz", score.arrays, trainer)


class TrainingMonitor:
    """The callback a run gives a method's training: it advances the progress bar and records
    the error-vs-time curve; it also watches the phases of a collocation solve (named in the
    bar on a terminal, one line each in a log).

    A point of `curve` is taken at the first callback after each ``cfg.eval_every_s``
    since the last point and after each time of ``cfg.eval_at_s``, when the run records curves
    and the trainer can predict while it fits. It reads only ``objective`` and ``elapsed_s`` of
    what it is called with (the protocol of `collocnode.training._callbacks`: a collocation
    solve passes its iteration state, the PyTorch trainers a `Progress`), and never asks
    to stop.
    """

    def __init__(
        self, trainer: Any, cfg: CompareConfig, evaluation: Evaluation, progress: bool
    ) -> None:
        self.trainer, self.evaluation = trainer, evaluation
        self.curve: list[CurvePoint] = []
        self._records = cfg.records_curve and trainer.predicts_while_fitting
        self._every = cfg.eval_every_s
        self._pending = list(cfg.eval_at_s)  # sorted by CompareConfig
        self._last = -math.inf
        self._bar = _bar(trainer.name, trainer.epoch_limit, trainer.unit, progress)
        self._lines = progress and self._bar is None  # a log: a line per phase of a solve

    @property
    def shows(self) -> bool:
        """Whether it shows progress: a bar on a terminal, lines in a log."""
        return self._bar is not None or self._lines

    def phase(self, name: str) -> None:
        """A phase of a collocation solve (`collocnode.tools._progress`): named in the bar,
        or a line on standard error."""
        if self._bar is not None:
            self._bar.set_postfix_str(name)
        elif self._lines:
            print(f"{self.trainer.name}: {name}", file=sys.stderr, flush=True)

    def iterations(self) -> None:
        """None: the iterations come as the training callback already."""
        return None

    def __call__(self, p: Progress) -> None:
        if self._bar is not None:
            self._bar.update(1)
            self._bar.set_postfix(loss=f"{p.objective:.3g}")
        if self._records and self._due(p.elapsed_s):
            self._last = p.elapsed_s
            self.curve.append((p.elapsed_s, self.evaluation.curve_value(self.trainer)))

    def _due(self, elapsed_s: float) -> bool:
        """Whether a point is due at ``elapsed_s``: a set time has passed (each set time counts
        once, times passed together give one point) or the cadence has."""
        due_at = bool(self._pending) and elapsed_s >= self._pending[0]
        while self._pending and elapsed_s >= self._pending[0]:
            self._pending.pop(0)
        due_every = self._every is not None and elapsed_s - self._last >= self._every
        return due_at or due_every

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()


def _jsonable_options(opts: Any) -> dict[str, Any]:
    return {k: (list(val) if isinstance(val, tuple) else val) for k, val in asdict(opts).items()}


def _bar(name: str, total: int, unit: str, enabled: bool) -> Any:
    """A tqdm bar over the method's epochs, counted against ``total`` (collocation: IPOPT
    iterations, counted without a total: `bar_count`) when
    ``enabled`` and standard error is a terminal; a log gets no bar, only the run's line per
    method."""
    if not enabled or not sys.stderr.isatty():
        return None
    from tqdm import tqdm

    total, unit = bar_count(total, unit)
    return tqdm(total=total, desc=f"{name:>12}", unit=unit, leave=True, dynamic_ncols=True)
