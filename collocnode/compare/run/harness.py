"""Run several methods on one problem with one data set, one row per method.

A method that does not apply is recorded as "not applicable" with the reason; one that raises
is recorded as "failed" with the error while the others continue; a rollout that diverges is
recorded as "diverged" with its step. Ctrl-C, wherever it lands (data, training, scoring), keeps
what the interrupted method has (its best weights, when training had started), records the
method as "interrupted", records the remaining methods as "interrupted" (skipped) and returns
the report; ``compare.json`` and ``compare.md`` are rewritten after every method, so a crash
leaves the finished rows on disk. :attr:`CompareReport.failed` and
:attr:`CompareReport.interrupted` name the methods that did not run to an end.

The problem's scenario (:mod:`collocnode.compare.run.scenarios`) gives the data and the scoring;
:mod:`collocnode.compare.run.report` writes the files.
"""

from __future__ import annotations

import math
import os
import platform
import tempfile
import time
import traceback
from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import asdict, fields
from pathlib import Path
from typing import Any

import numpy as np

from ... import _validation as v
from ...tools.io import write_npz
from ...tools.tasks import Task, TaskOutcome, run_tasks
from ..methods.base import NotApplicableError, Progress
from ..methods.registry import make_trainer
from ..methods.status import MethodStatus
from .config import CompareConfig
from .report import save_arrays, summary_line, write_plots, write_report
from .results import CompareReport, MethodRow, time_to_target
from .scenarios import Evaluation, StateRollout, scenario_for


def load_data(cfg: CompareConfig) -> tuple[Any, Any]:
    """The system and its data split for ``cfg`` (shrunk when ``quick``)."""
    data = _load(cfg)
    return data.system, data.split


def _load(cfg: CompareConfig) -> Any:
    return scenario_for(cfg.problem).load(cfg.problem, cfg.preset, cfg.quick, cfg.seed, cfg.noise)


def run_method(
    name: str,
    system: Any,
    split: Any,
    cfg: CompareConfig,
    progress: bool = True,
    out_dir: str | os.PathLike[str] | None = None,
    evaluation: Evaluation | None = None,
) -> MethodRow:
    """Train and evaluate one method; never raises for method failures or Ctrl-C (see the
    module docstring).

    ``evaluation`` scores the trained model (default: :class:`StateRollout` of ``split``).
    With ``out_dir``, the rollout and the flat network weights go to ``<method>.npz`` there."""
    if evaluation is None:
        evaluation = StateRollout(system, split)
    row = MethodRow(name)
    try:
        trainer = make_trainer(name, cfg.problem, quick=cfg.quick, **cfg.method_options(name))
        reason = trainer.not_applicable(system)
        if reason:
            row.status, row.message = MethodStatus.NOT_APPLICABLE, reason
            return row
        row.options = _jsonable_options(trainer.options)
        curve = _train(trainer, row, system, split, cfg, evaluation, progress)
        if cfg.records_curve:
            row.curve = curve
        score = evaluation.score(trainer)
        row.record_score(score)
        if out_dir is not None:
            save_arrays(Path(out_dir) / f"{name}.npz", score.arrays, trainer)
    except NotApplicableError as exc:
        row.status, row.message = MethodStatus.NOT_APPLICABLE, str(exc)
    except KeyboardInterrupt:
        row.status = MethodStatus.INTERRUPTED
        where = "after training" if row.train_time_s is not None else "before training ended"
        row.message = f"interrupted {where}" + (f"; {row.message}" if row.message else "")
    except Exception as exc:  # one failing method must not stop the comparison
        row.status, row.message = MethodStatus.FAILED, f"{type(exc).__name__}: {exc}"
        row.traceback = traceback.format_exc(limit=8)
    return row


