"""Runs that end cleanly: one output directory per run, a run id in every file, Ctrl-C and
failures reported with their phase, the robustness study's one status, compare.py's exit code.

Everything goes through the command lines' entry points in this process; interrupts and
failures are injected where the library would raise them.
"""

from __future__ import annotations

import json

import pytest
from PIL import Image

from collocnode._cli import compare, train_collocation
from collocnode._experiments import vdp
from collocnode.recipes.generic import SystemRecipe

TINY_VDP = ("vdp", "--intervals", "8", "--stages", "2", "--max-iter", "5", "--no-jit", "--quiet")
TINY_SMSD = ("smsd", "--intervals", "10", "--hidden", "3", "--max-iter", "5", "--quiet")


def _stderr_line(capsys) -> str:
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1, lines
    return lines[0]


def test_every_file_of_a_run_carries_its_run_id(tmp_path):
    out = tmp_path / "run"
    train_collocation([*TINY_SMSD, "--out", str(out)])
    result = json.loads((out / "result.json").read_text())
    model = json.loads((out / "model.json").read_text())
    run_id = result["run_id"]
    assert len(run_id) == 12 and model["metadata"]["run_id"] == run_id
    assert Image.open(out / "trajectories.png").text["run_id"] == run_id
    # the run was written beside --out and renamed: nothing else is left in the parent
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]


@pytest.mark.parametrize("extra", [[], ["--overwrite"]], ids=["plain", "overwrite"])
def test_a_folder_collocnode_did_not_write_is_refused_and_untouched(tmp_path, capsys, extra):
    out = tmp_path / "thesis"
    out.mkdir()
    (out / "thesis.tex").write_text("\\documentclass{article}")
    (out / "notes.txt").write_text("notes")
    assert train_collocation([*TINY_SMSD, "--out", str(out), *extra]) == 2
    line = _stderr_line(capsys)
    assert "--out" in line and str(out) in line and "--overwrite" in line
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt", "thesis.tex"]
    assert (out / "thesis.tex").read_text() == "\\documentclass{article}"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["thesis"]


def test_overwrite_replaces_an_earlier_run_when_the_new_one_succeeds(tmp_path, capsys):
    out = tmp_path / "run"
    assert train_collocation([*TINY_VDP, "--out", str(out)]) in (0, 1)
    first = json.loads((out / "result.json").read_text())["run_id"]
    (out / "old.png").write_bytes(b"from the earlier run")
    capsys.readouterr()
    # a run folder without --resume or --overwrite is refused
    assert train_collocation([*TINY_VDP, "--out", str(out)]) == 2
    assert "--resume" in _stderr_line(capsys)
    args = ["smsd", "--intervals", "20", "--hidden", "4", "--max-iter", "300", "--quiet"]
    assert train_collocation([*args, "--out", str(out), "--overwrite"]) == 0
    result = json.loads((out / "result.json").read_text())
    assert result["run_id"] != first and result["problem"] == "smsd"
    assert not (out / "old.png").exists()  # the old run's files are gone, not mixed in
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]


