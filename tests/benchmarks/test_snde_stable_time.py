"""``benchmarks/snde_stable_time.py``: the stable-time metric (SNDE eq. 32) on synthetic rollouts
with known answers, the NODE/SNODE pair, and a tiny end-to-end run."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from load_benchmark import load_benchmark

st = load_benchmark("snde_stable_time")
T = np.round(np.arange(0.0, 20.0 + 1e-9, 0.1), 10)  # 201 samples, dt = 0.1


def test_error_that_grows_through_the_threshold_has_a_known_stable_time():
    err = 10.0 ** (T / 2.0)  # E = 10^3 exactly at t = 6: the last time with E < 10^3 is 5.9
    assert st.stable_time(T, err) == pytest.approx(5.9)
    assert st.first_exceedance_time(T, err) == pytest.approx(5.9)
    assert st.stable_time(T, err, e_stab=10.0) == pytest.approx(1.9)


def test_a_trial_that_stays_below_the_threshold_scores_its_length():
    err = np.full(T.size, 0.5)
    assert st.stable_time(T, err) == pytest.approx(20.0)
    assert st.first_exceedance_time(T, err) == pytest.approx(20.0)
    # measured from the start of the trial
    assert st.stable_time(T + 100.0, err) == pytest.approx(20.0)


def test_eq32_is_the_last_time_below_not_the_first_exceedance():
    err = np.zeros(T.size)
    err[(T > 3.05) & (T < 4.05)] = 5e3  # above the threshold on [3.1, 4.0], back below after
    assert st.stable_time(T, err) == pytest.approx(20.0)  # max{t | E(t) < E_stab}
    assert st.first_exceedance_time(T, err) == pytest.approx(3.0)


def test_a_diverged_rollout_counts_as_above_the_threshold_from_its_failure_on():
    truth = np.column_stack([np.cos(T), np.sin(T)])
    pred = truth[:81] * 1.01  # the solver failed at t = 8.1
    err = st.relative_error(pred, truth)
    np.testing.assert_allclose(err[:81], 0.01, rtol=1e-12)
    assert np.all(np.isinf(err[81:]))
    assert st.stable_time(T, err) == pytest.approx(8.0)
    nan_pred = truth.copy()
    nan_pred[50:] = np.nan
    assert st.stable_time(T, st.relative_error(nan_pred, truth)) == pytest.approx(4.9)


def test_relative_error_is_the_papers_state_error():
    truth = np.array([[3.0, 4.0], [1.0, 0.0]])
    pred = np.array([[3.0, 4.0 + 5.0], [0.0, 0.0]])
    np.testing.assert_allclose(st.relative_error(pred, truth), [1.0, 1.0])


def test_summary_has_table3_columns():
    s = st.summarize([1.0, 2.0, 4.0])
    assert s == {"n": 3, "min": 1.0, "max": 4.0, "median": 2.0, "mean": 7 / 3, "std": s["std"]}
    assert s["std"] == pytest.approx(np.std([1.0, 2.0, 4.0], ddof=1))
    assert st.summarize([5.0])["std"] == 0.0


def test_paper_table3_is_copied():
    assert st.PAPER_TABLE3["two_body"]["median"] == 121.7
    assert st.PAPER_TABLE3["rigid_body"]["trial_length"] == 1600.0
    assert st.PAPER_TABLE3["dcdc"]["min"] == 19.3
    assert st.E_STAB == 1e3


def test_epochs_option():
    assert st.parse_epochs("7", ("two_body", "dcdc")) == (("two_body", 7), ("dcdc", 7))
    cfg = st.Config(epochs=st.parse_epochs("dcdc=3", st.SYSTEMS))
    assert cfg.epochs_for("dcdc") == 3 and cfg.epochs_for("two_body") == 1000
    with pytest.raises(ValueError, match="unknown system"):
        st.parse_epochs("lorenz=3", st.SYSTEMS)


def test_node_and_snode_share_every_option_but_the_stabilization():
    pytest.importorskip("torchdiffeq")
    from collocnode.compare.methods.node import NODEOptions

    pair = st.make_pair("rigid_body", st.Config(epochs=(("rigid_body", 5),)), seed=3)
    node, snode = pair["NODE"], pair["SNODE"]
    assert type(node).__name__ == "NODE" and snode.name == "snde"
    for f in NODEOptions.__dataclass_fields__:
        assert getattr(node.options, f) == getattr(snode.options, f), f
    o = snode.options
    assert (o.gamma, o.hidden, o.lr, o.lr_min, o.shooting) == (32.0, (64, 64), 1e-4, 1e-5, 3)
    assert (o.activation, o.optimizer, o.weight_decay, o.epochs, o.seed) == (
        "relu",
        "adamw",
        1e-6,
        5,
        3,
    )


def test_tiny_end_to_end_run_writes_json_and_markdown(tmp_path):
    pytest.importorskip("torchdiffeq")
    args = "--systems rigid_body --trials 2 --epochs 1 --batch-size 512 --n-train 2 --horizon 2"
    assert st.main([*args.split(), "--out", str(tmp_path)]) == 0
    data = json.loads((tmp_path / "stable_time.json").read_text())
    (res,) = data["results"]
    assert res["system"] == "rigid_body"
    for label in ("NODE", "SNODE"):
        # each (system, seed, model) unit names its machine: a resumed run's may come from others
        assert res["seeds"][0]["models"][label]["machine"] == data["machine"]
        trials = res["seeds"][0]["models"][label]["trials"]
        assert len(trials) == 2
        assert all(0.0 <= r["stable_time"] <= 2.0 + 1e-9 for r in trials)
        assert res["summary"][label]["stable_time"]["n"] == 2
    md = (tmp_path / "stable_time.md").read_text()
    assert "NODE (paper, Table 3)" in md and "341.7" in md and "SNODE (ours)" in md


def test_seeds_run_in_parallel_jobs_give_the_serial_result(tmp_path):
    pytest.importorskip("torchdiffeq")
    args = "--systems rigid_body --trials 1 --seeds 2 --epochs 1 --batch-size 512 --n-train 2"
    runs = {}
    for jobs in (1, 2):
        out = tmp_path / f"jobs{jobs}"
        assert (
            st.main([*args.split(), "--horizon", "1", "--jobs", str(jobs), "--out", str(out)]) == 0
        )
        (res,) = json.loads((out / "stable_time.json").read_text())["results"]
        assert [s["seed"] for s in res["seeds"]] == [0, 1]
        runs[jobs] = [
            (s["seed"], label, m["best_loss"], [r["stable_time"] for r in m["trials"]])
            for s in res["seeds"]
            for label, m in s["models"].items()
        ]
        assert res["summary"]["NODE"]["stable_time"]["n"] == 2
    assert runs[1] == runs[2]
    assert runs[1][0][2] != runs[1][2][2]  # the two seeds trained different models


def test_a_rerun_reuses_the_stored_units_and_refuses_other_settings(tmp_path, capsys):
    pytest.importorskip("torchdiffeq")
    from collocnode.tools.tasks import StoredTaskMismatch

    args = "--systems rigid_body --trials 1 --epochs 1 --batch-size 512 --n-train 2 --horizon 1"
    assert st.main([*args.split(), "--seeds", "1", "--out", str(tmp_path)]) == 0
    first = json.loads((tmp_path / "stable_time.json").read_text())["results"][0]["seeds"]
    assert (tmp_path / "units" / "rigid_body-seed0-node.json").exists()
    capsys.readouterr()
    assert st.main([*args.split(), "--seeds", "2", "--out", str(tmp_path)]) == 0
    trained = capsys.readouterr().out
    assert "[rigid_body seed 1] NODE" in trained and "[rigid_body seed 0]" not in trained
    stored = json.loads((tmp_path / "stable_time.json").read_text())
    again = stored["results"][0]["seeds"]
    assert [s["seed"] for s in again] == [0, 1] and again[0] == first[0]
    # their wall time is not this run's
    assert stored["units_reused"] == ["rigid_body-seed0-node", "rigid_body-seed0-snode"]
    with pytest.raises(StoredTaskMismatch, match="trials"):
        st.main([*args.replace("--trials 1", "--trials 2").split(), "--out", str(tmp_path)])


def test_a_run_that_adds_a_model_reuses_a_stored_runs_units_and_refuses_other_settings(
    tmp_path, capsys
):
    pytest.importorskip("torchdiffeq")
    from collocnode.tools.tasks import StoredTaskMismatch

    args = "--systems rigid_body --trials 1 --epochs 1 --batch-size 512 --n-train 2 --horizon 1"
    node_only = tmp_path / "node"
    assert st.main([*args.split(), "--models", "node", "--out", str(node_only)]) == 0
    stored = node_only / "stable_time.json"
    node = json.loads(stored.read_text())["results"][0]["seeds"][0]["models"]["NODE"]
    capsys.readouterr()
    pair = tmp_path / "pair"
    assert st.main([*args.split(), "--out", str(pair), "--units-from", str(stored)]) == 0
    trained = capsys.readouterr().out
    assert "1 unit(s) taken from" in trained and "rigid_body-seed0-node" in trained
    assert "[rigid_body seed 0] SNODE" in trained and "[rigid_body seed 0] NODE" not in trained
    data = json.loads((pair / "stable_time.json").read_text())
    assert data["results"][0]["seeds"][0]["models"]["NODE"] == node
    assert data["units_reused"] == ["rigid_body-seed0-node"]
    assert data["units_from"] == [str(stored)]
    # a unit of this run made with other settings is refused, named
    with pytest.raises(StoredTaskMismatch, match="rigid_body-seed0-node"):
        st.import_units(stored, st.replace(st.parse_args(args.split())[0], trials=2), tmp_path)
    with pytest.raises(SystemExit):
        st.parse_args(["--units-from", str(stored)])  # nowhere to copy the units to
    with pytest.raises(ValueError, match="not a stored stable-time run"):
        st.import_units(pair / "stable_time.md", st.Config(), tmp_path / "units")


def test_a_stored_units_null_counts_as_the_non_finite_value_it_stood_for():
    def result(end):
        trial = {"stable_time": 50.0, "time_to_error_1": 5.0, "error_end": end}
        finite = {"stable_time": 200.0, "time_to_error_1": 9.0, "error_end": 0.5}
        finite["constraint_error_end"] = 0.5
        model = {"trials": [dict(trial, constraint_error_end=end), finite, finite]}
        return {"seeds": [{"horizon_s": 200.0, "models": {"ANODE": model}}]}

    # a diverged trial's inf is null once its unit is stored (strict JSON) and read back
    live, reloaded = st.summary_of(result(math.inf)), st.summary_of(result(None))
    assert live == reloaded
    assert reloaded["ANODE"]["median_error_end"] == 0.5 and reloaded["ANODE"]["diverged"] == 1
    # a run stored before the constraint drift was measured has no such key: no median
    assert reloaded["ANODE"]["median_constraint_error_end"] == 0.5
    assert st._median_of([{"error_end": 1.0}], "constraint_error_end") is None
    assert st._median_of([{"error_end": None}] * 2, "error_end") == math.inf


def test_models_option():
    assert st.parse_models("node,snode") == st.DEFAULT_MODELS == st.Config().models
    assert st.parse_models(" TPO, anode,tpo ") == ("tpo", "anode")
    with pytest.raises(ValueError, match="unknown or no model"):
        st.parse_models("node,lnn")
    cfg, *_ = st.parse_args(["--models", "anode,sanode,tpo"])
    assert cfg.models == ("anode", "sanode", "tpo") and cfg.labels == ("ANODE", "SANODE", "TPO")
    with pytest.raises(SystemExit):
        st.parse_args(["--models", "lnn"])


def test_the_other_baselines_share_the_snodes_options():
    pytest.importorskip("torchdiffeq")
    from collocnode.compare.methods.node import NODEOptions

    cfg = st.Config(epochs=(("two_body", 5),), models=tuple(st.MODELS))
    models = st.make_models("two_body", cfg, seed=2)
    assert list(models) == ["NODE", "SNODE", "ANODE", "SANODE", "TPO", "HNN", "HNN (SNDE code)"]
    node, snode = models["NODE"], models["SNODE"]
    # the (S)ANODE: two augmented states (Table 4), fitted to zero in the loss (the SNDE code)
    augmented = {"augment": 2, "augmented_loss": True}
    for f in NODEOptions.__dataclass_fields__:
        want = augmented.get(f, getattr(node.options, f))
        assert getattr(models["ANODE"].options, f) == want, f
    assert (models["ANODE"].name, node.options.augment) == ("anode", 0)
    assert not node.options.augmented_loss and not snode.options.augmented_loss
    for f in snode.options.__dataclass_fields__:
        want = augmented.get(f, getattr(snode.options, f))
        assert getattr(models["SANODE"].options, f) == want, f
        if f not in ("gamma", "projection"):
            assert getattr(models["TPO"].options, f) == getattr(snode.options, f), f
    assert (models["TPO"].options.gamma, models["TPO"].options.projection) == (0.0, "tangent")
    # the HNNs: the NODE with a tanh Hamiltonian of the state, or the SNDE code's of its square
    hnn = {"HNN": {"hamiltonian": "state", "activation": "tanh"}}
    hnn["HNN (SNDE code)"] = {"hamiltonian": "squares"}
    for label, changed in hnn.items():
        for f in NODEOptions.__dataclass_fields__:
            want = changed.get(f, getattr(node.options, f))
            assert getattr(models[label].options, f) == want, (label, f)


def test_tiny_run_of_the_other_baselines(tmp_path):
    pytest.importorskip("torchdiffeq")
    args = "--systems rigid_body --trials 1 --epochs 1 --batch-size 512 --n-train 2 --horizon 1"
    assert st.main([*args.split(), "--models", "anode,tpo", "--out", str(tmp_path)]) == 0
    data = json.loads((tmp_path / "stable_time.json").read_text())
    (res,) = data["results"]
    assert list(res["seeds"][0]["models"]) == ["ANODE", "TPO"] == list(res["summary"])
    md = (tmp_path / "stable_time.md").read_text()
    assert "ANODE (ours)" in md and "TPO (ours)" in md and "NODE (paper, Table 3)" in md
    assert "SNODE" not in md
    hnn = tmp_path / "hnn"
    args = args.replace("rigid_body", "two_body")
    assert st.main([*args.split(), "--models", "hnn,hnn_code", "--out", str(hnn)]) == 0
    (res,) = json.loads((hnn / "stable_time.json").read_text())["results"]
    fitted = res["seeds"][0]["models"]
    assert fitted["HNN"]["options"]["hamiltonian"] == "state"
    assert fitted["HNN (SNDE code)"]["options"]["hamiltonian"] == "squares"


def test_constraint_drift_is_zero_on_the_true_flow_and_known_off_it():
    from collocnode import problems

    system = problems.get("rigid_body")  # the Casimir |u|² is conserved (SNDE Fig. 8(d))
    t = system.time_grid(51)
    truth = system.simulate(t, system.x0).x
    assert np.max(st.constraint_error(system, t, truth)) < 1e-8
    # the Casimir |u|²/2 of a state scaled by 1.1 grows by 0.21 |u|²/2
    scaled = truth.copy()
    scaled[-1] *= 1.1
    err = st.constraint_error(system, t, scaled)
    assert err[-1] == pytest.approx(0.21 * 0.5 * np.sum(truth[-1] ** 2), rel=1e-6)
    # a rollout that stopped early: the missing samples are inf
    short = st.constraint_error(system, t, truth[:10])
    assert np.isinf(short[10:]).all() and np.isfinite(short[:10]).all()


def test_a_unit_of_one_model_trains_what_it_would_after_the_systems_other_model():
    """Units are (system, seed, model): each trainer seeds itself, so training the SNODE in its
    own unit gives the model it gave after the NODE in one process."""
    pytest.importorskip("torchdiffeq")
    from collocnode import problems

    cfg = st.Config(systems=("rigid_body",), trials=1, epochs=(("rigid_body", 2),), n_train=2)
    cfg = st.replace(cfg, batch_size=512, horizon=1.0)
    alone = st.run_unit("rigid_body", cfg, 0, "snode", log=lambda _: None)["fit"]
    system = problems.get("rigid_body")
    data = st.training_data(system, cfg.n_train, np.random.default_rng([0, 0]))
    pair = st.make_pair("rigid_body", cfg, seed=0)
    pair["NODE"].fit(system, data)
    after = pair["SNODE"].fit(system, data)
    assert alone["best_loss"] == after.best_loss
    assert alone["epochs"] == after.epochs == 2


@pytest.mark.parametrize("model", ["snode", "sanode"])
def test_a_unit_stopped_in_its_rollouts_keeps_its_training(tmp_path, monkeypatch, model):
    """The trained weights are stored before the rollouts: a unit stopped there is not trained
    again, and its rollouts from the stored weights are the ones it would have made."""
    pytest.importorskip("torchdiffeq")
    from collocnode.tools.tasks import StoredTaskMismatch

    cfg = st.Config(systems=("rigid_body",), trials=2, epochs=(("rigid_body", 3),), n_train=2)
    cfg = st.replace(cfg, batch_size=512, horizon=1.0)
    whole = st.run_unit("rigid_body", cfg, 0, model, log=lambda _: None)["fit"]

    evaluate = st.evaluate

    def stopped(*args, **kwargs):
        raise KeyboardInterrupt  # the unit is stopped once trained

    monkeypatch.setattr(st, "evaluate", stopped)
    with pytest.raises(KeyboardInterrupt):
        st.run_unit("rigid_body", cfg, 0, model, log=lambda _: None, checkpoints=tmp_path)
    key = st.unit_key("rigid_body", 0, model)
    assert (tmp_path / f"{key}.trained.json").exists()
    monkeypatch.setattr(st, "evaluate", evaluate)
    lines: list[str] = []
    resumed = st.run_unit("rigid_body", cfg, 0, model, log=lines.append, checkpoints=tmp_path)
    assert "weights trained earlier (success, 3 epochs)" in lines[0]
    resumed = resumed["fit"]
    assert [resumed[k] for k in ("status", "epochs", "best_loss")] == [
        whole[k] for k in ("status", "epochs", "best_loss")
    ]
    stored = json.loads((tmp_path / f"{key}.trained.json").read_text())["result"]["fit"]
    assert resumed["train_time_s"] == stored["train_time_s"]  # the training's, not the setup's

    def outcome(trials):  # all but the rollouts' wall times
        return [{k: v for k, v in r.items() if k != "predict_time_s"} for r in trials]

    assert outcome(resumed["trials"]) == outcome(whole["trials"])
    # weights trained with other settings are refused, not rolled out
    with pytest.raises(StoredTaskMismatch, match="other settings"):
        st.run_unit(
            "rigid_body",
            st.replace(cfg, trials=1),
            0,
            model,
            log=lambda _: None,
            checkpoints=tmp_path,
        )


def test_a_unit_stopped_in_its_training_resumes_from_its_epoch_checkpoint(tmp_path, monkeypatch):
    """A unit interrupted in epoch 3 of 4 is not stored; its epoch checkpoint holds epoch 2,
    and the rerun goes on from there to the model of an uninterrupted unit, then deletes it."""
    pytest.importorskip("torchdiffeq")
    import torch

    from collocnode.compare.methods.gradient import GradientTrainer

    cfg = st.Config(systems=("rigid_body",), trials=1, epochs=(("rigid_body", 4),), n_train=2)
    cfg = st.replace(cfg, batch_size=512, horizon=1.0)
    whole = st.run_unit("rigid_body", cfg, 0, "node", log=lambda _: None)["fit"]

    epoch = GradientTrainer._epoch

    def interrupted(self, number, *args, **kwargs):
        if number == 3:
            raise KeyboardInterrupt  # a Ctrl-C inside epoch 3
        return epoch(self, number, *args, **kwargs)

    monkeypatch.setattr(GradientTrainer, "_epoch", interrupted)
    with pytest.raises(KeyboardInterrupt):
        st.run_unit("rigid_body", cfg, 0, "node", log=lambda _: None, checkpoints=tmp_path)
    key = st.unit_key("rigid_body", 0, "node")
    epoch_file = st.epoch_checkpoint(tmp_path, key)
    assert epoch_file.name == f"{key}.epoch.pt"
    assert st.epoch_checkpoint(tmp_path, "a/b c").name == "a_b_c.epoch.pt"
    assert not (tmp_path / f"{key}.trained.json").exists()
    assert torch.load(epoch_file, weights_only=True)["epoch"] == 2
    monkeypatch.setattr(GradientTrainer, "_epoch", epoch)
    lines: list[str] = []
    resumed = st.run_unit("rigid_body", cfg, 0, "node", log=lines.append, checkpoints=tmp_path)
    assert "resumed from epoch 2 of" in lines[0]
    assert [resumed["fit"][k] for k in ("status", "epochs", "best_loss")] == [
        whole[k] for k in ("status", "epochs", "best_loss")
    ]
    assert not epoch_file.exists() and (tmp_path / f"{key}.trained.json").exists()
