"""Error bars from the solve: the covariance of a trained model's fitted quantities, prediction
bands and identifiability (``sol.uncertainty()``; the equations: ``docs/uncertainty.md``).

At the optimum the NLP holds the exact Lagrangian Hessian and the constraint Jacobian, so the
Laplace approximation is one more linear-algebra step:
`collocnode.training._uncertainty.linearization` eliminates the collocation states through the
collocation equations and reduces the Hessian of the training objective to the fitted quantities
(`collocnode.training._uncertainty.quantities`); `collocnode.training._uncertainty.laplace` turns it
into the information of the data and the posterior with the prior the weight penalty implies, with
the noise given or estimated; `collocnode.training._uncertainty.spectrum` inverts it, setting apart
what the data do not determine; `collocnode.training._uncertainty.posterior` holds the result (and
is what a model file stores), `collocnode.training._uncertainty.bands` a prediction band,
`collocnode.training._uncertainty.trajectories` the bands of trajectories (by the forward
sensitivities of `collocnode.training._uncertainty.forward`),
`collocnode.training._uncertainty.identifiability` the report,
`collocnode.training._uncertainty.result` the object ``sol.uncertainty()`` returns,
`collocnode.training._uncertainty.profile` profile likelihoods by warm-started re-solves;
`collocnode.training._uncertainty.points` evaluates the fitted columns and their sensitivities at
many times.
"""

from .bands import Band
from .identifiability import Direction, Identifiability
from .posterior import ParameterPosterior
from .profile import Profile, profile_likelihood
from .result import Uncertainty, UncertaintyWarning, uncertainty

__all__ = [
    "Band",
    "Direction",
    "Identifiability",
    "ParameterPosterior",
    "Profile",
    "Uncertainty",
    "UncertaintyWarning",
    "profile_likelihood",
    "uncertainty",
]
