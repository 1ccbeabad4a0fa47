"""The named experiments behind scripts/train_collocation.py, on tiny settings."""

import json

import pytest

from collocnode.cli import train_collocation


@pytest.mark.parametrize("problem", ["smsd", "slider_crank"])
def test_generic_experiment_writes_metrics(problem, tmp_path, capsys):
    code = train_collocation(
        [
            problem,
            "--out",
            str(tmp_path),
            "--intervals",
            "30",
            "--hidden",
            "4",
            "--max-iter",
            "60",
            "--quiet",
        ]
    )
    result = json.loads((tmp_path / "result.json").read_text())
    assert code == (0 if result["status"] in ("success", "acceptable") else 1)
    assert result["problem"] == problem and result["n_params"] > 0
    assert result["test_mse"] is not None and result["test_mse"] >= 0
    assert (tmp_path / "trajectories.png").exists()
    assert (tmp_path / "model.json").exists()  # every system's trained model is kept
    if problem == "slider_crank":
        assert result["max_constraint_residual"] < 1e-8


def test_generic_experiment_rejects_bad_preset(tmp_path, capsys):
    assert train_collocation(["smsd", "--preset", "nope", "--out", str(tmp_path)]) == 2
    assert "preset of smsd" in capsys.readouterr().err


def test_a_model_no_better_than_a_trivial_predictor_gets_a_warning(tmp_path):
    from collocnode.experiments.record import RunRecord

    record = RunRecord(tmp_path)
    record.against_trivial("extrapolation_rmse", 0.5, {"mean": 1.4, "last": 2.0})
    assert "warnings" not in record.result
    assert record.result["extrapolation_rmse_baselines"] == {"mean": 1.4, "last": 2.0}
    record.against_trivial("extrapolation_rmse", 1.69, {"mean": 1.44, "last": 2.0})
    record.against_trivial("test_mse", None, {"mean": 1.0, "last": 0.5})
    first, second = record.result["warnings"]
    assert "1.69 is no better than predicting the training data's mean value (1.44)" in first
    assert "unknown (the re-simulation failed)" in second and "last value (0.5)" in second
