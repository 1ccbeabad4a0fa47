"""The quarter-vehicle comparison: same data for every method, test-road acceleration RMSE,
the hybrid collocation row from the QVM experiment, SNDE not applicable, quick settings."""

from __future__ import annotations

import dataclasses
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from collocnode.compare import make_trainer
from collocnode.compare._run import (
    CompareConfig,
    add_time_to_target,
    default_methods,
    markdown,
    run_method,
)
from collocnode.compare._run import qvm as cq

ROOT = Path(__file__).resolve().parents[2]
APPLICABLE = ("collocation", "node", "fnode", "mbdnode", "mnn")
# a tiny horizon keeps every training and both road roll-outs to seconds
TINY = dataclasses.replace(cq.SETTINGS, quick_duration_s=0.4)
TINY_OPTIONS = {
    "collocation": {"epochs": 8},
    "node": {"epochs": 2, "hidden": (8, 8)},
    "fnode": {"epochs": 2, "hidden": (8, 8)},
    "mbdnode": {"epochs": 2, "hidden": (8, 8)},
    "mnn": {"epochs": 2, "hidden": (8, 8), "stride": 4},
}


@pytest.fixture(scope="module")
def road_data():
    return cq.load(None, quick=True, seed=0, noise=None, settings=TINY)


def _cfg(methods: tuple[str, ...]) -> CompareConfig:
    return CompareConfig(
        "qvm", methods, quick=True, device="cpu", eval_every_s=1e-9, options=TINY_OPTIONS
    )


@pytest.mark.parametrize("method", APPLICABLE)
def test_every_applicable_method_gets_a_test_road_rmse(method, road_data):
    cfg = _cfg((method,))
    evaluation = cq.RoadEvaluation(road_data)
    row = run_method(method, road_data.system, road_data.split, cfg, False, None, evaluation)
    assert row["status"] in ("success", "iteration_limit"), row.get("traceback", row["message"])
    for key in ("train_rmse", "test_road_rmse", "train_time_s", "n_params"):
        assert row[key] is not None and row[key] > 0 and math.isfinite(row[key]), key
    assert row["acceleration_source"] in cq.SOURCES.values()
    assert all(err is None or err > 0 for _, err in row["curve"])
    hybrid = method == "collocation"
    assert (row["friction_rmse"] is not None) is hybrid
    assert (row["spring_rmse"] is not None) is hybrid
    if not hybrid:
        assert row["curve"], "iterative methods record the error-vs-time curve"


def test_snde_is_not_applicable_for_lack_of_constraints(road_data):
    row = run_method(
        "snde", road_data.system, road_data.split, _cfg(("snde",)), False, None,
        cq.RoadEvaluation(road_data),
    )  # fmt: skip
    assert row["status"] == "not applicable"
    assert "constraint" in row["message"]


def test_data_is_the_presets_road_noise_and_quick_horizon(road_data):
    system, split = road_data.system, road_data.split
    assert road_data.noise == 0.02  # the preset's noise: 2 % of each signal's σ
    assert split.train.n_samples == split.test.n_samples == 401
    assert np.allclose(split.train.u[:, 0], system.road.velocity(split.train.t), atol=1e-12)
    assert np.allclose(split.test.u[:, 0], system.test_road.velocity(split.test.t), atol=1e-12)
    # the references are the noise-free truths on both roads
    assert np.allclose(
        road_data.truth_test.x, system.simulate(split.test.t, road=system.test_road).x
    )
    assert cq.acceleration_columns(system) == [2, 3]


def test_a_callback_stop_in_pretraining_ends_strategy_two(road_data):
    trainer = make_trainer("collocation", "qvm", quick=True, epochs=8)
    seen = []
    result = trainer.fit(
        road_data.system,
        road_data.split.train,
        callback=lambda s: seen.append(s.iteration) or len(seen) == 2,
    )
    assert result.status == "stopped" and len(seen) == 2
    assert trainer.trained.phases == {}  # the pre-training's iterate is the result


def test_collocation_row_is_the_qvm_experiment(road_data):
    """The comparison's hybrid model and scores agree with the experiment's own evaluation
    (up to the sampled road velocity, linearly interpolated for every method alike)."""
    from collocnode._experiments import qvm as experiment

    trainer = make_trainer("collocation", "qvm", quick=True, epochs=8)
    assert trainer.options.recipe.strategy == "II" and trainer.derivative_source == "output"
    result = trainer.fit(road_data.system, road_data.split.train)
    fields, arrays = cq.RoadEvaluation(road_data).score(trainer)
    ref, _ = experiment.evaluate(trainer.solution, road_data.system, road_data.split)
    assert fields["test_road_rmse"] == pytest.approx(ref["test_rmse"], rel=0.02)
    assert fields["train_rmse"] == pytest.approx(ref["train_rmse"], rel=0.02)
    assert fields["friction_rmse"] == ref["characteristic_rmse"]["friction"]
    assert fields["spring_rmse"] == ref["characteristic_rmse"]["spring"]
    assert result.n_params == trainer.n_params == 2 * (2 * 5 + 5 * 5 + 5 + 5 + 1)
    # the model's outputs a_b, a_w are its x'[2:4]
    x, dx = trainer.predict_with_derivatives(arrays["t"], np.zeros(5), road_data.split.test.u)
    assert np.allclose(dx[:, :2], x[:, 2:4]) and np.allclose(dx[:, 4], road_data.split.test.u[:, 0])


