"""``benchmarks/authors_code_fnode.py``: the published commands are read from the authors'
``run_experiments.sh``, each runs in a fresh copy of their folder, and the errors their logs print
become the stored entries (here with stand-in scripts that print what theirs print)."""

from __future__ import annotations

import json
import sys

import pytest
from load_benchmark import load_benchmark as _load

SCRIPT = """\
#!/bin/bash
# a comment
python3 main_fnode.py   --test_case Double_Pendulum --seed 42 --epochs 450
python main_lstm.py --test_case Slider_Crank --train_ratio $(python3 -c "print(1/3)")
python3 main_HNN.py --test_case Single_Mass_Spring
python3 main_fnode.py --test_case Double_Pendulum --seed 7
python3 main_fcnn.py --test_case Cart_Pole --fail
python3 main_mbdnode.py --test_case Cart_Pole --sleep
"""

# prints what the authors' scripts log after their test rollout; checks it runs in a fresh copy
FAKE = """\
import os, sys, time
assert not os.path.exists("dataset"), "a dataset was left behind"
os.makedirs("dataset")
if "--fail" in sys.argv:
    print("failed in", os.getcwd())
    sys.exit(3)
if "--sleep" in sys.argv:
    time.sleep(30)
assert sys.argv[sys.argv.index("--device") + 1] == "cpu", sys.argv
seeds = [sys.argv[i + 1] for i, word in enumerate(sys.argv) if word == "--seed"]
print("seed", seeds[-1] if seeds else "none")  # their argparse keeps the last
print("Overall MSE (FNODE vs GT, 400 steps): 1.633759e-01")
print("Train Region MSE (first 300 steps): 4.4e-04")
print("Extrapolation Region MSE (steps 300 to 400): 6.52e-01")
print("ratio", sys.argv[sys.argv.index("--train_ratio") + 1] if "--train_ratio" in sys.argv else "")
"""


@pytest.fixture
def bench(monkeypatch):
    module = _load("authors_code_fnode")
    # the stand-ins need none of the packages the authors' code imports
    monkeypatch.setattr(module.authors_runs, "_importable", lambda name: True)
    return module


@pytest.fixture
def folder(tmp_path):
    code = tmp_path / "FNODE"
    code.mkdir()
    (code / "run_experiments.sh").write_text(SCRIPT)
    for name in ("main_fnode.py", "main_lstm.py", "main_fcnn.py", "main_mbdnode.py"):
        (code / name).write_text(FAKE)
    return code


def test_the_first_published_line_of_each_method_and_case_is_kept(bench, folder):
    commands = bench.published_commands(folder)
    assert set(commands) == {
        ("fnode", "Double_Pendulum"), ("lstm", "Slider_Crank"), ("fcnn", "Cart_Pole"),
        ("mbdnode", "Cart_Pole"),
    }  # fmt: skip
    assert commands[("fnode", "Double_Pendulum")].endswith("--seed 42 --epochs 450")
    # the one shell expression of their file is evaluated, and the device is the CPU
    argv = bench._argv(commands[("lstm", "Slider_Crank")])
    assert argv[0] == sys.executable and argv[1] == "main_lstm.py"
    assert argv[argv.index("--train_ratio") + 1] == repr(1 / 3)
    assert argv[-2:] == ["--device", "cpu"]


def test_errors_failures_and_timeouts_are_recorded(bench, folder, tmp_path):
    out = tmp_path / "out"
    runs = "fnode:Double_Pendulum,lstm:Slider_Crank,fcnn:Cart_Pole,mbdnode:Cart_Pole"
    assert bench.main([str(folder), "--runs", runs, "--timeout", "5", "--out", str(out)]) == 0
    record = json.loads((out / "authors_code.json").read_text())
    entries = {(r["method"], r["test_case"]): r for r in record["runs"]}
    ok = entries[("fnode", "Double_Pendulum")]
    assert ok["status"] == "success"
    assert (ok["full_mse"], ok["train_mse"], ok["test_mse"]) == (0.1633759, 4.4e-4, 0.652)
    assert entries[("lstm", "Slider_Crank")]["status"] == "success"  # a fresh copy each
    failed = entries[("fcnn", "Cart_Pole")]
    assert failed["status"] == "failed (exit 3)" and failed["full_mse"] is None
    assert entries[("mbdnode", "Cart_Pole")]["status"] == "timeout"
    assert failed["log_tail"] == "failed in FNODE"  # the scratch path is not stored
    assert (out / "logs" / "fnode-Double_Pendulum.log").is_file()


def test_another_seed_replaces_the_published_one(bench, folder, tmp_path):
    out = tmp_path / "out"
    assert bench.main([str(folder), "--runs", "fnode:Double_Pendulum", "--seed", "3",
                       "--out", str(out)]) == 0  # fmt: skip
    assert "seed 3" in (out / "logs" / "fnode-Double_Pendulum.log").read_text()
    record = json.loads((out / "authors_code.json").read_text())
    assert record["settings"] == {"seed": 3}  # the report lists it among the seeds
    (entry,) = record["runs"]
    assert entry["seed"] == 3 and entry["command"].endswith("--seed 42 --epochs 450")
    # without --seed: their published seed, and no seed recorded
    bench.main([str(folder), "--runs", "fnode:Double_Pendulum", "--out", str(tmp_path / "o")])
    assert "seed 42" in (tmp_path / "o" / "logs" / "fnode-Double_Pendulum.log").read_text()
    assert "settings" not in json.loads((tmp_path / "o" / "authors_code.json").read_text())


