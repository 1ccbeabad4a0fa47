"""``benchmarks/qvm_timing.py``: a row carries the phase times, the per-iteration IPOPT time and
the quality figures of a real (tiny) training, and the medians and table are built from them."""

from __future__ import annotations

import math

from load_benchmark import load_benchmark as _load

from collocnode._experiments.qvm import QVMOptions
from collocnode.tools._options import replace_flat


def test_a_tiny_run_gives_every_column_and_the_table_shows_it():
    bench = _load("qvm_timing")
    base = QVMOptions(duration=0.5)
    recipe = replace_flat(
        base.recipe, strategy="W", jit=False, stages=3, max_iter=5, print_level=0,
        stagnation_window=0, settle_rtol=0.0, road_as_input=False,
    )  # fmt: skip
    row = bench.one_run(replace_flat(base, recipe=recipe))
    # the regression's IPOPT iterations are its own (in "regression"), not the NLP's
    assert row["strategy"] == "W" and row["iterations"] == 5 and row["regression"]["iterations"] > 0
    assert row["warm_start_s"] > 0 and row["total_s"] >= row["ipopt_s"] + row["warm_start_s"]
    assert math.isclose(row["ipopt_per_iteration_s"], row["ipopt_s"] / 5)
    for key in ("test_rmse_ratio", "friction_error", "spring_error"):
        assert row[key] > 0
    other = {**row, "total_s": row["total_s"] + 2.0, "status": "success"}
    med = bench.median_row([row, other])
    assert med["total_s"] == row["total_s"] + 1.0 and med["runs"] == 2
    assert med["statuses"] == sorted({row["status"], "success"})
    four = {**med, "formulation": "four", "ipopt_per_iteration_s": med["ipopt_per_iteration_s"] / 2}
    text = bench.table([med, four])
    assert text.splitlines()[2].startswith("| W | five | ")
    assert "| W | four | " in text and four["per_iteration_ratio"] == 0.5
