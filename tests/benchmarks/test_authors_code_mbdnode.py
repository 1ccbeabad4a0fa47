"""``benchmarks/authors_code_mbdnode.py``: each run edits the ``config`` of one of the authors'
scripts and calls its ``main`` in a fresh copy of their folder, on the CPU; the trajectory it
saves, and the one they committed, are scored against the ground truth (here with stand-in
scripts laid out as theirs are)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from load_benchmark import load_benchmark as _load

# their training functions default to device="cuda"; the Model folder is imported both as a
# package and from the top level, as in their code
MODEL = """\
import os, time
import numpy as np

def generate_training_data(test_case, numerical_methods, dt, num_steps):
    t = np.arange(num_steps) * dt
    return np.stack([np.cos(t), -np.sin(t)], axis=1)[:, None, :]

def train(truth, config, device="cuda"):
    assert device == "cpu", device
    if config["num_epochs"] < 0:
        raise RuntimeError("diverged")
    if config["num_epochs"] > 100:
        time.sleep(30)
    if config["num_epochs"] == 7:  # their optimizer and scheduler, with hard-coded values
        import torch
        opt = torch.optim.Adam([torch.zeros(1, requires_grad=True)], lr=0.1)
        sched = torch.optim.lr_scheduler.ExponentialLR(opt, gamma=0.5)
        print("LR", opt.param_groups[0]["lr"], sched.gamma)
    pred = truth.copy()
    pred[config["training_size"]:] += 0.1  # exact on the training window only
    return pred

def save_data(data, test_case, model_string, training_size, num_steps_test, dt):
    os.makedirs(os.path.join("saved_data", test_case), exist_ok=True)
    np.save(os.path.join("saved_data", test_case, f"{model_string} for {test_case} with "
            f"training_size={training_size}_num_steps_test={num_steps_test}_dt={dt}.npy"), data)
"""

SCRIPT = """\
import os
from Model.model import *
from model import train as top_level_train  # their modules import each other this way too

config = {"test_case": "Slider_Crank", "generation_numerical_methods": "fe", "dt": 0.01,
          "num_steps": 400, "training_size": 300, "num_epochs": 2, "num_steps_test": 400,
          "dt_test": 0.01, "model_string": "MODEL"}

def main(config):
    assert not os.path.exists("left_behind"), "a run's files were left behind"
    open("left_behind", "w").close()
    truth = generate_training_data(config["test_case"], config["generation_numerical_methods"],
                                   config["dt"], config["num_steps"])
    top_level_train(truth, dict(config, num_epochs=1))
    pred = train(truth, config)
    save_data(pred, config["test_case"], config["model_string"], config["training_size"],
              config["num_steps_test"], config["dt_test"])