def test_a_run_not_in_their_script_is_refused_by_name(bench, folder, tmp_path):
    with pytest.raises(SystemExit, match=r"--runs: 'fnode:Cart_Pole' is not in run_experiments"):
        bench.main([str(folder), "--runs", "fnode:Cart_Pole", "--out", str(tmp_path / "o")])
    with pytest.raises(SystemExit, match=r"has no run_experiments\.sh"):
        bench.main([str(tmp_path), "--out", str(tmp_path / "o")])


def test_the_authors_dependencies_are_named_when_missing(bench, folder, tmp_path, monkeypatch):
    monkeypatch.setattr(bench.authors_runs, "_importable", lambda name: name != "sklearn")
    with pytest.raises(SystemExit, match="pip install scikit-learn"):
        bench.main([str(folder), "--out", str(tmp_path / "o")])


def test_a_second_call_keeps_the_entries_it_does_not_rerun(bench, folder, tmp_path):
    out = tmp_path / "out"
    bench.main([str(folder), "--runs", "fnode:Double_Pendulum,fcnn:Cart_Pole", "--out", str(out)])
    bench.main([str(folder), "--runs", "fcnn:Cart_Pole,lstm:Slider_Crank", "--out", str(out)])
    record = json.loads((out / "authors_code.json").read_text())
    keys = [(r["method"], r["test_case"]) for r in record["runs"]]
    assert keys == [("fnode", "Double_Pendulum"), ("fcnn", "Cart_Pole"), ("lstm", "Slider_Crank")]
    assert record["command"].count("authors_code_fnode.py") == 2


# writes data as the authors' code does: per body (position, velocity), an index column, and a
# time column of linspace(0, n·dt, n) although the samples are k·dt apart
FAKE_DATA = """\
import os, sys
import numpy as np
from collocnode import problems
assert sys.argv[-2:] == ["--epochs", "1"], sys.argv
t = np.arange(400) * 0.01
x = problems.get("smsd", "mbdnode_cubic").simulate(t).x
x[7, 1] += 1e-3
os.makedirs("dataset/Single_Mass_Spring_Damper")
np.savetxt("dataset/Single_Mass_Spring_Damper/s_full.csv",
           np.column_stack([np.arange(400), x]), delimiter=",", header="idx,x,v", comments="")
np.savetxt("dataset/Single_Mass_Spring_Damper/t_full.csv", np.linspace(0, 4, 400),
           header="time", comments="")
system = problems.get("smsd", "mbdnode_cubic")
acc = np.array([system.acceleration(ti, xi) for ti, xi in zip(t[:300], x[:300])])
os.makedirs("results/Single_Mass_Spring_Damper/FNODE")
np.savetxt("results/Single_Mass_Spring_Damper/FNODE/train_fd_accelerations.csv",
           np.column_stack([t[:300], 1.01 * acc]), delimiter=",", comments="",
           header="time,target_accel_body_0")
print("Overall MSE (FNODE vs GT, 400 steps): 2.0e-01")
"""


def test_their_data_are_compared_with_our_preset(bench, folder, tmp_path):
    (folder / "run_experiments.sh").write_text(
        "python3 main_fnode.py --test_case Single_Mass_Spring_Damper --seed 42\n"
    )
    (folder / "main_fnode.py").write_text(FAKE_DATA)
    out = tmp_path / "out"
    runs = ["--runs", "fnode:Single_Mass_Spring_Damper", "--data-only", "--out", str(out)]
    bench.main([str(folder), *runs])
    assert not (out / "authors_code.json").exists()
    (entry,) = json.loads((out / "data_check.json").read_text())["runs"]
    data = entry["data"]
    assert (data["problem"], data["preset"], data["samples"]) == ("smsd", "mbdnode_cubic", 400)
    assert data["max_abs_diff"] == pytest.approx(1e-3, rel=1e-6)
    # labels 1 % too large (the perturbed sample moves the exact acceleration a little)
    assert data["labels_rel_rms (train_fd_accelerations.csv)"] == pytest.approx(0.01, rel=0.02)


