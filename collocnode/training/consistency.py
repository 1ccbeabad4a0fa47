"""Is the trained model's ODE the collocation trajectory? The consistency check.

Collocation makes the learned right-hand side agree with the collocation polynomials only at the
collocation nodes. A network with many weights, little regularization and few nodes can satisfy
the NLP there and do something else between them, so that the learned ODE, integrated from the
same initial state, leaves the trajectory IPOPT returned -- while IPOPT reports success.

**The check** (:func:`check_consistency`): for every trajectory k, integrate the learned model
from the collocated initial state x_k(t0) over the trajectory's horizon with an adaptive
integrator at tight tolerance (:func:`collocnode.models.simulate`, DOP853, rtol 1e-8 by default) and
compare it with the collocation polynomials on a fine grid (every node and the midpoint between
each pair of neighbouring nodes). The deviation of state i is scaled by the data's spread s_i
(the standard deviation of that state's column in the data, 1 where it is constant):

    d_ki(t) = |x_sim,ki(t) − x_coll,ki(t)| / s_i

(a hidden state, which the data never measure, is scaled by the spread of its own collocated
trajectory instead) and reported as its maximum and its time-RMS sqrt(∫ d² dt / (tf − t0))
(trapezoid rule on the grid), per trajectory and state, with the first time it exceeds the
tolerance. A simulation that fails (blow-up, non-finite state, step budget) is a deviation of
+inf from the time it failed.

The default tolerance :data:`DEFAULT_TOLERANCE` and the check's cost are measured by
``benchmarks/consistency.py`` (``docs/collocation_extensions.md``, "Consistency check").
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import _validation as v
from ..models.hybrid import HybridModel
from ..models.simulate import METHODS, SimulationError, simulate
from ..transcription.mesh import Mesh
from ..transcription.solution import Solution

#: default tolerance on the scaled deviation (max over the grid, any state, any trajectory),
#: between the deviations measured on models that are fine and on an inconsistent hybrid model
#: fitted to sparse noisy data (``benchmarks/consistency.py tolerance``, numbers in the docs)
DEFAULT_TOLERANCE = 0.05
#: step budget of the re-simulation of one trajectory: a model that needs more steps over the
#: training horizon at the check's tolerance is reported as failing where the budget ran out
CHECK_MAX_STEPS = 50_000


class InconsistentModelWarning(UserWarning):
    """The learned ODE, re-simulated from the collocated initial state, leaves the collocation
    trajectory by more than the check's tolerance (the status stays what IPOPT said)."""


@dataclass(frozen=True)
class ConsistencyCheck:
    """Settings of the consistency check, ``solve(problem, alg, check=ConsistencyCheck(...))``.

    Args:
        tol: tolerance on the scaled deviation (dimensionless, in units of the data's spread of
            each state); the model is consistent if no state of any trajectory deviates more.
        method: the integrator, a scipy ``solve_ivp`` method name (see
            :func:`collocnode.models.simulate`; "rk4" is not adaptive and is refused).
        rtol: its relative tolerance; the absolute tolerance is ``rtol`` times each state's
            spread.
        max_steps: step budget of one trajectory's re-simulation.
    """

    tol: float = DEFAULT_TOLERANCE
    method: str = "DOP853"
    rtol: float = 1e-8
    max_steps: int = CHECK_MAX_STEPS

    def __post_init__(self) -> None:
        object.__setattr__(self, "tol", v.positive_float("tol", self.tol))
        v.choice("method", self.method, [m for m in METHODS if m != "rk4"])
        object.__setattr__(self, "rtol", v.positive_float("rtol", self.rtol))
        object.__setattr__(self, "max_steps", v.positive_int("max_steps", self.max_steps))


def check_setting(check: object) -> ConsistencyCheck | None:
    """``solve``'s ``check`` argument as settings: True -> the defaults, False -> None (no
    check), a :class:`ConsistencyCheck` -> itself; anything else a TypeError naming it."""
    if check is True:
        return ConsistencyCheck()
    if check is False:
        return None
    if isinstance(check, ConsistencyCheck):
        return check
    raise TypeError(f"check must be True, False or a ConsistencyCheck, got {check!r:.80}")


