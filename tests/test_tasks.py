"""collocnode.tools.tasks: independent runs on a local process pool and on a real Dask cluster."""

from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

from collocnode.tools._io import StorageError
from collocnode.tools._threads import available_threads, cores, limit_threads
from collocnode.tools.tasks import ExecutorLost, Task, TaskStore, dask_executor, run_tasks


# ---- task functions (module level: workers import them by name) ----------------------------
def square(arg: dict) -> dict:
    if arg.get("fail"):
        raise RuntimeError(f"task {arg['x']} fails on purpose")
    if arg.get("die"):
        marker = arg["die"]
        if not os.path.exists(marker):  # die once: the retry succeeds
            open(marker, "w").close()
            os.kill(os.getpid(), signal.SIGKILL)
    if arg.get("always_die"):
        os.kill(os.getpid(), signal.SIGKILL)
    time.sleep(arg.get("sleep", 0.0))
    x = float(arg["x"])
    return {"x": x, "square": x * x, "curve": np.arange(3.0) * x, "threads": available_threads()}


def full_disk(arg: dict) -> dict:
    """A task whose own write (a cache, a temporary file) finds the disk full."""
    if arg.get("full"):
        raise OSError(errno.ENOSPC, "No space left on device", "/cache/library.so")
    return square(arg)


def torch_threads(arg: object) -> dict:
    import torch  # first imported here, inside the task, as the comparison's methods do

    return {"torch": torch.get_num_threads(), "budget": available_threads()}


def tasks(n: int, **extra: object) -> list[Task]:
    return [Task(f"x={k}", {"x": k, **extra}, settings={"power": 2}) for k in range(n)]


# ---- the runner, in this process and on a local pool ----------------------------------------
@pytest.mark.parametrize("workers", [1, 2])
def test_results_are_stored_as_they_finish_and_reused(tmp_path, workers):
    out = run_tasks(square, tasks(4), store=tmp_path, workers=workers)
    assert [o.key for o in out] == [f"x={k}" for k in range(4)]
    assert all(o.status == "finished" and o.attempts == 1 for o in out)
    assert [o.result["square"] for o in out] == [0.0, 1.0, 4.0, 9.0]
    np.testing.assert_array_equal(out[3].result["curve"], [0.0, 3.0, 6.0])
    record = json.loads((tmp_path / "x=3.json").read_text())
    assert record["status"] == "finished" and record["arrays"] == ["curve"]
    # a rerun takes every task from the store and calls nothing
    again = run_tasks(square, tasks(4, fail=True), store=tmp_path, workers=workers)
    assert all(o.reused and o.status == "finished" for o in again)
    np.testing.assert_array_equal(again[2].result["curve"], [0.0, 2.0, 4.0])


def test_a_failing_task_is_reported_and_the_others_finish(tmp_path):
    ts = [*tasks(3), Task("bad", {"x": 9, "fail": True}, settings={"power": 2})]
    out = {o.key: o for o in run_tasks(square, ts, store=tmp_path, workers=2)}
    assert out["bad"].status == "failed" and out["bad"].result is None
    assert out["bad"].error == "RuntimeError: task 9 fails on purpose"
    assert all(out[f"x={k}"].status == "finished" for k in range(3))
    # failures are not stored: the next run tries the task again
    assert not (tmp_path / "bad.json").exists()


def test_a_killed_worker_is_retried_once_then_reported(tmp_path):
    marker = str(tmp_path / "died-once")
    ts = [
        *tasks(2),
        Task("dies-once", {"x": 5, "die": marker}),
        Task("always-dies", {"x": 6, "always_die": True}),
    ]
    out = {o.key: o for o in run_tasks(square, ts, workers=2)}
    assert out["dies-once"].status == "finished" and out["dies-once"].attempts == 2
    assert out["always-dies"].status == "failed" and out["always-dies"].attempts == 2
    assert "worker lost 2 times" in out["always-dies"].error
    # tasks that shared the broken pool may have been lost with it; each is retried
    assert all(out[f"x={k}"].status == "finished" for k in range(2))


def test_a_stored_result_of_other_settings_is_refused_naming_the_difference(tmp_path):
    run_tasks(square, tasks(1), store=tmp_path, workers=1)
    other = [Task("x=0", {"x": 0}, settings={"power": 3, "scale": {"a": 1}})]
    with pytest.raises(ValueError, match="other settings") as err:
        run_tasks(square, other, store=tmp_path, workers=1)
    assert str(err.value) == (
        f"stored task {str(tmp_path / 'x=0.json')!r} was made with other settings: power = 2 "
        "there, 3 here; scale (not in the stored task); continue it with its own settings or "
        "use another output directory"
    )


