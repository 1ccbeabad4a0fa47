"""The DOP-level solve: ``solve_dop(dop, alg)`` for every algorithm of the transcription layer.

An algorithm is a :class:`RadauIIA` (one collocation solve, :mod:`.collocation`) or an
:class:`AdaptiveRefinement` wrapping one (:mod:`.adaptive`). ``collocnode.solve`` turns a training
problem into a dynamic optimization problem and calls this.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .adaptive import AdaptiveRefinement, AdaptiveSolution, solve_adaptive
from .algorithm import RadauIIA
from .collocation import solve_collocation
from .problem import DynamicOptimizationProblem
from .solution import Solution

Algorithm = RadauIIA | AdaptiveRefinement
ALGORITHMS = (RadauIIA, AdaptiveRefinement)


def check_algorithm(alg: object) -> Algorithm:
    """``alg`` (default ``RadauIIA()`` for None) if it is an algorithm of :data:`ALGORITHMS`;
    otherwise a TypeError naming it."""
    if alg is None:
        return RadauIIA()
    if not isinstance(alg, ALGORITHMS):
        raise TypeError(
            f"alg must be a RadauIIA algorithm or an AdaptiveRefinement wrapping one, got {alg!r}"
        )
    return alg


def solve_dop(
    dop: DynamicOptimizationProblem,
    alg: Algorithm,
    callback: Callable[[Any], Any] | None = None,
) -> Solution | AdaptiveSolution:
    """Solve ``dop`` with ``alg``: a :class:`Solution` for a :class:`RadauIIA`, an
    :class:`AdaptiveSolution` for an :class:`AdaptiveRefinement`. ``callback`` runs after every
    IPOPT iteration (:mod:`.iteration`; in every round of an adaptive refinement).

    Raises:
        SolveInterrupted: Ctrl-C before IPOPT started (``phase`` "build" or "compile").
        ValueError: the NLP would not fit in memory.
    """
    if not isinstance(dop, DynamicOptimizationProblem):
        raise TypeError(f"dop must be a DynamicOptimizationProblem, got {dop!r}")
    alg = check_algorithm(alg)
    if callback is not None and not callable(callback):
        raise TypeError(f"callback must be callable, got {callback!r:.80}")
    if isinstance(alg, AdaptiveRefinement):
        return solve_adaptive(dop, alg, callback=callback)
    return solve_collocation(dop, alg, callback=callback)
