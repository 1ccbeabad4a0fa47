"""Collocation fits of the PEtab test suite's problems: the fit beats the nominal parameters,
and the NLP's objective on the collocation trajectory equals the PEtab-way objective of an
independent CVODES simulation at the fitted θ (the discretization is fine enough to trust)."""

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("petab")
pytest.importorskip("libsbml")

from collocnode import SolverStatus
from collocnode.petab import import_petab

SUITE = Path(__file__).parent / "data" / "petab_test_suite"
# 0015 estimates a noise σ with lower bound 0 from two measurements: the likelihood has no
# maximum (σ -> 0 with an exact fit), so IPOPT must not report success
UNBOUNDED = {"0015"}
CASES = sorted(p.name for p in SUITE.iterdir() if p.is_dir())


def load(name):
    return import_petab(SUITE / name / f"_{name}.yaml")


@pytest.mark.parametrize("name", [c for c in CASES if c not in UNBOUNDED])
def test_fit_improves_and_agrees_with_the_simulation(name):
    problem = load(name)
    nominal = problem.objective()
    fit = problem.fit()
    assert fit.status is SolverStatus.SUCCESS, fit.summary()
    assert fit.objective <= nominal + 1e-6
    assert fit.collocation_objective == pytest.approx(fit.objective, rel=1e-4, abs=1e-4)
    assert fit.agrees
    assert np.all(fit.theta >= problem.lb - 1e-9) and np.all(fit.theta <= problem.ub + 1e-9)


def test_an_unbounded_likelihood_is_not_reported_as_success():
    fit = load("0015").fit()
    assert fit.status is not SolverStatus.SUCCESS


def test_fit_reaches_the_least_squares_optimum_of_a_conversion_reaction():
    """Case 0001 fitted by collocation and by scipy's least squares on the CVODES simulation
    (fixed σ: the negative log-likelihood is a scaled sum of squares) reach one optimum."""
    from scipy.optimize import least_squares

    problem = load("0001")
    fit = problem.fit(start=problem.nominal)
    measured = problem.petab.measurement_df["measurement"].to_numpy()

    def residuals(theta):
        return problem.simulate(theta).values - measured

    reference = least_squares(residuals, problem.nominal, bounds=(problem.lb, problem.ub))
    best = problem.objective(reference.x)
    assert fit.objective == pytest.approx(best, abs=1e-6)


@pytest.mark.parametrize(
    ("extra", "push"), [({}, 1e-8), ({"bound_push": 1e-2}, 1e-2), ({"mu_init": 0.5}, 1e-8)]
)
def test_the_start_is_not_pushed_off_its_bounds_unless_asked(monkeypatch, extra, push):
    """A fit's start (θ and the states of its simulation) goes to IPOPT as it is: bound_push
    and bound_frac 1e-8 (START_AS_GIVEN) unless the caller's IPOPT options set them."""
    from collocnode.transcription import IpoptOptions
    from collocnode.transcription import _collocation as collocation

    seen = []

    def capture(dop, alg, meshes):
        seen.append(alg.ipopt.extra)
        raise RuntimeError("captured")

    monkeypatch.setattr(collocation, "solve_collocation", capture)
    with pytest.raises(RuntimeError, match="captured"):
        load("0001").fit(ipopt=IpoptOptions(print_level=0, extra=extra))
    assert seen[0]["bound_push"] == push and seen[0]["bound_frac"] == 1e-8
    assert all(seen[0][k] == value for k, value in extra.items())
