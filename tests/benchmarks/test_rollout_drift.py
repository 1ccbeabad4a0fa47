"""The roll-out drift benchmark: when a roll-out leaves the truth, on a run folder made here."""

from __future__ import annotations

import json

import numpy as np
import pytest
from load_benchmark import load_benchmark

rollout_drift = load_benchmark("rollout_drift")


def _run_folder(tmp_path, lag_from: float):
    """A compare.py folder whose LSTM roll-out matches the data up to ``lag_from`` [s] and is
    off by 1 in its second state after it."""
    t = np.arange(0.0, 3.0, 0.01)
    x = np.column_stack([np.sin(t), np.cos(t)])
    pred = x.copy()
    pred[t >= lag_from, 1] += 1.0
    np.savez(tmp_path / "lstm.npz", t=t, x_data=x, x_pred=pred)
    meta = {"n_train": 100, "state_names": ["a", "b"], "seed": 3}
    rows = [{"method": "lstm", "best_loss": 1e-6}]
    (tmp_path / "compare.json").write_text(json.dumps({"meta": meta, "rows": rows}))
    return tmp_path, t, x, pred


def test_the_first_time_past_the_threshold_and_the_window_errors_are_those_of_the_arrays(
    tmp_path,
):
    folder, _, x, pred = _run_folder(tmp_path, lag_from=0.5)
    r = rollout_drift.drift(folder, "lstm", threshold=0.1)
    # the error (0 + 1) / 2 = 0.5 per sample from t = 0.5 s on
    assert r["first_exceeds_s"] == pytest.approx(0.5)
    assert r["train_end_s"] == pytest.approx(0.99)
    assert r["train_mse"] == pytest.approx(((pred[:100] - x[:100]) ** 2).mean())
    assert r["full_mse"] == pytest.approx(((pred - x) ** 2).mean())
    assert list(r["largest_states"]) == ["b", "a"] and r["seed"] == 3


def test_a_roll_out_that_stays_under_the_threshold_never_exceeds_it(tmp_path, capsys):
    folder, *_ = _run_folder(tmp_path, lag_from=10.0)
    assert rollout_drift.main([str(folder), "--json", str(tmp_path / "d.json")]) == 0
    assert "| never |" in capsys.readouterr().out
    assert json.loads((tmp_path / "d.json").read_text())["runs"][0]["first_exceeds_s"] is None


def test_a_missing_method_and_a_bad_threshold_are_refused(tmp_path):
    folder, *_ = _run_folder(tmp_path, lag_from=0.5)
    with pytest.raises(SystemExit, match="no row of method 'fnode'"):
        rollout_drift.main([str(folder), "--method", "fnode"])
    with pytest.raises(SystemExit):
        rollout_drift.main([str(folder), "--threshold", "0"])
