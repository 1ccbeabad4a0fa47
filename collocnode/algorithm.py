"""The algorithm protocol: what ``solve(problem, alg)`` asks of an algorithm object.

As in SciML, where ``solve(prob, alg)`` lowers to the algorithm's own ``__solve``, and as in
diffrax, where a wrapped solver holds the solver it wraps, every algorithm object of collocnode
derives from [`Algorithm`][collocnode.Algorithm] and

- declares the kinds of problem it solves (`Algorithm.problem_kinds`: ``"dop"`` for a
  [`DynamicOptimizationProblem`][collocnode.DynamicOptimizationProblem], ``"training"`` for a
  [`TrainingProblem`][collocnode.TrainingProblem]; each problem class names its kind in
  ``problem_kind``) and whether it runs the user's iteration callback (`Algorithm.takes_callback`);
- checks, before any work, that it can solve a given problem
  ([`Algorithm.validate`][collocnode.Algorithm.validate]);
- does its work in [`Algorithm.solve_problem`][collocnode.Algorithm.solve_problem], given the
  problem and a [`SolveContext`][collocnode.SolveContext] (the seed, the callback, the settings of
  the after-solve check, and what wrappers hand down: a solution to start from, the meshes, a
  deadline).

A `Wrapper` holds an ``inner`` algorithm and calls ``inner.solve_problem``, so wrappers
nest: consensus ADMM whose blocks are refined until consistent around a warm-started
collocation solve is ``ConsensusADMM(UntilConsistent(WarmStarted(RadauIIA(...))))``. The
problem kinds and the callback trait of a nest are those all its levels share.

The contracts are declared, not implied. The innermost algorithm of every nest is a
`Transcription` (what wrappers may ask of it: its meshes for a problem, its stages, a copy
with a thread count). A wrapper that hands its inner algorithm a context field
(`CONTEXT_FIELDS`: a warm start, meshes, a deadline) names it in
`Wrapper.hands_down`; every algorithm names the fields it acts on in
`Algorithm.honours`, and a nest in which one level hands down a field the level below
would ignore is refused at validation (``TimeLimit`` around an algorithm that never looks at a
deadline would cap nothing).

A wrapper's ``solve_problem`` returns its record, which keeps the inner result in ``solution``
and says so with ``wraps = True``; `final` follows that chain to the solution a nest ends
in. ``solve`` returns that one solution type per problem family (a ``TrainingSolution`` for a
training problem, a collocation ``Solution`` for a dynamic optimization problem), carrying the
records of the nest, outermost first, in ``records`` (`unify`).

Problems lower themselves to a dynamic optimization problem (``problem.lower(context)``, see
`Lowered`), so the collocation algorithm of the transcription layer solves a training
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

#: the fields of `SolveContext` that a wrapper may hand down to the algorithm it holds
CONTEXT_FIELDS = frozenset({"warm", "meshes", "deadline"})


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
        """Seconds left before `deadline` (at least 1 ms: IPOPT needs a positive limit),
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
        problem_kinds: the kinds of problem it solves (of `PROBLEM_KINDS`).
        takes_callback: whether it runs the user's per-iteration callback.
    """

    problem_kinds: ClassVar[frozenset[str]] = PROBLEM_KINDS
    takes_callback: ClassVar[bool] = True
    #: the context fields (of `CONTEXT_FIELDS`) this algorithm acts on itself
    honours: ClassVar[frozenset[str]] = frozenset()
    #: whether its solution is of the problem's own model (False: it replaces the model)
    keeps_model: ClassVar[bool] = True

    def model_kept(self) -> bool:
        """Whether this algorithm, with everything it holds, returns the problem's own model."""
        return self.keeps_model

    def honoured(self) -> frozenset[str]:
        """The context fields this algorithm, with everything it holds, acts on."""
        return self.honours

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