def test_ctrl_c_during_training_writes_the_phase_and_exits_130(tmp_path, capsys, monkeypatch):
    def interrupted(self, *args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(SystemRecipe, "train", interrupted)
    out = tmp_path / "run"
    assert train_collocation([*TINY_VDP, "--out", str(out)]) == 130
    line = _stderr_line(capsys)
    assert "interrupted" in line and "training" in line and "Traceback" not in line
    result = json.loads((out / "result.json").read_text())
    assert result["status"] == "interrupted" and result["phase"] == "training"
    assert result["problem"] == "vdp" and result["settings"]["intervals"] == 8
    assert not (out / "model.json").exists()


def test_ctrl_c_in_a_solver_phase_names_that_phase(tmp_path, capsys, monkeypatch):
    class Interrupted(KeyboardInterrupt):
        phase = "build"

    def interrupted(self, *args, **kwargs):
        raise Interrupted

    monkeypatch.setattr(SystemRecipe, "train", interrupted)
    out = tmp_path / "run"
    assert train_collocation([*TINY_VDP, "--out", str(out)]) == 130
    assert json.loads((out / "result.json").read_text())["phase"] == "training (build)"
    assert "training (build)" in _stderr_line(capsys)


def test_a_failure_after_training_keeps_the_model_and_names_the_phase(
    tmp_path, capsys, monkeypatch
):
    def broken(sol, grid=61):
        raise RuntimeError("synthetic evaluation failure\nsecond line")

    monkeypatch.setattr(vdp, "evaluate", broken)
    out = tmp_path / "run"
    assert train_collocation([*TINY_VDP, "--out", str(out)]) == 1
    line = _stderr_line(capsys)
    assert "evaluation" in line and "synthetic evaluation failure" in line
    result = json.loads((out / "result.json").read_text())
    assert result["status"] == "failed" and result["phase"] == "evaluation"
    assert result["iterations"] > 0 and (out / "model.json").exists()


def test_robustness_study_has_one_status(tmp_path, capsys):
    out = tmp_path / "run"
    code = train_collocation([*TINY_VDP, "--seeds", "2", "--workers", "1", "--out", str(out)])
    result = json.loads((out / "result.json").read_text())
    assert code == 0 and result["status"] == "success"
    assert result["seeds_completed"] == 2 and result["seeds_not_run"] == 0
    assert result["seeds_reused"] == 0 and len(result["runs"]) == 2
    assert 0.0 <= result["success_rate"] <= 1.0
    assert sorted(p.name for p in (out / "seeds").glob("*.json")) == ["seed-0.json", "seed-1.json"]


def test_ctrl_c_stops_the_study_and_resume_runs_only_the_missing_seeds(tmp_path, monkeypatch):
    real = vdp.robustness_run
    calls: list[int] = []

    def interrupt_seed_1_once(opts):
        calls.append(opts.seed)
        if opts.seed == 1 and calls.count(1) == 1:
            raise KeyboardInterrupt
        return real(opts)

    monkeypatch.setattr(vdp, "robustness_run", interrupt_seed_1_once)
    out = tmp_path / "run"
    args = [*TINY_VDP, "--seeds", "3", "--workers", "1", "--out", str(out)]
    assert train_collocation(args) == 130
    first = json.loads((out / "result.json").read_text())
    assert first["status"] == "interrupted" and first["phase"] == "training"  # not "plots"
    assert first["seeds_completed"] == 1 and first["seeds_not_run"] == 2
    assert first["seeds_failed"] <= 1  # failures count only seeds that ran to the end
    assert sorted(p.name for p in (out / "seeds").glob("*.json")) == ["seed-0.json"]
    assert train_collocation([*args, "--resume"]) == 0
    result = json.loads((out / "result.json").read_text())
    assert result["status"] == "success" and result["seeds_completed"] == 3
    assert result["seeds_reused"] == 1 and calls == [0, 1, 1, 2]  # seed 0 was not run again
    assert [r["seed"] for r in result["runs"]] == [0, 1, 2]


def test_resume_other_settings_is_refused_and_touches_nothing(tmp_path, capsys):
    out = tmp_path / "run"
    args = [*TINY_VDP, "--seeds", "2", "--workers", "1", "--out", str(out)]
    assert train_collocation(args) == 0
    before = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    capsys.readouterr()
    assert train_collocation([*args, "--noise", "0.1", "--resume"]) == 2
    line = _stderr_line(capsys)
    assert "other settings" in line and "noise = 0.0 there, 0.1 here" in line
    assert len(line) < 300
    after = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert after == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]


@pytest.mark.parametrize(
    ("extra", "match"),
    [
        (["--resume"], "--resume needs --out"),
        (["--scheduler", "tcp://127.0.0.1:9", "--out", "{tmp}/x"], "cannot be reached"),
    ],
)
def test_bad_scale_out_settings_are_one_line(tmp_path, capsys, extra, match):
    extra = [e.replace("{tmp}", str(tmp_path)) for e in extra]
    code = train_collocation([*TINY_VDP, "--seeds", "2", *extra])
    assert code in (1, 2)
    assert match in _stderr_line(capsys)


def test_robustness_study_runs_on_a_dask_cluster(tmp_path):
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster:
        out = tmp_path / "run"
        args = [*TINY_VDP, "--seeds", "2", "--scheduler", cluster.scheduler_address]
        assert train_collocation([*args, "--out", str(out)]) == 0
    result = json.loads((out / "result.json").read_text())
    assert result["seeds_completed"] == 2 and result["settings"]["scheduler"]


