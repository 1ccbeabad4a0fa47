"""benchmarks/discovery_lv.py at one seed: the record it writes and the targets it measures."""

from __future__ import annotations

import json

import pytest

from tests.benchmarks.load_benchmark import load_benchmark

pytest.importorskip("pysindy")


def test_one_seed_recovers_the_interaction_and_records_the_run(tmp_path):
    bench = load_benchmark("discovery_lv")
    path = tmp_path / "lv.json"
    assert bench.main(["--seeds", "0", "--repeats", "1", "--json", str(path)]) == 0
    record = json.loads(path.read_text())
    assert record["command"].startswith("python benchmarks/discovery_lv.py --seeds 0")
    (run,) = record["runs"]
    refitted = run["refitted"]
    assert refitted["exact_support"] and refitted["max_relative_error"] < 0.05
    assert refitted["equations"][0].startswith("interaction[0] = -0.")
    assert refitted["held_out"]["relative_rmse"] < 0.05 and refitted["consistent"]
    assert set(run["median_s"]) == {"train", "discover", "refit"}
    assert (
        0
        < run["discover_share_of_training"]
        == pytest.approx(run["median_s"]["discover"] / run["median_s"]["train"])
    )
