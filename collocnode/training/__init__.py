"""Training a (hybrid) neural ODE on trajectory data, posed as a dynamic optimization problem.

The training problem of Langenkamp et al. (eqs. 6 and 21):

    minimize   ∫ Σ_c ((q_c(x, u, t) − q̂_c(t)) / s_c)² dt  +  λ ‖w‖²
    subject to x' = φ(x, u, t, NN_w(...)),   block constraints (e.g. NN(0) = 0, eq. 17),
               x(t0) = x0 (optional)

where q_c are the fitted columns (states or model outputs), q̂_c the data and s_c optional scales
(eq. 16 divides by the data's standard deviation). Two ways to bring the data into the loss:

* ``loss="nodes"``: the data enter at the collocation nodes through an interpolant of the samples,
  a not-a-knot cubic spline by default (exact to O(Δt⁴) for smooth data; for noisy data it passes
  through every noisy sample) or piecewise linear, and the integral is the Radau quadrature.
* ``loss="samples"``: the loss is evaluated where the data are, Σ_s Σ_c w_sc ((q_c(t_s) − q̂_sc) /
  s_c)², with x(t_s) the collocation polynomial of the interval holding t_s. By default
  (``sample_weights="least_squares"``) every observed sample of column c has the same weight
  w_c, the horizons' total length over the column's observed samples: least squares, the
  maximum-likelihood fit for independent noise of one size per column. With
  ``sample_weights="cells"`` w_sc is the length of the cell around the sample (midpoints between
  neighbouring observations, the horizon's ends outside them): the trapezoid rule, so the sum
  approximates the integral of the node loss, which on irregular samples weighs the samples
  after long gaps more. Both sum to the same total, so λ keeps its meaning. Samples may be
  irregular and differ between trajectories; a ``mask`` marks missing values per column
  (``mask="finite"``: where the data hold NaN).

The observation model (`collocnode.training._observation`) says what each trajectory measures:
states a trajectory never measures are hidden, guessed by the model (`collocnode.training._guess`)
and scaled by their own trajectory; state bounds and path constraints
([`PathConstraint`][collocnode.PathConstraint]) are hard constraints; per-trajectory parameters (the
conditions of each experiment) sit in the NLP as `collocnode.training._layout` says.
"""

from ._constraints import BlockConstraint, PathConstraint
from ._observation import UndeterminedStateWarning
from ._problem import TrainingProblem
from ._ranges import ExtrapolationWarning
from ._samples import cell_weights
from ._solution import TrainingSolution
from ._warmstart import fit_initial_guess, warm_start

__all__ = [
    "BlockConstraint",
    "ExtrapolationWarning",
    "PathConstraint",
    "TrainingProblem",
    "TrainingSolution",
    "UndeterminedStateWarning",
    "cell_weights",
    "fit_initial_guess",
    "warm_start",
]