@pytest.mark.torch
def test_compare_exits_non_zero_when_a_method_failed(tmp_path, capsys, monkeypatch):
    from collocnode.compare.methods import fnode

    def boom(self, system, trajs):
        raise RuntimeError("synthetic failure")

    monkeypatch.setattr(fnode.FNODE, "_setup", boom)
    out = tmp_path / "cmp"
    args = ["vdp", "--methods", "fnode", "--quick", "--epochs", "1", "--out", str(out)]
    assert compare([*args, "--no-progress", "--device", "cpu"]) == 1
    err = capsys.readouterr().err
    assert "fnode failed" in err
    rows = json.loads((out / "compare.json").read_text())["rows"]
    assert rows[0]["status"] == "failed"


def test_an_unsafe_jit_cache_is_one_line_and_a_failed_result(tmp_path, capsys, monkeypatch):
    cache = tmp_path / "cache"
    cache.mkdir()
    cache.chmod(0o777)  # writable by others: loading compiled code from it is refused
    monkeypatch.setenv("COLLOCNODE_CACHE", str(cache))
    out = tmp_path / "run"
    args = [a for a in TINY_VDP if a != "--no-jit"]
    assert train_collocation([*args, "--jit", "--out", str(out)]) == 1
    line = _stderr_line(capsys)
    assert "training" in line and str(cache) in line and "Traceback" not in line
    result = json.loads((out / "result.json").read_text())
    assert result["status"] == "failed" and result["error"].startswith("JITError")


def test_a_converged_but_inconsistent_model_exits_one_and_says_so(tmp_path, capsys):
    # 8 x 2 is too coarse for Van der Pol: IPOPT converges, the learned ODE leaves the
    # collocation trajectory (the consistency check re-simulates it)
    out = tmp_path / "run"
    args = ["vdp", "--intervals", "8", "--stages", "2", "--max-iter", "300", "--no-jit"]
    with pytest.warns(UserWarning, match="inconsistent"):
        code = train_collocation([*args, "--quiet", "--out", str(out)])
    result = json.loads((out / "result.json").read_text())
    assert result["status"] == "success" and code == 1
    check = result["consistency"]
    assert check["consistent"] is False and check["largest_deviation"] > check["tol"]
    assert "consistency         INCONSISTENT: largest deviation" in capsys.readouterr().out


@pytest.mark.torch
def test_compare_runs_methods_as_tasks_and_resumes(tmp_path, capsys):
    out = tmp_path / "cmp"
    args = ["vdp", "--methods", "fnode,node", "--quick", "--epochs", "2", "--out", str(out)]
    args += ["--workers", "2", "--device", "cpu", "--no-progress"]
    assert compare(args) == 0
    first = json.loads((out / "compare.json").read_text())
    assert [r["method"] for r in first["rows"]] == ["fnode", "node"]
    assert all(r["status"] != "failed" and r["test_mse"] is not None for r in first["rows"])
    assert first["meta"]["workers"] == 2
    assert sorted(p.name for p in (out / "methods").glob("*.json")) == ["fnode.json", "node.json"]
    assert (out / "fnode.npz").exists() and (out / "node.npz").exists()
    # a resumed run takes both methods from the store: the same rows, nothing trained again
    assert compare([*args, "--resume"]) == 0
    again = json.loads((out / "compare.json").read_text())
    for a, b in zip(first["rows"], again["rows"], strict=True):
        assert a["train_time_s"] == b["train_time_s"] and a["test_mse"] == b["test_mse"]
    # a method added with options of its own trains; the stored ones are still reused
    more = [*args, "--resume", "--methods", "fnode,node,lstm", "--set", "lstm.layers=1"]
    assert compare(more) == 0
    added = json.loads((out / "compare.json").read_text())["rows"]
    assert [r["method"] for r in added] == ["fnode", "node", "lstm"]
    assert added[0]["train_time_s"] == first["rows"][0]["train_time_s"]
    assert added[2]["test_mse"] is not None and added[2]["options"]["layers"] == 1
    # other options of a stored method are other settings: refused, not silently reused
    capsys.readouterr()
    assert compare([*args, "--resume", "--set", "fnode.lr=0.5"]) == 2
    line = _stderr_line(capsys)
    assert "fnode.json" in line and "made with other settings" in line
    # the refused rerun leaves the stored run as it was and no half-written directory
    assert json.loads((out / "compare.json").read_text())["rows"] == added
    assert [p.name for p in tmp_path.iterdir()] == ["cmp"]