def _train(
    trainer: Any,
    row: MethodRow,
    system: Any,
    split: Any,
    cfg: CompareConfig,
    evaluation: Evaluation,
    progress: bool,
) -> list[tuple[float, float | None]]:
    """Fit ``trainer`` and fill the training fields of ``row``; returns the error-vs-time
    curve (empty unless ``cfg.records_curve``): a point at the first callback after each
    ``cfg.eval_every_s`` since the last point and after each time of ``cfg.eval_at_s``."""
    curve: list[tuple[float, float | None]] = []
    bar = _bar(row.method, trainer.epoch_limit, progress)
    last_eval = -math.inf
    pending = list(cfg.eval_at_s)  # sorted by CompareConfig

    curves = cfg.records_curve and trainer.predicts_while_fitting

    def callback(p: Progress) -> None:
        # p follows the callback protocol of collocnode.training.callbacks (a collocation solve
        # passes its iteration state, the PyTorch trainers a Progress): objective and elapsed_s only
        nonlocal last_eval
        if bar is not None:
            bar.update(1)
            bar.set_postfix(loss=f"{p.objective:.3g}")
        if not curves:
            return
        due_at = bool(pending) and p.elapsed_s >= pending[0]
        while pending and p.elapsed_s >= pending[0]:
            pending.pop(0)
        due_every = cfg.eval_every_s is not None and p.elapsed_s - last_eval >= cfg.eval_every_s
        if due_at or due_every:
            last_eval = p.elapsed_s
            curve.append((p.elapsed_s, evaluation.curve_value(trainer)))

    try:
        result = trainer.fit(system, split.train, budget_s=cfg.budget_s, callback=callback)
    finally:
        if bar is not None:
            bar.close()
    row.status, row.message = result.status, result.message
    row.train_time_s, row.epochs, row.n_params = result.train_time_s, result.epochs, result.n_params
    row.best_loss = result.best_loss if math.isfinite(result.best_loss) else None
    return curve


def _jsonable_options(opts: Any) -> dict[str, Any]:
    return {k: (list(val) if isinstance(val, tuple) else val) for k, val in asdict(opts).items()}


def _bar(name: str, total: int, enabled: bool) -> Any:
    if not enabled:
        return None
    try:
        from tqdm import tqdm
    except ImportError:  # pragma: no cover - tqdm ships with the torch extra
        return None
    return tqdm(total=total, desc=f"{name:>12}", unit="epoch", leave=True, dynamic_ncols=True)


ARRAY_PREFIX = "array_"  # a method task's arrays (its .npz) among its row's fields


def method_task(arg: tuple[str, CompareConfig]) -> dict[str, Any]:
    """One method as a task of :func:`collocnode.tools.tasks.run_tasks`: it loads the data itself
    (the same for every method: the scenario's data depend on ``cfg`` only) and returns the
    row's fields under ``"row"`` and the arrays of its ``.npz`` under ``array_<name>``. A method
    stopped by Ctrl-C raises KeyboardInterrupt, so that it is not stored."""
    name, cfg = arg
    data = _load(cfg)
    with tempfile.TemporaryDirectory() as tmp:
        row = run_method(name, data.system, data.split, cfg, False, tmp, data.evaluation)
        if row.status == MethodStatus.INTERRUPTED:
            raise KeyboardInterrupt
        out: dict[str, Any] = {"row": {f.name: getattr(row, f.name) for f in fields(row)}}
        path = Path(tmp) / f"{name}.npz"
        if path.exists():
            with np.load(path, allow_pickle=False) as arrays:
                out.update({ARRAY_PREFIX + k: arrays[k] for k in arrays.files})
    return out


def _row_of(outcome: TaskOutcome, out_dir: str | os.PathLike[str] | None) -> MethodRow:
    """A task's row; its arrays go to ``<out_dir>/<method>.npz`` as in a serial run."""
    if outcome.result is None:
        return MethodRow(outcome.key, MethodStatus.FAILED, message=outcome.error or "")
    row = MethodRow(**outcome.result["row"])
    if row.curve is not None:
        row.curve = [tuple(point) for point in row.curve]
    arrays = {
        k[len(ARRAY_PREFIX) :]: val
        for k, val in outcome.result.items()
        if k.startswith(ARRAY_PREFIX)
    }
    if out_dir is not None and arrays:
        write_npz(Path(out_dir) / f"{row.method}.npz", arrays)
    return row


