"""Run several methods on one problem with one data set, one row per method.

Each method runs through `run_method`, which records a
method that does not apply, raises or diverges in its row and goes on. Ctrl-C, wherever it lands
(data, training, scoring), keeps what the interrupted method has, records it as "interrupted",
records the remaining methods as "interrupted" (skipped) and returns the report;
``compare.json`` and ``compare.md`` are rewritten after every method, so a crash leaves the
finished rows on disk. `CompareReport.failed` and `CompareReport.interrupted` name
the methods that did not run to an end.

The problem's scenario (`collocnode.compare._run.scenarios`) gives the data and the scoring;
`collocnode.compare._run.report` writes the files; `collocnode.compare._run.tasks` runs
the methods as tasks.
"""

from __future__ import annotations

import contextlib
import os
import platform
import time
from collections.abc import Callable
from concurrent.futures import Executor
from typing import Any

from ... import _validation as v
from ..methods.status import MethodStatus
from .config import CompareConfig
from .one_method import run_method
from .report import summary_line, write_plots, write_report
from .results import CompareReport, MethodRow, time_to_target
from .scenarios import ScenarioData
from .tasks import run_as_tasks

Log = Callable[[str], None]


def load_data(cfg: CompareConfig) -> tuple[Any, Any]:
    """The system and its data split for ``cfg`` (shrunk when ``quick``)."""
    data = cfg.load()
    return data.system, data.split


def run(
    cfg: CompareConfig,
    out_dir: str | os.PathLike[str] | None = None,
    progress: bool = True,
    log: Log | None = None,
    *,
    workers: int = 1,
    executor: Executor | None = None,
    store: str | os.PathLike[str] | None = None,
) -> CompareReport:
    """Run every method of ``cfg``; with ``out_dir``, write ``compare.json`` and ``compare.md``
    there after each method, then the ``.npz`` files' figures. Returns the report (it reads
    like ``compare.json``: ``report["rows"][0]["status"]``).

    By default the methods run one after another in this process, so that their timings are
    comparable. With ``workers`` > 1 (local processes) or an ``executor`` (e.g.
    `collocnode.tools.tasks.dask_executor`) they run as tasks of
    `collocnode.tools.tasks.run_tasks`, each stored in ``store`` (default
    ``<out_dir>/methods/``) as it finishes and reused by a rerun with the same store; methods
    sharing a machine then share its cores, which ``meta["workers"]`` records.

    Raises:
        StorageError, ExecutorLost: the tasks stopped because a method could not be stored or
            the Dask scheduler was lost; the report of what finished is written first.
    """
    v.positive_int("workers", workers)
    threads = _set_threads(cfg)
    data = cfg.load()
    report = CompareReport(cfg.problem, _meta(cfg, data) | data.evaluation.meta())
    metric = data.evaluation.metric
    if workers == 1 and executor is None:
        _run_serially(cfg, data, report, out_dir, progress, log)
        finished = True
    else:
        report.meta["workers"] = "executor" if executor is not None else workers
        torch_version = report.meta["torch"]
        rows, stop = run_as_tasks(
            cfg, torch_version, out_dir, log, workers, executor, threads, store
        )
        report.rows.extend(rows)
        if stop is not None and not isinstance(stop, KeyboardInterrupt):
            with contextlib.suppress(OSError):  # a full disk: the stop itself says so
                _refresh(report, metric, out_dir)
            raise stop
        _refresh(report, metric, out_dir)
        finished = stop is None
    if out_dir is not None and finished:
        write_plots(report, out_dir)
    return report


def _set_threads(cfg: CompareConfig) -> int | None:
    """Torch's CPU threads for this run: the run's, else its scenario's (None: torch's own)."""
    import torch

    threads = cfg.threads if cfg.threads is not None else cfg.scenario.threads(cfg.quick)
    if threads is not None:
        torch.set_num_threads(threads)
    return threads


def _run_serially(
    cfg: CompareConfig,
    data: ScenarioData,
    report: CompareReport,
    out_dir: str | os.PathLike[str] | None,
    progress: bool,
    log: Log | None,
) -> None:
    """The methods one after another in this process, the files rewritten after each; after
    Ctrl-C the remaining methods are recorded as skipped."""
    stopped = False
    for name in cfg.methods:
        if stopped:
            row = MethodRow(name, MethodStatus.INTERRUPTED, message="skipped after Ctrl-C")
        else:
            row = run_method(name, data.system, data.split, cfg, progress, out_dir, data.evaluation)
            stopped = row.status == MethodStatus.INTERRUPTED
            if log is not None:
                log(summary_line(row))
        report.rows.append(row)
        _refresh(report, data.evaluation.metric, out_dir)


def _refresh(report: CompareReport, metric: str, out_dir: str | os.PathLike[str] | None) -> None:
    """Fill the rows' time to target and rewrite ``compare.json`` and ``compare.md``."""
    times = time_to_target(report.rows, metric)
    for r, value in zip(report.rows, times, strict=True):
        r.time_to_target_s = value
    if out_dir is not None:
        write_report(report, out_dir)


def _meta(cfg: CompareConfig, data: ScenarioData) -> dict[str, Any]:
    """What ``compare.json``'s ``meta`` records of the run: its settings, its data, the device
    and the machine it ran on, and the command that reruns it."""
    import torch

    from ...tools import _machine as machine
    from ..methods.device import resolve_device

    device = resolve_device(cfg.device)
    gpu = torch.cuda.get_device_name(device) if device.type == "cuda" else None
    split = data.split
    return {
        "preset": data.system.preset,
        "quick": cfg.quick,
        "seed": cfg.seed,
        "noise": 0.0 if cfg.noise is None else cfg.noise,
        "epochs_override": cfg.epochs,
        "budget_s": cfg.budget_s,
        "eval_at_s": list(cfg.eval_at_s),
        "device": str(device),
        "threads": torch.get_num_threads(),
        "state_names": list(data.system.state_names),
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
