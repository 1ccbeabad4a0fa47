"""Profile likelihoods of fitted physical parameters by warm-started re-solves.

The Laplace approximation is local; a profile is not. For a fitted physical parameter ψ and a
grid of values v, the training problem is solved again with ψ fixed at v (its bounds set to v,
so that IPOPT removes it), every other fitted quantity free, each solve started from the fitted
solution (its node states and parameters, ``SolveContext(warm=...)``) on its meshes. At the
objective's temperature T̄ (`collocnode.training._uncertainty.laplace`) the profile

    Δ(v) = (J_min(v) − J_min) / T̄

is the change of the negative log posterior; {v : Δ(v) ≤ χ²₁(level) / 2} is the profile
interval (1.92 at 95 %). A profile that stays below that threshold over the whole grid (on
either side) is flat: the data do not bound the parameter there, and it is flagged. Each end of
the interval says what set it (`Profile.limits`): the data; the grid, where Δ never reaches
the threshold on that side (the end is reported as ±inf, the interval one-sided); or the bound
of another fitted parameter, where Δ rises only because that parameter, compensating, has
reached its bound (x' = −k₁k₂x with k₂ ≤ 3 bounds k₁ below at 1/3 of the product: an artefact
of the bound, not a statement of the data). The last two are warned of.

The grid points are independent solves: they run one after another, or on any
``concurrent.futures.Executor`` (a local process pool, ``dask.distributed``'s
``client.get_executor()``) when the problem can be pickled.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from scipy.special import chdtri  # the chi-square quantile, without loading scipy.stats

from ... import _validation as v
from ..._status import SolverStatus
from ...algorithm import Algorithm, SolveContext, final
from ...models._hybrid import Parameter
from ...transcription._collocation import RadauIIA
from ...transcription._ipopt.options import IpoptOptions
from .posterior import _level
from .result import Uncertainty, UncertaintyWarning


@dataclass(frozen=True)
class Profile:
    """The profile of one fitted physical parameter.

    Attributes:
        name: the parameter.
        values: the grid, ascending, (n,).
        objective: the training objective of each re-solve, (n,).
        statuses: each re-solve's status.
        iterations: each re-solve's IPOPT iterations, (n,).
        fitted: the fitted value; ``reference`` the objective Δ is measured from (the fitted
            solution's, or a re-solve's where one found less).
        temperature: T̄, objective units per unit of negative log posterior.
        level: the interval's probability.
        wall_time_s: the re-solves' wall time [s].
        at_bounds: per grid value, the other fitted parameters that the re-solve left at one
            of their bounds.
    """

    name: str
    values: np.ndarray
    objective: np.ndarray
    statuses: tuple[str, ...]
    iterations: np.ndarray
    fitted: float
    reference: float
    temperature: float
    level: float
    wall_time_s: float
    at_bounds: tuple[tuple[str, ...], ...] = ()

    @property
    def converged(self) -> np.ndarray:
        """Which re-solves converged, (n,) bool (the others are left out of the interval)."""
        return np.array([SolverStatus(s).ok for s in self.statuses])

    @property
    def delta(self) -> np.ndarray:
        """Δ(v) = (J_min(v) − J_min) / T̄ at each grid value, (n,)."""
        return (self.objective - self.reference) / self.temperature

    @property
    def threshold(self) -> float:
        """χ²₁(level) / 2 (1.92 at 95 %)."""
        return float(chdtri(1, 1.0 - self.level) / 2.0)

    def _side(self, below: bool) -> tuple[float, str]:
        """The interval's end on one side and what set it (`limits`)."""
        ok = self.converged & (
            (self.values < self.fitted) if below else (self.values > self.fitted)
        )
        index = np.flatnonzero(ok)
        vals, d = self.values[ok], self.delta[ok]
        order = np.argsort(-vals) if below else np.argsort(vals)
        prev_v, prev_d = self.fitted, 0.0
        for k in order:
            x, dx = vals[k], d[k]
            if dx >= self.threshold:
                end = float(prev_v + (x - prev_v) * (self.threshold - prev_d) / (dx - prev_d))
                bounded = self.at_bounds[index[k]] if self.at_bounds else ()
                return end, ("bound of " + ", ".join(bounded)) if bounded else "data"
            prev_v, prev_d = x, max(prev_d, dx)
        return (-np.inf if below else np.inf), "grid"

    @property
    def interval(self) -> tuple[float, float]:
        """Where Δ crosses the threshold on each side (linear interpolation between grid
        values); ±inf on a side where it never does."""
        return self._side(True)[0], self._side(False)[0]

    @property
    def limits(self) -> tuple[str, str]:
        """What sets each end of `interval`: ``"data"``; ``"grid"`` (Δ stays below the
        threshold up to the grid's end on that side, the end is ±inf); or ``"bound of k2"``
        (Δ crosses only where another fitted parameter sits at its bound)."""
        return self._side(True)[1], self._side(False)[1]

    @property
    def one_sided(self) -> bool:
        """True if exactly one side of the interval is open within the grid."""
        return sorted(self.limits).count("grid") == 1

    @property
    def flat(self) -> bool:
        """True if the profile stays below the threshold on both sides of the fitted value: the
        data do not bound the parameter within the grid."""
        lo, hi = self.interval
        return not np.isfinite(lo) and not np.isfinite(hi)

    def to_dict(self) -> dict[str, Any]:
        lo, hi = self.interval
        return {
            "name": self.name,
            "values": self.values.tolist(),
            "objective": self.objective.tolist(),
            "delta": self.delta.tolist(),
            "statuses": list(self.statuses),
            "iterations": self.iterations.tolist(),
            "fitted": self.fitted,
            "temperature": self.temperature,
            "level": self.level,
            "threshold": self.threshold,
            "interval": [lo, hi],
            "limits": list(self.limits),
            "flat": self.flat,
            "wall_time_s": self.wall_time_s,
        }


