"""One vocabulary of outcomes in the comparison: the words compare.json has always held, mapped
from the core's SolverStatus in one place."""

from __future__ import annotations

import pytest

from collocnode._status import SolverStatus
from collocnode.compare._run.results import MethodRow
from collocnode.compare.methods.base import FitResult
from collocnode.compare.methods.status import MethodStatus

WORDS = [
    "success",
    "budget",
    "iteration_limit",
    "stopped",
    "interrupted",
    "diverged",
    "failed",
    "not applicable",
]


def test_the_values_are_the_words_compare_json_holds():
    assert [s.value for s in MethodStatus] == WORDS
    assert all(MethodStatus(w) == w and str(MethodStatus(w)) == w for w in WORDS)
    assert f"{MethodStatus.NOT_APPLICABLE}" == "not applicable"
    assert [s for s in MethodStatus if s.unfinished] == [
        MethodStatus.INTERRUPTED,
        MethodStatus.FAILED,
    ]


@pytest.mark.parametrize(
    ("solver", "method"),
    [
        (SolverStatus.SUCCESS, "success"),
        (SolverStatus.ACCEPTABLE, "success"),
        (SolverStatus.TIME_LIMIT, "budget"),
        (SolverStatus.ITERATION_LIMIT, "iteration_limit"),
        (SolverStatus.STOPPED, "stopped"),
        (SolverStatus.INTERRUPTED, "interrupted"),
        (SolverStatus.CALLBACK_ERROR, "failed"),
        (SolverStatus.INFEASIBLE, "failed"),
        (SolverStatus.RESTORATION_FAILED, "failed"),
        (SolverStatus.EVALUATION_ERROR, "failed"),
        (SolverStatus.FAILED, "failed"),
    ],
)
def test_every_solver_status_has_one_word(solver, method):
    assert MethodStatus.from_solver(solver) is MethodStatus(method)


def test_a_status_given_by_word_is_typed_and_a_wrong_word_named():
    assert FitResult("fnode", "budget", 1.0, 2, 3).status is MethodStatus.BUDGET
    row = MethodRow("fnode", "success")
    row.status = "diverged"
    assert row.status is MethodStatus.DIVERGED and not row.unfinished
    row.status = "interrupted"
    assert row.unfinished
    with pytest.raises(ValueError, match=r"status must be one of 'success', .* got 'ok'"):
        FitResult("fnode", "ok", 1.0, 2, 3)
    with pytest.raises(ValueError, match="status must be one of"):
        row.status = "done"
