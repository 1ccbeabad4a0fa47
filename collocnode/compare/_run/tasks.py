"""The methods of a comparison run as tasks of `collocnode.tools.tasks.run_tasks`: on
local processes or a Dask cluster, each stored in a store folder (``<out_dir>/methods/`` unless
told otherwise; the command line puts it in the run folder itself, where it is durable) as it
finishes and reused by a rerun into the same directory (``compare.py --resume``).

A task loads the data itself (the scenario's data depend on the run's settings only, so every
task has the same) and sends back its row's fields and the arrays of its ``<method>.npz``.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import asdict, fields
from pathlib import Path
from typing import Any

import numpy as np

from ...tools._io import StorageError, write_npz
from ...tools.tasks import ExecutorLost, Task, TaskOutcome, run_tasks
from ..methods.status import MethodStatus
from .config import CompareConfig
from .one_method import run_method
from .report import summary_line
from .results import MethodRow

ARRAY_PREFIX = "array_"  # a method task's arrays (its .npz) among its row's fields


def method_task(arg: tuple[str, CompareConfig]) -> dict[str, Any]:
    """One method as a task: the row's fields under ``"row"`` and the arrays of its ``.npz``
    under ``array_<name>``. A method stopped by Ctrl-C raises KeyboardInterrupt, so that it is
    not stored."""
    name, cfg = arg
    data = cfg.load()
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


def method_tasks(cfg: CompareConfig, torch_version: str | None) -> list[Task]:
    """One task per method of ``cfg``, each with the settings its stored result depends on:
    the run's settings and the method's own options. The command line is a record, and the
    method list and the other methods' options are not its settings: a rerun with --resume
    that adds a method (with options of its own) reuses the stored ones."""
    config = asdict(cfg) | {"methods": None, "command": None}
    return [
        Task(
            name,
            (name, cfg),
            settings={
                "method": name,
                "config": config | {"options": {k: o for k, o in cfg.options.items() if k == name}},
                "torch": torch_version,
            },
        )
        for name in cfg.methods
    ]


def row_of(outcome: TaskOutcome, out_dir: str | os.PathLike[str] | None) -> MethodRow:
    """A task's row (``FAILED`` with the task's error if it has no result); its arrays go to
    ``<out_dir>/<method>.npz`` as in a serial run."""
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


def run_as_tasks(
    cfg: CompareConfig,
    torch_version: str | None,
    out_dir: str | os.PathLike[str] | None,
    log: Callable[[str], None] | None,
    workers: int,
    executor: Executor | None,
    threads: int | None,
    store: str | os.PathLike[str] | None = None,
) -> tuple[list[MethodRow], BaseException | None]:
    """The rows of ``cfg``'s methods, in its order, run as tasks and stored in ``store``
    (default ``<out_dir>/methods``); and what stopped them early, if anything: Ctrl-C (a
    method not run then is ``INTERRUPTED``), a `StorageError` or
    an `ExecutorLost` (a method not run then is ``FAILED``,
    "not run")."""
    rows: dict[str, MethodRow] = {}

    def finished(outcome: TaskOutcome) -> None:
        rows[outcome.key] = row = row_of(outcome, out_dir)
        if log is not None:
            log(summary_line(row))

    if store is None and out_dir is not None:
        store = Path(out_dir) / "methods"
    stop: BaseException | None = None
    try:
        run_tasks(
            method_task,
            method_tasks(cfg, torch_version),
            store=store,
            executor=executor,
            workers=workers,
            threads=threads,
            on_outcome=finished,
        )
    except (KeyboardInterrupt, StorageError, ExecutorLost) as exc:
        stop = exc
    if isinstance(stop, KeyboardInterrupt):
        skipped, why = MethodStatus.INTERRUPTED, "not run: Ctrl-C"
    else:
        skipped, why = MethodStatus.FAILED, f"not run: {type(stop).__name__}"
    ordered = [rows.get(n) or MethodRow(n, skipped, message=why) for n in cfg.methods]
    return ordered, stop