def fixed_problem(problem: Any, name: str, value: float) -> Any:
    """``problem`` with the physical parameter ``name`` fixed at ``value`` (its bounds set to
    it; the parameter vector keeps its layout, so a solution of the original warm-starts it)."""
    model = problem.model
    fixed = Parameter(value, fit=True, lb=value, ub=value)
    new_model = replace(model, parameters={**model.parameters, name: fixed})
    guess = problem.params_guess
    if guess is not None:
        guess = np.array(guess, dtype=float)
        guess[model.slices[name].start] = value
    return replace(problem, model=new_model, params_guess=guess)


def _solve_point(
    problem: Any, alg: Algorithm, context: SolveContext
) -> tuple[float, str, int, tuple[str, ...]]:
    """One re-solve: (objective, status, iterations, the fitted parameters left at a bound)."""
    sol = final(alg.solve_problem(problem, context))
    model = problem.model
    at_bound = []
    for name in model.fitted:
        par = model.parameters[name]
        if par.lb == par.ub:  # the profiled parameter, fixed
            continue
        value = float(sol.p[model.slices[name].start])
        width = par.ub - par.lb if np.isfinite(par.ub - par.lb) else max(abs(value), 1.0)
        if min(value - par.lb, par.ub - value) <= 1e-6 * width:
            at_bound.append(name)
    return (
        float(sol.solution.objective),
        sol.status.value,
        int(sol.solution.iterations),
        tuple(at_bound),
    )


def profile_likelihood(
    sol: Any,
    name: str,
    values: Any = None,
    points: int = 9,
    span: float = 3.0,
    alg: Algorithm | None = None,
    level: float = 0.95,
    uncertainty: Uncertainty | None = None,
    executor: Any = None,
) -> Profile:
    """The profile of the fitted physical parameter ``name`` (module docstring).

    Args:
        sol: the [`TrainingSolution`][collocnode.TrainingSolution].
        name: a fitted physical parameter of its model.
        values: the grid (default: ``points`` values evenly over the fitted value ± ``span``
            posterior standard deviations; ± the larger of |value| and 1 where that is not
            finite); values outside the parameter's bounds are refused.
        alg: the algorithm of the re-solves (default: ``RadauIIA`` with silent IPOPT and at most
            100 iterations); it runs on the solution's meshes, warm-started from it.
        level: the profile interval's probability.
        uncertainty: ``sol.uncertainty()`` when already computed (for the grid's width and the
            temperature; computed here otherwise, with the estimated noise).
        executor: a ``concurrent.futures.Executor`` to run the re-solves on (None: here, one
            after another).
    """
    model = sol.model
    if name not in model.fitted:
        raise ValueError(
            f"name must be a fitted physical parameter of the model ({', '.join(model.fitted)} "
            f"or none), got {name!r}"
        )
    level = _level(level)
    unc = sol.uncertainty() if uncertainty is None else uncertainty
    fitted = float(sol.p[model.slices[name].start])
    grid = _grid(model.parameters[name], name, fitted, values, points, span, unc)
    alg = _checked_algorithm(alg)
    results, wall = _resolve(sol, name, grid, alg, executor)
    objective = np.array([r[0] for r in results])
    statuses = tuple(r[1] for r in results)
    converged = np.array([SolverStatus(s).ok for s in statuses])
    reference = float(sol.solution.objective)
    if converged.any():
        reference = min(reference, float(objective[converged].min()))
    profile = Profile(
        name=name,
        values=grid,
        objective=objective,
        statuses=statuses,
        iterations=np.array([r[2] for r in results]),
        fitted=fitted,
        reference=reference,
        temperature=float(unc.laplace.temperature.mean()),
        level=level,
        wall_time_s=wall,
        at_bounds=tuple(r[3] for r in results),
    )
    _warn_unreliable(profile, converged)
    return profile


