"""The recipes check what they are given: the problem name and the data of ``train``."""

from __future__ import annotations

import numpy as np
import pytest

from collocnode import Trajectory, problems
from collocnode.recipes import CollocationSettings, SystemRecipe, for_problem
from collocnode.recipes.qvm import QVMRecipe
from collocnode.recipes.vdp import VDP


@pytest.mark.parametrize("name", ["nope", None, "", "VDP"])
def test_for_problem_refuses_unregistered_names(name):
    with pytest.raises(ValueError, match=r"unknown problem name .*; valid: .*smsd"):
        for_problem(name)


@pytest.mark.parametrize(
    ("name", "kind"), [("vdp", type(VDP)), ("qvm", QVMRecipe), ("smsd", SystemRecipe)]
)
def test_for_problem_gives_the_papers_recipe(name, kind):
    assert isinstance(for_problem(name), kind)


def _traj(n_states: int) -> Trajectory:
    t = np.linspace(0.0, 1.0, 6)
    return Trajectory(t, np.ones((t.size, n_states)))


TINY = SystemRecipe(hidden=(3,), collocation=CollocationSettings(intervals=4, stages=2, max_iter=2))


@pytest.mark.parametrize(
    ("data", "error", "message"),
    [
        (None, TypeError, "data must be a Trajectory or a non-empty sequence"),
        ([], TypeError, "data must be a Trajectory or a non-empty sequence"),
        ("data", TypeError, "data must be a Trajectory or a non-empty sequence"),
        ([_traj(2), "x"], TypeError, r"data\[1\] must be a Trajectory, got 'x'"),
        (_traj(3), ValueError, r"data\[0\] has 3 state columns, but smsd has 2 \(x, x_dot\)"),
    ],
)
def test_train_refuses_bad_data(data, error, message):
    with pytest.raises(error, match=message):
        TINY.train(problems.get("smsd"), data)


@pytest.mark.parametrize("system", [None, "smsd", object()])
def test_train_refuses_what_is_not_a_system(system):
    with pytest.raises(TypeError, match=r"system must be a collocnode\.problems\.System"):
        TINY.train(system, _traj(2))
