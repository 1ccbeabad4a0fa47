"""Refine the mesh and re-solve until the trained model is consistent with its collocation
trajectory (`collocnode.training._consistency`).

[`UntilConsistent`][collocnode.UntilConsistent] wraps any algorithm the way diffrax's ``HalfSolver``
wraps a solver: it hands its inner algorithm the meshes (and, after the first round, the previous
solution to start from) through the [`SolveContext`][collocnode.SolveContext], checks the model the
inner algorithm trained, and refines the intervals whose local collocation error estimate
(`collocnode.transcription._refine.interval_errors`) is largest, with the hp machinery of
`RefinementRule`.
"""

from __future__ import annotations

import time
from dataclasses import KW_ONLY, InitVar, dataclass, field
from typing import Any, ClassVar

import numpy as np

from .. import _validation as v
from .._status import SolverStatus
from ..algorithm import Algorithm, SolveContext, Wrapper, check_inner, final, leaf_of
from ..tools import _markdown as markdown
from ..tools import _progress as progress
from ..training._consistency import ConsistencyReport
from ..transcription._collocation import RadauIIA
from ..transcription._mesh import Mesh
from ..transcription._refine import RefinementRule, interval_errors
from ._legacy import adopt_alg

#: statuses that end the loop at once: Ctrl-C and the user's callback
STOPS = (SolverStatus.INTERRUPTED, SolverStatus.STOPPED, SolverStatus.CALLBACK_ERROR)
#: when `UntilConsistent` also re-solves a refined mesh from the problem's own initial guess
RESTARTS = ("stalled", "never", "always")


@dataclass(frozen=True)
class ConsistencyRound:
    """One round of [`UntilConsistent`][collocnode.UntilConsistent].

    Attributes:
        round: 0 for the first mesh.
        intervals, nodes: mesh size summed over the trajectories.
        start: where the kept solve started: "guess" (the problem's own initial guess, round 0),
            "warm" (the previous solution) or "restart" (the problem's initial guess on the
            refined mesh, after a stalled warm re-solve).
        restarted: whether the round also ran a restart (kept or not).
        status: the kept NLP's status; iterations: IPOPT iterations of the round's solves.
        largest_deviation: the kept check's largest scaled deviation (+inf for a failed
            re-simulation); consistent: its verdict.
        max_error: largest local error estimate of an interval of the kept solution.
        refined: intervals marked for refinement after this round (0 in the last round).
        solve_s, check_s: wall times of the round's solves (build + IPOPT) and of its checks
            and estimates [s].
    """

    round: int
    intervals: int
    nodes: int
    start: str
    restarted: bool
    status: str
    iterations: int
    largest_deviation: float
    consistent: bool
    max_error: float
    refined: int
    solve_s: float
    check_s: float


@dataclass
class UntilConsistentRecord:
    """The result of [`UntilConsistent`][collocnode.UntilConsistent]: the last kept result and the
    per-round record.

    Attributes:
        solution: the last kept result of the inner algorithm (a ``TrainingSolution`` for a
            [`RadauIIA`][collocnode.RadauIIA]); `collocnode.algorithm.final` of it is the
            trained model, whose ``consistency`` is its check.
        rounds: one `ConsistencyRound` per round.
        converged: the last kept solve succeeded and its model is consistent.
    """

    wraps: ClassVar[bool] = True

    solution: Any
    rounds: list[ConsistencyRound]
    converged: bool

    @property
    def status(self) -> SolverStatus:
        return final(self).status

    @property
    def consistency(self) -> ConsistencyReport:
        return final(self).consistency

    @property
    def meshes(self) -> list[Mesh]:
        """The last mesh of every trajectory."""
        return final(self).solution.meshes

    @property
    def mesh(self) -> Mesh:
        return self.meshes[0]

    @property
    def wall_time(self) -> float:
        """Wall time of all rounds [s] (solves, checks and estimates)."""
        return float(sum(r.solve_s + r.check_s for r in self.rounds))

    @property
    def iterations(self) -> int:
        """IPOPT iterations summed over the rounds."""
        return int(sum(r.iterations for r in self.rounds))

    def describe(self) -> str:
        """The refinement rounds, in one line."""
        verdict = "consistent" if self.converged else "not consistent"
        intervals = sum(m.n_intervals for m in self.meshes)
        return f"UntilConsistent: {len(self.rounds)} rounds, {verdict}, {intervals} intervals"

    def table(self) -> str:
        """The per-round record as a Markdown table."""
        header = ("round", "intervals", "nodes", "start", "status", "iterations")
        header += ("largest deviation", "consistent", "max interval error", "refined")
        header += ("solve [s]", "check [s]")
        return markdown.table(
            header,
            (
                (
                    r.round,
                    r.intervals,
                    r.nodes,
                    f"{r.start}"
                    f"{' (after a stalled warm re-solve)' if r.start == 'restart' else ''}",
                    r.status,
                    r.iterations,
                    f"{r.largest_deviation:.3g}",
                    "yes" if r.consistent else "no",
                    f"{r.max_error:.2e}",
                    r.refined,
                    f"{r.solve_s:.2f}",
                    f"{r.check_s:.2f}",
                )
                for r in self.rounds
            ),
        )


