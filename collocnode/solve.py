"""``solve(problem, algorithm)``: the one entry point, as in SciML.

It only dispatches: a :class:`TrainingProblem` becomes a dynamic optimization problem (with random
initial weights from ``seed`` unless it gives ``params_guess``), the transcription layer solves
that (:func:`collocnode.transcription.driver.solve_dop`), and the result is wrapped as a
:class:`TrainingSolution`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any, overload

import numpy as np

from . import _validation as v
from .callbacks import for_training
from .status import SolveInterrupted
from .training import TrainingProblem, TrainingSolution
from .transcription.adaptive import AdaptiveRefinement, AdaptiveSolution
from .transcription.algorithm import RadauIIA
from .transcription.driver import check_algorithm, solve_dop
from .transcription.problem import DynamicOptimizationProblem
from .transcription.solution import Solution


@overload
def solve(
    problem: TrainingProblem,
    alg: RadauIIA | None = ...,
    *,
    seed: int | None = ...,
    callback: Callable[[Any], Any] | None = ...,
) -> TrainingSolution: ...
@overload
def solve(
    problem: DynamicOptimizationProblem,
    alg: RadauIIA | None = ...,
    *,
    seed: int | None = ...,
    callback: Callable[[Any], Any] | None = ...,
) -> Solution: ...
@overload
def solve(
    problem: TrainingProblem | DynamicOptimizationProblem,
    alg: AdaptiveRefinement,
    *,
    seed: int | None = ...,
    callback: Callable[[Any], Any] | None = ...,
) -> AdaptiveSolution: ...


def solve(problem, alg=None, *, seed=None, callback=None):
    """Transcribe ``problem`` with ``alg`` (default ``RadauIIA()``) and solve it with IPOPT.

    Args:
        problem: a :class:`DynamicOptimizationProblem` or a :class:`TrainingProblem`.
        alg: the collocation scheme and IPOPT settings (:class:`RadauIIA`), or an
            :class:`AdaptiveRefinement` wrapping one.
        seed: a non-negative integer seeding the random initial weights of a training problem
            (ignored when the problem gives ``params_guess``).
        callback: ``fn(state)`` after every IPOPT iteration (:mod:`collocnode.callbacks`);
            returning True stops the solve with status ``stopped_by_callback`` and keeps that
            iterate, an exception stops it with ``callback_error``. For a training problem the
            state can also simulate the model at the current parameters (``state.predict``).

    Returns:
        A :class:`Solution` (or :class:`TrainingSolution`); with :class:`AdaptiveRefinement`
        an :class:`AdaptiveSolution` whose ``solution`` is one. Its ``status`` says honestly how
        the solve ended; a failed solve still returns the last iterate.

    Raises:
        SolveInterrupted: Ctrl-C before IPOPT started (``phase``: "build" or "compile"); Ctrl-C
            inside IPOPT returns the last iterate with status ``interrupted`` instead.
    """
    alg = check_algorithm(alg)
    v.optional_seed("seed", seed)
    if callback is not None:
        v.function("callback", callback)
    if isinstance(problem, TrainingProblem):
        try:
            p0 = problem.params_guess
            if p0 is None:
                p0 = problem.model.init_params(np.random.default_rng(seed))
            dop = problem.to_dop(params_guess=p0)
        except SolveInterrupted:
            raise
        except KeyboardInterrupt as interrupt:
            raise SolveInterrupted("build") from interrupt
        result = solve_dop(dop, alg, callback=for_training(problem, callback))
        if isinstance(result, AdaptiveSolution):
            return replace(result, solution=TrainingSolution(result.solution, problem))
        return TrainingSolution(result, problem)
    if isinstance(problem, DynamicOptimizationProblem):
        return solve_dop(problem, alg, callback=callback)
    raise TypeError(
        f"problem must be a DynamicOptimizationProblem or TrainingProblem, got {problem!r}"
    )