# their slider-crank keeps (θ1, θ1') alone, under the column names their code writes
FAKE_SLIDER_CRANK = """\
import os
import numpy as np
from collocnode import problems
system = problems.get("slider_crank", "fnode_bb_2025")
t = np.arange(300) * 0.01
x = system.simulate(t).x
kept = x[:, [2, 11]]
kept[5, 1] += 2e-3
os.makedirs("dataset/Slider_Crank")
np.savetxt("dataset/Slider_Crank/s_full.csv", kept, delimiter=",", header="theta_0_2pi,omega",
           comments="")
np.savetxt("dataset/Slider_Crank/t_full.csv", np.arange(300) * 0.1, header="time", comments="")
acc = np.array([system.acceleration(ti, xi)[2] for ti, xi in zip(t[:100], x[:100])])
os.makedirs("results/Slider_Crank/FNODE")
np.savetxt("results/Slider_Crank/FNODE/train_hybrid_accelerations.csv",
           np.column_stack([t[:100], 0.98 * acc]), delimiter=",", comments="",
           header="time,target_accel_body_0")
print("Overall MSE (FNODE vs GT, 300 steps): 2.0e-01")
"""


def _slider_crank_data_check(bench, folder, tmp_path, *extra):
    """The ``data`` entry of a --data-only run of the stand-in slider-crank script."""
    (folder / "run_experiments.sh").write_text("python main_fnode.py --test_case Slider_Crank\n")
    (folder / "main_fnode.py").write_text(FAKE_SLIDER_CRANK)
    out = tmp_path / "out"
    runs = ["--runs", "fnode:Slider_Crank", "--data-only", "--out", str(out)]
    bench.main([str(folder), *runs, *extra])
    (entry,) = json.loads((out / "data_check.json").read_text())["runs"]
    return entry["data"]


def test_their_slider_crank_is_compared_on_the_crank_angle_and_rate(bench, folder, tmp_path):
    data = _slider_crank_data_check(bench, folder, tmp_path)
    assert (data["problem"], data["preset"], data["samples"]) == (
        "slider_crank",
        "fnode_bb_2025",
        300,
    )
    assert data["max_abs_diff"] == pytest.approx(2e-3, rel=1e-5)
    assert data["mse"] == pytest.approx((2e-3) ** 2 / 600, rel=1e-4)
    assert data["labels_rel_rms (train_hybrid_accelerations.csv)"] == pytest.approx(0.02, rel=1e-6)


def test_another_preset_is_named_per_case(bench, folder, tmp_path):
    data = _slider_crank_data_check(
        bench, folder, tmp_path, "--data-preset", "Slider_Crank=fnode_bb"
    )
    # the data are fnode_bb_2025's: against fnode_bb they part by far more than the 2e-3 nudge
    assert data["preset"] == "fnode_bb"
    assert data["max_abs_diff"] > 1e-2


@pytest.mark.parametrize(
    ("item", "says"),
    [("Slider=fnode_bb", "CASE one of"), ("Slider_Crank=bb", "not a preset of Slider_Crank")],
)
def test_a_bad_data_preset_is_refused_before_any_run(bench, folder, tmp_path, item, says):
    with pytest.raises(SystemExit, match=says):
        bench.main([str(folder), "--data-only", "--out", str(tmp_path), "--data-preset", item])
    assert not (tmp_path / "data_check.json").exists()


# loads the dataset the runner wrote, as their scripts do, and prints its largest difference from
# our preset's exact solution in the log line the runner reads
FAKE_LOADS_EXACT = """\
import numpy as np
from collocnode import problems
def load(name):  # a CSV with a header row, as their pandas.read_csv reads it
    return np.loadtxt(f"dataset/Cart_Pole/{name}.csv", delimiter=",", skiprows=1, ndmin=2)
train, test, t = load("s_train"), load("s_test"), load("t_train").ravel()
assert train.shape == (150, 4) and test.shape == (50, 4), (train.shape, test.shape)
assert np.allclose(t, 0.02 * np.arange(150))
system = problems.get("cart_pole", "fnode_code")
x = system.simulate(0.02 * np.arange(200)).x
n = system.n_coords
theirs = x[:, [1, n + 1, 0, n]]  # their body 0 is the pole angle, our coordinate 1
diff = np.abs(np.vstack([train, test]) - theirs).max()
print(f"Overall MSE (FNODE vs GT, 200 steps): {diff:.3e}")
"""


def test_exact_data_are_written_where_their_scripts_load_them(bench, folder, tmp_path):
    (folder / "run_experiments.sh").write_text(
        "python3 main_fnode.py --test_case Cart_Pole --seed 42 --data_total_steps 200 "
        "--train_ratio 0.75 --data_dt 0.02\n"
    )
    (folder / "main_fnode.py").write_text(FAKE_LOADS_EXACT)
    out = tmp_path / "out"
    bench.main([str(folder), "--runs", "fnode:Cart_Pole", "--exact-data", "--out", str(out)])
    record = json.loads((out / "authors_code.json").read_text())
    assert record["settings"] == {"data": "exact solution of our preset"}
    (entry,) = record["runs"]
    assert entry["status"] == "success"
    assert entry["full_mse"] < 1e-12  # the largest difference, in the stand-in's line


def test_exact_data_need_the_commands_sampling(bench, folder, tmp_path):
    (folder / "run_experiments.sh").write_text("python3 main_fnode.py --test_case Cart_Pole\n")
    with pytest.raises(SystemExit, match="Cart_Pole sets no --data_total_steps"):
        bench.main([str(folder), "--exact-data", "--out", str(tmp_path / "o")])
