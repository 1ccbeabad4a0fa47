"""``benchmarks/qvm_warmstart.py``: a row carries its regression and the quality before and after
the 10 polish iterations, from a real (tiny) training."""

from __future__ import annotations

from load_benchmark import load_benchmark as _load


def test_a_table_row_has_the_regression_and_both_quality_snapshots(monkeypatch):
    bench = _load("qvm_warmstart")
    monkeypatch.setattr(bench, "ROWS", (("kernel", "kernel", 10, "gauss-newton", 20),))
    (row,) = bench.table(0.3)
    assert row["regression"]["iterations"] == 20 and row["regression"]["samples"] == 31
    for k in ("k=0", "k=10"):
        assert set(row[k]) == {"test_rmse_ratio", "friction_error", "spring_error"}
        assert all(value > 0 for value in row[k].values())