def run(
    cfg: CompareConfig,
    out_dir: str | os.PathLike[str] | None = None,
    progress: bool = True,
    log: Callable[[str], None] | None = None,
    *,
    workers: int = 1,
    executor: Executor | None = None,
) -> CompareReport:
    """Run every method of ``cfg``; with ``out_dir``, write ``compare.json`` and ``compare.md``
    there after each method, then the ``.npz`` files' figures. Returns the report (it reads
    like ``compare.json``: ``report["rows"][0]["status"]``).

    By default the methods run one after another in this process, so that their timings are
    comparable. With ``workers`` > 1 (local processes) or an ``executor`` (e.g.
    :func:`collocnode.tools.tasks.dask_executor`) they run as tasks of
    :func:`collocnode.tools.tasks.run_tasks`, each stored in ``<out_dir>/methods/`` as it finishes
    and reused by a rerun into the same directory; methods sharing a machine then share its cores,
    which ``meta["workers"]`` records."""
    import torch

    v.positive_int("workers", workers)
    scenario = scenario_for(cfg.problem)
    threads = cfg.threads if cfg.threads is not None else scenario.threads(cfg.quick)
    if threads is not None:
        torch.set_num_threads(threads)
    data = _load(cfg)
    meta = _meta(cfg, data.system, data.split) | data.evaluation.meta()
    report = CompareReport(cfg.problem, meta)
    if workers > 1 or executor is not None:
        meta["workers"] = "executor" if executor is not None else workers
        return _run_as_tasks(cfg, report, data, out_dir, log, workers, executor, threads)
    stopped = False
    for name in cfg.methods:
        if stopped:
            report.rows.append(
                MethodRow(name, MethodStatus.INTERRUPTED, message="skipped after Ctrl-C")
            )
        else:
            row = run_method(name, data.system, data.split, cfg, progress, out_dir, data.evaluation)
            report.rows.append(row)
            stopped = row.status == MethodStatus.INTERRUPTED
            if log is not None:
                log(summary_line(row))
        _refresh(report, data.evaluation.metric, out_dir)
    if out_dir is not None:
        write_plots(report, out_dir)
    return report


def _refresh(report: CompareReport, metric: str, out_dir: str | os.PathLike[str] | None) -> None:
    """Fill the rows' time to target and rewrite ``compare.json`` and ``compare.md``."""
    times = time_to_target(report.rows, metric)
    for r, value in zip(report.rows, times, strict=True):
        r.time_to_target_s = value
    if out_dir is not None:
        write_report(report, out_dir)


def _run_as_tasks(
    cfg: CompareConfig,
    report: CompareReport,
    data: Any,
    out_dir: str | os.PathLike[str] | None,
    log: Callable[[str], None] | None,
    workers: int,
    executor: Executor | None,
    threads: int | None,
) -> CompareReport:
    # what a method's stored result depends on: the run's settings and the method's own
    # options. The command line is a record, and the method list and the other methods'
    # options are not its settings: a rerun with --resume that adds a method (with options of
    # its own) reuses the stored ones.
    config = asdict(cfg) | {"methods": None, "command": None}
    tasks = [
        Task(
            name,
            (name, cfg),
            settings={
                "method": name,
                "config": config | {"options": {k: o for k, o in cfg.options.items() if k == name}},
                "torch": report.meta.get("torch"),
            },
        )
        for name in cfg.methods
    ]
    rows: dict[str, MethodRow] = {}

    def finished(outcome: TaskOutcome) -> None:
        rows[outcome.key] = row = _row_of(outcome, out_dir)
        if log is not None:
            log(summary_line(row))

    interrupted = False
    try:
        run_tasks(
            method_task,
            tasks,
            store=None if out_dir is None else Path(out_dir) / "methods",
            executor=executor,
            workers=workers,
            threads=threads,
            on_outcome=finished,
        )
    except KeyboardInterrupt:
        interrupted = True
    for name in cfg.methods:
        report.rows.append(
            rows.get(name) or MethodRow(name, MethodStatus.INTERRUPTED, message="not run: Ctrl-C")
        )
    _refresh(report, data.evaluation.metric, out_dir)
    if out_dir is not None and not interrupted:
        write_plots(report, out_dir)
    return report


def _meta(cfg: CompareConfig, system: Any, split: Any) -> dict[str, Any]:
    import torch

    from ...tools import machine
    from ..methods.device import resolve_device

    device = resolve_device(cfg.device)
    gpu = torch.cuda.get_device_name(device) if device.type == "cuda" else None
    return {
        "preset": system.preset,
        "quick": cfg.quick,
        "seed": cfg.seed,
        "noise": 0.0 if cfg.noise is None else cfg.noise,
        "epochs_override": cfg.epochs,
        "budget_s": cfg.budget_s,
        "eval_at_s": list(cfg.eval_at_s),
        "device": str(device),
        "threads": torch.get_num_threads(),
        "n_train": split.train.n_samples,
        "n_total": split.full.n_samples,
        "dt": float(split.full.t[1] - split.full.t[0]) if split.full.n_samples > 1 else None,
        "torch": torch.__version__,
        "python": platform.python_version(),
        "created": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "machine": machine.describe(gpu),
        "load_at_start": machine.load_average(),
        "command": cfg.command,
    }
