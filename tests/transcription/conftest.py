"""Shared fixtures of the transcription tests."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from collocnode import DynamicOptimizationProblem


@pytest.fixture
def make_dop() -> Callable[..., DynamicOptimizationProblem]:
    """A one-state, one-parameter problem x' = -x + p on [0, 1], with ``changes`` applied."""

    def make(**changes: object) -> DynamicOptimizationProblem:
        fields = {
            "dynamics": lambda x, p, u, t: -x + p[0],
            "n_states": 1,
            "n_params": 1,
            "tspan": (0.0, 1.0),
            "lagrange": lambda x, p, u, t: x[0] ** 2,
        }
        return DynamicOptimizationProblem(**{**fields, **changes})

    return make