# ---- faults that are not a task's outcome: a full disk, a lost executor ---------------------
@pytest.mark.parametrize("workers", [1, 2])
def test_a_task_that_finds_the_disk_full_stops_the_run_and_is_no_failure(tmp_path, workers):
    # the tasks after it take 2 s, so that one started beside it (with 2 workers, while it
    # fails) cannot finish before its failure stops the run, on a loaded machine too
    later = [Task(t.key, {**t.arg, "sleep": 2.0}, settings=t.settings) for t in tasks(4)[2:]]
    ts = [*tasks(2), Task("full", {"x": 5, "full": True}, settings={"power": 2}), *later]
    seen = []
    with pytest.raises(StorageError, match=r"task 'full': No space left on device: '/cache/"):
        run_tasks(full_disk, ts, store=tmp_path, workers=workers, on_outcome=seen.append)
    # what finished before it is stored; a task still running beside it is stopped (with 2
    # workers, x=1 may be); no task is recorded as failed, and none after it starts
    finished = {o.key for o in seen}
    if workers == 1:
        assert finished == {"x=0", "x=1"}
    else:
        assert finished and finished <= {"x=0", "x=1"}
    assert all(o.status == "finished" for o in seen)
    assert {p.stem for p in tmp_path.glob("*.json")} == finished


@pytest.mark.parametrize("workers", [1, 2])
def test_a_store_that_cannot_be_written_stops_the_run(tmp_path, workers, monkeypatch):
    from collocnode.tools import _io as io

    real = io.atomic_write_bytes

    def space_for_one(path, data):
        if Path(path).suffix == ".json" and list(tmp_path.glob("*.json")):
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(path, data)

    monkeypatch.setattr(io, "atomic_write_bytes", space_for_one)
    seen = []
    with pytest.raises(StorageError, match="No space left on device"):
        run_tasks(square, tasks(4), store=tmp_path, workers=workers, on_outcome=seen.append)
    assert len(seen) == 1 and seen[0].status == "finished"  # the unstored one is not recorded
    assert [p.stem for p in tmp_path.glob("*.json")] == [seen[0].key]


class LosingExecutor(Executor):
    """Runs the first ``keep`` tasks, then cancels every later one, as a Dask client does with
    the tasks it holds when it loses its scheduler."""

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


def test_a_lost_executor_stops_the_run_and_what_finished_stays_stored(tmp_path):
    with pytest.raises(ExecutorLost, match=r"the executor cancelled task 'x=2'"):
        run_tasks(square, tasks(4), store=tmp_path, executor=LosingExecutor(2), workers=1)
    assert sorted(p.name for p in tmp_path.glob("*.json")) == ["x=0.json", "x=1.json"]
    again = run_tasks(square, tasks(4), store=tmp_path, workers=1)
    assert [o.reused for o in again] == [True, True, False, False]


# ---- signals: Ctrl-C at the terminal and SIGTERM to the parent ------------------------------
NAPS = """
import time

def nap(arg):
    if arg["seconds"] > 5:
        print("long task started", flush=True)
    end = time.monotonic() + arg["seconds"]
    while time.monotonic() < end:
        time.sleep(0.05)
    return {"slept": arg["seconds"]}
"""

PARENT = """
import sys, time
from collocnode._cli.signals import sigterm_as_interrupt
from collocnode.tools.tasks import Task, run_tasks
from naps import nap

tasks = [Task("short", {"seconds": 0.1}), Task("long", {"seconds": 120})]
try:
    with sigterm_as_interrupt():
        run_tasks(nap, tasks, workers=2, store=sys.argv[1],
                  on_outcome=lambda o: print("done", o.key, flush=True))
except KeyboardInterrupt:
    print("interrupted", flush=True)
    sys.exit(130)
"""