def test_field_derivatives_are_the_network_output(oscillator):
    split = oscillator.generate(n_steps=40, n_train=30)
    trainer = make_trainer("fnode", quick=True, epochs=1, hidden=(8,), device="cpu")
    trainer.fit(oscillator, split.train)
    x, dx = trainer.predict_with_derivatives(split.full.t, split.full.x[0])
    assert np.allclose(x, trainer.predict(split.full.t, split.full.x[0]))
    assert np.allclose(dx[:, 0], x[:, 1])  # q' is the velocity state, q'' the network
    assert np.all(np.isfinite(dx))


def test_mnn_derivatives_come_with_its_rollout(oscillator):
    split = oscillator.generate(n_steps=40, n_train=30)
    trainer = make_trainer("mnn", quick=True, epochs=1, hidden=(8,), horizon=5, device="cpu")
    trainer.fit(oscillator, split.train)
    x, dx = trainer.predict_with_derivatives(split.full.t, split.full.x[0])
    assert x.shape == dx.shape == split.full.x.shape and np.all(np.isfinite(dx))
    assert np.allclose(x, trainer.predict(split.full.t, split.full.x[0]))


@pytest.mark.parametrize("quick", [True, False])
def test_quick_and_full_settings(quick):
    cfg = CompareConfig("qvm", cq.METHODS, quick=quick)
    assert cfg.eval_every_s == cq.SETTINGS.curve_every(quick)
    assert default_methods("qvm") == cq.METHODS
    assert default_methods("vdp") == ("collocation", "fnode", "mbdnode")
    coll = make_trainer("collocation", "qvm", quick=quick).options
    settings = coll.settings
    if quick:
        assert (settings.stages, settings.max_iter, settings.jit) == (3, 30, False)
        assert cq.SETTINGS.duration(True) <= 4.0 and cq.SETTINGS.threads(True) == 1
    else:  # the paper's: 2,500 x 5 over 42 s, 150 iterations per phase, 1-5-5-1 squareplus
        assert (settings.stages, settings.intervals, settings.max_iter) == (5, 2500, 150)
        assert coll.recipe.hidden == (5, 5) and coll.recipe.activation == "squareplus"
        assert cq.SETTINGS.duration(False) == 42.0
    for name in ("node", "fnode", "mbdnode", "mnn"):
        opts = make_trainer(name, "qvm", quick=quick).options
        assert opts.normalize is True  # millimetre states, derivatives up to tens of m/s²
        assert (opts.epochs == 20) is quick
    node = make_trainer("node", "qvm").options
    assert (node.shooting, node.batch_size, node.epochs) == (4000, 3, 250)  # Kamp's mini-batches


def test_time_to_target_uses_the_test_road_rmse():
    rows = [
        {"method": "collocation", "test_road_rmse": 0.1, "train_time_s": 20.0},
        {"method": "fnode", "test_road_rmse": 0.05, "curve": [(1.0, 0.5), (9.0, 0.08)]},
        {"method": "node", "test_road_rmse": 1.0, "curve": [(1.0, 2.0)]},
    ]
    add_time_to_target(rows, "test_road_rmse")
    assert [r["time_to_target_s"] for r in rows] == [20.0, 9.0, None]


def test_markdown_shows_the_qvm_columns():
    report = {
        "problem": "qvm",
        "meta": {
            "preset": "kamp2023",
            "n_train": 401,
            "n_total": 401,
            "dt": 1e-3,
            "duration_s": 0.4,
            "noise": 0.02,
            "noise_kind": "fraction",
            "device": "cpu",
            "seed": 0,
            "quick": True,
            "mse": "accelerations",
        },
        "rows": [
            {"method": "collocation", "status": "success", "test_road_rmse": 0.07},
            {"method": "snde", "status": "not applicable", "message": "no constraint"},
        ],
    }
    md = markdown(report)
    assert "test-road a RMSE [m/s²]" in md and "friction RMSE [N]" in md
    assert "| collocation | success |" in md and "no constraint" in md


@pytest.mark.slow
def test_quick_script_run(tmp_path):
    """The CI run: every method of the QVM comparison, quick settings, in under 3 minutes."""
    out = tmp_path / "qvm"
    script = str(ROOT / "scripts" / "compare.py")
    proc = subprocess.run(
        [sys.executable, script, "qvm", "--quick", "--out", str(out), "--no-progress"],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads((out / "compare.json").read_text())
    rows = {r["method"]: r for r in report["rows"]}
    assert list(rows) == list(cq.METHODS)
    assert rows["snde"]["status"] == "not applicable"
    for name in APPLICABLE:
        assert rows[name]["test_road_rmse"] is not None, rows[name]
    assert (out / "accelerations.png").exists()
