"""``benchmarks/fault_cases.py``: its judges on made-up outcomes (a clear refusal, a traceback,
a hang, a lost seed, storage errors counted as science), its servers, and one real case."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from load_benchmark import load_benchmark

fc = load_benchmark("fault_cases")
Observed = fc.Observed


def obs(code, stderr="", seconds=1.0, stdout=""):
    return Observed(code, seconds, stdout, stderr)


@pytest.mark.parametrize(
    ("observed", "outcome"),
    [
        (obs(2, "x.py: error: --scheduler 'tcp://h:1' is an HTTP server\n"), "clear"),
        (obs(None, seconds=45.0), "hang"),
        (obs(2, "x.py: error: --scheduler is an HTTP server\n", seconds=31.0), "hang"),
        (obs(1, "Traceback (most recent call last):\n  File x\nMemoryError\n"), "traceback"),
        (obs(1, "x.py: error in phase training: scheduler is an HTTP server\n"), "traceback"),
        (obs(2, "x.py: error: scheduler: Unable to allocate 3.07 EiB\n"), "traceback"),
        (obs(2, "line one about HTTP scheduler\nline two\n"), "traceback"),
    ],
)
def test_a_refusal_is_clear_only_as_one_line_exit_2_within_the_limit(observed, outcome):
    assert fc.refusal(observed, "scheduler", "HTTP", limit=30.0).outcome == outcome


def test_a_resume_that_leaves_finished_seeds_behind_is_data_lost(tmp_path):
    lab = fc.Lab(Path("."), tmp_path)
    out = tmp_path / "run"
    refused = obs(2, "x.py: error: --resume: --out 'run' holds no earlier run\n")
    assert fc.judge_resume(lab, refused, out, total=6, stored=2).outcome == "data lost"
    out.mkdir()
    (out / "result.json").write_text(json.dumps({"seeds_completed": 6, "seeds_reused": 2}))
    assert fc.judge_resume(lab, obs(0), out, total=6, stored=2).outcome == "clear"
    # every seed run again: nothing lost, but not what --resume promises
    (out / "result.json").write_text(json.dumps({"seeds_completed": 6, "seeds_reused": 0}))
    assert fc.judge_resume(lab, obs(0), out, total=6, stored=2).outcome == "silent"


def test_storage_errors_counted_as_failed_seeds_are_silent():
    science = {"status": "failed", "phase": "storage", "seeds_completed": 1,
               "seeds_failed": 1, "seeds_with_errors": []}  # fmt: skip
    line = "train_collocation.py: error in phase storage: No space left on device\n"
    assert fc.judge_storage(obs(1, line), science, seeds=True).outcome == "clear"
    counted = {"status": "success", "seeds_completed": 0, "seeds_failed": 2,
               "seeds_with_errors": [{"seed": 0, "error": "JITError: ..."}]}  # fmt: skip
    assert fc.judge_storage(obs(0), counted, seeds=True).outcome == "silent"
    wrong_phase = {**science, "phase": "training"}
    assert fc.judge_storage(obs(1, line), wrong_phase, seeds=True).outcome == "silent"
    two = obs(1, "Traceback (most recent call last):\nOSError\nDuring handling\nTraceback\n")
    assert fc.judge_storage(two, {}, seeds=False).outcome == "traceback"


def test_the_servers_answer_as_they_say():
    import socket

    with fc.bad_request_server() as port, socket.create_connection(("127.0.0.1", port)) as s:
        s.sendall(b"\x00\x01binary")
        assert s.recv(100).startswith(b"HTTP/1.1 400")
    with fc.silent_server() as port, socket.create_connection(("127.0.0.1", port)) as s:
        s.settimeout(0.3)
        with pytest.raises(TimeoutError):
            s.recv(100)


def test_the_cases_are_listed_once_each():
    labels = [c.label for c in fc.CASES]
    assert len(labels) == len(set(labels)) == 34
    assert {c.group for c in fc.CASES} == {
        "kill -9", "signals", "--overwrite", "--scheduler", "ADMM", "model files", "data",
        "JIT cache", "NLP size", "--resume", "full disk",
    }  # fmt: skip


def test_one_case_runs_against_this_checkout(tmp_path):
    (case,) = [c for c in fc.CASES if c.name == "a duplicate key"]
    result = fc.run_case(case, fc.HERE, tmp_path)
    assert result["outcome"] == "clear", result["note"]
    assert "duplicate key 'format_version'" in result["note"]
