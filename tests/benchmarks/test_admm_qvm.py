"""``benchmarks/admm_qvm.py``: a tiny quarter vehicle trained by the single NLP and by ADMM on a
real local Dask cluster gives the scored rows the documented tables are built from."""

from __future__ import annotations

import argparse
import math

import pytest
from load_benchmark import load_benchmark as _load


def _args(**changes) -> argparse.Namespace:
    settings = {
        "seed": 0, "duration": 0.5, "no_jit": True, "blocks": 2, "roads": 2, "rounds": 3,
        "block_iterations": 5, "rho": 1.0, "acceleration": False, "single_iterations": 2,
    }  # fmt: skip
    settings.update(changes)
    return argparse.Namespace(**settings)


def test_the_training_roads_leave_out_the_unseen_roads_phases():
    bench = _load("admm_qvm")
    assert bench.road_seeds(3) == [0, 2, 3]
    assert bench.line_through([1, 2, 4], [3.0, 5.0, 9.0], 8) == pytest.approx(17.0)


def test_windows_single_nlp_and_admm_rows_are_scored():
    pytest.importorskip("distributed")
    bench = _load("admm_qvm")
    single = bench.single("windows", 1, _args())
    admm = bench.admm("windows", _args(), 1)
    for row in (single, admm):
        assert math.isfinite(row["test_rmse_ratio"]) and row["test_rmse_ratio"] > 0.9
        assert 0 < row["friction_error"] < 1 and 0 < row["spring_error"] < 1
    assert single["peak_mb"] > admm["worker_peak_mb"] > 0
    assert 1 <= admm["rounds"] <= 3 and len(admm["history"]) == admm["rounds"]
    # the blocks' objectives, summed, describe the same data as the single NLP's
    assert admm["objective"] == pytest.approx(single["objective"], rel=0.5)


def test_the_single_nlp_over_several_roads_is_measured_not_scored():
    bench = _load("admm_qvm")
    one = bench.single("roads", 1, _args())
    two = bench.single("roads", 2, _args())
    assert (one["iterations"], two["iterations"]) == (2, 2)
    # each road adds its node states; the weights (2·one − two of them) are shared
    shared = 2 * one["n_variables"] - two["n_variables"]
    assert 0 < shared < one["n_variables"] / 2
    assert "test_rmse_ratio" not in two
