"""Adaptive mesh refinement as an algorithm: [`AdaptiveRefinement`][collocnode.AdaptiveRefinement]
wraps any algorithm the way diffrax's ``HalfSolver`` wraps a solver, and ``solve`` accepts it for a
dynamic optimization problem or a training problem alike::

    solve(problem, AdaptiveRefinement(RadauIIA(20, 3), tol=1e-6, max_rounds=6), seed=0)

The loop hands its inner algorithm the meshes and the solution to start from through the
[`SolveContext`][collocnode.SolveContext]: solve on a coarse mesh, estimate the error of every
interval (`collocnode.transcription._refine.interval_errors`), refine the intervals above
``tol`` (`RefinementRule`) and re-solve from the previous
solution -- its states interpolated onto the new nodes with the collocation polynomials, its
parameters copied -- until every interval meets the tolerance. Each trajectory of a multi-trajectory
problem has its own mesh, refined by its own estimates.

A user callback (`collocnode.transcription._ipopt.iteration`) runs in every round's IPOPT solve:
its ``on_start`` and ``on_end`` once per round, and a stop it asks for (or an exception it raises)
ends that round with status ``stopped_by_callback`` (``callback_error``) and the loop with it.
"""

from __future__ import annotations

import time
from dataclasses import KW_ONLY, InitVar, dataclass, field, replace
from typing import Any, ClassVar

import numpy as np

from .. import _validation as v
from .._status import SolverStatus
from ..algorithm import Algorithm, SolveContext, Wrapper, check_inner, final, leaf_of
from ..transcription._collocation import RadauIIA
from ..transcription._mesh import Mesh
from ..transcription._refine import RefinementRule, as_solution, interval_errors
from ._legacy import adopt_alg