@dataclass(frozen=True)
class ConsistencyReport:
    """The outcome of the consistency check of a trained model.

    Attributes:
        consistent: True if no scaled deviation exceeds ``tol`` (and every re-simulation ran
            over its whole horizon).
        tol: the tolerance used (dimensionless).
        max_deviation: largest scaled deviation, shape (n_trajectories, n_states); +inf where
            the re-simulation failed.
        rms_deviation: time-RMS of the scaled deviation over the horizon, same shape; +inf where
            the re-simulation failed.
        exceeds_from: first time [s] the scaled deviation exceeds ``tol``, same shape; NaN
            where it never does (a failed re-simulation exceeds it at the latest where it
            failed).
        failed_at: time [s] where the re-simulation of each trajectory failed (the last time
            of the check's grid it reached), shape (n_trajectories,); NaN where it did not.
        failures: the integrator's message per trajectory ("" where it did not fail).
        scales: the spread s_i of each state, shape (n_states,) (units of the state).
        state_names: labels of the states.
        horizons: (t0, tf) of each trajectory [s].
        wall_time_s: wall time of the check [s].
        scale_sources: where each state's scale comes from: "data" (its measured values) or
            "collocation" (a hidden state: its collocated trajectory); empty: all from data.
    """

    consistent: bool
    tol: float
    max_deviation: np.ndarray
    rms_deviation: np.ndarray
    exceeds_from: np.ndarray
    failed_at: np.ndarray
    failures: tuple[str, ...]
    scales: np.ndarray
    state_names: tuple[str, ...]
    horizons: tuple[tuple[float, float], ...]
    wall_time_s: float
    scale_sources: tuple[str, ...] = ()

    @property
    def n_trajectories(self) -> int:
        return int(self.max_deviation.shape[0])

    @property
    def worst(self) -> tuple[int, int]:
        """(trajectory, state) of the largest deviation; among equal ones (e.g. +inf of a
        blow-up) the one that exceeds the tolerance first."""
        starts = np.where(np.isnan(self.exceeds_from), np.inf, self.exceeds_from)
        order = np.lexsort((starts.ravel(), -self.max_deviation.ravel()))
        k, i = np.unravel_index(int(order[0]), self.max_deviation.shape)
        return int(k), int(i)

    @property
    def largest(self) -> float:
        """The largest scaled deviation over every trajectory and state."""
        return float(self.max_deviation.max())

    @property
    def worst_state(self) -> str:
        """Name of the state with the largest deviation (``x<i>`` where states are unnamed)."""
        i = self.worst[1]
        return self.state_names[i] if self.state_names else f"x{i}"

    @property
    def worst_trajectory(self) -> int:
        return self.worst[0]

    @property
    def starts_at(self) -> float | None:
        """Time [s] from which the largest deviation exceeds the tolerance (None if it does
        not)."""
        t = float(self.exceeds_from[self.worst])
        return None if np.isnan(t) else t

    def describe(self) -> str:
        """One sentence on the largest deviation: its size, state, trajectory and start."""
        k, _ = self.worst
        where = f" of trajectory {k}" if self.n_trajectories > 1 else ""
        if np.isfinite(self.failed_at[k]) and not np.isfinite(self.largest):
            start = self.starts_at
            text = (
                f"the re-simulated model fails at t = {self.failed_at[k]:.4g}{where} "
                f"({self.failures[k]})"
            )
            if start is not None and start < self.failed_at[k]:
                text += (
                    f"; state {self.worst_state!r} leaves the collocation trajectory by more "
                    f"than {self.tol:g} from t = {start:.4g}"
                )
            return text
        text = f"largest scaled deviation {self.largest:.3g} in state {self.worst_state!r}{where}"
        if self.starts_at is not None:
            text += f", above {self.tol:g} from t = {self.starts_at:.4g}"
        return text

    @property
    def units(self) -> str:
        """What the deviations are measured in, for the messages."""
        hidden = [
            self.state_names[i] if self.state_names else f"x{i}"
            for i, source in enumerate(self.scale_sources)
            if source == "collocation"
        ]
        if not hidden:
            return "in units of each state's spread in the data"
        listed = ", ".join(repr(n) for n in hidden)
        return (
            f"in units of each state's spread in the data; for the hidden state"
            f"{'s' if len(hidden) > 1 else ''} {listed}, in the collocated trajectory"
        )

    def summary(self) -> str:
        """One line for a run's summary."""
        if self.consistent:
            return (
                f"consistent: re-simulation within {self.tol:g} of the collocation trajectory "
                f"({self.describe()}; check {self.wall_time_s:.2f} s)"
            )
        return (
            f"INCONSISTENT: {self.describe()} (tolerance {self.tol:g}, {self.units}; check "
            f"{self.wall_time_s:.2f} s)"
        )

    def to_dict(self) -> dict[str, Any]:
        """A JSON-friendly dict for ``result.json``: deviations per trajectory as lists over the
        states (+inf where the re-simulation failed: strict JSON writers turn it into null, and
        ``failed_at`` says where)."""
        names = list(self.state_names) or [f"x{i}" for i in range(self.scales.size)]
        return {
            "consistent": self.consistent,
            "tol": self.tol,
            "largest_deviation": self.largest,
            "worst_state": self.worst_state,
            "worst_trajectory": self.worst_trajectory,
            "starts_at": self.starts_at,
            "state_names": names,
            "max_deviation": self.max_deviation.tolist(),
            "rms_deviation": self.rms_deviation.tolist(),
            "exceeds_from": [
                [None if np.isnan(t) else float(t) for t in row] for row in self.exceeds_from
            ],
            "failed_at": [None if np.isnan(t) else float(t) for t in self.failed_at],
            "failures": list(self.failures),
            "scales": self.scales.tolist(),
            "scale_sources": list(self.scale_sources) or ["data"] * self.scales.size,
            "wall_time_s": self.wall_time_s,
        }

    def warn(self, stacklevel: int = 2) -> None:
        """Issue an :class:`InconsistentModelWarning` if the check failed."""
        if not self.consistent:
            warnings.warn(
                f"the trained model is inconsistent with its collocation trajectory: "
                f"{self.describe()} (tolerance {self.tol:g}, {self.units}). The solver status "
                f"is unchanged; "
                f"refine the mesh (UntilConsistent), raise the regularization or simplify the "
                f"model.",
                InconsistentModelWarning,
                stacklevel=stacklevel + 1,
            )


