"""Several starts of one training problem; the best consistent model and the spread over the
starts.

A network's training problem is not convex: from other random initial weights IPOPT may end in
another local optimum (the seed paper restarted Van der Pol 100 times; PEtab users run 5 to 100
starts). [`Multistart`][collocnode.Multistart] solves the problem from ``starts`` initial points --
the random weights of independent seeds (``numpy.random.SeedSequence(seed).spawn``), or, where the
problem gives ``params_guess``, that guess perturbed by relative noise of size ``perturb`` -- one
after another, or on an executor (a local process pool, a Dask client's ``get_executor()``), and
keeps the best: a consistent model before an inconsistent one, a converged solve before one that did
not converge, then the least objective.

On an executor a start returns plain arrays (the parameters, the node states, the outcome), and
the best one is solved once more in this process from them (a handful of iterations), so that
the result is a full solution; the problem must pickle to reach the workers.
"""

from __future__ import annotations

import math
import time
from concurrent.futures import Executor
from dataclasses import asdict, dataclass, field, replace
from typing import Any, ClassVar

import numpy as np

from .. import _validation as v
from .._data import Trajectory
from .._status import SolverStatus
from ..algorithm import Algorithm, SolveContext, Wrapper, check_inner, final
from ..tools import _markdown as markdown
from ..transcription._collocation import RadauIIA


@dataclass(frozen=True)
class StartRecord:
    """How one start ended: its seed, status, objective, IPOPT iterations, the consistency
    verdict (None where the check was off), its largest deviation and wall time [s]."""

    start: int
    seed: int | None
    status: str
    objective: float
    iterations: int
    consistent: bool | None
    largest_deviation: float
    seconds: float

    @classmethod
    def of(cls, start: int, seed: int | None, result: Any, seconds: float) -> StartRecord:
        """The record of ``result`` (a solve's possibly wrapped result, checked or not)."""
        facts = _facts(result, final(result), seconds)
        return _record(start, seed, facts)

    @property
    def rank(self) -> tuple[bool, bool, float]:
        """Sort key, best first: consistent, converged, the least objective."""
        objective = self.objective if math.isfinite(self.objective) else math.inf
        return (self.consistent is False, not SolverStatus(self.status).ok, objective)


@dataclass
class MultistartRecord:
    """The result of [`Multistart`][collocnode.Multistart].

    Attributes:
        solution: the best start's result (on an executor: its solve repeated here).
        starts: one `StartRecord` per start, in order.
        best: the index of the best start.
    """

    wraps: ClassVar[bool] = True

    solution: Any
    starts: list[StartRecord]
    best: int
    times: dict[str, float] = field(default_factory=dict)

    @property
    def status(self) -> SolverStatus:
        return final(self).status

    @property
    def iterations(self) -> int:
        return int(sum(s.iterations for s in self.starts))

    def describe(self) -> str:
        """The starts, in one line."""
        spread = self.spread()
        return (
            f"Multistart: {spread['starts']} starts, {spread['converged']} converged, "
            f"{spread['consistent']} consistent; best: start {self.best}"
        )

    def spread(self) -> dict[str, Any]:
        """Over the starts: how many converged and were consistent, and the objectives'
        least, median and largest value."""
        objectives = np.array([s.objective for s in self.starts], dtype=float)
        finite = objectives[np.isfinite(objectives)]
        stats = (
            {
                "min": float(finite.min()),
                "median": float(np.median(finite)),
                "max": float(finite.max()),
            }
            if finite.size
            else {"min": None, "median": None, "max": None}
        )
        return {
            "starts": len(self.starts),
            "converged": sum(SolverStatus(s.status).ok for s in self.starts),
            "consistent": sum(bool(s.consistent) for s in self.starts),
            "objective": stats,
        }

    def table(self) -> str:
        header = ("start", "seed", "status", "objective", "iterations", "consistent")
        header += ("largest deviation", "time [s]")
        return markdown.table(
            header,
            (
                (
                    f"{s.start}{' (best)' if s.start == self.best else ''}",
                    s.seed,
                    s.status,
                    f"{s.objective:.6g}",
                    s.iterations,
                    markdown.VERDICT[s.consistent],
                    f"{s.largest_deviation:.3g}",
                    f"{s.seconds:.2f}",
                )
                for s in self.starts
            ),
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "best": self.best,
            "spread": self.spread(),
            "starts": [asdict(s) for s in self.starts],
        }


