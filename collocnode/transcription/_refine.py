"""Adaptive mesh refinement: estimate the collocation error per interval, refine, re-solve warm.

The seed paper fixes the grid a priori and leaves adaptive refinement open (Langenkamp et al.
§2.5.1, §5). This module closes the loop of the hp-methods it cites (Patterson & Rao; Liu, Hager
& Rao):

1. **Error estimate** (`interval_errors`). On interval i the collocation polynomial x_poly
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
2. **Refinement** (`RefinementRule`). Intervals whose estimate exceeds ``tol`` are either
   split (``"h"``: into ⌈(e_i / tol)^(1/(m_i+1))⌉ equal parts, because the local error of the
   stage-order-m collocation polynomial shrinks like h^(m+1)) or given more stages (``"hp"``,
   Patterson & Rao's rule: ⌈log10(e_i / tol)⌉ more stages while that stays below
   ``max_stages``, otherwise a split into intervals of ``min_stages`` stages).
3. **The loop** ([`AdaptiveRefinement`][collocnode.AdaptiveRefinement], an algorithm that wraps a
   [`RadauIIA`][collocnode.RadauIIA]): solve, estimate, refine, and re-solve warm from the previous
   solution (its states interpolated onto the new nodes with the collocation polynomials, its
   parameters copied).

Intervals are never merged: refinement starts from a coarse mesh, so there is little to remove.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import casadi as ca
import numpy as np
from numpy.polynomial import chebyshev as cheb

from .. import _validation as v
from ..algorithm import final
from ._mesh import Mesh
from ._problem import DynamicOptimizationProblem
from ._radau import MAX_STAGES
from ._solution import Solution

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


def as_solution(solution: Any) -> Solution:
    """The collocation [`Solution`][collocnode.Solution] of ``solution``: itself, the one a
    ``TrainingSolution`` wraps, or the one a wrapped result ends in
    (`collocnode.algorithm.final`)."""
    inner = final(solution)
    inner = getattr(inner, "solution", inner)
    if not isinstance(inner, Solution):
        raise TypeError(f"solution must be a Solution or TrainingSolution, got {solution!r}")
    return inner


def _dynamics_function(dop: DynamicOptimizationProblem) -> ca.Function:
    x = ca.SX.sym("x", dop.n_states)
    p, u, t = ca.SX.sym("p", dop.n_params), ca.SX.sym("u", dop.n_inputs), ca.SX.sym("t")
    value = dop.dynamics(x, p, u, t)
    if isinstance(value, (list, tuple)):  # a list of expressions, as the transcription accepts
        value = ca.vertcat(*value)
    return ca.Function("f", [x, p, u, t], [ca.vertcat(value)])


def interval_errors(solution: Any, segment: int = 0) -> np.ndarray:
    """Estimated relative local error of every mesh interval of a solved problem.

    Args:
        solution: a [`Solution`][collocnode.Solution] (or
            [`collocnode.TrainingSolution`][collocnode.TrainingSolution]).
        segment: which trajectory of a multi-trajectory problem.

    Returns:
        shape (n_intervals,) of that trajectory's mesh, dimensionless: per interval the largest
        scaled integrated defect (see the module docstring). A converged collocation solution
        whose true solution is a polynomial of degree <= m_i on each interval has estimates at
        round-off level.
    """
    sol = as_solution(solution)
    if not 0 <= v.nonnegative_int("segment", segment) < sol.n_segments:
        raise ValueError(f"segment must be in [0, {sol.n_segments}), got {segment}")
    mesh, dop = sol.meshes[segment], sol.problem
    x_nodes, inputs = sol.segment_states[segment], dop.all_segments()[segment].inputs
    scale = dop.x_nominal + np.max(np.abs(x_nodes), axis=0)
    f = _dynamics_function(dop)
    errors = np.empty(mesh.n_intervals)
    for m in np.unique(mesh.stages):
        intervals = np.flatnonzero(mesh.stages == m)
        s, Q = _running_integral(2 * int(m) + 2)
        t = mesh.grid[intervals][:, None] + mesh.h[intervals][:, None] * s
        t[:, -1] = mesh.grid[intervals + 1]  # t_i + h_i may round past t_{i+1} (and tf)
        t = t.ravel()
        x = mesh.interpolate(x_nodes, t)  # continuous: end points need no care
        u = inputs(t)
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
            errors: estimates per interval, shape (n_intervals,) (`interval_errors`).
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


class _Dense:
    """The collocation polynomials of a solution as a picklable ``t (n,) -> (n, n_states)``."""

    def __init__(self, mesh: Mesh, x_nodes: np.ndarray) -> None:
        self.mesh, self.x_nodes = mesh, x_nodes

    def __call__(self, t: np.ndarray) -> np.ndarray:
        t = np.clip(np.asarray(t, dtype=float), self.mesh.t0, self.mesh.tf)
        return self.mesh.interpolate(self.x_nodes, np.atleast_1d(t))


def warm_started(dop: DynamicOptimizationProblem, sol: Solution) -> DynamicOptimizationProblem:
    """``dop`` starting from ``sol``: its collocation polynomials and parameters as the guess."""
    guesses = [_Dense(m, x) for m, x in zip(sol.meshes, sol.segment_states, strict=True)]
    if not dop.segments:
        return dop.remake(x_guess=guesses[0], p_guess=sol.p)
    segments = tuple(replace(seg, x_guess=g) for seg, g in zip(dop.segments, guesses, strict=True))
    return dop.remake(segments=segments, p_guess=sol.p)
