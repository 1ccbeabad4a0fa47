"""Profile likelihoods by collocation against the Fisher information of the CVODES simulation
(a nearly linear model: the likelihood-ratio interval and the Wald interval agree)."""

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("petab")
pytest.importorskip("libsbml")

from collocnode import SolverStatus
from collocnode.petab import import_petab, profile

DOSE = Path(__file__).parent / "data" / "dose" / "dose.yaml"
SIGMA = 0.1  # the observable table's noise


def test_profile_interval_matches_the_wald_interval():
    problem = import_petab(DOSE)
    fit = problem.fit(start=[np.log10(2.0)])
    prof = profile(problem, fit, "k", width=0.08, points=17)
    assert prof.values.size >= 17
    assert all(s is SolverStatus.SUCCESS for s in prof.statuses)
    # the profile's minimum is the fit
    assert np.min(prof.objectives) == pytest.approx(fit.objective, abs=1e-7)
    # Wald: the Gauss-Newton curvature of the negative log-likelihood at the optimum
    h = 1e-6
    slope = (problem.simulate(fit.theta + h).values - problem.simulate(fit.theta - h).values) / (
        2 * h
    )
    se = 1.0 / np.sqrt(np.sum(slope**2) / SIGMA**2)
    lo, hi = prof.interval(0.95)
    assert lo < fit.theta[0] < hi
    assert hi - fit.theta[0] == pytest.approx(1.96 * se, rel=0.05)
    assert fit.theta[0] - lo == pytest.approx(1.96 * se, rel=0.05)


def test_an_interval_the_grid_does_not_close_is_open():
    problem = import_petab(DOSE)
    fit = problem.fit()
    prof = profile(problem, fit, 0, width=1e-4, points=3)
    assert prof.interval(0.95) == (-np.inf, np.inf)
