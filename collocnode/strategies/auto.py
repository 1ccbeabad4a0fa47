"""The algorithm of a first solve: what ``solve(problem)`` does when no algorithm is given.

A newcomer's problem should not need the retries only an expert knows to make (λ, the mesh,
the guess). [`Auto`][collocnode.Auto] chooses them from the problem, at solve time, and says what it
chose:

1. the mesh from the data (``RadauIIA(intervals="auto")``: as fine as the sampling and the
   signal's rate of change ask for);
2. for a training problem whose ``regularization`` is None and whose model has network weights,
   λ on held-out data ([`RegularizationPath`][collocnode.RegularizationPath] without its refit);
3. a warm start by regression on the smoothed data ([`WarmStarted`][collocnode.WarmStarted]) where
   every state is fitted and no value is missing;
4. the solve at that λ, refined until the model is consistent
   ([`UntilConsistent`][collocnode.UntilConsistent], unless ``check=False``).

A dynamic optimization problem gets the collocation on the fallback mesh alone. Every choice is
a plain algorithm object of its own; `AutoRecord.algorithm` is the nest that ran, so a
run can be repeated without [`Auto`][collocnode.Auto].
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

from ..algorithm import Algorithm, SolveContext, Wrapper, check_inner, final
from ..status import SolverStatus
from ..transcription.collocation import RadauIIA
from ..transcription.ipopt.options import IpoptOptions
from .phases import WarmStarted
from .regularization import RegularizationPath, RegularizationPathRecord
from .until_consistent import UntilConsistent


@dataclass
class AutoRecord:
    """The result of [`Auto`][collocnode.Auto].

    Attributes:
        solution: the result of the final solve (a
            [`UntilConsistentRecord`][collocnode.strategies.UntilConsistentRecord] where it refined
            until consistent).
        algorithm: the nest of the final solve, as plain algorithm objects.
        path: the regularization path that chose λ, or None where the problem gave λ.
        times: wall times [s] of the path and of the final solve.
    """

    wraps: ClassVar[bool] = True

    solution: Any
    algorithm: Algorithm
    path: RegularizationPathRecord | None = None
    times: dict[str, float] = field(default_factory=dict)

    @property
    def status(self) -> SolverStatus:
        return final(self).status

    @property
    def iterations(self) -> int:
        path = 0 if self.path is None else self.path.iterations
        return int(self.solution.iterations) + path

    def describe(self) -> str:
        """What was chosen, in one line."""
        trained = final(self)
        mesh = trained.solution.meshes
        intervals = sum(m.n_intervals for m in mesh)
        lam = getattr(trained.problem, "regularization", None)
        text = f"Auto: mesh of {intervals} intervals from the data"
        if lam is not None:
            text += f"; λ = {lam:g}" + (" (held-out data)" if self.path is not None else "")
        return text + f"; algorithm: {self.algorithm!r:.200}"


@dataclass(frozen=True)
class Auto(Wrapper):
    """Choose the mesh, λ and the guess from the problem (see the module docstring).

    Args:
        inner: the collocation leaf (default ``RadauIIA(intervals="auto")``, IPOPT silent:
            a progress callback, ``solve(..., callback=ProgressBar())``, shows the iterations).
        warm_start: regress on the smoothed data first where the problem allows it.
        until_consistent: the most mesh refinements of the final solve (0: none).
        path: the regularization path used when the problem gives no λ (its refit is off:
            the final solve is the refit).
    """

    # the regularization path solves parts of the data: meshes per trajectory do not apply
    passes_on: ClassVar[frozenset[str]] = frozenset({"warm", "deadline"})
    record_type: ClassVar[type] = AutoRecord

    inner: Algorithm = field(
        default_factory=lambda: RadauIIA(intervals="auto", ipopt=IpoptOptions(print_level=0))
    )
    warm_start: bool = True
    until_consistent: int = 3
    path: RegularizationPath = field(default_factory=lambda: RegularizationPath(refit=False))

    def __post_init__(self) -> None:
        check_inner(self, self.inner)
        if not isinstance(self.warm_start, bool):
            raise TypeError(f"warm_start must be True or False, got {self.warm_start!r}")
        if not isinstance(self.path, RegularizationPath):
            raise TypeError(f"path must be a RegularizationPath, got {self.path!r:.80}")

    def final_algorithm(self, problem: Any, context: SolveContext) -> Algorithm:
        """The nest of the final solve of ``problem``."""
        alg = self.inner
        if problem.problem_kind != "training":
            return alg
        if self.warm_start and _regression_applies(problem):
            alg = WarmStarted(alg)
        if self.until_consistent and context.check is not None:
            alg = UntilConsistent(alg, max_rounds=self.until_consistent, restart="never")
        return alg

    def validate(self, problem: Any, context: SolveContext) -> None:
        super().validate(problem, context)
        nests = [self.final_algorithm(problem, context)]
        if _chooses_lambda(problem):
            nests.append(replace(self.path, inner=self.inner, refit=False))
        for nest in nests:
            try:
                nest.validate(problem, context)
            except TypeError as exc:
                raise TypeError(
                    f"Auto solves by {nest.name()}({self.inner.name()}): {exc}"
                ) from None

    def solve_problem(self, problem: Any, context: SolveContext) -> AutoRecord:
        times: dict[str, float] = {}
        path = None
        if _chooses_lambda(problem):
            t0 = time.perf_counter()
            leaf = self.inner
            if self.warm_start and _regression_applies(problem):
                leaf = WarmStarted(leaf)
            search = replace(self.path, inner=leaf, refit=False)
            search.validate(problem, context)
            path = search.solve_problem(problem, context)
            problem = replace(problem, regularization=path.chosen)
            times["path"] = time.perf_counter() - t0
        alg = self.final_algorithm(problem, context)
        alg.validate(problem, context)
        t0 = time.perf_counter()
        result = alg.solve_problem(problem, context)
        times["solve"] = time.perf_counter() - t0
        return AutoRecord(result, alg, path, times)


def _chooses_lambda(problem: Any) -> bool:
    """Whether λ is to be chosen: a training problem that gives none, with network weights for
    it to act on."""
    return (
        problem.problem_kind == "training"
        and problem.regularization is None
        and problem.model.n_weights > 0
    )


def _regression_applies(problem: Any) -> bool:
    """Whether the warm start's regression can run: every state fitted, nothing missing."""
    if problem.mask is not None:
        return False
    fitted = {i for kind, i in problem.columns if kind == "x"}
    return len(fitted) == problem.model.n_states
