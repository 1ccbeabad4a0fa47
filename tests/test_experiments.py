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