@dataclass(frozen=True)
class Multistart(Wrapper):
    """Solve from ``starts`` initial points and keep the best (see the module docstring).

    Args:
        inner: the algorithm of every start (default ``RadauIIA()``).
        starts: how many starts (>= 1).
        perturb: the relative size of the noise on a given ``params_guess`` (>= 0).
        executor: None (one start after another in this process) or a
            ``concurrent.futures.Executor`` (e.g. ``ProcessPoolExecutor``, or a Dask client's
            ``get_executor()``) that runs the starts.

    Returns (from ``solve``) a [`MultistartRecord`][collocnode.strategies.MultistartRecord].

    Examples:
        Three draws of the initial weights (seeded from ``solve``'s seed); the best converged solve
        is returned:

        ```python
        from collocnode import (
            IpoptOptions,
            Multistart,
            NeuralODE,
            RadauIIA,
            TrainingProblem,
            problems,
            solve,
        )
        from collocnode.nn import MLP

        system = problems.get("vdp")
        split = system.generate(noise=0.1, seed=0)
        model = NeuralODE([MLP((2, 5, 5, 1), "sigmoid"), MLP((2, 5, 5, 1), "sigmoid")])
        problem = TrainingProblem(model, split.train, regularization=1e-4, initial_state=system.x0)
        inner = RadauIIA(intervals=30, stages=3, ipopt=IpoptOptions(max_iter=200, print_level=0))
        sol = solve(problem, Multistart(inner, starts=3), seed=0)  # three draws of the weights
        record = sol.record(Multistart)
        for s in record.starts:
            print(s.start, s.status, f"{s.objective:.4f}")
        assert sol.objective == record.starts[record.best].objective  # the best start's solve
        print(sol.describe())
        ```
    """

    # every start begins at its own draw (a warm start would make them one)
    passes_on: ClassVar[frozenset[str]] = frozenset({"meshes", "deadline"})
    record_type: ClassVar[type] = MultistartRecord

    problem_kinds: ClassVar[frozenset[str]] = frozenset({"training"})

    inner: Algorithm = field(default_factory=RadauIIA)
    starts: int = 8
    perturb: float = 0.1
    executor: Any = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        check_inner(self, self.inner)
        v.positive_int("starts", self.starts)
        v.nonnegative_float("perturb", self.perturb)
        if self.executor is not None and not isinstance(self.executor, Executor):
            raise TypeError(
                f"executor must be a concurrent.futures.Executor or None, got {self.executor!r:.80}"
            )

    def callbacks(self) -> bool:
        # a callback cannot follow starts that run in other processes
        return self.executor is None and super().callbacks()

    def starting_points(self, problem: Any, seed: int | None) -> list[tuple[int | None, Any]]:
        """(seed, problem) of every start: the seeds spawned from ``seed`` (the first start is
        ``seed`` itself), and with a given ``params_guess`` that guess perturbed."""
        children = np.random.SeedSequence(seed).spawn(self.starts - 1)
        seeds: list[int | None] = [seed] + [int(c.generate_state(1)[0]) for c in children]
        points = []
        for k, s in enumerate(seeds):
            start = problem
            if k and problem.params_guess is not None and self.perturb > 0:
                p = np.asarray(problem.params_guess, dtype=float)
                rng = np.random.default_rng(s)
                noise = self.perturb * np.maximum(np.abs(p), 1e-3) * rng.standard_normal(p.size)
                start = replace(problem, params_guess=p + noise)
            points.append((s, start))
        return points

    def solve_problem(self, problem: Any, context: SolveContext) -> MultistartRecord:
        points = self.starting_points(problem, context.seed)
        context = context.but(warm=None)  # every start from its own draw
        t0 = time.perf_counter()
        if self.executor is None:
            outcomes = [_solve_start(self.inner, p, s, context) for s, p in points]
        else:
            plain = context.but(callback=None)
            futures = [
                self.executor.submit(_solve_plain, self.inner, p, s, plain) for s, p in points
            ]
            outcomes = [f.result() for f in futures]
        records = [
            _record(k, s, o) for k, ((s, _), o) in enumerate(zip(points, outcomes, strict=True))
        ]
        best = min(range(len(records)), key=lambda k: records[k].rank)
        times = {"starts": time.perf_counter() - t0}
        solution = outcomes[best]["result"]
        if solution is None:  # ran elsewhere: solve the best start again here, from its end
            t1 = time.perf_counter()
            seed, start = points[best]
            ends = [Trajectory(t, x) for t, x in outcomes[best]["states"]]
            again = replace(
                start,
                params_guess=outcomes[best]["p"],
                state_guess=ends[0] if len(ends) == 1 else ends,
            )
            solution = self.inner.solve_problem(again, context.but(seed=seed))
            times["repeat_best"] = time.perf_counter() - t1
        return MultistartRecord(solution, records, best, times)


def _solve_start(inner: Algorithm, problem: Any, seed: int | None, context: SolveContext) -> dict:
    """One start in this process: its result and the facts of its record."""
    t0 = time.perf_counter()
    result = inner.solve_problem(problem, context.but(seed=seed))
    trained = final(result)
    if context.check is not None and trained.consistency is None:
        trained.consistency = trained.check_consistency(context.check)
    return _facts(result, trained, time.perf_counter() - t0) | {"result": result}


def _solve_plain(inner: Algorithm, problem: Any, seed: int | None, context: SolveContext) -> dict:
    """One start on a worker: plain data only (no CasADi objects travel back)."""
    out = _solve_start(inner, problem, seed, context)
    trained = final(out.pop("result"))
    sol = trained.solution
    states = [
        (np.asarray(m.node_times), np.asarray(x))
        for m, x in zip(sol.meshes, sol.segment_states, strict=True)
    ]
    return out | {"result": None, "p": np.asarray(trained.p, dtype=float), "states": states}


def _facts(result: Any, trained: Any, seconds: float) -> dict[str, Any]:
    report = trained.consistency
    return {
        "status": trained.status.value,
        "objective": float(trained.objective),
        "iterations": int(result.iterations),
        "consistent": None if report is None else bool(report.consistent),
        "largest": float("nan") if report is None else float(report.largest),
        "seconds": seconds,
    }


def _record(k: int, seed: int | None, o: dict[str, Any]) -> StartRecord:
    return StartRecord(
        start=k,
        seed=seed,
        status=o["status"],
        objective=o["objective"],
        iterations=o["iterations"],
        consistent=o["consistent"],
        largest_deviation=o["largest"],
        seconds=o["seconds"],
    )