def check_grid(mesh: Mesh) -> np.ndarray:
    """The times of the check on one trajectory: every node of ``mesh`` and the midpoint between
    each pair of neighbouring nodes, shape (2 n_nodes − 1,) [s], increasing."""
    nodes = mesh.node_times
    grid = np.empty(2 * nodes.size - 1)
    grid[0::2] = nodes
    grid[1::2] = 0.5 * (nodes[:-1] + nodes[1:])
    return grid


def check_consistency(
    model: HybridModel,
    solution: Solution,
    scales: np.ndarray,
    inputs: Sequence[Callable[[np.ndarray], np.ndarray] | None],
    settings: ConsistencyCheck | None = None,
    *,
    trajectory_params: Sequence[Mapping[str, float]] | None = None,
    scale_sources: Sequence[str] = (),
) -> ConsistencyReport:
    """Re-simulate ``model`` with the solution's parameters from each trajectory's collocated
    initial state and compare with the collocation polynomials (see the module docstring).

    Args:
        model: the trained model.
        solution: its collocation solution (one mesh per trajectory; the model's parameters
            are the first ``model.n_params`` of its ``p``).
        scales: the spread of every state, shape (n_states,), > 0 (units of the state).
        inputs: the known inputs of each trajectory, ``u(t: (n,)) -> (n, n_inputs)`` (None for
            a model without inputs), one per trajectory.
        settings: tolerance and integrator (default ``ConsistencyCheck()``).
        trajectory_params: per trajectory, the values of the model's per-trajectory
            parameters (default: their ``value``).
        scale_sources: per state "data" or "collocation", where ``scales`` came from (for the
            report's words).
    """
    settings = ConsistencyCheck() if settings is None else settings
    if not isinstance(settings, ConsistencyCheck):
        raise TypeError(f"settings must be a ConsistencyCheck, got {settings!r:.80}")
    if not isinstance(solution, Solution):
        raise TypeError(f"solution must be a Solution, got {solution!r:.80}")
    scales = v.finite_array("scales", scales, shape=(model.n_states,))
    if np.any(scales <= 0):
        raise ValueError(f"scales must be positive, got {scales}")
    n = solution.n_segments
    if len(inputs) != n:
        raise ValueError(f"inputs must hold one entry per trajectory ({n}), got {len(inputs)}")
    params = [None] * n if trajectory_params is None else list(trajectory_params)
    if len(params) != n:
        raise ValueError(
            f"trajectory_params must hold one entry per trajectory ({n}), got {len(params)}"
        )
    start = time.perf_counter()
    per_trajectory = [
        _check_trajectory(model, solution, k, scales, inputs[k], settings, params[k])
        for k in range(n)
    ]
    max_dev, rms_dev, exceeds, failed_at, failures = zip(*per_trajectory, strict=True)
    max_dev, rms_dev = np.array(max_dev), np.array(rms_dev)
    failed = np.array(failed_at, dtype=float)
    consistent = bool(np.all(max_dev <= settings.tol) and np.all(np.isnan(failed)))
    return ConsistencyReport(
        consistent=consistent,
        tol=settings.tol,
        max_deviation=max_dev,
        rms_deviation=rms_dev,
        exceeds_from=np.array(exceeds, dtype=float),
        failed_at=failed,
        failures=tuple(failures),
        scales=scales.copy(),
        state_names=tuple(model.state_names),
        horizons=tuple((float(m.t0), float(m.tf)) for m in solution.meshes),
        wall_time_s=time.perf_counter() - start,
        scale_sources=tuple(scale_sources),
    )