@dataclass(frozen=True)
class RoundRecord:
    """One round of the adaptive loop.

    Attributes:
        round: 0 for the coarse mesh.
        intervals, nodes: mesh size, summed over trajectories (state nodes, ``1 + sum(stages)``
            per trajectory).
        max_stages: the largest stage count on the meshes.
        max_error: largest interval estimate after the solve (`interval_errors`).
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
class AdaptiveRefinementRecord:
    """The result of adaptive refinement: the last result and the per-round record.

    Attributes:
        solution: the last round's result of the inner algorithm (a ``Solution``, or a
            ``TrainingSolution`` for a training problem, from a [`RadauIIA`][collocnode.RadauIIA]).
        rounds: one `RoundRecord` per round.
        converged: True only if the last solve succeeded and every interval estimate is at most
            ``tol``.
        tol: the tolerance.
        errors: the last estimates of every interval, trajectory after trajectory, shape
            (total intervals,).
    """

    wraps: ClassVar[bool] = True

    solution: Any
    rounds: list[RoundRecord]
    converged: bool
    tol: float
    errors: np.ndarray

    @property
    def status(self) -> SolverStatus:
        return final(self).status

    @property
    def mesh(self) -> Mesh:
        """The last mesh (of the first trajectory)."""
        return as_solution(self.solution).mesh

    @property
    def meshes(self) -> list[Mesh]:
        """The last mesh of every trajectory."""
        return as_solution(self.solution).meshes

    @property
    def wall_time(self) -> float:
        """Total wall time of all rounds [s] (solves and estimates)."""
        return float(sum(r.solve_s + r.estimate_s for r in self.rounds))

    @property
    def iterations(self) -> int:
        """IPOPT iterations summed over the rounds."""
        return int(sum(r.iterations for r in self.rounds))

    def describe(self) -> str:
        """What the refinement did, in one line."""
        verdict = "converged" if self.converged else "not converged"
        intervals = sum(m.n_intervals for m in self.meshes)
        return (
            f"AdaptiveRefinement: {len(self.rounds)} rounds, {verdict} (tol {self.tol:g}), "
            f"{intervals} intervals"
        )

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


@dataclass(frozen=True)
class AdaptiveRefinement(Wrapper):
    """Adaptive mesh refinement around an algorithm.

    Args:
        inner: the algorithm of every round (default ``RadauIIA()``); its leaf's mesh is
            replaced every round.
        tol: tolerance on the relative interval error estimates (`interval_errors`,
            dimensionless).
        max_rounds: most refinements after the coarse solve.
        coarse: the first mesh: a [`Mesh`][collocnode.Mesh], a number of equidistant intervals (with
            ``alg.stages``), or None for ``alg``'s own mesh.
        rule: the refinement rule (default ``RefinementRule()``, h-refinement).
        alg: the former name of ``inner`` (deprecated).

    ``solve(problem, AdaptiveRefinement(...))`` keeps an
    [`AdaptiveRefinementRecord`][collocnode.strategies.AdaptiveRefinementRecord] in the solution's
    ``records``. The loop stops early, not converged, if a solve fails or the next mesh would exceed
    ``rule.max_nodes``.
    """

    hands_down: ClassVar[frozenset[str]] = frozenset({"meshes", "warm"})
    honours: ClassVar[frozenset[str]] = frozenset({"meshes", "warm"})
    record_type: ClassVar[type] = AdaptiveRefinementRecord

    inner: Algorithm = field(default_factory=RadauIIA)
    tol: float = 1e-6
    max_rounds: int = 6
    coarse: Mesh | int | None = None
    rule: RefinementRule = field(default_factory=RefinementRule)
    _: KW_ONLY
    alg: InitVar[Algorithm | None] = None

    def __post_init__(self, alg: Algorithm | None) -> None:
        adopt_alg(self, alg)
        check_inner(self, self.inner)
        object.__setattr__(self, "tol", v.positive_float("tol", self.tol))
        object.__setattr__(self, "max_rounds", v.nonnegative_int("max_rounds", self.max_rounds))
        if self.coarse is not None and not isinstance(self.coarse, Mesh):
            v.positive_int("coarse", self.coarse)
        if not isinstance(self.rule, RefinementRule):
            raise TypeError(f"rule must be a RefinementRule, got {self.rule!r}")

    def coarse_mesh(self, tspan: tuple[float, float]) -> Mesh:
        """The first mesh over ``tspan`` (checked to span it when ``coarse`` is a Mesh)."""
        leaf = leaf_of(self)
        if self.coarse is None:
            return leaf.mesh_for(tspan)
        if isinstance(self.coarse, Mesh):
            return replace(leaf, mesh=self.coarse).mesh_for(tspan)
        return Mesh.equidistant(tspan[0], tspan[1], int(self.coarse), leaf.stages)

    def validate(self, problem: Any, context: SolveContext) -> None:
        super().validate(problem, context)
        # a training problem has neither; a DOP may
        dop = problem if problem.problem_kind == "dop" else None
        if dop is not None and (dop.node_width > dop.n_states or dop.free_final_time):
            # the error estimate re-integrates the dynamics between nodes, which needs the
            # controls and algebraic states between nodes and a fixed horizon
            raise ValueError(
                "AdaptiveRefinement supports problems without controls, algebraic states or a "
                f"free final time; this one has n_controls = {dop.n_controls}, n_algebraic "
                f"= {dop.n_algebraic}, tf_bounds = {dop.tf_bounds}: solve it with "
                "RadauIIA on a finer mesh"
            )

    def solve_problem(self, problem: Any, context: SolveContext) -> AdaptiveRefinementRecord:
        """The adaptive loop (module docstring); an
        [`AdaptiveRefinementRecord`][collocnode.strategies.AdaptiveRefinementRecord] whose
        ``solution`` is the inner algorithm's last result."""
        tol, rule = self.tol, self.rule
        if context.meshes is not None:
            meshes = list(context.meshes)
        elif self.coarse is None:
            meshes = leaf_of(self).meshes_for(problem)
        else:
            meshes = [self.coarse_mesh(h) for h in problem.horizons()]
        rounds: list[RoundRecord] = []
        warm = context.warm
        for k in range(self.max_rounds + 1):
            t0 = time.perf_counter()
            result = self.inner.solve_problem(problem, context.but(meshes=meshes, warm=warm))
            t_solve = time.perf_counter() - t0
            sol = as_solution(result)
            t0 = time.perf_counter()
            per_segment = [interval_errors(sol, s) for s in range(len(meshes))]
            errors = np.concatenate(per_segment)
            t_est = time.perf_counter() - t0
            bad = errors > tol
            rounds.append(
                RoundRecord(
                    round=k,
                    intervals=sum(m.n_intervals for m in meshes),
                    nodes=sum(m.n_nodes for m in meshes),
                    max_stages=max(int(m.stages.max()) for m in meshes),
                    max_error=float(errors.max()),
                    refined=int(bad.sum()),
                    status=sol.status.value,
                    iterations=sol.iterations,
                    solve_s=t_solve,
                    estimate_s=t_est,
                )
            )
            if not sol.status.ok or not bad.any() or k == self.max_rounds:
                break
            new_meshes = [rule.apply(m, e, tol) for m, e in zip(meshes, per_segment, strict=True)]
            if sum(m.n_nodes for m in new_meshes) > rule.max_nodes:
                break
            warm, meshes = result, new_meshes
        converged = sol.status == SolverStatus.SUCCESS and not bad.any()
        return AdaptiveRefinementRecord(
            solution=result, rounds=rounds, converged=converged, tol=tol, errors=errors
        )
