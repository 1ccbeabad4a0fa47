"""Time-triggered discontinuities: a dose that switches on at t = 2 (a piecewise kinetic law).

x' = u(t) − k x with u = 1 for t ≥ 2, else 0, x(0) = 1, k = 0.5 has the exact solution
x(t) = e^{−kt} + [t ≥ 2] (1 − e^{−k(t−2)}) / k; the data are this solution without noise.
"""

from pathlib import Path

import numpy as np
import pytest
import sympy as sp

pytest.importorskip("petab")
pytest.importorskip("libsbml")

from collocnode import SolverStatus
from collocnode.petab import import_petab
from collocnode.petab._numeric import time_switches
from collocnode.petab._sbml import TIME

DOSE = Path(__file__).parent / "data" / "dose" / "dose.yaml"


def exact(t, k=0.5):
    t = np.asarray(t, dtype=float)
    return np.exp(-k * t) + (t >= 2) * (1 - np.exp(-k * (t - 2))) / k


def test_switching_times_are_read_from_relations_and_steps():
    x, c = sp.symbols("x c", real=True)
    expressions = [
        sp.Piecewise((1, TIME >= 2 * c), (0, True)),
        sp.Heaviside(TIME - 5),
        sp.Piecewise((1, x > 3), (0, True)),  # a state crossing: not time-triggered
        sp.Piecewise((1, 10 - TIME > 0), (0, True)),
    ]
    assert time_switches(expressions, ["x"]) == [2 * c, sp.Integer(5), sp.Integer(10)]


def test_the_simulation_restarts_at_the_switch():
    problem = import_petab(DOSE)
    t = problem.resolved.measurements.time
    np.testing.assert_allclose(problem.simulate().values, exact(t), rtol=1e-8, atol=1e-10)
    assert problem.score().chi2 == pytest.approx(0.0, abs=1e-10)


def test_collocation_places_a_mesh_boundary_at_the_switch_and_recovers_k():
    problem = import_petab(DOSE)
    fit = problem.fit(start=[np.log10(2.0)])  # k = 2 to start
    assert fit.status is SolverStatus.SUCCESS
    assert fit.agrees
    assert 2.0 in fit.solution.meshes[0].grid
    assert 10.0 ** fit.theta[0] == pytest.approx(0.5, rel=1e-6)


def test_a_measurement_at_the_steady_state():
    """The same data and one more measurement at time inf: the steady state 1/k = 2, by CVODES
    and by a steady-state block of the NLP."""
    problem = import_petab(DOSE.with_name("dose_settled.yaml"))
    values = problem.simulate().values
    assert values[-1] == pytest.approx(2.0, rel=1e-7)
    fit = problem.fit(start=[np.log10(2.0)])
    assert fit.status is SolverStatus.SUCCESS and fit.agrees
    assert 10.0 ** fit.theta[0] == pytest.approx(0.5, rel=1e-6)