@dataclass(frozen=True)
class UntilConsistent(Wrapper):
    """Refine the mesh and re-solve until the trained model is consistent.

    ``solve(training_problem, UntilConsistent(RadauIIA(40, 3), max_rounds=4))`` solves on the
    inner algorithm's mesh and checks the model (with the settings of ``solve``'s ``check``).
    While it is inconsistent, every round

    1. refines every interval whose local error estimate is at least ``fraction`` times the
       largest (`collocnode.transcription._refine.interval_errors`, split by ``rule``);
    2. re-solves warm from the previous solution: its states interpolated onto the new nodes,
       its parameters copied;
    3. if that did not at least halve the largest deviation ("stalled": the learned field is
       unstable along the trajectory and amplifies whatever local error is left, so the warm
       re-solve keeps the same model), also re-solves the refined mesh from the problem's own
       initial guess (``restart="stalled"``; "always" does so every round, "never" not at all)
       and keeps the better of the two: a consistent one, else a converged one, else the one
       with the smaller deviation.

    Args:
        inner: the algorithm of every round (default ``RadauIIA()``); its leaf's mesh is the
            first mesh unless an outer algorithm hands one down. Any algorithm nests here, e.g.
            a [`WarmStarted`][collocnode.WarmStarted] collocation (its phases run where a round
            starts from the problem's own guess, and are skipped where it starts warm).
        max_rounds: most refinements after the first solve.
        fraction: intervals with an estimate of at least ``fraction`` times the largest one are
            refined, in (0, 1].
        rule: how a marked interval is refined (default h: split into parts).
        restart: "stalled", "never" or "always" (see above).
        alg: the former name of ``inner`` (deprecated).

    Returns (from ``solve``) a
    [`UntilConsistentRecord`][collocnode.strategies.UntilConsistentRecord]. The loop stops early if
    every solve of a round fails or the next mesh would exceed ``rule.max_nodes``.

    Examples:
        Start on a mesh too coarse for the trained model to follow its collocation trajectory; the
        rounds refine it until the model does:

        ```python
        from collocnode import (
            IpoptOptions,
            NeuralODE,
            RadauIIA,
            TrainingProblem,
            UntilConsistent,
            problems,
            solve,
        )
        from collocnode.nn import MLP

        system = problems.get("vdp")
        split = system.generate(noise=0.1, seed=0)
        model = NeuralODE([MLP((2, 5, 5, 1), "sigmoid"), MLP((2, 5, 5, 1), "sigmoid")])
        problem = TrainingProblem(model, split.train, regularization=1e-4, initial_state=system.x0)
        coarse = RadauIIA(intervals=15, stages=3, ipopt=IpoptOptions(print_level=0))
        sol = solve(problem, UntilConsistent(coarse, max_rounds=3), seed=0)
        for r in sol.record(UntilConsistent).rounds:  # 15 intervals were too few: refined twice
            print(r.round, r.intervals, r.consistent, f"{r.largest_deviation:.3g}")
        assert sol.consistency.consistent
        print(sol.describe())
        ```
    """

    hands_down: ClassVar[frozenset[str]] = frozenset({"meshes", "warm"})
    honours: ClassVar[frozenset[str]] = frozenset({"meshes", "warm"})
    record_type: ClassVar[type] = UntilConsistentRecord

    problem_kinds: ClassVar[frozenset[str]] = frozenset({"training"})

    inner: Algorithm = field(default_factory=RadauIIA)
    max_rounds: int = 4
    fraction: float = 0.1
    rule: RefinementRule = field(default_factory=RefinementRule)
    restart: str = "stalled"
    _: KW_ONLY
    alg: InitVar[Algorithm | None] = None

    def __post_init__(self, alg: Algorithm | None) -> None:
        adopt_alg(self, alg)
        check_inner(self, self.inner)
        object.__setattr__(self, "max_rounds", v.nonnegative_int("max_rounds", self.max_rounds))
        fraction = v.positive_float("fraction", self.fraction)
        if fraction > 1:
            raise ValueError(f"fraction must be in (0, 1], got {self.fraction!r}")
        object.__setattr__(self, "fraction", fraction)
        if not isinstance(self.rule, RefinementRule):
            raise TypeError(f"rule must be a RefinementRule, got {self.rule!r:.80}")
        v.choice("restart", self.restart, RESTARTS)

    def validate(self, problem: Any, context: SolveContext) -> None:
        super().validate(problem, context)
        if context.check is None:
            raise ValueError("UntilConsistent runs the consistency check; check=False turns it off")

    def solve_problem(self, problem: Any, context: SolveContext) -> UntilConsistentRecord:
        meshes = (
            list(context.meshes)
            if context.meshes is not None
            else leaf_of(self).meshes_for(problem)
        )
        kept = self._attempt(problem, context, meshes, context.warm)
        start, restarted = "guess" if context.warm is None else "warm", False
        rounds: list[ConsistencyRound] = []
        for k in range(self.max_rounds + 1):
            largest = max(float(e.max()) for e in kept.errors)
            threshold = self.fraction * largest
            last = (
                kept.report.consistent
                or not kept.trained.status.ok
                or k == self.max_rounds
                or not largest > 0
            )
            new_meshes = meshes
            if not last:
                # RefinementRule refines the estimates strictly above its tolerance
                below = np.nextafter(threshold, 0.0)
                new_meshes = [
                    self.rule.apply(m, e, below) for m, e in zip(meshes, kept.errors, strict=True)
                ]
                last = sum(m.n_nodes for m in new_meshes) > self.rule.max_nodes
            rounds.append(_round(k, meshes, start, restarted, kept, largest, threshold, last))
            if last:
                break
            previous, meshes = kept, new_meshes
            kept, start, restarted = self._refined(problem, context, meshes, previous)
        kept.report.warn(stacklevel=3)
        converged = kept.trained.status == SolverStatus.SUCCESS and kept.report.consistent
        return UntilConsistentRecord(solution=kept.result, rounds=rounds, converged=converged)

    def _refined(
        self, problem: Any, context: SolveContext, meshes: list[Mesh], previous: _Attempt
    ) -> tuple[_Attempt, str, bool]:
        """One round on the refined ``meshes``: warm from ``previous``, and from the problem's
        own guess too where `restart` says so; the better attempt, where it started and
        whether a restart ran."""
        warm = self._attempt(problem, context, meshes, previous.result)
        candidates = [("warm", warm)]
        stalled = not warm.report.consistent and not (
            warm.report.largest < 0.5 * previous.report.largest
        )
        stopped = warm.trained.status in STOPS
        restarted = not stopped and (
            self.restart == "always" or (self.restart == "stalled" and stalled)
        )
        if restarted:
            candidates.append(("restart", self._attempt(problem, context, meshes, None)))
        start, kept = min(candidates, key=lambda c: c[1].rank)
        # the round's cost is that of every solve it ran, kept or not
        kept = _Attempt(
            kept.result,
            kept.errors,
            sum(c.iterations for _, c in candidates),
            sum(c.solve_s for _, c in candidates),
            sum(c.check_s for _, c in candidates),
        )
        return kept, start, restarted

    def _attempt(
        self, problem: Any, context: SolveContext, meshes: list[Mesh], warm: Any
    ) -> _Attempt:
        t0 = time.perf_counter()
        result = self.inner.solve_problem(problem, context.but(meshes=meshes, warm=warm))
        t_solve = time.perf_counter() - t0
        t0 = time.perf_counter()
        trained = final(result)
        progress.phase("check")
        trained.consistency = trained.check_consistency(context.check)
        errors = [interval_errors(trained, s) for s in range(len(meshes))]
        return _Attempt(result, errors, _iterations(result), t_solve, time.perf_counter() - t0)