"""


@pytest.fixture
def bench(monkeypatch):
    module = _load("authors_code_mbdnode")
    # the stand-ins need none of the packages the authors' code imports
    monkeypatch.setattr(module.authors_runs, "_importable", lambda name: True)
    monkeypatch.setattr(
        module,
        "RUNS",
        {
            ("fcnn", "Ok"): ("fcnn", {"num_epochs": 3}),
            ("lstm", "Ok"): ("lstm", {"num_epochs": 3}),
            ("mbdnode", "Fails"): ("mbdnode", {"num_epochs": -1}),
            ("mbdnode", "Sleeps"): ("mbdnode_symplectic", {"num_epochs": 1000}),
        },
    )
    return module


@pytest.fixture
def folder(tmp_path):
    code = tmp_path / "MNODE-code"
    (code / "Model").mkdir(parents=True)
    (code / "Model" / "__init__.py").write_text("")
    (code / "Model" / "model.py").write_text(MODEL)
    for name in ("main.py", "main_FCNN.py", "main_LSTM.py", "main_Symplectic.py"):
        (code / name).write_text(SCRIPT.replace("MODEL", name.removesuffix(".py")))
    # their committed arrays for one run: the truth, and a prediction off by 0.2 everywhere
    saved = code / "saved_data" / "Ok"
    saved.mkdir(parents=True)
    t = np.arange(400) * 0.01
    truth = np.stack([np.cos(t), -np.sin(t)], axis=1)[:, None, :]
    tail = "for Ok with training_size=300_num_steps_test=400_dt=0.01.npy"
    np.save(saved / f"Ground_truth {tail}", truth)
    np.save(saved / f"main_FCNN {tail}", truth + 0.2)
    return code


def test_runs_are_scored_and_failures_and_timeouts_recorded(bench, folder, tmp_path):
    out = tmp_path / "out"
    argv = [str(folder), "--timeout", "8", "--jobs", "2", "--out", str(out)]
    assert bench.main(argv) == 0
    record = json.loads((out / "authors_code.json").read_text())
    entries = {(r["method"], r["test_case"]): r for r in record["runs"]}
    assert len(entries) == 4
    ok = entries[("fcnn", "Ok")]
    assert ok["status"] == "success"
    # 0.1 off on the 100 extrapolation samples of 400, in both state components
    assert ok["full_mse"] == pytest.approx(0.0025)
    assert ok["train_mse"] == 0.0 and ok["test_mse"] == pytest.approx(0.01)
    # the committed arrays are scored before the run overwrites them
    assert ok["committed"]["full_mse"] == pytest.approx(0.04)
    assert ok["truth_vs_committed"] == pytest.approx(0.0, abs=1e-12)
    assert ok["command"].startswith('main_FCNN.py config {"num_epochs": 3}')
    # a fresh copy per run: the same folder gives the second script no leftovers
    assert entries[("lstm", "Ok")]["status"] == "success"
    assert entries[("lstm", "Ok")]["committed"] is None  # nothing committed for it
    failed = entries[("mbdnode", "Fails")]
    assert failed["status"] == "failed (exit 1)" and failed["full_mse"] is None
    assert "RuntimeError: diverged" in failed["log_tail"]
    assert "authors-mbdnode-" not in failed["log_tail"]  # the scratch path is not stored
    assert entries[("mbdnode", "Sleeps")]["status"] == "timeout"
    assert (out / "logs" / "fcnn-Ok.log").is_file()


def test_a_second_call_keeps_the_entries_it_does_not_rerun(bench, folder, tmp_path):
    out = tmp_path / "out"
    bench.main([str(folder), "--runs", "fcnn:Ok,mbdnode:Fails", "--out", str(out)])
    bench.main([str(folder), "--runs", "mbdnode:Fails,lstm:Ok", "--out", str(out)])
    record = json.loads((out / "authors_code.json").read_text())
    keys = [(r["method"], r["test_case"]) for r in record["runs"]]
    assert keys == [("fcnn", "Ok"), ("mbdnode", "Fails"), ("lstm", "Ok")]
    assert record["command"].count("authors_code_mbdnode.py") == 2


def test_bad_arguments_are_refused_by_name(bench, folder, tmp_path, monkeypatch):
    out = ["--out", str(tmp_path / "o")]
    with pytest.raises(SystemExit, match=r"--runs: 'fcnn:Cart_Pole' is not a known run"):
        bench.main([str(folder), "--runs", "fcnn:Cart_Pole", *out])
    with pytest.raises(SystemExit, match=r"--jobs: must be at least 1, got 0"):
        bench.main([str(folder), "--jobs", "0", *out])
    with pytest.raises(SystemExit, match=r"has no main\.py, main_FCNN\.py"):
        bench.main([str(tmp_path), *out])
    monkeypatch.setattr(bench.authors_runs, "_importable", lambda name: name != "autograd")
    with pytest.raises(SystemExit, match="pip install autograd"):
        bench.main([str(folder), *out])


def test_every_paper_run_names_a_script_and_the_papers_window():
    module = _load("authors_code_mbdnode")
    for (method, case), (script, entries) in module.RUNS.items():
        assert script in module.SCRIPTS and method in ("mbdnode", "fcnn", "lstm", "hnn")
        if script == "hnn":  # its script trains when imported: its own 30,000 epochs
            assert "num_epochs" not in entries
        else:  # the paper's epochs (Tables 6-12: 300 for the Cartesian NODE-RK4, else 350-600)
            assert entries["num_epochs"] >= 300, (method, case)


def test_a_momentum_state_is_scored_as_velocity(bench, folder, tmp_path, monkeypatch):
    monkeypatch.setattr(bench, "MASS", {"Ok": 10.0})  # their state (q, p = 10 v)
    out = tmp_path / "out"
    bench.main([str(folder), "--runs", "fcnn:Ok", "--out", str(out)])
    (entry,) = json.loads((out / "authors_code.json").read_text())["runs"]
    assert entry["component_mse"] == pytest.approx([0.0025, 0.000025])
    assert entry["committed"]["full_mse"] == pytest.approx((0.04 + 0.0004) / 2)


def test_the_papers_learning_rate_replaces_the_hard_coded_one(bench, folder, tmp_path):
    bench.RUNS[("fcnn", "Ok")] = ("fcnn", {"num_epochs": 7, "lr": 6e-4, "lr_decay": 0.99})
    out = tmp_path / "out"
    bench.main([str(folder), "--runs", "fcnn:Ok", "--out", str(out)])
    (entry,) = json.loads((out / "authors_code.json").read_text())["runs"]
    assert entry["status"] == "success"
    assert "LR 0.0006 0.99" in (out / "logs" / "fcnn-Ok.log").read_text()


IMPORT_RUNS = """\
from Model.model import *

config = {"test_case": "Ok", "generation_numerical_methods": "fe", "dt": 0.01, "num_steps": 400,
          "training_size": 300, "num_epochs": 2, "num_steps_test": 400, "dt_test": 0.01,
          "model_string": "main_FCNN"}
# no main(): like their HNN script, everything runs when it is imported (before the driver
# points the defaults at the CPU, so it asks for the CPU itself)
truth = generate_training_data("Ok", "fe", 0.01, 400)
save_data(train(truth, config, device="cpu"), "Ok", "main_FCNN", 300, 400, 0.01)
"""


def test_a_script_that_trains_when_imported_is_scored_without_its_committed_array(
    bench, folder, tmp_path
):
    (folder / "main_HNN.py").write_text(IMPORT_RUNS)
    bench.RUNS[("hnn", "Ok")] = ("hnn", {})
    out = tmp_path / "out"
    assert bench.main([str(folder), "--runs", "hnn:Ok", "--out", str(out)]) == 0
    (entry,) = json.loads((out / "authors_code.json").read_text())["runs"]
    assert entry["status"] == "success"
    assert entry["full_mse"] == pytest.approx(0.0025)  # its own run, not the committed 0.04
    assert entry["committed"] is None  # overwritten by the import before it could be read
