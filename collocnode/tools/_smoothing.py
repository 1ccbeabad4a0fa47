"""A smoothing spline whose smoothing is chosen by generalized cross-validation, with a guard
for exact data."""

from __future__ import annotations

import numpy as np
from scipy.interpolate import CubicSpline, make_smoothing_spline

#: a smoothing that leaves residuals above this share of the data's spread has smoothed the
#: signal away, not the noise
OVERSMOOTHED = 0.5


def smoothing_spline(t: np.ndarray, x: np.ndarray):
    """A cubic smoothing spline through samples ``x`` (n,) at increasing times ``t`` (n,)
    [s], its smoothing parameter chosen by GCV (``scipy.interpolate.make_smoothing_spline``).

    GCV estimates the noise from the data; on exact (or nearly exact) samples of an
    oscillation it can choose a smoothing that removes the signal itself, and on samples whose
    spacing spans many decades (a log-spaced record) scipy finds its criterion ill-posed. Where
    the residuals exceed `OVERSMOOTHED` times the data's spread, or GCV is ill-posed, the
    interpolating cubic spline is returned instead: the data are then their own best estimate.
    """
    try:
        spline = make_smoothing_spline(t, x)
    except ValueError:  # "Seems like the problem is ill-posed"
        return CubicSpline(t, x)
    spread = float(np.std(x))
    if spread > 0 and np.std(x - spline(t)) > OVERSMOOTHED * spread:
        return CubicSpline(t, x)
    return spline