class Transcription(Algorithm):
    """The innermost algorithm of a nest: it transcribes the problem and solves the NLP.

    What a wrapper may ask of it, and nothing more: `meshes_for` (the meshes it would
    solve a problem on), `stages` (collocation nodes per interval of a mesh a wrapper
    makes), `threads` and `with_threads` (a copy for a worker with that many
    cores), and `reusable_nlp`. It honours every context field.
    """

    honours: ClassVar[frozenset[str]] = CONTEXT_FIELDS
    stages: int
    threads: int | None

    @abstractmethod
    def meshes_for(self, problem: Any) -> list[Any]:
        """One collocation mesh per trajectory (segment) of ``problem``."""

    @abstractmethod
    def with_threads(self, threads: int) -> Transcription:
        """This transcription using ``threads`` threads for its function evaluations."""


class Wrapper(Algorithm):
    """An algorithm that holds another (its ``inner`` field) and calls it to do the solves.

    Class attributes:
        hands_down: the context fields it sets for its inner algorithm (which must honour
            them).
        passes_on: the context fields it passes to its inner algorithm as it got them (the
            fields it honours through its inner algorithm).
        record_type: the class of the record its ``solve_problem`` returns, or None for a
            wrapper that returns its inner result unchanged.
    """

    inner: Algorithm
    hands_down: ClassVar[frozenset[str]] = frozenset()
    passes_on: ClassVar[frozenset[str]] = CONTEXT_FIELDS
    record_type: ClassVar[type | None] = None

    def kinds(self) -> frozenset[str]:
        return self.problem_kinds & self.inner.kinds()

    def callbacks(self) -> bool:
        return self.takes_callback and self.inner.callbacks()

    def honoured(self) -> frozenset[str]:
        return self.honours | (self.passes_on & self.inner.honoured())

    def model_kept(self) -> bool:
        return self.keeps_model and self.inner.model_kept()

    def validate(self, problem: Any, context: SolveContext) -> None:
        super().validate(problem, context)
        if not isinstance(self.leaf(), Transcription):
            raise TypeError(
                f"{self.name()}: the innermost algorithm of a nest must be a transcription "
                f"(RadauIIA), got {type(self.leaf()).__name__}"
            )
        ignored = self.hands_down - self.inner.honoured()
        if ignored:
            them = "it" if len(ignored) == 1 else "them"
            raise TypeError(
                f"{self.name()} hands {_listed(ignored)} to {self.inner.name()}, which would "
                f"ignore {them} ({self.inner.name()} honours "
                f"{_listed(self.inner.honoured()) or 'no context field'}); nest "
                f"{self.inner.name()} outside {self.name()} instead"
            )
        self.inner.validate(problem, context)

    def needs_the_model_kept(self) -> None:
        """Raise a TypeError if the inner nest replaces the problem's model (a wrapper whose
        levels exchange parameters of the problem's model calls it in ``validate``)."""
        if not self.inner.model_kept():
            raise TypeError(
                f"{self.name()} needs {self.inner.name()} to train the problem's own model, "
                f"which a level of it replaces (Discovered: by a closed form); nest "
                f"{self.inner.name()} outside {self.name()} instead"
            )

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


def leaf_of(alg: Algorithm) -> Transcription:
    """The innermost algorithm of ``alg``'s (validated) nest: its transcription."""
    leaf = alg.leaf() if isinstance(alg, Wrapper) else alg
    if not isinstance(leaf, Transcription):
        raise TypeError(f"the innermost algorithm must be a transcription, got {leaf!r:.80}")
    return leaf


def unify(result: Any) -> Any:
    """The one solution a nest's result stands for: `final` of it, carrying the records
    of the wrappers on the way in ``records`` (outermost first; a result that is already a
    solution keeps the records it has)."""
    records = []
    while getattr(type(result), "wraps", False):
        records.append(result)
        result = result.solution
    if records:
        result.records = tuple(records)
    return result


_CONTEXT_NAMES = {"warm": "a warm start", "meshes": "meshes", "deadline": "a deadline"}


def _listed(fields: frozenset[str]) -> str:
    return ", ".join(_CONTEXT_NAMES[f] for f in sorted(fields))


_KIND_NAMES = {"dop": "DynamicOptimizationProblem", "training": "TrainingProblem"}
