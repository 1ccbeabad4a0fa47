"""The named experiments behind scripts/train_collocation.py, on tiny settings."""

import json

import pytest

from collocnode._cli import train_collocation


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
    from collocnode._experiments.record import RunRecord

    record = RunRecord(tmp_path)
    record.against_trivial("extrapolation_rmse", 0.5, {"mean": 1.4, "last": 2.0})
    assert "warnings" not in record.result
    assert record.result["extrapolation_rmse_baselines"] == {"mean": 1.4, "last": 2.0}
    record.against_trivial("extrapolation_rmse", 1.69, {"mean": 1.44, "last": 2.0})
    record.against_trivial("test_mse", None, {"mean": 1.0, "last": 0.5})
    first, second = record.result["warnings"]
    assert "1.69 is no better than predicting the training data's mean value (1.44)" in first
    assert "unknown (the re-simulation failed)" in second and "last value (0.5)" in second


def _vdp(tmp_path, *extra):
    args = ["vdp", "--intervals", "30", "--stages", "3", "--max-iter", "60", "--no-jit"]
    return train_collocation([*args, *extra, "--quiet", "--out", str(tmp_path)])


def test_vdp_experiment_records_the_uncertainty_and_draws_the_band(tmp_path):
    from collocnode.serialize import load_model

    _vdp(tmp_path, "--noise", "0.1")
    result = json.loads((tmp_path / "result.json").read_text())
    unc = result["uncertainty"]
    assert unc["method"] == "laplace" and unc["noise_estimated"]
    assert set(unc["noise"]) == {"x", "y"} and 0.05 < unc["noise"]["x"] < 0.2
    band = result["trajectory_band"]
    assert band["method"] == "delta" and 0.0 <= band["truth_inside_share_train"] <= 1.0
    loaded = load_model(tmp_path / "model.json")
    assert loaded.uncertainty is not None and loaded.uncertainty.noise_estimated


@pytest.mark.parametrize(
    "extra, expected",
    [([], {"skipped": "noise-free data: no measurement noise"}), (["--no-uncertainty"], None)],
)
def test_vdp_experiment_without_uncertainty(tmp_path, extra, expected):
    _vdp(tmp_path, "--max-iter", "5", *extra)
    result = json.loads((tmp_path / "result.json").read_text())
    assert result.get("uncertainty") == expected
    assert "trajectory_band" not in result


def test_a_run_records_why_its_uncertainty_could_not_be_computed(tmp_path):
    """Two samples and two fitted quantities: no residual degree of freedom for the noise."""
    import casadi as ca
    import numpy as np

    from collocnode import HybridModel, Parameter, RadauIIA, TrainingProblem, Trajectory, solve
    from collocnode._experiments.record import RunRecord

    model = HybridModel(
        n_states=1,
        blocks={},
        rhs=lambda x, u, t, b, p: ca.vertcat(-p["k"] * x[0]),
        parameters={"k": Parameter(1.0, fit=True)},
    )
    data = Trajectory(t=np.array([0.0, 1.0]), x=np.array([[1.0], [0.5]]))
    problem = TrainingProblem(model, data, interpolation="linear")
    sol = solve(problem, RadauIIA(4, 3), seed=0)
    record = RunRecord(tmp_path)
    assert record.uncertainty(sol) is None
    assert "cannot be estimated" in record.result["uncertainty"]["error"]


@pytest.mark.slow
def test_qvm_experiment_records_the_uncertainty_and_bands_of_its_characteristics(tmp_path):
    from collocnode.serialize import load_model

    train_collocation(
        [
            "qvm",
            "--duration",
            "1",
            "--strategy",
            "W",
            "--road-as-input",
            "--max-iter",
            "5",
            "--stagnation-window",
            "0",
            "--stages",
            "3",
            "--no-jit",
            "--quiet",
            "--out",
            str(tmp_path),
        ]
    )
    result = json.loads((tmp_path / "result.json").read_text())
    assert set(result["uncertainty"]["noise"]) == {"a_b", "a_w"}
    assert not result["uncertainty"]["converged"]  # 5 iterations: numbers with a warning
    for name in ("friction", "spring"):
        summary = result["characteristic_bands"][name]
        assert summary["bounded_share"] == 1.0 and summary["mean_half_width"] > 0
    loaded = load_model(tmp_path / "model.json")
    band = loaded.block_band("friction", [-0.05, 0.0, 0.05])
    assert band.std[1] == 0.0  # F(0) = 0 holds it
