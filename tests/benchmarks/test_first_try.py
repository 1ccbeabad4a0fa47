"""benchmarks/first_try.py: its hybrid cases pose their problems as a newcomer would, and the
verdict says what fell short."""

from __future__ import annotations

import pytest
from load_benchmark import load_benchmark as _load


@pytest.mark.parametrize(
    "name", ["predator_prey_holling", "pk_infusion", "relaxation_oscillator", "cstr_coolant"]
)
def test_a_hybrid_case_poses_a_problem_without_scaling_and_has_targets(name):
    bench = _load("first_try")
    assert name in bench.HYBRID
    case = bench.CASES[name]()
    problem = case.problem()
    assert problem.regularization is None  # no λ given: the default chooses it
    assert case.targets and all(v > 0 for v in case.targets.values())
    for block in problem.model.blocks.values():  # no scaling given by the case
        assert block.output_scale == (1.0,) * block.n_out


def test_the_temperature_input_of_the_stirred_tank_reaches_its_network_at_order_one():
    problem = _load("first_try").CASES["cstr_coolant"]().problem()
    net = problem.model.blocks["rate"]
    assert 330.0 < net.input_shift[0] < 370.0 and 1.0 < net.input_scale[0] < 30.0


@pytest.mark.parametrize(
    ("row", "expected"),
    [
        ({"status": "iteration_limit", "consistent": None}, "failed: iteration_limit"),
        ({"status": "success", "consistent": False}, "inconsistent"),
        ({"status": "success", "consistent": True, "e": 0.3}, "off target: e 0.3 > 0.1"),
        ({"status": "success", "consistent": True, "e": None}, "off target: e failed > 0.1"),
        ({"status": "success", "consistent": True, "e": 0.05}, "within targets"),
    ],
)
def test_the_verdict(row, expected):
    assert _load("first_try").verdict(row, {"e": 0.1}) == expected


def test_the_stored_hybrid_run_is_what_the_docs_show():
    import json

    from load_benchmark import ROOT

    bench = _load("first_try")
    run = json.loads((ROOT / "benchmarks" / "results" / "first-try" / "hybrid.json").read_text())
    page = (ROOT / "docs" / "defaults.md").read_text()
    assert bench.markdown(run["rows"]) in page
    rows = {(r["case"], r["run"]): r for r in run["rows"]}
    assert {r["case"] for r in run["rows"]} == set(bench.HYBRID)
    assert all(rows[c, "default"]["verdict"] == "within targets" for c in bench.HYBRID)
    pk = [rows["pk_infusion", w]["unseen_dose_relative_rmse"] for w in ("expert", "default")]
    assert f"{round(pk[0] / pk[1])}× worse" in page
    assert f"({rows['relaxation_oscillator', 'default']['intervals']} intervals" in page


def test_the_stored_sir_restart_study_is_what_the_docs_quote():
    import json

    from load_benchmark import ROOT

    bench = _load("auto_restarts_sir")
    stored = ROOT / "benchmarks" / "results" / "auto-restarts" / "auto_restarts_sir.json"
    run = json.loads(stored.read_text())
    page = " ".join((ROOT / "docs" / "defaults.md").read_text().split())
    assert bench.summary(run) in page
    with_restarts = [r for r in run["rows"] if r["restarts"] > 0]
    assert sum(r["spurious"] for r in with_restarts) == 0


def test_one_sir_seed_without_restarts_ends_on_a_spurious_optimum():
    import warnings

    from collocnode import Auto, solve

    bench = _load("auto_restarts_sir")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol = solve(bench.problem(bench.SETUPS[1], 36), Auto(restarts=0), seed=0)
    assert abs(sol.p[1] - bench.SETUPS[1][1]) > 0.3 * bench.SETUPS[1][1]
