"""What the runners of the seed authors' released code share (``authors_code_fnode.py``,
``authors_code_mbdnode.py``): their dependencies named by the pip package, one run in a
process of its own with a time limit, and the stored record, which keeps the entries of an
earlier call that are not run again."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from collocnode.tools import _machine as machine


def require(needs: Mapping[str, str]) -> None:
    """Exits naming the pip packages of the modules (module -> package) that are missing."""
    missing = [package for module, package in needs.items() if not _importable(module)]
    if missing:
        raise SystemExit(
            f"the authors' code imports {', '.join(missing)}: pip install {' '.join(missing)}"
        )


def run_logged(
    argv: list[str], cwd: Path, timeout_s: float, threads: int
) -> tuple[str, int | None, float]:
    """Runs ``argv`` in ``cwd`` with ``threads`` BLAS/OpenMP threads and no display: its stdout
    and stderr together, its exit code (None when it ran past ``timeout_s``) and its wall time
    [s]."""
    env = dict(
        os.environ,
        OMP_NUM_THREADS=str(threads),
        MKL_NUM_THREADS=str(threads),
        MPLBACKEND="Agg",
        PYTHONUNBUFFERED="1",
    )
    start = time.perf_counter()
    try:
        proc = subprocess.run(
            argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout_s
        )
        log, code = proc.stdout + proc.stderr, proc.returncode
    except subprocess.TimeoutExpired as exc:
        parts = (exc.stdout, exc.stderr)
        log = "".join(p.decode() if isinstance(p, bytes) else p for p in parts if p)
        code = None
    return log, code, round(time.perf_counter() - start, 1)


def finish(run: Any, code: int | None, log: str, keep: Path | None) -> None:
    """Sets ``run.status`` (success | failed (exit N) | timeout | no metrics, from the exit code
    and whether ``run.full_mse`` was found) and ``run.log_tail`` (the log's last lines where it
    did not succeed), and writes the whole log to ``keep/<method>-<test case>.log``."""
    if code is None:
        run.status = "timeout"
    elif code != 0:
        run.status = f"failed (exit {code})"
    else:
        run.status = "success" if run.full_mse is not None else "no metrics"
    run.log_tail = "\n".join(log.splitlines()[-15:]) if run.status != "success" else ""
    if keep is not None:
        keep.mkdir(parents=True, exist_ok=True)
        (keep / f"{run.method}-{run.test_case}.log").write_text(log)


def start_record(
    script: str, argv: list[str] | None, folder: Path, out_file: Path, wanted: Iterable[tuple]
) -> dict:
    """The stored record of one call of ``benchmarks/<script>``: its command, this machine, the
    commit of the authors' ``folder``, and the runs of an earlier call into ``out_file`` that
    are not in ``wanted`` ((method, test case) pairs); the commands, machines and start times of
    both calls are kept."""
    record = {
        **machine.run_record(f"benchmarks/{script}", argv),
        "code_commit": commit(folder),
        "runs": [],
    }
    if out_file.is_file():
        earlier = json.loads(out_file.read_text())
        again = set(wanted)
        record["runs"] = [
            e for e in earlier.get("runs", []) if (e["method"], e["test_case"]) not in again
        ]
        if record["runs"] and earlier.get("command") != record["command"]:
            record["command"] = f"{earlier['command']} && {record['command']}"
        # the runs kept ran where and when the earlier record says: both are kept
        for key in ("machine", "created") if record["runs"] else ():
            if earlier.get(key) and earlier[key] not in str(record[key]):
                record[key] = f"{earlier[key]}; then {record[key]}"
    return record


def _importable(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def commit(folder: Path) -> str | None:
    """The git commit checked out in ``folder`` (None where it is not a git checkout)."""
    try:
        out = subprocess.run(
            ["git", "-C", str(folder), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() or None
