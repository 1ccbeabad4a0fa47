"""The uncertainty benchmarks: coverage over noise seeds and the bootstrap comparison (slow:
the studies themselves), and their building blocks (fast)."""

from __future__ import annotations

import numpy as np
import pytest
from load_benchmark import load_benchmark as _load


def test_one_seed_of_the_coverage_study_gives_an_interval_and_its_verdict():
    row = _load("uncertainty_coverage").one_seed(0, noise=0.02)
    assert row["status"] == "success"
    assert abs(row["k"] - 4.0) < 5 * row["k_std"] and 0 < row["k_std"] < 0.05
    assert isinstance(row["k_covered"], bool) and len(row["damping_covered"]) == 3


@pytest.mark.slow
def test_the_95_percent_intervals_cover_the_truth_90_to_99_percent_of_100_seeds():
    result = _load("uncertainty_coverage").study(100, noise=0.02, hessian="gauss-newton")
    assert result["converged"] == 100
    assert 0.90 <= result["k_coverage"] <= 0.99
    # the Laplace standard deviation is the spread of the estimate over the seeds
    assert abs(result["k_mean_std"] / result["k_spread"] - 1.0) < 0.2


@pytest.mark.slow
def test_laplace_standard_errors_are_within_30_percent_of_the_bootstrap():
    result = _load("uncertainty_bootstrap").run(resamples=100, seed=1)
    assert result["status"] == "success" and result["bootstrap"]["converged"] >= 95
    for name, ratio in result["ratio"].items():
        assert 0.7 <= ratio <= 1.3, (name, ratio)
    assert result["uncertainty_s"] < 0.05 * result["bootstrap"]["wall_s"]


def test_the_bootstrap_model_recovers_the_rates_on_its_default_seed():
    bench = _load("uncertainty_bootstrap")
    from collocnode import solve

    sol = solve(bench.problem(1), bench.algorithm(bench.T_TRAIN), seed=1)
    fitted = np.array([sol.params[n] for n in bench.NAMES])
    truth = np.array([bench.ALPHA, bench.DELTA, bench.GAMMA / bench.BETA])
    np.testing.assert_allclose(fitted, truth, rtol=0.05)


def test_the_stored_pendulum_coverage_runs_are_what_the_docs_quote():
    import json

    from load_benchmark import ROOT

    bench = _load("uncertainty_coverage")
    page = " ".join((ROOT / "docs" / "uncertainty.md").read_text().split())
    stored = ROOT / "benchmarks" / "results" / "uncertainty"
    fitted = json.loads((stored / "coverage_pendulum.json").read_text())
    data = json.loads((stored / "coverage_pendulum_initial_state_from_data.json").read_text())
    for run in (fitted, data):
        assert bench.pendulum_summary(run) in page
    # the bar: 90-98 % coverage over >= 50 seeds, std within 15 % of the spread
    assert fitted["seeds"] >= 50 and 0.90 <= fitted["coverage"] <= 0.98
    assert abs(fitted["median_std"] / fitted["spread"] - 1.0) < 0.15


def test_one_pendulum_seed_with_unequal_noise_gives_a_wider_interval_than_the_information():
    result = _load("uncertainty_coverage").pendulum_study(1, "fitted")
    row = result["rows"][0]
    assert row["status"] == "success"
    assert row["std"] > 1.2 * row["std_information"]
