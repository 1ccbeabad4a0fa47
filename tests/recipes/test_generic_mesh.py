"""The generic recipe's default mesh: one interval per sample interval, capped."""

from __future__ import annotations

import numpy as np
import pytest

from collocnode import Trajectory, problems
from collocnode.recipes import generic
from collocnode.recipes.generic import MAX_DEFAULT_INTERVALS, SystemRecipe


class _Stop(Exception):
    pass


@pytest.mark.parametrize(
    ("n_samples", "intervals"),
    [(5, 4), (301, 300), (MAX_DEFAULT_INTERVALS + 1, MAX_DEFAULT_INTERVALS), (10_000, 1_500)],
)
def test_default_mesh_has_one_interval_per_sample_up_to_the_cap(monkeypatch, n_samples, intervals):
    seen = {}

    def capture(problem, alg, **kw):
        seen["intervals"] = alg.intervals
        raise _Stop

    monkeypatch.setattr(generic, "solve", capture)
    t = np.linspace(0.0, 1.0, n_samples)
    data = Trajectory(t, np.column_stack([np.sin(t), np.cos(t)]))
    with pytest.raises(_Stop):
        SystemRecipe(hidden=(3,)).train(problems.get("smsd"), data)
    assert seen["intervals"] == intervals


def test_the_generic_recipe_applies_the_settings_stagnation_rule():
    """``stagnation_window`` is a field of every recipe's settings, so the generic recipe
    (Van der Pol's too) stops by it as the quarter vehicle's does."""
    from collocnode._status import SolverStatus
    from collocnode.tools._options import replace_flat

    system = problems.get("smsd")
    data = system.generate(n_steps=41, n_train=41).train
    recipe = replace_flat(
        SystemRecipe(hidden=(3,)), intervals=20, max_iter=60, stagnation_window=2,
        stagnation_rtol=1.0,
    )  # fmt: skip
    trained = recipe.train(system, data, seed=0)
    assert trained.solution.status == SolverStatus.STOPPED
    assert "stagnated" in trained.solution.message