def _iterations(result: Any) -> int:
    return int(result.iterations)


@dataclass
class _Attempt:
    """One solve of a round with its check and interval estimates."""

    result: Any  # the inner algorithm's result
    errors: list[np.ndarray]
    iterations: int
    solve_s: float
    check_s: float

    @property
    def trained(self) -> Any:
        return final(self.result)

    @property
    def report(self) -> ConsistencyReport:
        return self.trained.consistency

    @property
    def rank(self) -> tuple[bool, bool, float]:
        """Sort key, best first: consistent, then converged, then the smaller deviation."""
        return (not self.report.consistent, not self.trained.status.ok, self.report.largest)


def _round(
    k: int,
    meshes: list[Mesh],
    start: str,
    restarted: bool,
    kept: _Attempt,
    largest: float,
    threshold: float,
    last: bool,
) -> ConsistencyRound:
    return ConsistencyRound(
        round=k,
        intervals=sum(m.n_intervals for m in meshes),
        nodes=sum(m.n_nodes for m in meshes),
        start=start,
        restarted=restarted,
        status=kept.trained.status.value,
        iterations=kept.iterations,
        largest_deviation=kept.report.largest,
        consistent=kept.report.consistent,
        max_error=largest,
        refined=0 if last else sum(int(np.sum(e >= threshold)) for e in kept.errors),
        solve_s=kept.solve_s,
        check_s=kept.check_s,
    )