@pytest.mark.torch
@pytest.mark.parametrize(
    ("extra", "match"),
    [
        (["--workers", "0"], "--workers must be a positive integer"),
        (["--resume", "--out", "{tmp}/x"], "--resume needs --out"),
        (["--scheduler", "tcp://127.0.0.1:9"], "cannot be reached"),
        (["--eval-at", "60,1x"], "--eval-at expects comma-separated seconds, got '60,1x'"),
        (["--eval-at", "60,-1"], "eval_at_s"),
    ],
)
def test_compare_bad_scale_out_settings_are_one_line(tmp_path, capsys, extra, match):
    extra = [e.replace("{tmp}", str(tmp_path)) for e in extra]
    assert compare(["vdp", "--methods", "node", "--quick", *extra]) == 2
    assert match in _stderr_line(capsys)


def test_the_regularization_path_from_the_command_line(tmp_path, capsys):
    """--regularization-path (a field of the collocation settings) chooses λ on held-out data,
    refits at it, and reports the path: in result.json, in the summary and as a figure."""
    out = tmp_path / "run"
    args = ("smsd", "--intervals", "10", "--hidden", "3", "--max-iter", "30", "--quiet")
    assert train_collocation([*args, "--regularization-path", "--out", str(out)]) in (0, 1)
    result = json.loads((out / "result.json").read_text())
    assert result["settings"]["regularization_path"] is True
    path = result["regularization_path"]
    lambdas = [p["regularization"] for p in path["path"]]
    assert lambdas[0] == 0.1 and lambdas == sorted(lambdas, reverse=True) and len(lambdas) >= 3
    assert path["chosen"] in lambdas and "20%" in path["holdout"]
    assert path["table"].count("(chosen)") == 1
    assert len(path["table"].splitlines()) == 2 + len(lambdas)
    assert path["times"]["path"] > 0 and path["times"]["refit"] > 0
    # the path's time is part of the run's
    assert result["wall_time_s"]["total"] >= path["times"]["path"]
    assert Image.open(out / "regularization_path.png").text["run_id"] == result["run_id"]
    shown = capsys.readouterr().out
    assert path["table"] in shown and f"λ = {path['chosen']:g} chosen" in shown


def test_without_the_path_nothing_of_it_is_reported(tmp_path):
    out = tmp_path / "run"
    train_collocation([*TINY_SMSD, "--out", str(out)])
    assert "regularization_path" not in json.loads((out / "result.json").read_text())
    assert not (out / "regularization_path.png").exists()


def test_the_recipe_refits_at_the_chosen_lambda():
    from collocnode import problems
    from collocnode.recipes.settings import CollocationSettings

    system = problems.get("smsd")
    split = system.generate(noise=0.01, seed=0)
    settings = CollocationSettings(intervals=10, max_iter=30, regularization_path=True)
    trained = SystemRecipe(hidden=3, collocation=settings).train(system, split.train, seed=0)
    assert trained.path is not None
    assert trained.solution.problem.regularization == trained.path.chosen
    assert trained.times["regularization_path"] == trained.path.times["path"]
    with pytest.raises(TypeError, match="regularization_path must be True or False"):
        CollocationSettings(regularization_path="yes")


def test_the_van_der_pol_run_reports_its_path_too(tmp_path):
    out = tmp_path / "run"
    args = (*TINY_VDP, "--no-uncertainty", "--regularization-path", "--out", str(out))
    assert train_collocation(list(args)) in (0, 1)
    result = json.loads((out / "result.json").read_text())
    path = result["regularization_path"]
    assert path["chosen"] in [p["regularization"] for p in path["path"]]
    assert result["wall_time_s"]["regularization_path"] == path["times"]["path"]
    assert (out / "regularization_path.png").exists()
