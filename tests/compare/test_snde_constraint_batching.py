"""SNDE constraint functions: one broadcast call per batch when the system's ``constraints`` /
``constraint_jacobian`` broadcast (checked against the row loop), the row loop otherwise."""

from __future__ import annotations

import numpy as np
import pytest

from collocnode import problems
from collocnode.compare.methods.snde import constraint_functions


class _Counting:
    """Wraps a system and counts the calls of its constraint functions."""

    def __init__(self, system):
        self.system, self.calls = system, 0

    def __getattr__(self, name):
        return getattr(self.system, name)

    def constraints(self, x, t=0.0):
        self.calls += 1
        return self.system.constraints(x, t)

    def constraint_jacobian(self, x, t=0.0):
        self.calls += 1
        return self.system.constraint_jacobian(x, t)


def _rows(fn, x, t):
    return np.stack([np.atleast_2d(fn(xi, float(ti))) for xi, ti in zip(x, t, strict=True)])


@pytest.mark.parametrize("name", ["two_body", "rigid_body", "dcdc", "robot_arm"])
def test_broadcasting_systems_are_evaluated_in_one_call(name):
    system = _Counting(problems.get(name))
    g, G = constraint_functions(system)
    rng = np.random.default_rng(0)
    for b in (1, 5, 7):
        x = rng.normal(size=(b, system.n_states))
        t = rng.uniform(0.0, 3.0, b)
        np.testing.assert_allclose(g(x, t), _rows(system.system.constraints, x, t)[:, 0])
        np.testing.assert_allclose(G(x, t), _rows(system.system.constraint_jacobian, x, t))
    system.calls = 0
    x = rng.normal(size=(9, system.n_states))
    g(x, np.zeros(9))
    G(x, np.zeros(9))
    assert system.calls == 2  # verified on the first multi-row batch, batched from then on


def test_non_broadcasting_jacobian_keeps_the_row_loop(circle):
    # the test Circle's constraint_jacobian handles one state only
    system = _Counting(circle)
    g, G = constraint_functions(system)
    x = np.array([[1.2, 0.3], [0.1, -0.9], [0.5, 0.5]])
    for _ in range(2):
        expected = np.stack([circle.constraint_jacobian(xi) for xi in x])
        np.testing.assert_allclose(G(x, np.zeros(3)), expected)
        np.testing.assert_allclose(g(x, np.zeros(3)), circle.constraints(x))
    system.calls = 0
    G(x, np.zeros(3))
    assert system.calls == 3  # one call per row
    g(x, np.zeros(3))
    assert system.calls == 4  # constraints broadcast: one call
