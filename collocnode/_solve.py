"""``solve(problem, alg)``: the one entry point, as in SciML.

It does three things and dispatches on nothing: it lowers the call to the algorithm protocol of
`collocnode.algorithm` (the default algorithm, the checked seed, callback and check
settings in a [`SolveContext`][collocnode.SolveContext], and the algorithm's own check that
it can solve the problem), lets the algorithm do its work (``alg.solve_problem``), and runs the
consistency check on the trained model the work ended in, unless an algorithm of the nest has
already checked it.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any, overload

from . import _validation as v
from ._status import SolverStatus
from .algorithm import Algorithm, SolveContext, unify
from .strategies._auto import Auto
from .tools import _progress as watched
from .training import TrainingProblem, TrainingSolution
from .training._callbacks import PhaseProgress
from .training._consistency import ConsistencyCheck, check_setting
from .transcription._problem import DynamicOptimizationProblem
from .transcription._solution import Solution


@overload
def solve(
    problem: TrainingProblem,
    alg: Algorithm | None = ...,
    *,
    seed: int | None = ...,
    callback: Callable[[Any], Any] | None = ...,
    check: bool | ConsistencyCheck = ...,
    progress: bool = ...,
) -> TrainingSolution: ...
@overload
def solve(
    problem: DynamicOptimizationProblem,
    alg: Algorithm | None = ...,
    *,
    seed: int | None = ...,
    callback: Callable[[Any], Any] | None = ...,
    check: bool | ConsistencyCheck = ...,
    progress: bool = ...,
) -> Solution: ...


def solve(problem, alg=None, *, seed=None, callback=None, check=True, progress=False):
    """Solve ``problem`` with ``alg`` (default [`Auto`][collocnode.Auto]: the mesh, λ and the
    initial guess chosen from the problem).

    Args:
        problem: a [`DynamicOptimizationProblem`][collocnode.DynamicOptimizationProblem] or a
            [`TrainingProblem`][collocnode.TrainingProblem].
        alg: an algorithm object (`collocnode.algorithm`), default ``Auto()`` (a mesh
            from the data, λ from a regularization path on held-out data where the problem
            gives none, a regression warm start where the data allow it, refinement until
            consistent; its record says what it chose): [`RadauIIA`][collocnode.RadauIIA] (one
            collocation solve), or a wrapper around one that nests with any other --
            [`AdaptiveRefinement`][collocnode.AdaptiveRefinement],
            [`UntilConsistent`][collocnode.UntilConsistent] (refine the mesh until the check below
            passes), [`WarmStarted`][collocnode.WarmStarted] and
            [`Pretrained`][collocnode.Pretrained] (phases before the full problem),
            [`StopWhenStagnant`][collocnode.StopWhenStagnant], [`TimeLimit`][collocnode.TimeLimit],
            [`RegularizationPath`][collocnode.RegularizationPath] (λ on held-out data),
            [`Multistart`][collocnode.Multistart] (several starts, the best kept),
            [`ConsensusADMM`][collocnode.ConsensusADMM] (blocks of the data solved as NLPs of their
            own). Each declares the problems it solves.
        seed: a non-negative integer seeding the random initial weights of a training problem
            (ignored when the problem gives ``params_guess``).
        callback: ``fn(state)`` after every IPOPT iteration (`collocnode.training._callbacks`);
            returning True stops the solve with status ``stopped_by_callback`` and keeps that
            iterate, an exception stops it with ``callback_error``. For a training problem the
            state can also simulate the model at the current parameters (``state.predict``).
        check: the consistency check of a trained model (`collocnode.training._consistency`):
            True (default settings), a [`ConsistencyCheck`][collocnode.ConsistencyCheck], or False
            to skip it. It re-simulates the learned model from the collocated initial states and
            stores the result in the trained solution's ``consistency``; an inconsistent model gives
            an [`InconsistentModelWarning`][collocnode.InconsistentModelWarning] and keeps IPOPT's
            status. Training problems only.
        progress: True shows the phases of the solve (build, compile, solve, check) with their
            elapsed time and the IPOPT iterations with the objective and the infeasibilities
            ([`PhaseProgress`][collocnode.PhaseProgress]: tqdm bars in a notebook or a
            terminal, plain lines elsewhere). It runs beside ``callback`` and never stops the
            solve. Default False: silent, unless a caller (a command line) watches the run.

    Returns:
        One type per problem family, whatever the algorithm: a
        [`TrainingSolution`][collocnode.TrainingSolution] for a training problem, a collocation
        [`Solution`][collocnode.Solution] for a dynamic optimization problem. It is the final
        solve's; what each wrapper of the nest did is in its ``records`` (outermost first;
        ``sol.record(UntilConsistent)``, ``sol.describe()``). Its ``status`` says honestly how the
        final solve ended; a failed solve still returns the last iterate.

    Raises:
        TypeError, ValueError: one clear error, before any work, for an algorithm that cannot
            solve the problem or a bad argument.
        SolveInterrupted: Ctrl-C before IPOPT started (``phase``: "build" or "compile"); Ctrl-C
            inside IPOPT returns the last iterate with status ``interrupted`` instead.

    Examples:
        Train a neural ODE on Van der Pol data with one collocation solve (a few seconds):

        ```python
        from collocnode import IpoptOptions, NeuralODE, RadauIIA, TrainingProblem, problems, solve
        from collocnode.nn import MLP

        system = problems.get("vdp")  # Van der Pol, with its own data generator
        split = system.generate(noise=0.1, seed=0)  # split.train: 201 noisy samples on [0, 7] s
        model = NeuralODE([MLP((2, 5, 5, 1), "sigmoid"), MLP((2, 5, 5, 1), "sigmoid")])
        problem = TrainingProblem(model, split.train, regularization=1e-4, initial_state=system.x0)
        alg = RadauIIA(intervals=40, stages=3, ipopt=IpoptOptions(print_level=0))
        sol = solve(problem, alg, seed=0)  # seed: the random initial weights
        assert sol.status.ok and sol.consistency.consistent
        print(sol.summary())
        ```
    """
    context = _lower(problem, alg, seed, callback, check)
    if not isinstance(progress, bool):
        raise TypeError(f"progress must be True or False, got {progress!r:.80}")
    alg = Auto() if alg is None else alg
    alg.validate(problem, context)
    if not progress or watched.current() is not None:
        return _solve(problem, alg, context)
    shown = PhaseProgress()
    try:
        with watched.watching(shown):
            return _solve(problem, alg, context)
    finally:
        shown.close()


def _solve(problem: Any, alg: Algorithm, context: SolveContext) -> Any:
    solution = unify(alg.solve_problem(problem, context))
    _check_trained(solution, context.check)
    return solution


def _lower(problem: Any, alg: Any, seed: Any, callback: Any, check: Any) -> SolveContext:
    """The call as the protocol's context, every argument checked."""
    if alg is not None and not isinstance(alg, Algorithm):
        raise TypeError(
            f"alg must be an algorithm object (RadauIIA, UntilConsistent, ConsensusADMM, ...), "
            f"got {alg!r:.80}"
        )
    v.optional_seed("seed", seed)
    if callback is not None:
        v.function("callback", callback)
    settings = check_setting(check)
    if isinstance(check, ConsistencyCheck) and getattr(problem, "problem_kind", None) != "training":
        raise TypeError(
            "check=ConsistencyCheck(...) needs a TrainingProblem: a DynamicOptimizationProblem "
            "has no model to re-simulate"
        )
    return SolveContext(seed=seed, callback=callback, check=settings)


def _check_trained(solution: Any, settings: ConsistencyCheck | None) -> None:
    """Run the consistency check on a trained model that no algorithm of the nest checked,
    store it in ``solution.consistency`` and warn if it fails; nothing for a plain collocation
    solution, with ``check=False``, after Ctrl-C in IPOPT, or if Ctrl-C stops the check."""
    checkable = hasattr(solution, "check_consistency")
    if not checkable or settings is None or solution.consistency is not None:
        return
    if solution.status == SolverStatus.INTERRUPTED:
        return
    watched.phase("check")
    try:
        solution.consistency = solution.check_consistency(settings)
    except KeyboardInterrupt:
        warnings.warn(
            "Ctrl-C stopped the consistency check; sol.check_consistency() runs it again",
            stacklevel=4,
        )
        return
    solution.consistency.warn(stacklevel=4)
