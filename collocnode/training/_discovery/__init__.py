"""Closed-form equations from trained blocks: sparse regression at the collocation nodes.

The universal-differential-equation workflow (train a network for the missing term, recover its
closed form by sparse regression, re-fit and use the closed form)::

    import pysindy as ps
    trained = solve(TrainingProblem(model, data), RadauIIA(160, 3))
    found = discover(trained, "interaction", SparseRegression(ps.PolynomialLibrary(degree=3)))
    print(found)                                  # interaction[0] = -0.9 x y ...
    refit = solve(found.refit_problem(trained), RadauIIA(160, 3))   # coefficients as NLP variables

The regression data are the block's inputs and outputs at the collocation nodes of the trained
solution (`collocnode.training._discovery.samples`); the library and the optimizer are pysindy's
(`collocnode.training._discovery.library`, `collocnode.training._discovery.regression`); the result
([`ClosedForm`][collocnode.ClosedForm], `collocnode.training._discovery.closed_form`) prints as
equations, evaluates in numpy and CasADi, and replaces the block in the model with its coefficients
as fitted parameters. [`Discovered`][collocnode.Discovered] does train, discover and re-fit as one
algorithm. Needs the ``discovery`` extra (pysindy).
"""

from .closed_form import ClosedForm, PathPoint
from .regression import CRITERIA, FORMS, SparseRegression, discover, regress
from .samples import RHS, BlockSamples, DiscoveryError, DiscoveryWarning, block_samples

__all__ = [
    "CRITERIA",
    "FORMS",
    "RHS",
    "BlockSamples",
    "ClosedForm",
    "DiscoveryError",
    "DiscoveryWarning",
    "PathPoint",
    "SparseRegression",
    "block_samples",
    "discover",
    "regress",
]
