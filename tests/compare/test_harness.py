"""The harness: typed rows and report, Ctrl-C anywhere recorded as "interrupted", failures as
"failed", and the JSON written equal to the report returned."""

from __future__ import annotations

import json

import numpy as np
import pytest

from collocnode.compare._run import CompareConfig, default_methods, run
from collocnode.compare._run.results import BASE_COLUMNS, CompareReport, MethodRow, Score
from collocnode.compare._run.scenarios import StateRollout, StateRolloutScenario
from collocnode.tools._fixed_step import DivergenceError
from collocnode.tools._io import jsonable


def _cfg(*methods: str) -> CompareConfig:
    return CompareConfig("vdp", methods, quick=True, epochs=1, device="cpu")


def _written(out) -> dict:
    return json.loads((out / "compare.json").read_text())


def test_ctrl_c_before_training_ends_is_recorded_and_skips_the_rest(tmp_path, monkeypatch):
    from collocnode.compare.methods import fnode

    def interrupt(self, system, trajs):
        raise KeyboardInterrupt

    monkeypatch.setattr(fnode.FNODE, "_setup", interrupt)
    report = run(_cfg("fnode", "mbdnode"), tmp_path, progress=False)
    assert report.interrupted == ["fnode", "mbdnode"] and report.failed == []
    rows = {r["method"]: r for r in _written(tmp_path)["rows"]}
    assert rows["fnode"]["status"] == "interrupted"
    assert rows["fnode"]["message"] == "interrupted before training ended"
    assert rows["mbdnode"]["status"] == "interrupted"
    assert rows["mbdnode"]["message"] == "skipped after Ctrl-C"
    assert "| fnode | interrupted |" in (tmp_path / "compare.md").read_text()


def test_ctrl_c_while_scoring_keeps_the_training_fields(tmp_path, monkeypatch):
    from collocnode.compare.methods import mbdnode

    def interrupt(self, t, x0, u=None, *, params=None):
        raise KeyboardInterrupt

    monkeypatch.setattr(mbdnode.MBDNODE, "predict", interrupt)
    report = run(_cfg("mbdnode", "fnode"), tmp_path, progress=False)
    row = _written(tmp_path)["rows"][0]
    assert row["status"] == "interrupted" and row["epochs"] == 1 and row["n_params"] > 0
    assert row["message"].startswith("interrupted after training; 1 epochs")
    assert report.interrupted == ["mbdnode", "fnode"]


def test_a_failure_is_named_and_the_json_is_the_report(tmp_path, monkeypatch):
    from collocnode.compare.methods import fnode

    def boom(self, system, trajs):
        raise RuntimeError("synthetic failure")

    monkeypatch.setattr(fnode.FNODE, "_setup", boom)
    report = run(_cfg("fnode", "mbdnode", "snde"), tmp_path, progress=False)
    assert isinstance(report, CompareReport)
    assert all(isinstance(r, MethodRow) for r in report.rows)
    assert report.failed == ["fnode"] and report.interrupted == []
    assert [r.status for r in report.rows] == ["failed", "success", "not applicable"]
    assert report.rows[0].unfinished and not report.rows[1].unfinished
    assert _written(tmp_path) == jsonable(report)
    assert report["rows"][1]["test_mse"] == report.rows[1].scores["test_mse"] > 0


def test_every_row_lists_the_base_columns_first():
    skipped = MethodRow("lstm", "interrupted", message="skipped after Ctrl-C")
    assert (
        list(skipped)[:9]
        == list(BASE_COLUMNS)
        == [
            "method",
            "status",
            "train_time_s",
            "epochs",
            "train_mse",
            "test_mse",
            "full_mse",
            "n_params",
            "message",
        ]
    )
    assert list(skipped)[-1] == "time_to_target_s" and "traceback" not in skipped
    row = MethodRow("fnode", "success", curve=[(1.0, 0.5)], scores={"test_mse": 0.1, "x": 2})
    assert row["test_mse"] == 0.1 and row["x"] == 2 and row["curve"] == [(1.0, 0.5)]
    assert list(row).index("curve") < list(row).index("x")


class _Diverging:
    def predict(self, t, x0, u=None, *, params=None):
        raise DivergenceError(5, float(t[5]), np.zeros((5, 2)), "blow-up")


def test_a_diverged_rollout_is_a_typed_divergence():
    data = StateRolloutScenario().load("vdp", None, True, 0, None)
    score = StateRollout(data.system, data.split).score(_Diverging())
    assert isinstance(score, Score)
    assert score.divergence is not None and score.divergence.step == 5
    assert score.columns["test_mse"] is None and "x_pred" not in score.arrays
    fields, arrays = score  # the pair a caller of score() unpacks
    assert fields["status"] == "diverged" and fields["diverged_step"] == 5
    assert set(arrays) == {"t", "x_data"}
    row = MethodRow("mbdnode", "success")
    row.record_score(score)
    assert (row.status, row.diverged_step) == ("diverged", 5) and "step 5" in row.message


@pytest.mark.parametrize("problem", ["vdp", "qvm"])
def test_scenarios_give_defaults_and_columns(problem):
    from collocnode.compare._run.scenarios import scenario_for

    scenario = scenario_for(problem)
    assert default_methods(problem) == scenario.methods
    assert scenario.columns[0] == ("method", "method")
    assert (scenario.threads(True) == 1) is (problem == "qvm")


