"""The scripts as a user runs them: malformed arguments give exit code 2 and one line on stderr
naming the bad value (a traceback only with --debug); a tiny run writes result.json and plots.

The subprocesses run in one module fixture, two at a time; further malformed cases go through
the script's entry point in-process, which costs no interpreter start-up.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from collocnode import SolverStatus
from collocnode._cli.run_folder import MARKER

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = {
    "train": ROOT / "scripts" / "train_collocation.py",
    "compare": ROOT / "scripts" / "compare.py",
}
BLOCKER = "BLOCKER"  # replaced by the path of a regular file
OUT = "OUT"  # replaced by a fresh output directory
TINY = ("vdp", "--intervals", "20", "--stages", "3", "--max-iter", "30", "--no-jit", "--quiet")


@dataclass(frozen=True)
class Run:
    script: str
    args: tuple[str, ...]
    expect: tuple[str, ...] = ()  # substrings of the one error line (the bad value, the field)
    bug: str = ""  # a known bug: the case is expected to fail until it is fixed


def _bad(script: str, *args: str, expect: tuple[str, ...], bug: str = "") -> Run:
    return Run(script, args, expect, bug)


# run as subprocesses: the script file, the interpreter's exit code, the real stderr
MALFORMED = {
    "train-unknown-problem": _bad("train", "nosuch", expect=("unknown problem 'nosuch'", "vdp")),
    "train-intervals-0": _bad("train", "vdp", "--intervals", "0", expect=("intervals", "0")),
    "train-stages-negative": _bad("train", "vdp", "--stages", "-1", expect=("stages", "-1")),
    "train-tol-0": _bad("train", "vdp", "--tol", "0", expect=("tol", "0.0")),
    "train-noise-negative": _bad("train", "vdp", "--noise", "-1", expect=("noise", "-1.0")),
    "train-noise-nan": _bad("train", "vdp", "--noise", "nan", expect=("noise", "nan")),
    "train-unknown-option": _bad("train", "vdp", "--bogus", expect=("--bogus",)),
    "train-out-under-file": _bad(
        "train", "vdp", "--out", f"{BLOCKER}/sub", expect=("--out", f"{BLOCKER}/sub")
    ),
    "compare-unknown-problem": _bad("compare", "nosuch", expect=("unknown problem 'nosuch'",)),
    "compare-noise-nan": _bad("compare", "vdp", "--noise", "nan", expect=("noise", "nan")),
    "compare-unknown-option": _bad("compare", "vdp", "--bogus", expect=("--bogus",)),
    "compare-out-under-file": _bad(
        "compare", "vdp", "--out", f"{BLOCKER}/sub", expect=("--out", f"{BLOCKER}/sub")
    ),
}
# more of the same, through the script's entry point in this process (no interpreter start-up)
IN_PROCESS = {
    "intervals-text": _bad("train", "vdp", "--intervals", "abc", expect=("'abc'",)),
    "tol-inf": _bad("train", "vdp", "--tol", "inf", expect=("tol", "inf")),
    "seed-negative": _bad("train", "vdp", "--seed", "-3", expect=("seed", "-3")),
    "out-is-file": _bad("train", "vdp", "--out", BLOCKER, expect=("--out", BLOCKER)),
    "qvm-strategy": _bad("train", "qvm", "--strategy", "IV", expect=("strategy", "'IV'")),
    "qvm-duration": _bad("train", "qvm", "--duration", "0", expect=("duration", "0")),
    # validated only once the run has started: a traceback and exit code 1 today
    "backend": _bad(
        "train",
        "vdp",
        "--backend",
        "ipopt2",
        "--out",
        OUT,
        expect=("backend", "'ipopt2'"),
    ),
    "activation-not-c2": _bad(
        "train",
        "vdp",
        "--activation",
        "relu",
        "--out",
        OUT,
        expect=("activation", "'relu'"),
    ),
    "mumps-ordering": _bad(
        "train",
        "vdp",
        "--mumps-ordering",
        "nested",
        "--out",
        OUT,
        expect=("mumps_ordering", "'nested'"),
    ),
    "stages-too-many": _bad(
        "train",
        "vdp",
        "--stages",
        "300",
        "--out",
        OUT,
        expect=("stages", "300"),
    ),
    "print-level": _bad(
        "train",
        "vdp",
        "--print-level",
        "-1",
        "--out",
        OUT,
        expect=("print_level", "-1"),
    ),
    "no-problem": _bad(
        "train",
        expect=("PROBLEM",),
    ),
}
DEBUG = {
    "train-debug": Run("train", ("vdp", "--intervals", "0", "--debug"), ("intervals",)),
    "compare-debug": Run("compare", ("vdp", "--noise", "-1", "--debug"), ("noise",)),
}
SUCCESS = {"train-tiny": Run("train", (*TINY, "--out", OUT))}


@dataclass(frozen=True)
class Result:
    returncode: int
    stdout: str
    stderr: str
    out: Path
    blocker: Path


def _execute(run: Run, workdir: Path) -> Result:
    workdir.mkdir(parents=True)
    blocker = workdir / "a-file"
    blocker.write_text("not a directory")
    out = workdir / "out"
    args = [a.replace(BLOCKER, str(blocker)).replace(OUT, str(out)) for a in run.args]
    # the scripts' default output directory is relative: run inside the scratch directory
    proc = subprocess.run(
        [sys.executable, str(SCRIPTS[run.script]), *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=workdir,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
    )
    return Result(proc.returncode, proc.stdout, proc.stderr, out, blocker)


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> dict[str, Result]:
    base = tmp_path_factory.mktemp("cli")
    runs = {**MALFORMED, **DEBUG, **SUCCESS}
    runs = {k: r for k, r in runs.items() if SCRIPTS[r.script].exists()}
    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = {k: pool.submit(_execute, r, base / k) for k, r in runs.items()}
        return {k: f.result() for k, f in futures.items()}


def _case(key: str, run: Run):
    marks = []
    if run.bug:
        marks.append(pytest.mark.xfail(strict=True, reason=f"known bug: {run.bug}"))
    if not SCRIPTS[run.script].exists():
        marks.append(pytest.mark.skip(reason=f"{SCRIPTS[run.script].name} does not exist"))
    return pytest.param(key, marks=marks, id=key)


@pytest.mark.parametrize("key", [_case(k, r) for k, r in MALFORMED.items()])
def test_malformed_arguments_exit_2_with_one_line(key, results):
    run, res = MALFORMED[key], results[key]
    lines = res.stderr.strip().splitlines()
    assert res.returncode == 2, res.stderr[-2000:]
    assert len(lines) == 1, res.stderr[-2000:]
    assert "Traceback" not in res.stderr
    line = lines[0]
    assert line.startswith(f"{SCRIPTS[run.script].name}: error: "), line
    for text in run.expect:
        assert text.replace(BLOCKER, str(res.blocker)) in line, line
    assert not (res.out / "result.json").exists()


@pytest.mark.parametrize("key", [_case(k, r) for k, r in IN_PROCESS.items()])
def test_more_malformed_arguments_in_process(key, tmp_path, capsys, monkeypatch):
    from collocnode._cli import train_collocation

    run = IN_PROCESS[key]
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    out = tmp_path / "out"
    monkeypatch.chdir(tmp_path)  # the default output directory is relative
    args = [a.replace(BLOCKER, str(blocker)).replace(OUT, str(out)) for a in run.args]
    try:
        code = train_collocation(args)
    except SystemExit as exc:  # argparse's own errors
        code = exc.code
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert code == 2, err[-2000:]
    assert len(lines) == 1 and lines[0].startswith("train_collocation.py: error: "), err
    for text in run.expect:
        assert text.replace(BLOCKER, str(blocker)) in lines[0], lines[0]
    assert not (out / "result.json").exists()


@pytest.mark.parametrize("key", [_case(k, r) for k, r in DEBUG.items()])
def test_debug_shows_the_traceback(key, results):
    run, res = DEBUG[key], results[key]
    assert res.returncode != 0
    assert "Traceback (most recent call last)" in res.stderr
    last = res.stderr.strip().splitlines()[-1]
    assert last.startswith("ValueError: ") and run.expect[0] in last, last


@pytest.fixture(scope="module")
def tiny(results) -> tuple[Result, dict]:
    res = results["train-tiny"]
    assert res.returncode in (0, 1), res.stderr[-3000:]
    return res, json.loads((res.out / "result.json").read_text())


def test_tiny_run_writes_an_honest_result(tiny):
    res, result = tiny
    assert res.stderr.strip() == ""
    status = SolverStatus(result["status"])  # one of the enum's values
    # the exit code says whether training converged, and agrees with the file
    assert (res.returncode == 0) == status.ok
    assert result["problem"] == "vdp"
    assert result["command"].startswith("python scripts/train_collocation.py vdp ")
    assert "cores" in result["machine"]
    assert result["load_at_start"] is None or result["load_at_start"] >= 0
    assert result["created"][:2] == "20"
    settings = result["settings"]
    assert (settings["intervals"], settings["stages"], settings["max_iter"]) == (20, 3, 30)
    assert settings["jit"] is False and settings["print_level"] == 0
    assert result["mesh"] == {"intervals": 20, "stages": [3], "nodes": 61}
    assert result["n_params"] == 102
    assert result["n_variables"] == 61 * 2 + 102
    assert result["n_constraints"] == 60 * 2
    assert 0 < result["iterations"] <= 30
    assert isinstance(result["ipopt_status"], str) and result["ipopt_status"]
    assert result["objective"] > 0
    assert set(result["wall_time_s"]) >= {"build", "ipopt", "callbacks", "total"}
    assert all(t >= 0 for t in result["wall_time_s"].values())
    for key in ("train_rmse", "extrapolation_rmse", "vector_field_rmse"):
        assert result[key] is None or result[key] >= 0
    assert result["nnz_jacobian"] > 0 and result["nnz_hessian"] > 0
    assert status.value in res.stdout  # the human summary names the status too


def test_tiny_run_writes_the_plots(tiny):
    res, _ = tiny
    for name in ("trajectories.png", "vector_field_error.png", "objective.png"):
        data = (res.out / name).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n", name
    hidden = [p.name for p in res.out.iterdir() if p.name.startswith(".")]
    assert hidden == [MARKER], f"temporary files: {hidden}"  # the run folder's marker only


def test_result_files_get_the_usual_permissions(tiny):
    res, _ = tiny
    umask = os.umask(0)
    os.umask(umask)
    assert (res.out / "result.json").stat().st_mode & 0o777 == 0o666 & ~umask