def _check_trajectory(
    model: HybridModel,
    solution: Solution,
    k: int,
    scales: np.ndarray,
    inputs: Callable[[np.ndarray], np.ndarray] | None,
    settings: ConsistencyCheck,
    trajectory_params: Mapping[str, float] | None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, float, str]:
    """max, RMS and first exceedance time per state (n_states,) of trajectory k, the time its
    re-simulation failed (NaN if it did not) and the integrator's message."""
    mesh, x_nodes = solution.meshes[k], solution.segment_states[k]
    grid = check_grid(mesh)
    nx = model.n_states
    p = solution.p[: model.n_params]
    if not (np.all(np.isfinite(solution.p)) and np.all(np.isfinite(x_nodes))):
        t0 = float(mesh.t0)
        inf = np.full(nx, np.inf)
        return inf, inf, np.full(nx, t0), t0, "non-finite parameters or collocation states"
    x_coll = mesh.interpolate(x_nodes, grid)

    def run(t: np.ndarray) -> np.ndarray:
        traj = simulate(
            model,
            p,
            t,
            x_nodes[0],
            inputs=inputs,
            method=settings.method,
            rtol=settings.rtol,
            atol=settings.rtol * scales,
            # a blow-up: far outside anything the collocation trajectory reaches
            bound=max(1e6, 1e3 * float(np.max(np.abs(x_nodes)))),
            max_steps=settings.max_steps,
            trajectory_params=trajectory_params,
        )
        return traj.x

    try:
        dev = np.abs(run(grid) - x_coll) / scales
    except SimulationError as err:
        # the deviation before the failure, from a second run that stops short of it
        t_fail = float(err.t_fail)
        before = grid[grid < t_fail]
        dev_before = np.zeros((0, nx))
        if before.size >= 2:
            try:
                dev_before = np.abs(run(before) - x_coll[: before.size]) / scales
            except SimulationError:
                pass
        exceeds = _first_exceedance(before[: len(dev_before)], dev_before, settings.tol)
        exceeds = np.where(np.isnan(exceeds), t_fail, exceeds)
        inf = np.full(nx, np.inf)
        return inf, inf, exceeds, t_fail, str(err)
    span = float(grid[-1] - grid[0])
    rms = np.sqrt(np.trapezoid(dev**2, grid, axis=0) / span) if span > 0 else dev.max(axis=0)
    return dev.max(axis=0), rms, _first_exceedance(grid, dev, settings.tol), np.nan, ""


def _first_exceedance(t: np.ndarray, dev: np.ndarray, tol: float) -> np.ndarray:
    """First time each column of ``dev`` (n_t, n_states) exceeds ``tol``; NaN where none does."""
    above = dev > tol
    first = np.argmax(above, axis=0) if t.size else np.zeros(dev.shape[1], dtype=int)
    hit = above.any(axis=0) if t.size else np.zeros(dev.shape[1], dtype=bool)
    return np.where(hit, t[first] if t.size else np.nan, np.nan)
