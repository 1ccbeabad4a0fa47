"""The command lines under faults: kill -9 and --resume, full disks, a wrong or lost Dask
scheduler, --overwrite by a run that fails. Each would have lost data, hung, or printed
tracebacks before run folders were durable (``benchmarks/fault_cases.py`` runs the same faults
and more, in fresh processes, against any checkout).

A full disk is an injected ENOSPC (the write path monkeypatched), a lost scheduler an executor
that cancels its tasks as a Dask client does; kill -9 is real, by process group.
"""

from __future__ import annotations

import errno
import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from concurrent.futures import Executor, Future
from pathlib import Path

import pytest

from collocnode._cli import compare, train_collocation
from collocnode._cli.run_folder import MARKER
from collocnode.recipes.generic import SystemRecipe
from tests.helpers import http_server

TINY_VDP = ("vdp", "--intervals", "8", "--stages", "2", "--max-iter", "5", "--no-jit", "--quiet")
ROOT = Path(__file__).resolve().parents[2]


def _stderr_lines(capsys) -> list[str]:
    return [line for line in capsys.readouterr().err.splitlines() if line.strip()]


def _one_line(capsys) -> str:
    lines = _stderr_lines(capsys)
    assert len(lines) == 1, lines
    assert "Traceback" not in lines[0]
    return lines[0]


# ---- kill -9 -----------------------------------------------------------------------------------
SLOW_AFTER_TWO = """
import sys, time
import collocnode._experiments.vdp as vdp
from collocnode._cli import train_collocation

real = vdp.robustness_run

def slow(opts):  # seeds 0 and 1 finish; seed 2 is running when the kill comes
    if opts.seed >= 2:
        time.sleep(600)
    return real(opts)

vdp.robustness_run = slow
sys.exit(train_collocation(sys.argv[1:]))
"""


def test_resume_after_kill_9_reruns_exactly_the_missing_seeds(tmp_path):
    out = tmp_path / "run"
    args = [*TINY_VDP, "--seeds", "4", "--workers", "1", "--out", str(out)]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), *sys.path])}
    proc = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(SLOW_AFTER_TWO), *args],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        end = time.monotonic() + 120
        while len(list(out.glob("seeds/seed-*.json"))) < 2:
            assert proc.poll() is None and time.monotonic() < end, "no 2 seeds stored"
            time.sleep(0.1)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the OOM killer, a lost node: no chance to clean
        proc.wait()
    assert sorted(p.name for p in out.glob("seeds/*.json")) == ["seed-0.json", "seed-1.json"]
    assert train_collocation([*args, "--resume"]) == 0
    result = json.loads((out / "result.json").read_text())
    assert result["seeds_completed"] == 4 and result["seeds_reused"] == 2
    assert [r["seed"] for r in result["runs"]] == [0, 1, 2, 3]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]  # nothing stranded beside
    assert not list(out.glob(".staging-*"))


# ---- full disks ---------------------------------------------------------------------------------
def no_space(monkeypatch, when) -> None:
    """Every write of the library whose path ``when`` accepts fails with ENOSPC."""
    from collocnode.tools import _io as io

    real = io.atomic_write_bytes

    def write(path, data):
        if when(Path(path)):
            raise OSError(errno.ENOSPC, "No space left on device", str(path))
        return real(path, data)

    monkeypatch.setattr(io, "atomic_write_bytes", write)


def test_no_space_at_all_is_one_line_and_no_second_traceback(tmp_path, capsys, monkeypatch):
    no_space(monkeypatch, lambda path: True)
    out = tmp_path / "run"
    assert train_collocation([*TINY_VDP, "--out", str(out)]) == 1
    line = _one_line(capsys)
    assert line.startswith("train_collocation.py: error in phase storage: No space left on device")
    assert "model.json" in line  # the first write that failed
    assert line.endswith("(result.json could not be written: No space left on device)")


@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_disk_full_after_one_seed_stops_the_study_and_is_not_science(
    tmp_path, capsys, monkeypatch, workers
):
    out = tmp_path / "run"
    no_space(monkeypatch, lambda path: "seeds" in path.parts and any(out.glob("seeds/*.json")))
    args = [*TINY_VDP, "--seeds", "4", "--workers", workers, "--out", str(out)]
    assert train_collocation(args) == 1
    line = _one_line(capsys)
    assert "error in phase storage: " in line and "No space left on device" in line
    assert "1 seeds are stored; continue with: python scripts/train_collocation.py" in line
    result = json.loads((out / "result.json").read_text())
    assert result["status"] == "failed" and result["phase"] == "storage"
    assert result["seeds_completed"] == 1 and result["seeds_with_errors"] == []
    (row,) = result["runs"]  # the storage error is no seed's: rate and failures are science
    assert result["seeds_failed"] == int(not row["success"])
    assert result["success_rate"] == float(row["success"])  # over the one seed, not over 4
    monkeypatch.undo()  # space again: the study goes on from the stored seed
    assert train_collocation([*args, "--resume"]) in (0, 1)
    result = json.loads((out / "result.json").read_text())
    assert result["status"] == "success" and result["seeds_reused"] == 1
    assert result["seeds_completed"] == 4


