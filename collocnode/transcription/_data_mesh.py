"""A collocation mesh chosen from the data: as fine as the sampling, and as the signal's
rate of change, wherever each asks for it.

The mesh equidistributes a monitor density ρ(t) [intervals per second] (de Boor's
equidistribution): ρ(t) = max(ρ_samples(t), ρ_rate(t), ρ_min), with

- ρ_samples = `PER_SAMPLE` × the local sample density (one interval per two samples by
  default): a log-spaced record (stiff kinetics) gets a log-spaced mesh;
- ρ_rate = `PER_PERIOD` × ω(t) / 2π, where ω(t) = |x̂'(t)| / (range(x̂) / 2) is the local
  angular rate of the smoothed data x̂ (a cubic smoothing spline with its smoothing chosen by
  generalized cross-validation, so that noise does not pass for a fast signal;
  `collocnode.tools._smoothing.smoothing_spline`),
  taken as the largest over the fitted columns: a sinusoid of angular frequency ω gets
  `PER_PERIOD` intervals per period, a spike as many per its own time scale;
- ρ_min = `MIN_INTERVALS` / (tf − t0).

The number of intervals is ∫ρ dt rounded up, at most `MAX_INTERVALS`. The estimate is a
starting point: [`UntilConsistent`][collocnode.UntilConsistent] refines where the re-simulation of
the trained model says it must. Measured on the gallery's problems in ``docs/defaults.md``.
"""

from __future__ import annotations

import numpy as np

from ..tools._smoothing import smoothing_spline
from ._mesh import Mesh

#: intervals per sample interval of the data
PER_SAMPLE = 0.5
#: intervals per period of the fastest local rate of the smoothed data
PER_PERIOD = 12.0
#: the least and the most intervals of a data-derived mesh
MIN_INTERVALS = 10
MAX_INTERVALS = 2000
#: points of the uniform grid whose cells (with the sampling's) the density is integrated on
_FINE = 2001


def data_mesh(t: np.ndarray, y: np.ndarray, tspan: tuple[float, float], stages: int = 3) -> Mesh:
    """The mesh of ``stages``-stage intervals over ``tspan`` for data ``y`` (n, m) sampled at
    ``t`` (n,) [s] (rows with a NaN are left out per column; see the module docstring)."""
    t = np.asarray(t, dtype=float)
    y = np.asarray(y, dtype=float).reshape(t.size, -1)
    t0, tf = float(tspan[0]), float(tspan[1])
    inside = (t >= t0) & (t <= tf)
    t, y = t[inside], y[inside]
    # cells of a uniform grid and of the sampling, so that both scales are resolved
    edges = np.unique(np.r_[np.linspace(t0, tf, _FINE), t])
    mids = 0.5 * (edges[:-1] + edges[1:])
    density = np.full(mids.size, MIN_INTERVALS / (tf - t0))
    if t.size >= 2:
        density = np.maximum(density, PER_SAMPLE * _sample_density(t, mids))
    for column in y.T:
        seen = np.isfinite(column)
        if seen.sum() >= 5:
            density = np.maximum(density, PER_PERIOD * _rate(t[seen], column[seen], mids))
    return _equidistributed(edges, density, stages)


def _sample_density(t: np.ndarray, at: np.ndarray) -> np.ndarray:
    """Samples per second at the times ``at``: 1 / the length of the sample interval each lies
    in (the first or last one outside the samples)."""
    gaps = np.maximum(np.diff(t), 1e-12 * (t[-1] - t[0]))
    j = np.clip(np.searchsorted(t, at) - 1, 0, gaps.size - 1)
    return 1.0 / gaps[j]


def _rate(t: np.ndarray, x: np.ndarray, at: np.ndarray) -> np.ndarray:
    """Periods per second of the smoothed column ``x`` at the times ``at``:
    |x̂'| / (π · range(x̂)), 0 for a constant column."""
    try:
        spline = smoothing_spline(t, x)
    except (ValueError, np.linalg.LinAlgError):  # too few or repeated times
        return np.zeros(at.size)
    smooth = spline(np.linspace(t[0], t[-1], 1001))
    half_range = 0.5 * float(smooth.max() - smooth.min())
    if not half_range > 0:
        return np.zeros(at.size)
    omega = np.abs(spline.derivative()(np.clip(at, t[0], t[-1]))) / half_range
    return omega / (2.0 * np.pi)


def _equidistributed(edges: np.ndarray, density: np.ndarray, stages: int) -> Mesh:
    """The grid that puts one unit of ∫ density dt (``density`` per cell of ``edges``) in
    every interval."""
    cumulative = np.r_[0.0, np.cumsum(density * np.diff(edges))]
    n = int(np.clip(np.ceil(cumulative[-1] - 1e-9), 1, MAX_INTERVALS))
    targets = np.linspace(0.0, cumulative[-1], n + 1)
    grid = np.interp(targets, cumulative, edges)
    grid[0], grid[-1] = edges[0], edges[-1]
    return Mesh.from_grid(grid, np.full(n, stages))
