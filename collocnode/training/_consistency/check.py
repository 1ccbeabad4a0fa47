"""Is the trained model's ODE the collocation trajectory? The consistency check.

Collocation makes the learned right-hand side agree with the collocation polynomials only at the
collocation nodes. A network with many weights, little regularization and few nodes can satisfy
the NLP there and do something else between them, so that the learned ODE, integrated from the
same initial state, leaves the trajectory IPOPT returned -- while IPOPT reports success.

**The check** (`check_consistency`): for every trajectory k, integrate the learned model
from the collocated initial state x_k(t0) over the trajectory's horizon with an adaptive
integrator at tight tolerance ([`collocnode.simulate`][collocnode.simulate]; by default SUNDIALS
CVODES in compiled code, Adams-Moulton with a switch to BDF where Adams fails, so that a stiff model
is integrated as cheaply as a non-stiff one; rtol 1e-8) and compare it with the collocation
polynomials on a fine grid (every node and the midpoint between each pair of neighbouring
nodes). The deviation of state i is scaled by the data's spread s_i
(the standard deviation of that state's column in the data, 1 where it is constant):

    d_ki(t) = |x_sim,ki(t) − x_coll,ki(t)| / s_i

(a hidden state, which the data never measure, is scaled by the spread of its own collocated
trajectory instead) and reported as its maximum and its time-RMS sqrt(∫ d² dt / (tf − t0))
(trapezoid rule on the grid), per trajectory and state, with the first time it exceeds the
tolerance. A simulation that fails (blow-up, non-finite state, step budget) is a deviation of
+inf from the time it failed.

**Past the data**: the same re-simulation goes on for a ``margin`` (default 10 % of each
horizon) beyond the last data time, where nothing was fitted. A model that fails there, or
leaves the range of its collocation trajectory by more than that range's width
(`DIVERGED_EXCURSION`), is not consistent: it would be called so on the data
and blow up just after them. Where the known inputs are not defined past the data the margin is
reported as unverified.

The default tolerance `DEFAULT_TOLERANCE` and the check's cost are measured by
``benchmarks/consistency.py`` (``docs/collocation_extensions.md``, "Consistency check").
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ... import _validation as v
from ...models._hybrid import HybridModel
from ...models._simulate import METHODS, SimulationError, simulate
from ...transcription._mesh import Mesh
from ...transcription._solution import Solution
from .report import Beyond, ConsistencyReport

#: default tolerance on the scaled deviation (max over the grid, any state, any trajectory),
#: between the deviations measured on models that are fine and on an inconsistent hybrid model
#: fitted to sparse noisy data (``benchmarks/consistency.py tolerance``, numbers in the docs)
DEFAULT_TOLERANCE = 0.05
#: step budget of the re-simulation of one trajectory: a model that needs more steps over the
#: training horizon at the check's tolerance is reported as failing where the budget ran out
CHECK_MAX_STEPS = 50_000
#: output times of the re-simulation in the margin past the data
MARGIN_POINTS = 50


@dataclass(frozen=True)
class ConsistencyCheck:
    """Settings of the consistency check, ``solve(problem, alg, check=ConsistencyCheck(...))``.

    Args:
        tol: tolerance on the scaled deviation (dimensionless, in units of the data's spread of
            each state); the model is consistent if no state of any trajectory deviates more.
        method: the integrator (see [`collocnode.simulate`][collocnode.simulate]): "cvodes"
            (compiled, stiff-aware, the default) or a scipy ``solve_ivp`` method name ("rk4" is not
            adaptive and is refused).
        rtol: its relative tolerance; the absolute tolerance is ``rtol`` times each state's
            spread.
        max_steps: step budget of one trajectory's re-simulation.
        margin: how far past each trajectory's last data time the re-simulation goes on, as a
            fraction of its horizon (>= 0; 0: not at all).
    """

    tol: float = DEFAULT_TOLERANCE
    method: str = "cvodes"
    rtol: float = 1e-8
    max_steps: int = CHECK_MAX_STEPS
    margin: float = 0.1

    def __post_init__(self) -> None:
        object.__setattr__(self, "tol", v.positive_float("tol", self.tol))
        v.choice("method", self.method, [m for m in METHODS if m != "rk4"])
        object.__setattr__(self, "rtol", v.positive_float("rtol", self.rtol))
        object.__setattr__(self, "max_steps", v.positive_int("max_steps", self.max_steps))
        object.__setattr__(self, "margin", v.nonnegative_float("margin", self.margin))


def check_setting(check: object) -> ConsistencyCheck | None:
    """``solve``'s ``check`` argument as settings: True -> the defaults, False -> None (no
    check), a [`ConsistencyCheck`][collocnode.ConsistencyCheck] -> itself; anything else a TypeError
    naming it."""
    if check is True:
        return ConsistencyCheck()
    if check is False:
        return None
    if isinstance(check, ConsistencyCheck):
        return check
    raise TypeError(f"check must be True, False or a ConsistencyCheck, got {check!r:.80}")


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
    runs = [
        _TrajectoryCheck(model, solution, k, scales, inputs[k], settings, params[k]).run()
        for k in range(n)
    ]
    max_dev = np.array([r.max_dev for r in runs])
    failed = np.array([r.failed_at for r in runs], dtype=float)
    within = bool(np.all(max_dev <= settings.tol) and np.all(np.isnan(failed)))
    beyond = tuple(r.beyond for r in runs)
    return ConsistencyReport(
        consistent=within and not any(b.diverged for b in beyond),
        tol=settings.tol,
        max_deviation=max_dev,
        rms_deviation=np.array([r.rms_dev for r in runs]),
        exceeds_from=np.array([r.exceeds for r in runs], dtype=float),
        failed_at=failed,
        failures=tuple(r.failure for r in runs),
        scales=scales.copy(),
        state_names=tuple(model.state_names),
        horizons=tuple((float(m.t0), float(m.tf)) for m in solution.meshes),
        wall_time_s=time.perf_counter() - start,
        beyond=beyond,
        method=settings.method,
        scale_sources=tuple(scale_sources),
    )


@dataclass
class _Outcome:
    """One trajectory's check: max, RMS and first exceedance time per state (n_states,), the
    time its re-simulation failed on the horizon (NaN if it did not), the integrator's message
    and what happened past the data."""

    max_dev: np.ndarray
    rms_dev: np.ndarray
    exceeds: np.ndarray
    failed_at: float
    failure: str
    beyond: Beyond


class _TrajectoryCheck:
    """The check of trajectory ``k``: one re-simulation over its horizon and the margin."""

    def __init__(
        self,
        model: HybridModel,
        solution: Solution,
        k: int,
        scales: np.ndarray,
        inputs: Callable[[np.ndarray], np.ndarray] | None,
        settings: ConsistencyCheck,
        trajectory_params: Mapping[str, float] | None = None,
    ) -> None:
        self.model, self.p, self.scales = model, solution.p[: model.n_params], scales
        self.trajectory_params = trajectory_params
        self.inputs, self.settings = inputs, settings
        self.mesh, self.x_nodes = solution.meshes[k], solution.segment_states[k]
        self.grid = check_grid(self.mesh)

    def simulate(self, t: np.ndarray) -> np.ndarray:
        traj = simulate(
            self.model,
            self.p,
            t,
            self.x_nodes[0],
            inputs=self.inputs,
            method=self.settings.method,
            rtol=self.settings.rtol,
            atol=self.settings.rtol * self.scales,
            # a blow-up: far outside anything the collocation trajectory reaches
            bound=max(1e6, 1e3 * float(np.max(np.abs(self.x_nodes)))),
            max_steps=self.settings.max_steps,
            trajectory_params=self.trajectory_params,
        )
        return traj.x

    def margin_times(self) -> tuple[np.ndarray, str]:
        """The output times past the data, and why there are none ("" where there are)."""
        t0, tf = float(self.mesh.t0), float(self.mesh.tf)
        width = self.settings.margin * (tf - t0)
        if width <= 0:
            return np.zeros(0), "no margin checked"
        times = tf + width * np.arange(1, MARGIN_POINTS + 1) / MARGIN_POINTS
        sampled = getattr(self.inputs, "t", None)
        if sampled is not None and getattr(self.inputs, "fn", None) is None:
            if float(np.max(sampled)) < times[-1]:
                return np.zeros(0), "the known inputs are samples that end with the data"
        if self.inputs is not None:
            try:
                u = np.asarray(self.inputs(times), dtype=float)
            except Exception:  # an input defined on the data's span only
                return np.zeros(0), "the known inputs are not defined past the data"
            if not np.all(np.isfinite(u)):
                return np.zeros(0), "the known inputs are not finite past the data"
        return times, ""

    def run(self) -> _Outcome:
        nx = self.model.n_states
        t0 = float(self.mesh.t0)
        if not (np.all(np.isfinite(self.p)) and np.all(np.isfinite(self.x_nodes))):
            inf = np.full(nx, np.inf)
            why = "non-finite parameters or collocation states"
            return _Outcome(inf, inf, np.full(nx, t0), t0, why, Beyond(None, note=why))
        margin, note = self.margin_times()
        try:
            x = self.simulate(np.r_[self.grid, margin])
        except SimulationError as err:
            if float(err.t_fail) <= float(self.mesh.tf):
                return self._failed(err)
            # fine on the horizon, diverging past it
            try:
                x = self.simulate(self.grid)
            except SimulationError as again:
                return self._failed(again)
            outcome = self._deviation(x)
            outcome.beyond = Beyond(float(margin[-1]), float(err.t_fail), np.inf)
            return outcome
        outcome = self._deviation(x[: self.grid.size])
        outcome.beyond = self._beyond(x[self.grid.size :], margin, note)
        return outcome

    def _deviation(self, x: np.ndarray) -> _Outcome:
        grid, tol = self.grid, self.settings.tol
        dev = np.abs(x - self.mesh.interpolate(self.x_nodes, grid)) / self.scales
        span = float(grid[-1] - grid[0])
        rms = np.sqrt(np.trapezoid(dev**2, grid, axis=0) / span) if span > 0 else dev.max(axis=0)
        exceeds = _first_exceedance(grid, dev, tol)
        return _Outcome(dev.max(axis=0), rms, exceeds, np.nan, "", Beyond(None))

    def _beyond(self, x: np.ndarray, times: np.ndarray, note: str) -> Beyond:
        if times.size == 0:
            return Beyond(None, note=note)
        lo, hi = self.x_nodes.min(axis=0), self.x_nodes.max(axis=0)
        width = np.maximum(hi - lo, self.scales)
        excursion = np.max(np.maximum(0.0, np.maximum(x - hi, lo - x)) / width, axis=0)
        i = int(np.argmax(excursion))
        return Beyond(float(times[-1]), None, float(excursion[i]), i)

    def _failed(self, err: SimulationError) -> _Outcome:
        """The outcome of a re-simulation that failed on the horizon at ``err.t_fail``: the
        deviation before the failure, from a second run that stops short of it."""
        nx, grid, tol = self.model.n_states, self.grid, self.settings.tol
        t_fail = float(err.t_fail)
        before = grid[grid < t_fail]
        dev_before = np.zeros((0, nx))
        if before.size >= 2:
            try:
                x_coll = self.mesh.interpolate(self.x_nodes, before)
                dev_before = np.abs(self.simulate(before) - x_coll) / self.scales
            except SimulationError:
                pass
        exceeds = _first_exceedance(before[: len(dev_before)], dev_before, tol)
        exceeds = np.where(np.isnan(exceeds), t_fail, exceeds)
        inf = np.full(nx, np.inf)
        return _Outcome(inf, inf, exceeds, t_fail, str(err), Beyond(None, note="failed before"))


def _first_exceedance(t: np.ndarray, dev: np.ndarray, tol: float) -> np.ndarray:
    """First time each column of ``dev`` (n_t, n_states) exceeds ``tol``; NaN where none does."""
    above = dev > tol
    first = np.argmax(above, axis=0) if t.size else np.zeros(dev.shape[1], dtype=int)
    hit = above.any(axis=0) if t.size else np.zeros(dev.shape[1], dtype=bool)
    return np.where(hit, t[first] if t.size else np.nan, np.nan)
