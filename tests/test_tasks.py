"""collocnode.tools.tasks: independent runs on a local process pool and on a real Dask cluster."""

from __future__ import annotations

import json
import os
import signal
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from collocnode.tools.tasks import Task, TaskStore, dask_executor, run_tasks
from collocnode.tools.threads import available_threads, cores, limit_threads


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
    x = float(arg["x"])
    return {"x": x, "square": x * x, "curve": np.arange(3.0) * x, "threads": available_threads()}


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


def test_a_stored_result_of_other_settings_is_refused(tmp_path):
    run_tasks(square, tasks(1), store=tmp_path, workers=1)
    other = [Task("x=0", {"x": 0}, settings={"power": 3})]
    with pytest.raises(ValueError, match="other settings"):
        run_tasks(square, other, store=tmp_path, workers=1)


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
