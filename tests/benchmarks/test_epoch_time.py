"""``benchmarks/epoch_time.py`` and ``benchmarks/cuda_check.py``: an epoch of the authors' code
ends at its epoch line (a stand-in script here), the first epoch of each side is not counted,
the medians and ratios are those of the counted epochs; the CUDA check on the CPU finds the two
rollouts equal, and compares a chaotic one only before a rounding-level nudge parts it."""

from __future__ import annotations

import json

import numpy as np
import pytest
from load_benchmark import load_benchmark as _load

pytest.importorskip("torch")

# a stand-in for one of their FNODE-release scripts: setup, then epochs that burn CPU time
SCRIPT = """\
import sys, time
epochs = int(sys.argv[sys.argv.index("--epochs") + 1])
time.sleep(0.2)  # their data generation: not an epoch
for k in range(epochs):
    end = time.process_time() + 0.15
    while time.process_time() < end:
        pass
    print(f"2026 - INFO - Epoch {k:>5}/{epochs} | Train Loss: 1.0e-3 | Time: 0.15s", flush=True)
time.sleep(60)  # their test rollout: the benchmark stops them before it
"""


@pytest.fixture
def folder(tmp_path):
    code = tmp_path / "FNODE"
    code.mkdir()
    (code / "main_fcnn.py").write_text(SCRIPT)
    (code / "run_experiments.sh").write_text(
        "python3 main_fcnn.py --test_case Single_Mass_Spring_Damper --epochs 450\n"
    )
    return code


def test_their_epochs_end_at_their_epoch_lines_and_the_first_is_not_counted(folder):
    bench = _load("epoch_time")
    case = bench.CASES["fnode13-fcnn-smsd"]
    marks, why = bench.time_theirs(case, folder, 4, 1, "cpu", timeout_s=30)
    assert why == "" and len(marks) == 4
    timing = bench.Timing()
    timing.add(marks)
    assert len(timing.cpu_s) == 3  # 4 epoch ends, the first closing the uncounted epoch
    for cpu in timing.cpu_s:  # 0.15 s of CPU per epoch; /proc counts in clock ticks
        assert 0.1 < cpu < 0.3
    assert all(w >= c - 0.02 for w, c in zip(timing.wall_s, timing.cpu_s, strict=True))
    # a script that stops early is reported with its log's tail
    (folder / "main_fcnn.py").write_text("print('Traceback: their error')\n")
    marks, why = bench.time_theirs(case, folder, 4, 1, "cpu", timeout_s=30)
    assert marks == [] and "their error" in why


def test_the_ratio_is_of_the_medians(monkeypatch, folder):
    bench = _load("epoch_time")
    ours = [(0.0, 0.0), (1.0, 0.5), (2.0, 1.0), (3.0, 1.5)]  # 1 s wall, 0.5 s CPU per epoch
    theirs = [(0.0, 0.0), (2.0, 2.0), (4.0, 4.0), (6.0, 6.0)]
    monkeypatch.setattr(bench, "time_ours", lambda case, epochs, device: ours)
    monkeypatch.setattr(bench, "time_theirs", lambda *a: (theirs, ""))
    args = type("Args", (), {"repeats": 2, "epochs": 4, "threads": 1, "device": "cpu"})
    args.timeout = 10
    case = bench.CASES["fnode13-fcnn-smsd"]
    found = bench.run_case("fnode13-fcnn-smsd", case, {"fnode": folder}, args)
    assert found["ratio_cpu_s"] == pytest.approx(0.25)
    assert found["ratio_wall_s"] == pytest.approx(0.5)
    assert len(found["ours_epochs"]["cpu_s"]) == 6  # 3 counted epochs in each of 2 repeats
    assert found["theirs"] == ("fcnn", "Single_Mass_Spring_Damper")
    assert "| fnode13-fcnn-smsd | 0.5 | 2 | 0.25 |" in bench.markdown([found])
    json.dumps(found)  # stored as JSON


def test_the_cuda_check_on_the_cpu_finds_equal_rollouts(capsys):
    check = _load("cuda_check")
    assert check.main(["--device", "cpu", "--methods", "fcnn,mbdnode", "--epochs", "1"]) == 0
    table = capsys.readouterr().out
    assert "| fcnn | smsd | success | cpu |" in table and "| NO |" not in table


def test_the_cuda_check_compares_a_chaotic_rollout_only_before_rounding_parts_it():
    check = _load("cuda_check")
    a = np.zeros((10, 2))
    b = a.copy()
    b[6:, 0] = 1e-3
    assert check._parting(a, a, 1e-6) is None
    assert check._parting(a, b, 1e-6) == 6
    assert check._parting(a, a[:7], 1e-6) == 7  # one stopped (diverged) earlier
    # the 2-epoch LNN's rollout parts from itself under a 1e-15 nudge of x0: compared in part
    r = check.check("lnn", "cpu", 2, 1e-6)
    assert r["rounding_sensitive"] and 0 < r["samples_compared"] < r["cpu_rollout_samples"]
    assert r["ok"] and r["rollout_difference"] == 0.0
    # a trained FCNN is not: its whole rollout is compared
    r = check.check("fcnn", "cpu", 1, 1e-6)
    assert not r["rounding_sensitive"] and r["samples_compared"] == r["cpu_rollout_samples"]


def test_the_device_epoch_benchmark_times_our_side_on_each_device(tmp_path):
    bench = _load("epoch_time_devices")
    out = tmp_path / "epochs.json"
    argv = ["--devices", "cpu", "--cases", "fnode13-fcnn-smsd", "--epochs", "2", "--json", str(out)]
    assert bench.main(argv) == 0
    data = json.loads(out.read_text())
    (r,) = data["results"]
    assert (r["case"], r["device"], len(r["epoch_wall_s"])) == ("fnode13-fcnn-smsd", "cpu", 1)
    assert r["median_s"] == r["epoch_wall_s"][0] > 0
    assert len(r["epoch_losses"]) == 2 and not r["cuda_graph"]
    assert data["command"].startswith("python benchmarks/epoch_time_devices.py --devices cpu")
    # --cuda-graph adds a graphed run on CUDA devices only: nothing more on the CPU
    assert bench.main([*argv, "--cuda-graph"]) == 0
    assert len(json.loads(out.read_text())["results"]) == 1
    with pytest.raises(SystemExit, match="unknown nope"):
        bench.main(["--cases", "nope"])
    with pytest.raises(SystemExit, match="at least 2"):
        bench.main(["--cases", "fnode13-fcnn-smsd", "--epochs", "1"])


def test_graph_against_eager_compares_medians_and_every_epoch_loss():
    bench = _load("epoch_time_devices")
    eager = {"median_s": 2.0, "epoch_losses": [1.0, 0.5, 0.25]}
    graphed = {"median_s": 0.5, "epoch_losses": [1.0, 0.5001, 0.25]}
    found = bench.graph_against_eager(graphed, eager)
    assert found["time_ratio"] == 0.25
    assert found["loss_rel_diffs"] == pytest.approx([0.0, 2e-4, 0.0])
    with pytest.raises(ValueError):  # runs of different lengths are not compared
        bench.graph_against_eager({**graphed, "epoch_losses": [1.0]}, eager)
