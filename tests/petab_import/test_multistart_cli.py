"""Multistart over the bounds (in this process and on a process pool) and the command line."""

import json
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("petab")
pytest.importorskip("libsbml")

from collocnode._cli.petab_command import petab
from collocnode.petab import import_petab, multistart, waterfall

CASE = Path(__file__).parent / "data" / "petab_test_suite" / "0004"


def test_starts_are_uniform_on_the_scale_within_the_bounds():
    problem = import_petab(CASE / "_0004.yaml")
    starts = problem.sample_starts(200, seed=3)
    assert starts.shape == (200, problem.n_theta)
    assert np.all(starts >= problem.lb) and np.all(starts <= problem.ub)
    # uniform: the mean of each column near the middle of its bounds
    width = problem.ub - problem.lb
    assert np.all(np.abs(starts.mean(axis=0) - (problem.lb + problem.ub) / 2) < 0.1 * width)


def test_multistart_sorted_and_the_same_on_a_process_pool(tmp_path):
    problem = import_petab(CASE / "_0004.yaml")
    here = multistart(problem, 3, seed=1)
    with ProcessPoolExecutor(2) as pool:
        there = multistart(problem, 3, seed=1, executor=pool)
    assert np.all(np.diff(here.objectives) >= 0)
    np.testing.assert_allclose(here.objectives, there.objectives, rtol=1e-8)
    assert 0 < here.converged_fraction() <= 1
    assert waterfall(here, tmp_path / "w.png").stat().st_size > 0


def test_a_time_budget_starts_no_fit_once_spent_and_counts_the_rest(monkeypatch):
    problem = import_petab(CASE / "_0004.yaml")
    clock = iter(np.arange(0.0, 100.0, 1.0))  # every reading of the clock one second on
    monkeypatch.setattr("collocnode.petab._multistart._now", lambda: next(clock))
    result = multistart(problem, 6, seed=1, seconds=2.5)
    # the budget is read before each start: the first two begin inside it, the third does not
    assert len(result.results) == 2 and result.not_started == 4
    assert "4 not started" in result.summary()
    # the starts that ran are the first draws of the seed, as without a budget
    drawn = problem.sample_starts(6, seed=1)[:2]
    ran = sorted((r.start for r in result.results), key=lambda s: tuple(s))
    np.testing.assert_array_equal(np.array(ran), np.array(sorted(drawn, key=lambda s: tuple(s))))


@pytest.mark.parametrize("seconds", [0.0, -1.0, float("nan"), float("inf")])
def test_a_budget_that_is_no_number_of_seconds_is_refused(seconds):
    problem = import_petab(CASE / "_0004.yaml")
    with pytest.raises(ValueError, match="seconds must be a positive number"):
        multistart(problem, 2, seconds=seconds)


def test_command_writes_its_report(tmp_path, capsys):
    assert petab([str(CASE), "--starts", "2", "--out", str(tmp_path)]) == 0
    record = json.loads((tmp_path / "result.json").read_text())
    assert record["status"] == "success"
    assert record["budget"] is None and record["not_started"] == 0
    assert record["best"]["objective"] <= record["nominal"]["objective"]
    assert (tmp_path / "waterfall.png").is_file() and (tmp_path / "fit.png").is_file()


def test_command_refuses_a_budget_of_no_seconds(tmp_path, capsys):
    assert petab([str(CASE), "--budget", "-3", "--out", str(tmp_path)]) == 2
    assert "--budget must be a positive number of seconds, got -3" in capsys.readouterr().err
    assert not (tmp_path / "result.json").exists()


def test_command_refuses_a_missing_problem(tmp_path, capsys):
    assert petab([str(tmp_path / "none.yaml"), "--out", str(tmp_path)]) == 2
    assert "no such PEtab problem" in capsys.readouterr().err
