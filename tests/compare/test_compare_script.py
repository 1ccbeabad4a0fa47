"""``scripts/compare.py`` and the harness: valid JSON/Markdown, failures isolated, bad input
exits with code 2 and one line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from collocnode._cli.run_folder import MARKER
from collocnode.compare._run import CompareConfig, markdown, run
from collocnode.compare._run.scenarios import COLUMNS

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "compare.py"


def _script(*args: str, timeout: float = 240) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
        env=env,
    )


def test_quick_run_writes_valid_json_and_markdown(tmp_path):
    out = tmp_path / "cmp"
    proc = _script(
        "vdp",
        "--methods",
        "fnode,snde,lstm",
        "--quick",
        "--epochs",
        "3",
        "--out",
        str(out),
        "--no-progress",
        "--threads",
        "1",
        "--set",
        "fnode.targets=fd",
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads((out / "compare.json").read_text())
    rows = {r["method"]: r for r in report["rows"]}
    assert list(rows) == ["fnode", "snde", "lstm"]
    for key in COLUMNS:
        assert all(key in r for r in rows.values())
    assert rows["fnode"]["status"] == "success" and rows["fnode"]["epochs"] == 3
    assert rows["fnode"]["options"]["targets"] == "fd"
    assert rows["fnode"]["test_mse"] > 0 and rows["fnode"]["n_params"] > 0
    # both windows in every row: the full window is the sample-weighted mean of the two
    fnode = rows["fnode"]
    low, high = sorted((fnode["train_mse"], fnode["test_mse"]))
    assert low <= fnode["full_mse"] <= high
    assert rows["snde"]["status"] == "not applicable" and "constraint" in rows["snde"]["message"]
    assert report["meta"]["quick"] is True and report["meta"]["n_train"] <= 200
    # the command that reruns it and the machine that ran it, for the reproduction report
    assert report["meta"]["command"].startswith("python scripts/compare.py vdp ")
    assert "--set fnode.targets=fd" in report["meta"]["command"]
    assert "cores" in report["meta"]["machine"]
    assert report["meta"]["load_at_start"] is None or report["meta"]["load_at_start"] >= 0
    md = (out / "compare.md").read_text()
    assert "| method | status |" in md and "| fnode | success |" in md
    assert "not applicable" in md
    hidden = [p.name for p in out.iterdir() if p.name.startswith(".")]
    assert hidden == [MARKER]  # the run folder's marker; no temporary files left
    arrays = np.load(out / "fnode.npz")
    assert arrays["x_pred"].shape == arrays["x_data"].shape
    assert arrays["weights_f"].size == rows["fnode"]["n_params"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["nosuchproblem"], "unknown problem 'nosuchproblem'; valid:"),
        (["vdp", "--methods", "fnode,pysr"], "unknown method 'pysr'; valid: collocation, fnode"),
        (["vdp", "--budget", "0"], "--budget must be > 0"),
        (["vdp", "--budget", "-3"], "--budget must be > 0"),
        (["vdp", "--epochs", "0"], "--epochs must be a positive integer"),
        (["vdp", "--device", "tpu"], "unknown device 'tpu'"),
        (["vdp", "--preset", "nope"], "unknown preset of vdp 'nope'"),
        (["vdp", "--budget", "abc"], "invalid float value"),
        (["vdp", "--set", "fnode.targetz=fd"], "unknown option 'targetz' of FNODEOptions"),
        (["vdp", "--set", "fnode=fd"], "--set expects METHOD.OPTION=VALUE"),
        (["vdp", "--set", "fnode.targets=spline"], "unknown targets 'spline'"),
        (["vdp", "--methods", "lstm", "--set", "lstm.partition=yes"], "partition must be a bool"),
        (
            ["smsd", "--methods", "lstm", "--device", "cpu", "--set", "lstm.cuda_graph=true"],
            "cuda_graph=True needs a CUDA device, got device='cpu'",
        ),
        (["vdp", "--methods", ""], "methods must name at least one method"),
        (["vdp", "--methods", "fnode,fnode"], "methods names 'fnode' more than once"),
    ],
)
def test_bad_input_exits_with_code_2_and_one_line(args, message):
    proc = _script(*args)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert message in lines[0]
    assert "Traceback" not in proc.stderr


def test_unwritable_out_exits_with_code_2(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    proc = _script("vdp", "--out", str(blocker / "sub"))
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "--out" in proc.stderr


def test_debug_shows_the_traceback():
    proc = _script("vdp", "--methods", "pysr", "--debug")
    assert proc.returncode != 0 and "Traceback" in proc.stderr


def test_a_failing_method_is_recorded_while_the_others_continue(tmp_path, monkeypatch):
    from collocnode.compare.methods import fnode

    def boom(self, system, trajs):
        raise RuntimeError("synthetic failure")

    monkeypatch.setattr(fnode.FNODE, "_setup", boom)
    cfg = CompareConfig("vdp", ("fnode", "mbdnode"), quick=True, epochs=2, device="cpu")
    report = run(cfg, tmp_path, progress=False)
    rows = {r["method"]: r for r in report["rows"]}
    assert rows["fnode"]["status"] == "failed"
    assert "synthetic failure" in rows["fnode"]["message"] and "traceback" in rows["fnode"]
    assert rows["mbdnode"]["status"] == "success"
    json.loads((tmp_path / "compare.json").read_text())


def test_diverged_rollout_is_reported_with_its_step(tmp_path, monkeypatch):
    from collocnode.compare.methods import mbdnode
    from collocnode.tools._fixed_step import DivergenceError

    def diverge(self, t, x0, u=None, *, params=None):
        raise DivergenceError(17, float(t[17]), np.zeros((17, 2)), "blow-up")

    monkeypatch.setattr(mbdnode.MBDNODE, "predict", diverge)
    report = run(
        CompareConfig("vdp", ("mbdnode",), quick=True, epochs=1, device="cpu"),
        tmp_path,
        progress=False,
    )
    row = report["rows"][0]
    assert row["status"] == "diverged" and row["diverged_step"] == 17
    assert row["test_mse"] is None and "step 17" in row["message"]
    text = (tmp_path / "compare.json").read_text()
    assert "NaN" not in text and "Infinity" not in text


def test_error_curve_and_markdown():
    cfg = CompareConfig("vdp", ("fnode",), quick=True, epochs=3, device="cpu", eval_every_s=1e-9)
    report = run(cfg, None, progress=False)
    curve = report["rows"][0]["curve"]
    assert len(curve) == 3 and all(c[1] > 0 for c in curve)
    assert [c[0] for c in curve] == sorted(c[0] for c in curve)
    md = markdown(report)
    assert md.count("\n| fnode |") == 1


@pytest.mark.parametrize(
    ("at", "points"), [((1e-9,), 1), ((1e-9, 2e-9), 1), ((1e9,), 0), ((1e-9, 1e9), 1)]
)
def test_error_curve_at_set_times(at, points):
    # each time is evaluated once, at the first epoch ending after it; times already passed
    # together give one point, times never reached none
    cfg = CompareConfig("vdp", ("fnode",), quick=True, epochs=3, device="cpu", eval_at_s=at)
    report = run(cfg, None, progress=False)
    curve = report["rows"][0]["curve"]
    assert len(curve) == points
    assert all(t >= at[0] and err > 0 for t, err in curve)
    # compare.md: one cell per set time, the point taken at or after it, "–" if none
    lines = [line for line in markdown(report).splitlines() if line.startswith("| fnode | ")]
    assert len(lines) == 2  # the main table's row, then the set-times table's
    cells = lines[1].strip("| ").split(" | ")[1:]
    assert len(cells) == len(at) + 1
    if points:
        t, err = curve[0]
        assert cells[0] == f"{err:.3g} ({t:.3g} s)"
    if at[-1] > 1:  # never reached in a 3-epoch quick run
        assert cells[-2] == "–"


def test_set_times_replace_the_default_cadence():
    assert CompareConfig("vdp", ("collocation", "fnode")).eval_every_s is not None
    cfg = CompareConfig("vdp", ("collocation", "fnode"), eval_at_s=(30.0, 3.0))
    assert cfg.eval_every_s is None and cfg.eval_at_s == (3.0, 30.0) and cfg.records_curve


def test_config_validation_names_the_field():
    with pytest.raises(ValueError, match="eval_at_s"):
        CompareConfig("vdp", ("fnode",), eval_at_s=(1.0, -2.0))
    with pytest.raises(ValueError, match="method"):
        CompareConfig("vdp", ())
    with pytest.raises(ValueError, match="budget_s"):
        CompareConfig("vdp", ("fnode",), budget_s=-1.0)
    with pytest.raises(ValueError, match="unknown problem"):
        CompareConfig("nope", ("fnode",))


def test_set_reads_true_and_false_as_booleans():
    from collocnode._cli.compare_command import method_overrides

    found = method_overrides(["lstm.partition=true", "lstm.cuda_graph=false", "fnode.lr=1e-3"])
    assert found == {"lstm": {"partition": True, "cuda_graph": False}, "fnode": {"lr": 1e-3}}
    assert method_overrides(["fnode.targets=fd"]) == {"fnode": {"targets": "fd"}}
