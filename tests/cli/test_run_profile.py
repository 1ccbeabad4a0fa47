"""``--profile``: where a training run's seconds went, printed and stored."""

from __future__ import annotations

import json
import time

import pytest

from collocnode._cli.summary import profile_rows
from collocnode._cli.train_command import train_collocation
from collocnode._experiments.record import RunRecord
from collocnode.tools._machine import process_age

TINY_SMSD = ("smsd", "--intervals", "10", "--hidden", "3", "--max-iter", "5", "--quiet")


def test_the_profile_names_each_phase_and_adds_up(tmp_path, capsys):
    train_collocation([*TINY_SMSD, "--profile", "--out", str(tmp_path / "run")])
    out = capsys.readouterr().out
    shown = out.split("where the seconds went:")[1]
    for row in ("start-up (imports, options)", "training", "total, to the summary"):
        assert row in shown
    result = json.loads((tmp_path / "run" / "result.json").read_text())
    phases = result["phase_seconds"]
    assert "training" in phases and all(s >= 0 for s in phases.values())
    total = float(shown.split("total, to the summary")[1].split()[0])
    assert total == pytest.approx(result["startup_s"] + sum(phases.values()), abs=0.02)


def test_without_profile_nothing_is_printed_but_the_phases_are_stored(tmp_path, capsys):
    train_collocation([*TINY_SMSD, "--out", str(tmp_path / "run")])
    assert "where the seconds went" not in capsys.readouterr().out
    assert "training" in json.loads((tmp_path / "run" / "result.json").read_text())["phase_seconds"]


def test_a_record_adds_up_the_time_of_a_phase_entered_twice(tmp_path):
    record = RunRecord(tmp_path)
    record.enter("a")
    time.sleep(0.02)
    record.enter("b")
    record.enter("a")
    time.sleep(0.02)
    seconds = record.close_phase()
    assert seconds["a"] >= 0.04 and seconds["b"] < 0.02 and "setup" in seconds


def test_profile_rows_show_the_training_clock_beside_the_phase():
    rows = dict(profile_rows(1.0, {"setup": 0.001, "training": 2.0, "plots": 0.5}, {"ipopt": 1.5}))
    assert "setup" not in rows  # passed through
    assert rows["training"] == "2.00 s (ipopt 1.50)"
    assert rows["total, to the summary"] == "3.50 s"


def test_the_process_age_counts_this_process_since_it_started():
    age = process_age()
    if age is None:
        pytest.skip("no /proc on this system")
    assert 0.0 < age < 24 * 3600
