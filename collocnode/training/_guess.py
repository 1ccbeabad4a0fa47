"""Initial guesses of the node states when a trajectory does not measure every state.

The NLP needs a value for every state at every node. Measured states are guessed from their
samples; a state a trajectory does not measure has no samples, so its guess comes from the
model (never from invented data):

* ``"data"``: the measured states interpolated through their samples, and the others
  integrated with the model's own equations while the measured states are held on their
  interpolants ("forcing" the unmeasured part of the model with the data):

      h' = f_h(x_m(t), h, u(t), t; p),     h(t0) = h0,

  where x_m are the measured states and h the others;
* ``"simulate"``: the whole model integrated from the trajectory's starting values;
* ``"constant"``: the starting values everywhere.

The starting value of a state is its fixed initial value where ``initial_state`` fixes it, its
first measured value where it is measured, and otherwise 0 moved into its bounds. The
parameters of these integrations are ``params_guess`` where given, and otherwise the blocks
switched off (zero weights) with the physical parameters at their values: the physics alone,
independent of the random starting weights (a block that is not finite at zero weights leaves
the guess constant). An integration that fails leaves the guess constant after the last good
value. The guess is projected into the state bounds.
"""

from __future__ import annotations

from collections.abc import Callable

import casadi as ca
import numpy as np
from scipy.interpolate import CubicSpline

from ..models._hybrid import HybridModel
from ..tools._ivp import SimulationError, solve_bounded

#: points of the grid on which a forced or simulated guess is stored (plus the sample times)
GRID_POINTS = 401
#: integrator settings of the guess: it only has to be a reasonable starting point
_SETTINGS = {"rtol": 1e-6, "atol": 1e-8}


class Measured:
    """The measured states of one trajectory through their samples, ``t (n,) -> (n, n_states)``
    (NaN in the columns it does not measure; picklable).

    A column measured at every sample is interpolated with ``kind`` ("cubic": not-a-knot
    spline, or "linear"); a column measured at some samples piecewise linearly through them
    (constant outside them), as is every column when ``linear_only``.
    """

    def __init__(
        self, t: np.ndarray, x: np.ndarray, seen: np.ndarray, kind: str, linear_only: bool
    ) -> None:
        self.t, self.x, self.seen = t, x, seen
        full = seen.all(axis=0)
        self.spline_columns = (
            np.flatnonzero(full) if kind == "cubic" and not linear_only else np.zeros(0, int)
        )
        self.spline = (
            CubicSpline(t, x[:, self.spline_columns], axis=0) if self.spline_columns.size else None
        )

    @property
    def columns(self) -> np.ndarray:
        """The measured state indices."""
        return np.flatnonzero(self.seen.any(axis=0))

    def __call__(self, t: np.ndarray) -> np.ndarray:
        t = np.atleast_1d(np.asarray(t, dtype=float))
        out = np.full((t.size, self.x.shape[1]), np.nan)
        for i in self.columns:
            rows = self.seen[:, i]
            out[:, i] = np.interp(t, self.t[rows], self.x[rows, i])
        if self.spline is not None:
            out[:, self.spline_columns] = self.spline(np.clip(t, self.t[0], self.t[-1]))
        return out


class Guess:
    """A state guess ``t (n,) -> (n, n_states)``: the ``base`` guess with the columns
    ``stored`` replaced by stored values (linear in t between them), projected into
    ``[lb, ub]`` (picklable)."""

    def __init__(
        self,
        base: Callable[[np.ndarray], np.ndarray] | np.ndarray,
        stored: np.ndarray,
        t: np.ndarray,
        values: np.ndarray,
        lb: np.ndarray,
        ub: np.ndarray,
    ) -> None:
        self.base, self.stored, self.t, self.values, self.lb, self.ub = (
            base,
            stored,
            t,
            values,
            lb,
            ub,
        )

    def __call__(self, t: np.ndarray) -> np.ndarray:
        t = np.atleast_1d(np.asarray(t, dtype=float))
        if callable(self.base):
            out = np.array(self.base(t), dtype=float).reshape(t.size, -1)
        else:
            out = np.tile(self.base, (t.size, 1))
        for j, i in enumerate(self.stored):
            out[:, i] = np.interp(t, self.t, self.values[:, j])
        return np.clip(out, self.lb, self.ub)


