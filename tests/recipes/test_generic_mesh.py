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
