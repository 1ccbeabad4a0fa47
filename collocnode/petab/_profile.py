"""Profile likelihoods of an imported problem, by collocation.

The profile of parameter j is the best objective with θ_j held at each value of a grid:
``PL(v) = min_{θ: θ_j = v} J(θ)``. Collocation suits it: each point is the fit's NLP with one
more variable fixed, started from the neighbouring point's solution (states and parameters), on
the fit's mesh; each point is scored the PEtab way (CVODES). The likelihood-ratio confidence
interval at level α is where ``PL(v) − J(θ*) ≤ χ²₁(α) / 2`` (Raue et al. 2009).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .._status import SolverStatus
from ..transcription import IpoptOptions, RadauIIA
from ..transcription._collocation import solve_collocation
from ._collocation import warm_started
from ._problem import PetabFit, PetabProblem


@dataclass(frozen=True)
class Profile:
    """One parameter's profile.

    Attributes:
        parameter: its id.
        values: the grid of values on its estimation scale, increasing, (n,).
        objectives: the PEtab-way objective of the best θ at each value (inf where the
            solve failed), (n,).
        statuses: IPOPT's outcome at each value.
        optimum: the fitted objective the profile is measured from.
    """

    parameter: str
    values: np.ndarray
    objectives: np.ndarray
    statuses: tuple[SolverStatus, ...]
    optimum: float

    def interval(self, level: float = 0.95) -> tuple[float, float]:
        """The likelihood-ratio confidence interval (estimation scale); an end that the grid
        does not reach past the threshold is ±inf (the parameter is not identifiable there)."""
        from scipy.stats import chi2

        threshold = self.optimum + 0.5 * float(chi2.ppf(level, 1))
        inside = self.objectives <= threshold
        if not np.any(inside):
            return (np.nan, np.nan)
        first, last = np.flatnonzero(inside)[[0, -1]]
        lo = -np.inf if first == 0 else _crossing(self, first - 1, first, threshold)
        hi = np.inf if last == self.values.size - 1 else _crossing(self, last, last + 1, threshold)
        return lo, hi


def _crossing(p: Profile, i: int, j: int, threshold: float) -> float:
    """Where the profile crosses ``threshold`` between grid points i and j (linear)."""
    a, b = p.objectives[i], p.objectives[j]
    if not (np.isfinite(a) and np.isfinite(b)) or a == b:
        return float(p.values[j] if b <= threshold else p.values[i])
    return float(p.values[i] + (threshold - a) / (b - a) * (p.values[j] - p.values[i]))


def profile(
    problem: PetabProblem,
    fit: PetabFit,
    parameter: str | int,
    width: float = 1.0,
    points: int = 11,
    ipopt: IpoptOptions | None = None,
) -> Profile:
    """The profile of ``parameter`` (id or index) around ``fit``.

    Args:
        problem: the imported problem.
        fit: a fit of it in this process (it carries its collocation solution).
        parameter: the parameter's id or its index in θ.
        width: the grid spans ``θ_j ± width`` on the estimation scale, within the bounds.
        points: grid points (odd: the fitted value is one of them).
        ipopt: IPOPT settings for each point (default: no output).
    """
    if fit.solution is None:
        raise ValueError("the fit has no collocation solution (it came from another process)")
    j = problem.parameter_ids.index(parameter) if isinstance(parameter, str) else int(parameter)
    if not 0 <= j < problem.n_theta:
        raise ValueError(f"parameter index {j} is not in 0..{problem.n_theta - 1}")
    grid = np.clip(fit.theta[j] + np.linspace(-width, width, points), problem.lb[j], problem.ub[j])
    grid = np.unique(np.append(grid, fit.theta[j]))
    alg = RadauIIA(
        stages=int(fit.solution.meshes[0].stages[0]), ipopt=ipopt or IpoptOptions(print_level=0)
    )
    objectives = np.full(grid.size, np.inf)
    statuses: list[Any] = [None] * grid.size
    centre = int(np.argmin(np.abs(grid - fit.theta[j])))
    objectives[centre], statuses[centre] = fit.objective, fit.status
    for side in (range(centre + 1, grid.size), range(centre - 1, -1, -1)):
        previous = fit.solution
        for k in side:
            solution, score = _point(problem, fit, previous, alg, j, grid[k])
            statuses[k] = solution.status
            if solution.status in (SolverStatus.SUCCESS, SolverStatus.ACCEPTABLE):
                objectives[k] = score
                previous = solution
    return Profile(problem.parameter_ids[j], grid, objectives, tuple(statuses), fit.objective)


def _point(
    problem: PetabProblem, fit: PetabFit, previous: Any, alg: RadauIIA, j: int, value: float
) -> tuple[Any, float]:
    dop = fit.solution.problem
    lb, ub = dop.p_lb.copy(), dop.p_ub.copy()
    lb[j] = ub[j] = value
    held = warm_started(dop.remake(p_lb=lb, p_ub=ub), previous)
    solution = solve_collocation(held, alg, list(fit.solution.meshes))
    theta = np.clip(np.asarray(solution.p[: problem.n_theta], dtype=float), problem.lb, problem.ub)
    theta[j] = value
    return solution, problem.score(theta).objective