def test_a_full_jit_cache_inside_a_seed_stops_the_study(tmp_path, capsys, monkeypatch):
    cache = tmp_path / "cache"
    monkeypatch.setenv("COLLOCNODE_CACHE", str(cache))
    write_text = Path.write_text

    def full(self, *args, **kwargs):
        if str(self).startswith(str(cache)):
            raise OSError(errno.ENOSPC, "No space left on device", str(self))
        return write_text(self, *args, **kwargs)

    monkeypatch.setattr(Path, "write_text", full)
    out = tmp_path / "run"
    tiny = [a for a in TINY_VDP if a != "--no-jit"]
    args = [*tiny, "--jit", "--seeds", "2", "--workers", "1", "--out", str(out)]
    assert train_collocation(args) == 1
    assert "error in phase storage" in _one_line(capsys)
    result = json.loads((out / "result.json").read_text())
    assert result["phase"] == "storage" and result["seeds_with_errors"] == []
    assert result["seeds_failed"] == 0 and result["seeds_completed"] == 0


# ---- a wrong or lost Dask scheduler --------------------------------------------------------------
def test_an_http_server_as_scheduler_is_refused_before_out_exists(tmp_path, capsys):
    pytest.importorskip("distributed")
    out = tmp_path / "run"
    with http_server() as port:
        start = time.monotonic()
        args = [*TINY_VDP, "--seeds", "2", "--scheduler", f"tcp://127.0.0.1:{port}"]
        assert train_collocation([*args, "--out", str(out)]) == 2
    assert time.monotonic() - start < 30
    line = _one_line(capsys)
    assert "is not a Dask scheduler: an HTTP server answers there (HTTP/" in line
    assert not out.exists()


@pytest.mark.torch
def test_compare_refuses_an_http_server_as_scheduler(tmp_path, capsys):
    pytest.importorskip("distributed")
    with http_server() as port:
        start = time.monotonic()
        args = ["vdp", "--methods", "lstm", "--quick", "--scheduler", f"tcp://127.0.0.1:{port}"]
        assert compare([*args, "--out", str(tmp_path / "cmp")]) == 2
    assert time.monotonic() - start < 30
    assert "an HTTP server answers there" in _one_line(capsys)
    assert not (tmp_path / "cmp").exists()


class LosingExecutor(Executor):
    """Runs the first ``keep`` tasks, then cancels the rest, as a Dask client does with the
    tasks it holds when its scheduler is gone."""

    def __init__(self, keep: int) -> None:
        self.keep, self.submitted = keep, 0

    def submit(self, fn, /, *args, **kwargs):
        future: Future = Future()
        self.submitted += 1
        if self.submitted <= self.keep:
            future.set_result(fn(*args, **kwargs))
        else:
            future.cancel()
            future.set_running_or_notify_cancel()
        return future


def test_a_lost_scheduler_reports_the_stored_seeds_and_the_resume_command(
    tmp_path, capsys, monkeypatch
):
    from collocnode.tools import tasks

    monkeypatch.setattr(tasks, "dask_executor", lambda address: LosingExecutor(2))
    out = tmp_path / "run"
    args = [*TINY_VDP, "--seeds", "4", "--out", str(out)]
    assert train_collocation([*args, "--scheduler", "tcp://cluster:8786"]) == 1
    line = _one_line(capsys)
    assert re.search(r"error in phase training: the executor cancelled task 'seed-[23]'", line)
    assert line.endswith(
        f"2 seeds are stored; continue with: python scripts/train_collocation.py "
        f"{' '.join(TINY_VDP)} --seeds 4 --scheduler tcp://cluster:8786 --out {out} --resume"
    )
    result = json.loads((out / "result.json").read_text())
    assert result["status"] == "failed" and result["seeds_completed"] == 2
    assert result["seeds_not_run"] == 2 and result["seeds_with_errors"] == []
    assert train_collocation([*args, "--workers", "1", "--resume"]) == 0
    assert json.loads((out / "result.json").read_text())["seeds_reused"] == 2


# ---- --overwrite by a run that does not succeed --------------------------------------------------
def _earlier_run(out: Path) -> str:
    assert train_collocation([*TINY_VDP, "--out", str(out)]) in (0, 1)
    return json.loads((out / "result.json").read_text())["run_id"]


def test_overwrite_by_a_failing_run_keeps_both_and_says_where(tmp_path, capsys, monkeypatch):
    out = tmp_path / "run"
    earlier = _earlier_run(out)
    capsys.readouterr()
    cache = tmp_path / "cache"
    cache.mkdir()
    cache.chmod(0o777)  # compiled code is not loaded from it: the training fails
    monkeypatch.setenv("COLLOCNODE_CACHE", str(cache))
    tiny = [a for a in TINY_VDP if a != "--no-jit"]
    assert train_collocation([*tiny, "--jit", "--out", str(out), "--overwrite"]) == 1
    line = _one_line(capsys)
    assert json.loads((out / "result.json").read_text())["run_id"] == earlier
    (kept,) = [p for p in tmp_path.iterdir() if p.name.startswith("run-")]
    assert f"what was done is in {kept} (the earlier run stays in {out})" in line
    failed = json.loads((kept / "result.json").read_text())
    assert failed["status"] == "failed" and (kept / MARKER).is_file()


def test_overwrite_by_an_interrupted_run_keeps_the_earlier_run(tmp_path, capsys, monkeypatch):
    out = tmp_path / "run"
    earlier = _earlier_run(out)

    def interrupted(self, *args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(SystemRecipe, "train", interrupted)
    assert train_collocation([*TINY_VDP, "--out", str(out), "--overwrite"]) == 130
    assert json.loads((out / "result.json").read_text())["run_id"] == earlier
    assert f"(the earlier run stays in {out})" in _stderr_lines(capsys)[-1]
