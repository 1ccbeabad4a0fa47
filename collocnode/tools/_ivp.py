"""Bounded initial-value integration: scipy's ``solve_ivp`` with a step budget and a blow-up
bound, shared by the simulation of trained models and the systems' ground truth."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.integrate
from scipy.integrate import OdeSolver, solve_ivp

#: default step budget: above the benchmark systems' horizons (the quarter vehicle's 42 s at
#: 1 kHz take 84,000 "rk4" steps), and spent by DOP853 on a small model in minutes (about
#: 1.6 ms per step), so that a horizon such as [0, 1e300] ends with an error
MAX_STEPS = 200_000


class SimulationError(RuntimeError):
    """The model could not be integrated (blow-up, non-finite values, step-size collapse)."""

    def __init__(self, message: str, t_fail: float) -> None:
        super().__init__(message)
        self.t_fail = t_fail


def solve_bounded(
    rhs: Callable[[float, np.ndarray], np.ndarray],
    t: np.ndarray,
    x0: np.ndarray,
    method: str,
    *,
    bound: float = np.inf,
    max_steps: int = MAX_STEPS,
    what: str = "simulation",
    **options: Any,
) -> np.ndarray:
    """The states (n, n_states) at the times ``t`` (n >= 2, increasing) from ``x0``.

    Args:
        rhs: ``rhs(t, x) -> x'``.
        method: a scipy ``solve_ivp`` method name ("DOP853", "Radau", ...).
        bound: states beyond ±bound end the integration as a blow-up (inf: no bound).
        max_steps: step budget; ``solve_ivp`` itself has none.
        what: how the error message names the integration ("simulation", "ground truth of
            vdp from x0 = [...]").
        options: passed to ``solve_ivp`` (rtol, atol, max_step, jac).

    Raises:
        SimulationError: the integration failed, left ±bound or spent the budget; carries the
            time reached.
    """
    events = None
    if np.isfinite(bound):

        def blowup(tt: float, xx: np.ndarray) -> float:
            return bound - float(np.max(np.abs(xx)))

        blowup.terminal = True  # type: ignore[attr-defined]
        events = blowup
    budget = _StepBudget(max_steps)
    with np.errstate(all="ignore"):
        sol = solve_ivp(
            rhs,
            (t[0], t[-1]),
            x0,
            method=budget.solver(getattr(scipy.integrate, method)),
            t_eval=t,
            events=events,
            **options,
        )
    if budget.t_stop is not None:
        raise SimulationError(
            f"{what} failed at t = {budget.t_stop:.6g}: the step budget "
            f"max_steps={max_steps} is exhausted",
            budget.t_stop,
        )
    if sol.status == 1 or not sol.success or sol.y.shape[1] != t.size:
        reached = np.asarray(sol.t, dtype=float)  # a list when the first step fails
        t_fail = float(reached[-1]) if reached.size else float(t[0])
        reason = f"the state left ±{bound:g}" if sol.status == 1 else sol.message
        raise SimulationError(f"{what} failed at t = {t_fail:.6g}: {reason}", t_fail)
    return sol.y.T


class _StepBudget:
    """Counts the steps of a scipy ``OdeSolver`` and stops it after ``max_steps``.

    A subclass of the chosen solver class that fails its ``step`` once the budget is spent
    keeps every iterate of the plain solver.
    """

    def __init__(self, max_steps: int) -> None:
        self.max_steps = max_steps
        self.t_stop: float | None = None  # the time reached when the budget ran out

    def solver(self, base: type[OdeSolver]) -> type[OdeSolver]:
        budget = self

        class Budgeted(base):  # type: ignore[valid-type, misc]
            steps_taken = 0

            def step(self) -> str | None:
                if self.status == "running" and self.steps_taken >= budget.max_steps:
                    budget.t_stop = float(self.t)
                    self.status = "failed"
                    return f"step budget max_steps={budget.max_steps} exhausted"
                self.steps_taken += 1
                return super().step()

        return Budgeted