def _default_sigint() -> None:  # as from a terminal, whatever pytest inherited
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
@pytest.mark.parametrize("how", ["sigterm-to-parent", "ctrl-c-to-group"])
def test_a_stop_reaches_running_local_workers_and_idle_ones_stay_quiet(tmp_path, how):
    """SIGTERM to the parent (a batch system's stop) reaches the worker in its 120 s task, which
    stops at once; Ctrl-C at the terminal signals every process of the group, and the idle
    worker (its task done) ignores it instead of dying with a traceback."""
    (tmp_path / "naps.py").write_text(textwrap.dedent(NAPS))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path])}
    proc = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(PARENT), str(tmp_path / "store")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        start_new_session=True,
        preexec_fn=_default_sigint,
    )
    try:
        seen = []
        for line in proc.stdout:
            seen.append(line.strip())
            if "long task started" in seen and "done short" in seen:
                break
        time.sleep(0.5)  # the short task's worker is idle now
        sent = time.monotonic()
        if how == "sigterm-to-parent":
            proc.send_signal(signal.SIGTERM)
        else:
            os.killpg(proc.pid, signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert time.monotonic() - sent < 30, "the running task was awaited to its end"
    assert proc.returncode == 130 and "interrupted" in stdout
    assert "Traceback" not in stderr, stderr
    assert [p.name for p in (tmp_path / "store").glob("*.json")] == ["short.json"]


def test_a_damaged_store_is_one_clear_error(tmp_path):
    (tmp_path / "x=0.json").write_text("{not json")
    with pytest.raises(ValueError, match="cannot be read"):
        TaskStore(tmp_path).load(tasks(1)[0])


def test_any_executor_is_accepted_and_threads_are_shared_out(tmp_path):
    with ThreadPoolExecutor(2) as pool:
        out = run_tasks(square, tasks(3), executor=pool, workers=2, threads=1)
    assert [o.result["threads"] for o in out] == [1, 1, 1]
    # a local pool of all cores gives each task one core's share
    out = run_tasks(square, tasks(2), workers=cores())
    assert all(o.result["threads"] == 1 for o in out)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"workers": 0}, "workers"),
        ({"threads": 0}, "threads"),
        ({"retries": -1}, "retries"),
        ({"executor": "tcp://x:1"}, "executor must be a concurrent.futures.Executor"),
    ],
)
def test_bad_settings_are_refused_before_any_work(kwargs, match):
    with pytest.raises((ValueError, TypeError), match=match):
        run_tasks(square, tasks(1), **kwargs)


@pytest.mark.parametrize("key", ["", "../escape", "a/b", ".hidden", "x" * 129, 3])
def test_task_keys_name_a_file_in_the_store(key):
    with pytest.raises(ValueError, match="task key"):
        Task(key, None)


def test_duplicate_keys_are_refused():
    with pytest.raises(ValueError, match="unique"):
        run_tasks(square, [Task("a", {"x": 1}), Task("a", {"x": 2})], workers=1)


def test_limit_threads_sets_and_restores_the_budget():
    from threadpoolctl import threadpool_info

    before = available_threads()
    with limit_threads(1):
        assert available_threads() == 1
        assert all(p["num_threads"] == 1 for p in threadpool_info())
    assert available_threads() == before == cores()


def test_tasks_on_threads_of_one_process_each_keep_their_own_budget():
    import threading

    a_set, b_set, a_left = threading.Event(), threading.Event(), threading.Event()
    seen = {}

    def task_a():
        with limit_threads(1):
            a_set.set()
            b_set.wait(5)
        a_left.set()  # leaving restores the budget before it, in this thread only

    def task_b():
        a_set.wait(5)
        with limit_threads(3):
            b_set.set()
            a_left.wait(5)
            seen["b"] = available_threads()

    threads = [threading.Thread(target=task_a), threading.Thread(target=task_b)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert seen == {"b": 3}
    assert available_threads() == cores()


@pytest.mark.torch
def test_a_task_that_imports_torch_gets_its_share_of_threads():
    # fresh worker processes: torch is first imported inside the task, after the limit is set
    out = run_tasks(torch_threads, [Task("a", 0), Task("b", 1)], workers=2, threads=1)
    assert [o.result for o in out] == [{"torch": 1, "budget": 1}] * 2


# ---- a real Dask cluster (the conftest's ``cluster``) -------------------------------------------
def test_tasks_run_on_a_dask_cluster(cluster, tmp_path):
    executor = dask_executor(cluster.scheduler_address)
    try:
        ts = [*tasks(4), Task("bad", {"x": 1, "fail": True}, settings={"power": 2})]
        out = {o.key: o for o in run_tasks(square, ts, executor=executor, store=tmp_path)}
    finally:
        executor.shutdown()
    assert [out[f"x={k}"].result["square"] for k in range(4)] == [0.0, 1.0, 4.0, 9.0]
    assert out["bad"].status == "failed" and "fails on purpose" in out["bad"].error
    # two one-thread workers share this machine: each task gets half of its cores
    assert {out[f"x={k}"].result["threads"] for k in range(4)} == {max(1, cores() // 2)}
    assert sorted(p.name for p in tmp_path.glob("*.json")) == [f"x={k}.json" for k in range(4)]


def test_workers_that_cannot_import_a_module_are_named(cluster):
    with pytest.raises(ValueError, match=r"2 of 2 workers cannot import no_such_module_here"):
        dask_executor(cluster.scheduler_address, modules=("collocnode", "no_such_module_here"))


def test_an_unreachable_scheduler_is_one_clear_error():
    pytest.importorskip("distributed")
    with pytest.raises(ValueError, match=r"scheduler = 'tcp://127.0.0.1:9' cannot be reached"):
        dask_executor("tcp://127.0.0.1:9", timeout=1.0)
