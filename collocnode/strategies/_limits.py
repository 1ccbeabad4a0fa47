"""Limits on how long the solves of a nest run: a stopping rule in every solve, a deadline for
all of them.

- [`StopWhenStagnant`][collocnode.StopWhenStagnant] stops each solve of its inner algorithm once the
  objective has stopped moving (a fresh [`StopOnStagnation`][collocnode.StopOnStagnation] beside the
  user's callback in every solve: the quarter-vehicle paper's "terminated early if no further
  significant improvement in objective").
- [`StopWhenSettled`][collocnode.StopWhenSettled] stops each solve once what the user measures (a
  learned characteristic, a validation prediction) has stopped changing
  (`StopWhenSettledRule`), with status ``settled``.
- [`TimeLimit`][collocnode.TimeLimit] gives the whole nest one wall-clock budget: IPOPT's
  ``max_wall_time`` of every solve, and the regression of a warm start, are capped at what is left
  of it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, ClassVar

from .. import _validation as v
from ..algorithm import Algorithm, SolveContext, Wrapper, check_inner
from ..training._callbacks import CallbackList, StopOnStagnation, StopWhenSettledRule
from ..transcription._collocation import RadauIIA


@dataclass(frozen=True)
class StopWhenStagnant(Wrapper):
    """Stop every solve of ``inner`` once its objective moved by less than ``rtol`` (relative)
    over ``window`` iterations.

    The status of a solve it stops is ``stopped_by_callback`` with a message that says the
    objective stagnated, never ``success``; the user's own callback runs beside it, and a stop
    it asks for is told apart ([`Pretrained`][collocnode.Pretrained] goes on after a stagnated
    pre-training, not after the user's stop).

    Args:
        inner: the algorithm whose solves it watches (default ``RadauIIA()``).
        window: iterations the objective is watched over (a positive integer).
        rtol: the relative change below which it counts as stagnant (> 0).
    """

    inner: Algorithm = field(default_factory=RadauIIA)
    window: int = 10
    rtol: float = 1e-4

    def __post_init__(self) -> None:
        check_inner(self, self.inner)
        v.positive_int("window", self.window)
        v.positive_float("rtol", self.rtol)

    def solve_problem(self, problem: Any, context: SolveContext) -> Any:
        rule = StopOnStagnation(self.rtol, self.window)
        callback = rule if context.callback is None else CallbackList([rule, context.callback])
        return self.inner.solve_problem(problem, context.but(callback=callback))


@dataclass(frozen=True)
class StopWhenSettled(Wrapper):
    """Stop every solve of ``inner`` once ``measure`` (``state -> array``, e.g.
    ``collocnode.training._callbacks.block_outputs("friction", grid)``) changed by less than
    ``rtol`` (relative to its last value, or to ``floor`` where that is smaller) in
    ``patience`` checks every ``every`` iterations; the status is then ``settled``, which counts
    as converged (``SolverStatus.ok``). The user's own callback runs beside it. See
    `StopWhenSettledRule`."""

    problem_kinds: ClassVar[frozenset[str]] = frozenset({"training"})

    inner: Algorithm = field(default_factory=RadauIIA)
    measure: Any = None
    rtol: float = 1e-3
    every: int = 1
    patience: int = 2
    floor: float = 1e-8

    def __post_init__(self) -> None:
        check_inner(self, self.inner)
        # the rule's own checks, once, before any solve
        self._rule()

    def _rule(self) -> StopWhenSettledRule:
        return StopWhenSettledRule(self.measure, self.rtol, self.every, self.patience, self.floor)

    def solve_problem(self, problem: Any, context: SolveContext) -> Any:
        rule = self._rule()
        callback = rule if context.callback is None else CallbackList([rule, context.callback])
        return self.inner.solve_problem(problem, context.but(callback=callback))


@dataclass(frozen=True)
class TimeLimit(Wrapper):
    """One wall-clock budget of ``seconds`` for every solve of ``inner``, together: each is
    capped at what is left when it starts (an exhausted budget stops IPOPT at its first
    iterate). An outer limit that ends sooner still applies.

    Examples:
        One minute for every round of a mesh refinement together (a budget that runs out returns the
        last iterate, with status ``time_limit``):

        ```python
        from collocnode import (
            IpoptOptions,
            NeuralODE,
            RadauIIA,
            TimeLimit,
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
        inner = RadauIIA(intervals=30, stages=3, ipopt=IpoptOptions(print_level=0))
        alg = TimeLimit(UntilConsistent(inner), seconds=60.0)  # all rounds together
        sol = solve(problem, alg, seed=0)
        print(sol.status, sol.describe())
        ```
    """

    hands_down: ClassVar[frozenset[str]] = frozenset({"deadline"})

    inner: Algorithm = field(default_factory=RadauIIA)
    seconds: float = 3600.0

    def __post_init__(self) -> None:
        check_inner(self, self.inner)
        v.positive_float("seconds", self.seconds)

    def solve_problem(self, problem: Any, context: SolveContext) -> Any:
        deadline = time.perf_counter() + self.seconds
        if context.deadline is not None:
            deadline = min(deadline, context.deadline)
        return self.inner.solve_problem(problem, context.but(deadline=deadline))
