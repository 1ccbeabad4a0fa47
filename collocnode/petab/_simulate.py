"""An independent simulation of an imported problem: SUNDIALS CVODES (through CasADi's
``integrator``), pre-equilibration to a steady state, and the observables at every measurement.

This is how the imported problem is *scored*: the simulated table goes to ``petab``'s own
``calculate_llh``, so a result means what it means in every PEtab tool, whatever the collocation
mesh was.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import casadi as ca
import numpy as np

from ._numeric import NumericModel

STEADY_STATE_TIMES = tuple(10.0**k for k in range(-1, 9))
#: the time handed to an observable measured at a steady state (time ``inf`` in the table)
SETTLED_TIME = STEADY_STATE_TIMES[-1]


class SimulationFailed(RuntimeError):
    """CVODES could not integrate an experiment at the given parameters."""


@dataclass(frozen=True)
class Simulation:
    """One simulation at θ: per measurement row the observable, per experiment the state
    trajectory on a dense grid.

    Attributes:
        values: the observable at each measurement row, (n_measurements,).
        sigmas: the noise formula's σ at each measurement row, (n_measurements,).
        grids: per experiment the times of ``states`` (n_k,).
        states: per experiment the states (n_k, n_states).
        steady: per experiment the pre-equilibrated state, or None.
        settled: per experiment the steady state it settles to where it is measured there
            (time ``inf``), or None.
    """

    values: np.ndarray
    sigmas: np.ndarray
    grids: list[np.ndarray]
    states: list[np.ndarray]
    steady: list[np.ndarray | None]
    settled: list[np.ndarray | None]


class Simulator:
    """CVODES integrators of a `NumericModel`, built once per experiment."""

    def __init__(self, numeric: NumericModel, rtol: float = 1e-10, atol: float = 1e-12) -> None:
        self.numeric, self.rtol, self.atol = numeric, rtol, atol
        n = numeric
        self.dae = {
            "x": n.x,
            "p": ca.vertcat(n.theta, n.c),
            "t": n.t,
            "ode": n.rhs(n.x, n.theta, n.c, n.t),
        }
        self._cache: dict[tuple[float, ...], ca.Function] = {}

    def integrator(self, t0: float, grid: np.ndarray) -> ca.Function:
        """CVODES from ``t0`` with outputs at ``grid`` (all > t0), built once per pair."""
        key = (float(t0), *(float(t) for t in grid))
        if key not in self._cache:
            opts = {
                "abstol": self.atol,
                "reltol": self.rtol,
                "max_num_steps": 200000,
                "disable_internal_warnings": True,
            }
            self._cache[key] = ca.integrator(
                "cvodes", "cvodes", self.dae, float(t0), list(grid), opts
            )
        return self._cache[key]

    def run(self, theta: np.ndarray, dense: int = 0) -> Simulation:
        """Simulate every experiment at ``theta`` (estimation scale, (n_theta,)); ``dense``
        extra equidistant output times per experiment for the state trajectories."""
        n = self.numeric
        problem = n.problem
        m = problem.measurements
        values = np.full(len(m.time), np.nan)
        sigmas = np.full(len(m.time), np.nan)
        grids, states, steady, settled = [], [], [], []
        data = n.measurement_data
        for k, e in enumerate(problem.experiments):
            cond = n.condition_data[n.simulation_instance[k]]
            x0 = np.asarray(n.initial(theta, cond.c)).ravel()
            x_ss = None
            pre = n.preequilibration_instance[k]
            if pre is not None:
                pre_c = n.condition_data[pre].c
                x_ss = self.steady_state(theta, pre_c)
                x0 = np.where(cond.reinitialised, x0, x_ss)
            t_meas = m.time[e.rows]
            t_meas = t_meas[np.isfinite(t_meas)]
            grid = np.unique(np.concatenate([t_meas, np.linspace(0.0, e.tmax, dense + 1)]))
            switches = n.breakpoints(theta, cond.c, float(grid[-1]))
            x = self.trajectory(theta, cond.c, x0, grid, switches)
            x_post = None
            if problem.settles(k).size:
                x_post = self.steady_state(theta, cond.c, x0)
            for i in e.rows:
                if np.isinf(m.time[i]):
                    args = (x_post, theta, cond.c, SETTLED_TIME, data[i])
                else:
                    j = int(np.searchsorted(grid, m.time[i]))
                    args = (x[j], theta, cond.c, m.time[i], data[i])
                values[i] = float(n.observable(*args))
                sigmas[i] = float(n.sigma(*args))
            grids.append(grid)
            states.append(x)
            steady.append(x_ss)
            settled.append(x_post)
        return Simulation(values, sigmas, grids, states, steady, settled)

    def trajectory(
        self,
        theta: np.ndarray,
        c: np.ndarray,
        x0: np.ndarray,
        grid: np.ndarray,
        breakpoints: Sequence[float] = (),
    ) -> np.ndarray:
        """States at ``grid`` (sorted, from 0) starting from ``x0``, (n, n_states); CVODES is
        restarted at each of the ``breakpoints`` (where the right-hand side switches), so that
        no step straddles a discontinuity."""
        out = np.empty((grid.size, x0.size))
        out[grid <= 0] = x0
        p = np.concatenate([theta, c])
        x, start = x0, 0.0
        for stop in [*breakpoints, np.inf]:
            inside = (grid > start) & (grid <= stop)
            outputs = grid[inside]
            if np.isfinite(stop) and (outputs.size == 0 or outputs[-1] < stop):
                outputs = np.append(outputs, stop)
            if outputs.size == 0:
                break
            try:
                res = self.integrator(start, outputs)(x0=x, p=p)
            except RuntimeError as exc:
                raise SimulationFailed(str(exc).splitlines()[-1][:200]) from None
            states = np.asarray(res["xf"]).T
            out[inside] = states[: int(inside.sum())]
            x, start = states[-1], stop
            if not np.any(grid > stop):
                break
        if not np.all(np.isfinite(out)):
            raise SimulationFailed("the states became non-finite")
        return out

    def objective_gradient(self, theta: np.ndarray) -> tuple[float, np.ndarray]:
        """The negative log-posterior at ``theta`` (estimation scale) and its gradient, (n_theta,),
        by CVODES forward sensitivities: the simulation as a CasADi graph of θ (each
        integrator call differentiable), the measurements' negative log-likelihoods (the
        NLP's, Laplace's ``|r|`` smoothed by 1e-8) and the prior on top.

        Raises:
            ValueError: an experiment is pre-equilibrated or measured at a steady state (their
                sensitivities are not built here).
            SimulationFailed: CVODES fails at ``theta``.
        """
        n = self.numeric
        problem = n.problem
        m = problem.measurements
        data = n.measurement_data
        th = ca.MX.sym("theta", n.n_theta)
        total = n.prior(th)
        for k, e in enumerate(problem.experiments):
            if n.preequilibration_instance[k] is not None or problem.settles(k).size:
                raise ValueError(
                    f"experiment {e.key}: gradients of pre-equilibrated or steady-state "
                    "experiments are not available"
                )
            c = n.condition_data[n.simulation_instance[k]].c
            x = n.initial(th, c)
            t_meas = m.time[e.rows]
            grid = np.unique(t_meas)
            columns: dict[float, ca.MX] = {0.0: x}
            start = 0.0
            p = ca.vertcat(th, c)
            for stop in [*n.breakpoints(theta, c, float(grid[-1])), np.inf]:
                outputs = grid[(grid > start) & (grid <= stop)]
                if np.isfinite(stop) and (outputs.size == 0 or outputs[-1] < stop):
                    outputs = np.append(outputs, stop)
                if outputs.size == 0:
                    break
                xf = self.integrator(start, outputs)(x0=x, p=p)["xf"]
                for j, t in enumerate(outputs):
                    columns[float(t)] = xf[:, j]
                x, start = xf[:, -1], stop
                if not np.any(grid > stop):
                    break
            for i in e.rows:
                total += n.nll(columns[float(m.time[i])], th, c, m.time[i], data[i])
        f = ca.Function("objective", [th], [total, ca.gradient(total, th)])
        try:
            value, gradient = f(theta)
        except RuntimeError as exc:
            raise SimulationFailed(str(exc).splitlines()[-1][:200]) from None
        return float(value), np.asarray(gradient, dtype=float).ravel()

    def steady_state(
        self, theta: np.ndarray, c: np.ndarray, x0: np.ndarray | None = None
    ) -> np.ndarray:
        """The state condition ``c`` settles to from ``x0`` (default: its initial state):
        simulated until ‖x'‖ ≤ atol + rtol |x| (componentwise), up to t = 1e8."""
        n = self.numeric
        if x0 is None:
            x0 = np.asarray(n.initial(theta, c)).ravel()
        grid = np.array(STEADY_STATE_TIMES)
        x = self.trajectory(theta, c, x0, grid, n.breakpoints(theta, c, grid[-1]))
        for row, t in zip(x, grid, strict=True):
            f = np.asarray(n.rhs(row, theta, c, t)).ravel()
            if np.all(np.abs(f) <= 1e-8 + 1e-8 * np.abs(row)):
                return row
        raise SimulationFailed("no steady state reached by t = 1e8")
