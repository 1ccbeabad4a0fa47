"""The algorithm protocol: what ``solve(problem, alg)`` asks of an algorithm object.

As in SciML, where ``solve(prob, alg)`` lowers to the algorithm's own ``__solve``, and as in
diffrax, where a wrapped solver holds the solver it wraps, every algorithm object of collocnode
derives from :class:`Algorithm` and

- declares the kinds of problem it solves (:attr:`Algorithm.problem_kinds`: ``"dop"`` for a
  :class:`~collocnode.DynamicOptimizationProblem`, ``"training"`` for a
  :class:`~collocnode.TrainingProblem`; each problem class names its kind in ``problem_kind``)
  and whether it runs the user's iteration callback (:attr:`Algorithm.takes_callback`);
- checks, before any work, that it can solve a given problem (:meth:`Algorithm.validate`);
- does its work in :meth:`Algorithm.solve_problem`, given the problem and a
  :class:`SolveContext` (the seed, the callback, the settings of the after-solve check, and
  what wrappers hand down: a solution to start from, the meshes, a deadline).

A :class:`Wrapper` holds an ``inner`` algorithm and calls ``inner.solve_problem``, so wrappers
nest: consensus ADMM whose blocks are refined until consistent around a warm-started
collocation solve is ``ConsensusADMM(UntilConsistent(WarmStarted(RadauIIA(...))))``. The
problem kinds and the callback trait of a nest are those all its levels share.

A wrapper's result keeps its inner result in ``solution`` and says so with ``wraps = True``;
:func:`final` follows that chain to the solution a nest ends in (a ``TrainingSolution`` or a
collocation ``Solution``), which is what ``solve`` checks after the work.

Problems lower themselves to a dynamic optimization problem (``problem.lower(context)``, see
:class:`Lowered`), so the collocation algorithm of the transcription layer solves a training
problem without knowing what one is.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, ClassVar

#: the kinds of problem: a dynamic optimization problem and a training problem
PROBLEM_KINDS = frozenset({"dop", "training"})


@dataclass(frozen=True)
class SolveContext:
    """What one solve hands every algorithm of a nest, besides the problem.

    Attributes:
        seed: seeds random initial weights where the problem gives none (None: fresh entropy).
        callback: the user's per-iteration callback as given to ``solve``, or None.
        check: the settings of the consistency check of a trained model (a
            ``ConsistencyCheck``), or None where ``solve(..., check=False)`` turned it off.
        warm: a solution to start from (its node states and parameters; a ``Solution``,
            ``TrainingSolution`` or wrapped result), or None for the problem's own guess.
        meshes: one collocation mesh per trajectory (segment), overriding the leaf's own, or
            None.
        deadline: a ``time.perf_counter()`` value after which IPOPT and the phases stop, or
            None.
    """

    seed: int | None = None
    callback: Callable[[Any], Any] | None = None
    check: Any = None
    warm: Any = None
    meshes: Sequence[Any] | None = None
    deadline: float | None = None

    def but(self, **changes: Any) -> SolveContext:
        """This context with ``changes`` (``dataclasses.replace``)."""
        return replace(self, **changes)

    def remaining(self) -> float | None:
        """Seconds left before :attr:`deadline` (at least 1 ms: IPOPT needs a positive limit),
        or None without one."""
        if self.deadline is None:
            return None
        return max(self.deadline - time.perf_counter(), 1e-3)


@dataclass(frozen=True)
class Lowered:
    """A problem lowered to what the collocation algorithm solves.

    Attributes:
        dop: the dynamic optimization problem (with its initial guess).
        callback: the user's callback as the transcription runs it for this problem (None for
            none).
        finish: turns the collocation ``Solution`` into the problem's own solution type.
    """

    dop: Any
    callback: Callable[[Any], Any] | None
    finish: Callable[[Any], Any]


class Algorithm(ABC):
    """Base of every algorithm object (frozen dataclasses all).

    Class attributes:
        problem_kinds: the kinds of problem it solves (of :data:`PROBLEM_KINDS`).
        takes_callback: whether it runs the user's per-iteration callback.
    """

    problem_kinds: ClassVar[frozenset[str]] = PROBLEM_KINDS
    takes_callback: ClassVar[bool] = True

    def kinds(self) -> frozenset[str]:
        """The kinds of problem this algorithm, with everything it holds, solves."""
        return self.problem_kinds

    def callbacks(self) -> bool:
        """Whether this algorithm, with everything it holds, runs the user's callback."""
        return self.takes_callback

    def validate(self, problem: Any, context: SolveContext) -> None:
        """Raise one clear error, before any work, if this algorithm cannot solve ``problem``
        with ``context``; wrappers add their own checks and ask their inner algorithm."""
        kind = getattr(problem, "problem_kind", None)
        if kind not in self.kinds():
            wanted = " or ".join(_KIND_NAMES[k] for k in sorted(self.kinds()))
            raise TypeError(
                f"{self.name()} solves a {wanted}, got {type(problem).__name__}: {problem!r:.60}"
            )
        if context.callback is not None and not self.callbacks():
            raise ValueError(f"callback is not supported with {self.name()}{self.no_callback_why}")

    #: completes the message refusing a callback (a wrapper says why it cannot run one)
    no_callback_why: ClassVar[str] = ""

    def name(self) -> str:
        return type(self).__name__

    def map_leaves(self, fn: Callable[[Algorithm], Algorithm]) -> Algorithm:
        """This nest with every leaf algorithm ``a`` replaced by ``fn(a)`` (a leaf: itself)."""
        return fn(self)

    #: whether the leaf's NLP can be built once and re-solved with new proximal values
    #: (consensus ADMM's blocks then keep it built between rounds)
    reusable_nlp: ClassVar[bool] = False

    @abstractmethod
    def solve_problem(self, problem: Any, context: SolveContext) -> Any:
        """Solve ``problem`` (already validated) and return the solution or a wrapped result."""


class Wrapper(Algorithm):
    """An algorithm that holds another (its ``inner`` field) and calls it to do the solves."""

    inner: Algorithm

    def kinds(self) -> frozenset[str]:
        return self.problem_kinds & self.inner.kinds()

    def callbacks(self) -> bool:
        return self.takes_callback and self.inner.callbacks()

    def validate(self, problem: Any, context: SolveContext) -> None:
        super().validate(problem, context)
        self.inner.validate(problem, context)

    def leaf(self) -> Algorithm:
        """The innermost algorithm of the nest (the one that solves NLPs)."""
        inner = self.inner
        return inner.leaf() if isinstance(inner, Wrapper) else inner

    def map_leaves(self, fn: Callable[[Algorithm], Algorithm]) -> Algorithm:
        return replace(self, inner=self.inner.map_leaves(fn))


def check_inner(owner: object, value: object) -> Algorithm:
    """``value`` if it is an algorithm object; otherwise one TypeError naming the field."""
    if not isinstance(value, Algorithm):
        raise TypeError(
            f"{type(owner).__name__}.inner must be an algorithm object (RadauIIA, "
            f"UntilConsistent, ...), got {value!r:.80}"
        )
    return value


def final(result: Any) -> Any:
    """The solution a (possibly wrapped) result ends in: follows ``solution`` through the
    results whose class says ``wraps = True``."""
    while getattr(type(result), "wraps", False):
        result = result.solution
    return result


def leaf_of(alg: Algorithm) -> Algorithm:
    """The innermost algorithm of ``alg``'s nest (``alg`` itself if it wraps nothing)."""
    return alg.leaf() if isinstance(alg, Wrapper) else alg


_KIND_NAMES = {"dop": "DynamicOptimizationProblem", "training": "TrainingProblem"}
