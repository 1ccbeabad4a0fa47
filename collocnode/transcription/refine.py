"""Adaptive mesh refinement: estimate the collocation error per interval, refine, re-solve warm.

The seed paper fixes the grid a priori and leaves adaptive refinement open (Langenkamp et al.
§2.5.1, §5). This module closes the loop of the hp-methods it cites (Patterson & Rao; Liu, Hager
& Rao):

1. **Error estimate** (:func:`interval_errors`). On interval i the collocation polynomial x_poly
   satisfies the ODE only at its m_i collocation points. Between them its defect
   d(t) = x_poly'(t) − f(x_poly(t), p, u(t), t) is non-zero, and the integrated defect

       E_i(τ) = ∫_{t_i}^{τ} d(s) ds = x_poly(τ) − x_poly(t_i) − ∫_{t_i}^{τ} f(x_poly(s), ...) ds

   is the difference between the polynomial and the ODE's own solution from the interval's start
   value, i.e. the local state error the interval adds. It is evaluated exactly for the
   polynomial part and by Chebyshev interpolation of d on K_i = 2 m_i + 2 Chebyshev-Lobatto
   points per interval (exact for polynomials of degree 2 m_i + 1) for the integral. The
   estimate of interval i is the largest |E_i| over those points, per state divided by
   ``x_nominal + max |x|`` over the nodes: Betts' relative error 1 + max|x|, in the NLP's scaled
   variables.
2. **Refinement** (:class:`RefinementRule`). Intervals whose estimate exceeds ``tol`` are either
   split (``"h"``: into ⌈(e_i / tol)^(1/(m_i+1))⌉ equal parts, because the local error of the
   stage-order-m collocation polynomial shrinks like h^(m+1)) or given more stages (``"hp"``,
   Patterson & Rao's rule: ⌈log10(e_i / tol)⌉ more stages while that stays below
   ``max_stages``, otherwise a split into intervals of ``min_stages`` stages).
3. **Warm start** (:func:`solve_adaptive`). Each refined NLP starts from the previous solution:
   its states interpolated onto the new nodes with the collocation polynomials, its parameters
   copied.

Intervals are never merged: refinement starts from a coarse mesh, so there is little to remove.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import Any

import casadi as ca
import numpy as np
from numpy.polynomial import chebyshev as cheb

from .. import _validation as v
from ..status import SolverStatus
from .algorithm import RadauIIA
from .mesh import Mesh
from .problem import DynamicOptimizationProblem
from .radau import MAX_STAGES
from .solution import Solution

STRATEGIES = ("h", "hp")


# ---- error estimate ------------------------------------------------------------------------------


def _running_integral(k: int) -> tuple[np.ndarray, np.ndarray]:
    """Chebyshev-Lobatto points s (k,) on [0, 1] and the matrix Q (k, k) with
    ``(Q @ d)_l ≈ ∫_0^{s_l} d(s) ds`` for the interpolant of the values d at the points."""
    xk = -np.cos(np.pi * np.arange(k) / (k - 1))  # on [-1, 1], increasing
    V = cheb.chebvander(xk, k - 1)
    integrals = cheb.chebint(np.eye(k), lbnd=-1.0)  # coefficients of ∫_{-1}^x T_j, (k + 1, k)
    Q = cheb.chebvander(xk, k) @ integrals @ np.linalg.inv(V)
    return 0.5 * (xk + 1.0), 0.5 * Q  # ds = dx / 2


def _as_solution(solution: Any) -> Solution:
    inner = getattr(solution, "solution", solution)  # a TrainingSolution wraps a Solution
    if not isinstance(inner, Solution):
        raise TypeError(f"solution must be a Solution or TrainingSolution, got {solution!r}")
    return inner


def _dynamics_function(dop: DynamicOptimizationProblem) -> ca.Function:
    x = ca.SX.sym("x", dop.n_states)
    p, u, t = ca.SX.sym("p", dop.n_params), ca.SX.sym("u", dop.n_inputs), ca.SX.sym("t")
    return ca.Function("f", [x, p, u, t], [ca.vertcat(dop.dynamics(x, p, u, t))])


def interval_errors(solution: Any) -> np.ndarray:
    """Estimated relative local error of every mesh interval of a solved problem.

    Args:
        solution: a :class:`Solution` (or :class:`collocnode.TrainingSolution`).

    Returns:
        shape (n_intervals,), dimensionless: per interval the largest scaled integrated defect
        (see the module docstring). A converged collocation solution whose true solution is a
        polynomial of degree <= m_i on each interval has estimates at round-off level.
    """
    sol = _as_solution(solution)
    mesh, dop = sol.mesh, sol.problem
    scale = dop.x_nominal + np.max(np.abs(sol.x_nodes), axis=0)
    f = _dynamics_function(dop)
    errors = np.empty(mesh.n_intervals)
    for m in np.unique(mesh.stages):
        intervals = np.flatnonzero(mesh.stages == m)
        s, Q = _running_integral(2 * int(m) + 2)
        t = mesh.grid[intervals][:, None] + mesh.h[intervals][:, None] * s
        t[:, -1] = mesh.grid[intervals + 1]  # t_i + h_i may round past t_{i+1} (and tf)
        t = t.ravel()
        x = mesh.interpolate(sol.x_nodes, t)  # continuous: end points need no care
        u = dop.inputs(t)
        fx = np.asarray(f.map(t.size)(x.T, sol.p, u.T, t[None, :])).T
        k, nx = s.size, dop.n_states
        fx = fx.reshape(intervals.size, k, nx)
        x = x.reshape(intervals.size, k, nx)
        integral = np.einsum("lk,ikn->iln", Q, fx) * mesh.h[intervals][:, None, None]
        defect = (x - x[:, :1, :]) - integral  # E_i at every point
        errors[intervals] = np.max(np.abs(defect) / scale, axis=(1, 2))
    return errors


# ---- refinement rule -----------------------------------------------------------------------------


@dataclass(frozen=True)
class RefinementRule:
    """How intervals whose error estimate exceeds the tolerance are refined.

    Args:
        strategy: "h" (split intervals, keep their stages) or "hp" (raise stages up to
            ``max_stages``, split beyond that).
        max_split: most parts one interval is split into per round.
        min_stages: stages of the intervals an "hp" split creates (None: the interval's own).
        max_stages: cap on the stages of one interval ("hp").
        max_nodes: refinement stops (not converged) rather than build a mesh with more nodes.
    """

    strategy: str = "h"
    max_split: int = 8
    min_stages: int | None = None
    max_stages: int = 10
    max_nodes: int = 50_000

    def __post_init__(self) -> None:
        v.choice("strategy", self.strategy, STRATEGIES)
        v.positive_int("max_split", self.max_split)
        if self.max_split < 2:
            raise ValueError(f"max_split must be at least 2, got {self.max_split}")
        if self.min_stages is not None:
            v.positive_int("min_stages", self.min_stages)
        v.positive_int("max_stages", self.max_stages)
        if self.max_stages > MAX_STAGES:
            raise ValueError(f"max_stages must be at most {MAX_STAGES}, got {self.max_stages}")
        v.positive_int("max_nodes", self.max_nodes)

    def apply(self, mesh: Mesh, errors: object, tol: float) -> Mesh:
        """The refined mesh: every interval with ``errors[i] > tol`` split or raised.

        Args:
            mesh: the current mesh.
            errors: estimates per interval, shape (n_intervals,) (:func:`interval_errors`).
            tol: the tolerance on the estimates.
        """
        if not isinstance(mesh, Mesh):
            raise TypeError(f"mesh must be a Mesh, got {mesh!r}")
        e = v.finite_array("errors", errors, shape=(mesh.n_intervals,))
        tol = v.positive_float("tol", tol)
        grid, stages = [mesh.t0], []
        for i in range(mesh.n_intervals):
            a, b, m = float(mesh.grid[i]), float(mesh.grid[i + 1]), int(mesh.stages[i])
            parts, m_new = 1, m
            if e[i] > tol:
                ratio = e[i] / tol
                if self.strategy == "hp" and m + int(np.ceil(np.log10(ratio))) <= self.max_stages:
                    m_new = m + max(1, int(np.ceil(np.log10(ratio))))
                elif self.strategy == "hp":
                    m_new = self.min_stages or m
                    wanted = m + int(np.ceil(np.log10(ratio)))
                    parts = int(np.clip(np.ceil(wanted / m_new), 2, self.max_split))
                else:
                    parts = int(np.clip(np.ceil(ratio ** (1.0 / (m + 1))), 2, self.max_split))
            grid.extend(a + (b - a) * np.arange(1, parts + 1) / parts)
            grid[-1] = b  # exact interval ends, whatever the rounding above
            stages.extend([m_new] * parts)
        return Mesh.from_grid(np.array(grid), np.array(stages))


# ---- the adaptive loop ---------------------------------------------------------------------------


class _Dense:
    """The collocation polynomials of a solution as a picklable ``t (n,) -> (n, n_states)``."""

    def __init__(self, mesh: Mesh, x_nodes: np.ndarray) -> None:
        self.mesh, self.x_nodes = mesh, x_nodes

    def __call__(self, t: np.ndarray) -> np.ndarray:
        t = np.clip(np.asarray(t, dtype=float), self.mesh.t0, self.mesh.tf)
        return self.mesh.interpolate(self.x_nodes, np.atleast_1d(t))


@dataclass(frozen=True)
class RoundRecord:
    """One round of :func:`solve_adaptive`.

    Attributes:
        round: 0 for the coarse mesh.
        intervals, nodes: mesh size (state nodes, ``1 + sum(stages)``).
        max_stages: the largest stage count on the mesh.
        max_error: largest interval estimate after the solve (:func:`interval_errors`).
        refined: intervals above the tolerance (refined for the next round).
        status: the NLP's status; iterations: its IPOPT iterations.
        solve_s: wall time of the solve (build + IPOPT) [s]; estimate_s: of the estimate [s].
    """

    round: int
    intervals: int
    nodes: int
    max_stages: int
    max_error: float
    refined: int
    status: str
    iterations: int
    solve_s: float
    estimate_s: float


@dataclass
class AdaptiveSolution:
    """The result of :func:`solve_adaptive`: the last solution and the per-round record.

    ``converged`` is True only if the last solve succeeded and every interval estimate is
    at most ``tol``.
    """

    solution: Any
    rounds: list[RoundRecord]
    converged: bool
    tol: float
    errors: np.ndarray

    @property
    def mesh(self) -> Mesh:
        return _as_solution(self.solution).mesh

    @property
    def wall_time(self) -> float:
        """Total wall time of all rounds [s] (solves and estimates)."""
        return float(sum(r.solve_s + r.estimate_s for r in self.rounds))

    @property
    def iterations(self) -> int:
        """IPOPT iterations summed over the rounds."""
        return int(sum(r.iterations for r in self.rounds))

    def table(self) -> str:
        """The per-round record as a Markdown table."""
        head = "| round | intervals | nodes | max stages | max error | refined | status | "
        head += "iterations | solve [s] |\n|---|---|---|---|---|---|---|---|---|"
        rows = [
            f"| {r.round} | {r.intervals} | {r.nodes} | {r.max_stages} | {r.max_error:.2e} | "
            f"{r.refined} | {r.status} | {r.iterations} | {r.solve_s:.2f} |"
            for r in self.rounds
        ]
        return "\n".join([head, *rows])


def _coarse_mesh(coarse: object, alg: RadauIIA, tspan: tuple[float, float]) -> Mesh:
    if coarse is None:
        return alg.mesh_for(tspan)
    if isinstance(coarse, Mesh):
        return replace(alg, mesh=coarse).mesh_for(tspan)  # checks the span
    n = v.positive_int("coarse", coarse)
    return Mesh.equidistant(tspan[0], tspan[1], n, alg.stages)


def solve_adaptive(
    problem: Any,
    alg: RadauIIA | None = None,
    *,
    tol: float = 1e-6,
    max_rounds: int = 6,
    coarse: Mesh | int | None = None,
    rule: RefinementRule | None = None,
    seed: int | None = None,
) -> AdaptiveSolution:
    """Solve on a coarse mesh, then refine where the error estimate exceeds ``tol`` and re-solve
    from the previous solution until every interval meets it.

    Args:
        problem: a :class:`DynamicOptimizationProblem` or :class:`collocnode.TrainingProblem`.
        alg: the collocation and IPOPT settings (default ``RadauIIA()``); its mesh is replaced
            every round.
        tol: tolerance on the relative interval error estimates (:func:`interval_errors`).
        max_rounds: most refinements after the coarse solve.
        coarse: the first mesh: a :class:`Mesh`, a number of equidistant intervals (with
            ``alg.stages``), or None for ``alg``'s own mesh.
        rule: the refinement rule (default ``RefinementRule()``, h-refinement).
        seed: seeds the random initial weights of a training problem without ``params_guess``
            (first round only; later rounds start from the previous solution).

    Returns:
        An :class:`AdaptiveSolution`. The loop stops early, not converged, if a solve fails or
        the next mesh would exceed ``rule.max_nodes``.
    """
    from ..solve import solve  # solve imports this package: resolve the cycle at call time
    from ..training import TrainingProblem

    if not isinstance(problem, (DynamicOptimizationProblem, TrainingProblem)):
        raise TypeError(
            f"problem must be a DynamicOptimizationProblem or TrainingProblem, got {problem!r}"
        )
    alg = RadauIIA() if alg is None else alg
    if not isinstance(alg, RadauIIA):
        raise TypeError(f"alg must be a RadauIIA algorithm, got {alg!r}")
    rule = RefinementRule() if rule is None else rule
    if not isinstance(rule, RefinementRule):
        raise TypeError(f"rule must be a RefinementRule, got {rule!r}")
    tol = v.positive_float("tol", tol)
    max_rounds = v.nonnegative_int("max_rounds", max_rounds)
    tspan = problem.horizon if isinstance(problem, TrainingProblem) else problem.tspan
    mesh = _coarse_mesh(coarse, alg, tspan)

    rounds: list[RoundRecord] = []
    current = problem
    for k in range(max_rounds + 1):
        t0 = time.perf_counter()
        sol = solve(current, replace(alg, mesh=mesh), seed=seed)
        t_solve = time.perf_counter() - t0
        inner = _as_solution(sol)
        t0 = time.perf_counter()
        errors = interval_errors(inner)
        t_est = time.perf_counter() - t0
        bad = errors > tol
        rounds.append(
            RoundRecord(
                round=k,
                intervals=mesh.n_intervals,
                nodes=mesh.n_nodes,
                max_stages=int(mesh.stages.max()),
                max_error=float(errors.max()),
                refined=int(bad.sum()),
                status=inner.status.value,
                iterations=inner.iterations,
                solve_s=t_solve,
                estimate_s=t_est,
            )
        )
        ok = inner.status in (SolverStatus.SUCCESS, SolverStatus.ACCEPTABLE)
        if not ok or not bad.any() or k == max_rounds:
            break
        new_mesh = rule.apply(mesh, errors, tol)
        if new_mesh.n_nodes > rule.max_nodes:
            break
        guess = _Dense(mesh, inner.x_nodes)
        if isinstance(problem, TrainingProblem):
            current = replace(problem, state_guess=guess, params_guess=inner.p)
        else:
            current = problem.remake(x_guess=guess, p_guess=inner.p)
        mesh = new_mesh
    converged = inner.status == SolverStatus.SUCCESS and not bad.any()
    return AdaptiveSolution(
        solution=sol, rounds=rounds, converged=converged, tol=tol, errors=errors
    )