def _grid(
    par: Parameter,
    name: str,
    fitted: float,
    values: Any,
    points: int,
    span: float,
    unc: Uncertainty,
) -> np.ndarray:
    """The grid of the profile: ``values`` checked against the parameter's bounds, or
    ``points`` values over the fitted value ± ``span`` posterior standard deviations."""
    if values is None:
        points = v.positive_int("points", points)
        span = v.positive_float("span", span)
        std = unc.std(name) if name in unc.quantities.names else np.inf
        width = span * std if np.isfinite(std) and std > 0 else max(abs(fitted), 1.0)
        grid = np.linspace(fitted - width, fitted + width, points)
        grid = grid[(grid >= par.lb) & (grid <= par.ub)]
    else:
        grid = np.unique(v.finite_array("values", values, ndim=1))
        outside = grid[(grid < par.lb) | (grid > par.ub)]
        if outside.size:
            raise ValueError(
                f"values: {float(outside[0])!r} is outside the bounds of {name!r} "
                f"[{par.lb}, {par.ub}]"
            )
    if grid.size == 0:
        raise ValueError("values must hold at least one value inside the parameter's bounds")
    return grid


def _checked_algorithm(alg: Algorithm | None) -> Algorithm:
    """The algorithm of the re-solves: ``alg``, or silent ``RadauIIA`` with at most 100
    iterations."""
    if alg is None:
        alg = RadauIIA(ipopt=IpoptOptions(max_iter=100, print_level=0))
    if not isinstance(alg, Algorithm):
        raise TypeError(f"alg must be an algorithm object, got {alg!r:.80}")
    return alg


def _resolve(
    sol: Any, name: str, grid: np.ndarray, alg: Algorithm, executor: Any
) -> tuple[list[tuple[float, str, int, tuple[str, ...]]], float]:
    """The re-solves with ``name`` fixed at each grid value, warm-started from ``sol`` on its
    meshes, here or on ``executor``: (objective, status, iterations) each, and their wall
    time [s]."""
    # the warm start needs the node states, the parameters and the meshes only: without the
    # problem and the NLP (closures, CasADi Functions) it also crosses to other processes
    warm = replace(sol.solution, problem=None, nlp=None)
    context = SolveContext(seed=0, warm=warm, meshes=list(sol.solution.meshes))
    problems = [fixed_problem(sol.problem, name, float(x)) for x in grid]
    alg.validate(problems[0], context)
    start = time.perf_counter()
    if executor is None:
        results = [_solve_point(p, alg, context) for p in problems]
    else:
        results = list(
            executor.map(_solve_point, problems, [alg] * len(problems), [context] * len(problems))
        )
    return results, time.perf_counter() - start


def _warn_unreliable(profile: Profile, converged: np.ndarray) -> None:
    """Warn, on behalf of `profile_likelihood`'s caller, of re-solves that did not
    converge, of a flat or one-sided profile and of an end set by another parameter's bound."""
    name, grid = profile.name, profile.values
    if not converged.all():
        warnings.warn(
            f"{int((~converged).sum())} of {grid.size} re-solves of the profile of {name!r} did "
            "not converge; they are left out of its interval",
            UncertaintyWarning,
            stacklevel=3,
        )
    if profile.flat:
        warnings.warn(
            f"the profile of {name!r} is flat: the data do not bound it within "
            f"[{grid[0]:.4g}, {grid[-1]:.4g}] (Δ stays below {profile.threshold:.2f})",
            UncertaintyWarning,
            stacklevel=3,
        )
        return
    for side, limit, edge in zip(("below", "above"), profile.limits, grid[[0, -1]], strict=True):
        if limit == "grid":
            warnings.warn(
                f"the profile of {name!r} is open {side}: Δ stays below "
                f"{profile.threshold:.2f} up to the grid's end {edge:.4g}, so the interval "
                "is one-sided there (reported as infinite); widen the grid to see further",
                UncertaintyWarning,
                stacklevel=3,
            )
        elif limit != "data":
            warnings.warn(
                f"the profile of {name!r} is closed {side} only by the {limit}: where Δ "
                "crosses the threshold that parameter sits at its bound, so that end of the "
                "interval is the bound's, not the data's",
                UncertaintyWarning,
                stacklevel=3,
            )
