"""``solve(problem, algorithm)``: the one entry point, as in SciML.

It only dispatches: a :class:`TrainingProblem` becomes a dynamic optimization problem (with random
initial weights from ``seed`` unless it gives ``params_guess``), the transcription layer solves
that (:func:`collocnode.transcription.driver.solve_dop`), and the result is wrapped as a
:class:`TrainingSolution`.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import replace
from typing import Any, overload

import numpy as np

from . import _validation as v
from .admm import ConsensusADMM, ConsensusSolution, solve_admm
from .callbacks import for_training
from .consistency import (
    ConsistencyCheck,
    ConsistentSolution,
    UntilConsistent,
    check_setting,
    solve_until_consistent,
)
from .status import SolveInterrupted, SolverStatus
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
    check: bool | ConsistencyCheck = ...,
) -> TrainingSolution: ...
@overload
def solve(
    problem: DynamicOptimizationProblem,
    alg: RadauIIA | None = ...,
    *,
    seed: int | None = ...,
    callback: Callable[[Any], Any] | None = ...,
    check: bool | ConsistencyCheck = ...,
) -> Solution: ...
@overload
def solve(
    problem: TrainingProblem | DynamicOptimizationProblem,
    alg: AdaptiveRefinement,
    *,
    seed: int | None = ...,
    callback: Callable[[Any], Any] | None = ...,
    check: bool | ConsistencyCheck = ...,
) -> AdaptiveSolution: ...
@overload
def solve(
    problem: TrainingProblem,
    alg: UntilConsistent,
    *,
    seed: int | None = ...,
    callback: Callable[[Any], Any] | None = ...,
    check: bool | ConsistencyCheck = ...,
) -> ConsistentSolution: ...


@overload
def solve(
    problem: TrainingProblem,
    alg: ConsensusADMM,
    *,
    seed: int | None = ...,
    callback: None = ...,
    check: bool | ConsistencyCheck = ...,
) -> ConsensusSolution: ...


def solve(problem, alg=None, *, seed=None, callback=None, check=True):
    """Transcribe ``problem`` with ``alg`` (default ``RadauIIA()``) and solve it with IPOPT.

    Args:
        problem: a :class:`DynamicOptimizationProblem` or a :class:`TrainingProblem`.
        alg: the collocation scheme and IPOPT settings (:class:`RadauIIA`), or an
            :class:`AdaptiveRefinement` wrapping one, or (training problems) an
            :class:`UntilConsistent` that refines the mesh until the check below passes, or a
            :class:`ConsensusADMM` that splits the data into blocks solved as NLPs of their own
            (:mod:`collocnode.admm`).
        seed: a non-negative integer seeding the random initial weights of a training problem
            (ignored when the problem gives ``params_guess``).
        callback: ``fn(state)`` after every IPOPT iteration (:mod:`collocnode.callbacks`);
            returning True stops the solve with status ``stopped_by_callback`` and keeps that
            iterate, an exception stops it with ``callback_error``. For a training problem the
            state can also simulate the model at the current parameters (``state.predict``).
        check: the consistency check of a trained model (:mod:`collocnode.consistency`): True
            (default settings), a :class:`ConsistencyCheck`, or False to skip it. It re-simulates
            the learned model from the collocated initial states and stores the result in the
            solution's ``consistency``; an inconsistent model gives an
            :class:`InconsistentModelWarning` and keeps IPOPT's status. Training problems only.

    Returns:
        A :class:`Solution` (or :class:`TrainingSolution`); with :class:`AdaptiveRefinement`
        an :class:`AdaptiveSolution` whose ``solution`` is one, with :class:`UntilConsistent` a
        :class:`ConsistentSolution`, with :class:`ConsensusADMM` a
        :class:`ConsensusSolution`. Its ``status`` says honestly how
        the solve ended; a failed solve still returns the last iterate.

    Raises:
        SolveInterrupted: Ctrl-C before IPOPT started (``phase``: "build" or "compile"); Ctrl-C
            inside IPOPT returns the last iterate with status ``interrupted`` instead.
    """
    settings = _check_settings(problem, alg, check)
    if isinstance(alg, ConsensusADMM):
        return _solve_admm(problem, alg, seed, callback, settings)
    alg = alg if isinstance(alg, UntilConsistent) else check_algorithm(alg)
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
        if isinstance(alg, UntilConsistent):

            def trained(s: Solution) -> TrainingSolution:
                return TrainingSolution(s, problem)

            callback = for_training(problem, callback)
            return solve_until_consistent(dop, alg, trained, settings, callback)
        result = solve_dop(dop, alg, callback=for_training(problem, callback))
        if isinstance(result, AdaptiveSolution):
            trained = _checked(TrainingSolution(result.solution, problem), settings)
            return replace(result, solution=trained)
        return _checked(TrainingSolution(result, problem), settings)
    if isinstance(problem, DynamicOptimizationProblem):
        return solve_dop(problem, alg, callback=callback)
    raise TypeError(
        f"problem must be a DynamicOptimizationProblem or TrainingProblem, got {problem!r}"
    )


def _solve_admm(
    problem: object,
    alg: ConsensusADMM,
    seed: int | None,
    callback: object,
    settings: ConsistencyCheck | None,
) -> ConsensusSolution:
    if not isinstance(problem, TrainingProblem):
        raise TypeError(
            f"ConsensusADMM splits a TrainingProblem's data, got {type(problem).__name__}"
        )
    v.optional_seed("seed", seed)
    if callback is not None:
        raise ValueError(
            "callback is not supported with ConsensusADMM (its block solves run in parallel); "
            "read the rounds from the solution's rounds"
        )
    p0 = problem.params_guess
    if p0 is None:
        p0 = problem.model.init_params(np.random.default_rng(seed))
    result = solve_admm(problem, alg, np.asarray(p0, dtype=float))
    return replace(result, solution=_checked(result.solution, settings))


def _check_settings(problem: object, alg: object, check: object) -> ConsistencyCheck | None:
    """The consistency check's settings, or None to skip it. The check is a keyword of
    ``solve``, as SciML's run-time checks are (``unstable_check``): it re-simulates the model,
    which the transcription's algorithms know nothing of, and applies to every algorithm."""
    settings = check_setting(check)
    if isinstance(alg, UntilConsistent):
        if not isinstance(problem, TrainingProblem):
            raise TypeError(
                f"UntilConsistent needs a TrainingProblem (its check re-simulates the trained "
                f"model), got {type(problem).__name__}"
            )
        if settings is None:
            raise ValueError("UntilConsistent runs the consistency check; check=False turns it off")
    if isinstance(check, ConsistencyCheck) and isinstance(problem, DynamicOptimizationProblem):
        raise TypeError(
            "check=ConsistencyCheck(...) needs a TrainingProblem: a DynamicOptimizationProblem "
            "has no model to re-simulate"
        )
    return settings


def _checked(sol: TrainingSolution, settings: ConsistencyCheck | None) -> TrainingSolution:
    """``sol`` with its consistency check in ``sol.consistency`` and a warning if it fails; no
    check with ``check=False``, after Ctrl-C in IPOPT, or if Ctrl-C stops the check."""
    if settings is None or sol.status == SolverStatus.INTERRUPTED:
        return sol
    try:
        sol.consistency = sol.check_consistency(settings)
    except KeyboardInterrupt:
        warnings.warn(
            "Ctrl-C stopped the consistency check; sol.check_consistency() runs it again",
            stacklevel=3,
        )
        return sol
    sol.consistency.warn(stacklevel=3)
    return sol