def zero_into(lb: np.ndarray, ub: np.ndarray) -> np.ndarray:
    """0 moved into each interval [lb, ub] (the nearest point of it)."""
    return np.clip(np.zeros(lb.shape), lb, ub)


def physics_params(model: HybridModel) -> np.ndarray:
    """The model's parameter vector with every block's weights at zero and the fitted physical
    parameters at their values: the physics alone."""
    p = np.zeros(model.n_params)
    for name in model.fitted:
        p[model.slices[name].start] = model.parameters[name].value
    return p


def integrate(
    model: HybridModel,
    p: np.ndarray,
    c: np.ndarray,
    inputs: Callable[[np.ndarray], np.ndarray] | None,
    measured: Measured | None,
    free: np.ndarray,
    start: np.ndarray,
    t: np.ndarray,
) -> np.ndarray:
    """The states ``free`` (indices) integrated by the model over ``t`` (n,) from their values
    in ``start`` (n_states,), the other states held on ``measured``; shape (n, len(free)).
    Where the integration fails (a blow-up, a non-finite value), the values after its last
    good time stay at that time's value."""
    nx = model.n_states
    xs, us, ts = ca.SX.sym("x", nx), ca.SX.sym("u", model.n_inputs), ca.SX.sym("t")
    xdot, _ = model.per_trajectory_function(xs, ca.DM(p), us, ts, ca.DM(c))
    f = ca.Function("forced", [ts, xs, us], [xdot[free.tolist()]])
    held = np.setdiff1d(np.arange(nx), free)

    def state(tt: float, h: np.ndarray) -> np.ndarray:
        x = np.empty(nx)
        if held.size:
            x[held] = measured(np.array([tt]))[0, held]  # type: ignore[misc]
        x[free] = h
        return x

    def rhs(tt: float, h: np.ndarray) -> np.ndarray:
        u = inputs(np.array([tt]))[0] if inputs is not None else np.zeros(0)
        return np.asarray(f(tt, state(tt, h), u)).ravel()

    h0 = start[free]
    bound = 1e6 * max(1.0, float(np.max(np.abs(start))))

    def run(times: np.ndarray) -> np.ndarray:
        return solve_bounded(rhs, times, h0, "LSODA", bound=bound, what="state guess", **_SETTINGS)

    try:
        return run(t)
    except SimulationError as err:
        good = t[t < err.t_fail]
        try:
            part = run(good) if good.size >= 2 else h0[None, :]
        except (SimulationError, RuntimeError, ValueError, ArithmeticError):
            part = h0[None, :]
        return np.vstack([part, np.tile(part[-1], (t.size - part.shape[0], 1))])
    except (RuntimeError, ValueError, ArithmeticError):  # e.g. a block not finite at p
        return np.tile(h0, (t.size, 1))


def guess_grid(t0: float, tf: float, samples: np.ndarray) -> np.ndarray:
    """The times a forced or simulated guess is stored at: a uniform grid of
    `GRID_POINTS` over [t0, tf] and the sample times inside it."""
    inside = samples[(samples > t0) & (samples < tf)]
    return np.unique(np.concatenate([np.linspace(t0, tf, GRID_POINTS), inside]))


def spread(values: np.ndarray) -> float:
    """A typical magnitude of one state's guessed values: their standard deviation, else their
    largest magnitude, else 1."""
    values = values[np.isfinite(values)]
    if values.size:
        s = float(values.std())
        if s > 0:
            return s
        m = float(np.max(np.abs(values)))
        if m > 0:
            return m
    return 1.0
