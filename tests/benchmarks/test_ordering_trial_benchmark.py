"""``benchmarks/ordering_trial.py``: a real tiny solve with each ordering gives a row, and the
summary's ratios are those of the medians."""

from __future__ import annotations

import math

import pytest
from load_benchmark import load_benchmark as _load

bench = _load("ordering_trial")


def test_rows_of_a_real_solve_and_the_summary_ratios():
    from collocnode import IpoptOptions, RadauIIA, solve
    from collocnode.models import NeuralODE
    from collocnode.nn import MLP
    from collocnode.problems import get
    from collocnode.training import TrainingProblem

    data = get("vdp").generate(noise=0.0, seed=0).train
    problem = TrainingProblem(NeuralODE(MLP((2, 4, 2), "tanh")), data)
    rows = {}
    for ordering in bench.ORDERINGS:
        ipopt = IpoptOptions(max_iter=4, print_level=0, mumps_ordering=ordering)
        sol = solve(problem, RadauIIA(20, 3, ipopt=ipopt), check=False)
        rows[ordering] = bench._row(sol, sol.timings, sol.iterations)
    assert rows["trial"]["chosen"] in ("auto", "metis") and rows["auto"]["chosen"] is None
    assert rows["trial"]["ordering_trial_s"] > 0 == rows["metis"]["ordering_trial_s"]
    runs = {o: [rows[o], {**rows[o], "total_s": rows[o]["total_s"] + 2.0}] for o in rows}
    s = bench.summarize(runs)
    assert s["auto"]["total_s"] == pytest.approx(rows["auto"]["total_s"] + 1.0)
    best = min(s["auto"]["total_s"], s["metis"]["total_s"])
    assert math.isclose(s["trial_over_best_fixed"], s["trial"]["total_s"] / best)
    assert s["trial"]["chosen"] == [rows["trial"]["chosen"]] * 2