def test_compare_runs_collocation_unless_told_otherwise():
    """``compare.py vdp --quick`` ran FNODE and MBD-NODE only: the library's own method was left
    out of its own comparison."""
    from collocnode._cli.compare_command import _config, _parser

    argv = ["vdp", "--quick", "--device", "cpu"]
    config = _config(_parser().parse_args(argv), argv)
    assert config.methods == ("collocation", "fnode", "mbdnode") == default_methods("vdp")
    # beside other methods, collocation's time-to-target column needs their error curves
    assert config.eval_every_s is not None
    help_text = next(a.help for a in _parser()._actions if "--methods" in a.option_strings)
    assert f"(default: {','.join(config.methods)};" in help_text
    argv = ["vdp", "--quick", "--methods", "fnode", "--device", "cpu"]
    assert _config(_parser().parse_args(argv), argv).methods == ("fnode",)


def _fit(method, status, epochs, unit, limit):
    from collocnode.compare.methods.base import FitResult

    row = MethodRow(method, unit=unit, limit=limit)
    row.record_fit(FitResult(method, status, 1.0, epochs, 10))
    return row


def test_the_table_states_each_methods_budget_and_how_its_training_ended():
    from collocnode.compare._run.report import markdown, summary_line

    rows = [
        _fit("collocation", "success", 57, "iteration", 3000),
        _fit("fnode", "success", 20, "epoch", 20),
        _fit("node", "budget", 7, "epoch", 20),
        _fit("mnn", "iteration_limit", 1, "epoch", 1),
    ]
    meta = {"preset": "default", "n_train": 10, "n_total": 20, "dt": 0.1, "device": "cpu"}
    meta |= {"seed": 0, "quick": True, "mse": "x", "budget_s": 60.0}
    table = markdown(CompareReport("vdp", meta, rows))
    assert "| trained for | budget | training ended |" in table
    assert "| 57 iterations | ≤ 3000 iterations, 60 s | converged |" in table
    assert "| 20 epochs | 20 epochs, 60 s | ran all its epochs |" in table
    assert "| 7 epochs | 20 epochs, 60 s | ran out of time |" in table
    assert "| 1 epoch | 1 epoch, 60 s | ran out of epochs |" in table
    assert "Quick run:" in table and "collocation runs until IPOPT converges" in table
    assert "57 iterations" in summary_line(rows[0]) and "epochs 57" not in summary_line(rows[0])
    meta |= {"quick": False, "budget_s": None}
    table = markdown(CompareReport("vdp", meta, rows[:1]))
    assert "≤ 3000 iterations, no time limit" in table and "Quick run" not in table
    # compare.json keeps the unit, the limit and the words
    assert {k: rows[0][k] for k in ("epochs", "unit", "limit", "ended")} == {
        "epochs": 57,
        "unit": "iteration",
        "limit": 3000,
        "ended": "converged",
    }


def test_a_run_records_the_unit_and_the_limit_of_each_method(tmp_path):
    report = run(_cfg("fnode"), tmp_path, progress=False)
    (row,) = _written(tmp_path)["rows"]
    assert (row["unit"], row["limit"], row["ended"]) == ("epoch", 1, "ran all its epochs")
    assert report["meta"]["state_names"] == ["x", "y"]


def test_a_methods_bar_counts_its_own_unit_and_only_on_a_terminal(monkeypatch):
    import io
    import sys

    from collocnode.compare._run import one_method

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    monkeypatch.setattr(sys, "stderr", io.StringIO())
    assert one_method._bar("fnode", 20, "epoch", True) is None  # a log: lines, no bar
    monkeypatch.setattr(sys, "stderr", Terminal())
    assert one_method._bar("fnode", 20, "epoch", False) is None  # --no-progress
    bar = one_method._bar("collocation", 100, "iteration", True)
    bar.update(3)
    bar.close()
    # IPOPT's iterations counted without a total: it stops when it converges, not at its limit
    assert bar.total is None and "collocation: 3 iterations [" in sys.stderr.getvalue()
    assert "/100" not in sys.stderr.getvalue()
    bar = one_method._bar("fnode", 20, "epoch", True)
    bar.update(3)
    bar.close()
    assert bar.unit == "epoch" and "3/20" in sys.stderr.getvalue()  # epochs run to their count


def test_on_a_terminal_collocations_bar_names_the_phases_of_its_solve(monkeypatch):
    import io
    import sys

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    screen = Terminal()
    monkeypatch.setattr(sys, "stderr", screen)
    cfg = CompareConfig("vdp", ("collocation",), quick=True, epochs=3, device="cpu")
    report = run(cfg, None, progress=True)
    assert report.rows[0].unit == "iteration" and report.rows[0].limit == 3
    text = screen.getvalue()
    assert "collocation" in text and "iteration" in text
    assert ", build]" in text and ", solve]" in text  # the phase in the bar's postfix
    # in a log: a line per phase, no bar
    log = io.StringIO()
    monkeypatch.setattr(sys, "stderr", log)
    run(cfg, None, progress=True)
    assert log.getvalue().splitlines()[:2] == ["collocation: build", "collocation: solve"]
    assert "\r" not in log.getvalue()
