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
   ([`UntilConsistent`][collocnode.UntilConsistent], unless ``check=False``);
5. where the model is still inconsistent, or its re-simulation explains none of some fitted
   column's variance (no better than the column's mean), a few more solves of that nest from
   perturbed starts, keeping the best (consistent, converged, least objective): a converged
   solve whose model the re-simulation does not reproduce, or that does not fit, is often a
   spurious optimum of the collocation NLP (on an SIR model with I(0) fitted, a trajectory
   resting on the unstable equilibrium I = 0), which other starts leave.

A dynamic optimization problem gets the collocation on the fallback mesh alone. Every choice is
a plain algorithm object of its own; `AutoRecord.algorithm` is the nest that ran, so a
run can be repeated without [`Auto`][collocnode.Auto].
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

import numpy as np

from .. import _validation as v
from .._status import SolverStatus
from ..algorithm import Algorithm, SolveContext, Wrapper, check_inner, final
from ..transcription._collocation import RadauIIA
from ..transcription._ipopt.options import IpoptOptions
from ._multistart import StartRecord
from ._phases import WarmStarted
from ._regularization import RegularizationPath, RegularizationPathRecord
from ._until_consistent import UntilConsistent


@dataclass
class AutoRecord:
    """The result of [`Auto`][collocnode.Auto].

    Attributes:
        solution: the result of the final solve (a
            [`UntilConsistentRecord`][collocnode.strategies.UntilConsistentRecord] where it refined
            until consistent).
        algorithm: the nest of the final solve, as plain algorithm objects.
        path: the regularization path that chose λ, or None where the problem gave λ.
        times: wall times [s] of the path, of the final solve and of the restarts.
        starts: where the first final solve's model was suspect (inconsistent, or no better
            than a column's mean), one record per solve of
            the final nest (start 0 the first, then the restarts from perturbed starts), the
            kept one marked by ``kept``; empty where no restart ran.
        kept: the index in ``starts`` of the kept solve (0 where no restart ran or none did
            better).
    """

    wraps: ClassVar[bool] = True

    solution: Any
    algorithm: Algorithm
    path: RegularizationPathRecord | None = None
    times: dict[str, float] = field(default_factory=dict)
    starts: list[StartRecord] = field(default_factory=list)
    kept: int = 0

    @property
    def status(self) -> SolverStatus:
        return final(self).status

    @property
    def iterations(self) -> int:
        path = 0 if self.path is None else self.path.iterations
        restarts = sum(s.iterations for k, s in enumerate(self.starts) if k != self.kept)
        return int(self.solution.iterations) + path + restarts

    def describe(self) -> str:
        """What was chosen, in one line."""
        trained = final(self)
        mesh = trained.solution.meshes
        intervals = sum(m.n_intervals for m in mesh)
        lam = getattr(trained.problem, "regularization", None)
        text = f"Auto: mesh of {intervals} intervals from the data"
        if lam is not None:
            text += f"; λ = {lam:g}" + (" (held-out data)" if self.path is not None else "")
        if self.starts:
            first, kept = self.starts[0], self.starts[self.kept]
            text += (
                f"; the first model was suspect (objective {first.objective:.4g}, "
                f"{'consistent' if first.consistent else 'inconsistent'}), "
                f"{len(self.starts) - 1} restarts from perturbed starts: "
                + (
                    f"start {self.kept} kept (objective {kept.objective:.4g}, "
                    f"{'consistent' if kept.consistent else 'inconsistent'})"
                    if self.kept
                    else "none did better"
                )
            )
        return text + f"; algorithm: {self.algorithm!r:.200}"


@dataclass(frozen=True)
class Auto(Wrapper):
    """Choose the mesh, λ and the guess from the problem (see the module docstring).

    Args:
        inner: the collocation leaf (default ``RadauIIA(intervals="auto")``, IPOPT silent:
            a progress callback, ``solve(..., callback=ProgressBar())``, shows the iterations).
        warm_start: regress on the smoothed data first where the problem allows it.
        until_consistent: the most mesh refinements of the final solve (0: none).
        restarts: the most further solves of the final nest, each from a perturbed start,
            where its model is inconsistent or explains none of a fitted column's variance
            (0: none; they need the consistency check). The
            fitted physical parameters of the guess are multiplied by a log-normal factor
            (``restart_spread`` its standard deviation, clipped into their bounds), network
            weights drawn afresh from seeds spawned from ``solve``'s seed. They stop at the
            first model that is neither, or the deadline.
        restart_spread: the standard deviation of the log of that factor (> 0).
        path: the regularization path used when the problem gives no λ (its refit is off:
            the final solve is the refit).

    Examples:
        With λ given, ``Auto`` chooses the mesh from the data and the start (a regression warm
        start), refines until consistent, and says what it chose:

        ```python
        from collocnode import Auto, NeuralODE, TrainingProblem, problems, solve
        from collocnode.nn import MLP

        system = problems.get("vdp")
        split = system.generate(noise=0.1, seed=0, dt=0.1, n_train=51)  # 51 samples on [0, 5] s
        model = NeuralODE([MLP((2, 5, 5, 1), "sigmoid"), MLP((2, 5, 5, 1), "sigmoid")])
        problem = TrainingProblem(model, split.train, regularization=1e-4, initial_state=system.x0)
        sol = solve(problem, Auto(), seed=0)  # λ given: Auto chooses the mesh and the start
        print(sol.describe())
        ```
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
    restarts: int = 4
    restart_spread: float = 0.5

    def __post_init__(self) -> None:
        check_inner(self, self.inner)
        if not isinstance(self.warm_start, bool):
            raise TypeError(f"warm_start must be True or False, got {self.warm_start!r}")
        if not isinstance(self.path, RegularizationPath):
            raise TypeError(f"path must be a RegularizationPath, got {self.path!r:.80}")
        object.__setattr__(self, "restarts", v.nonnegative_int("restarts", self.restarts))
        v.positive_float("restart_spread", self.restart_spread)

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
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = alg.solve_problem(problem, context)
        times["solve"] = time.perf_counter() - t0
        starts: list[StartRecord] = []
        kept = 0
        if self._restarts_apply(problem, result, context):
            t0 = time.perf_counter()
            result, caught, starts, kept = self._restart(
                alg, problem, context, result, caught, times["solve"]
            )
            times["restarts"] = time.perf_counter() - t0
        for w in caught:  # the kept solve's warnings only
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno, source=w.source)
        return AutoRecord(result, alg, path, times, starts, kept)

    def _restarts_apply(self, problem: Any, result: Any, context: SolveContext) -> bool:
        """Whether the final solve's model calls for restarts: a checked training problem,
        time left, and a model that is `_suspect`."""
        if not self.restarts or problem.problem_kind != "training" or context.check is None:
            return False
        if context.deadline is not None and time.perf_counter() >= context.deadline:
            return False
        return _suspect(final(result))

    def _restart(
        self,
        alg: Algorithm,
        problem: Any,
        context: SolveContext,
        first: Any,
        first_warnings: list[Any],
        first_seconds: float,
    ) -> tuple[Any, list[Any], list[StartRecord], int]:
        """The restarts of `restarts`: the kept result, its warnings, one record per solve
        (the first included) and the kept one's index."""
        outcomes = [(first, first_warnings)]
        records = [StartRecord.of(0, context.seed, first, first_seconds)]
        seeds = np.random.SeedSequence(context.seed).spawn(self.restarts)
        for k, child in enumerate(seeds, start=1):
            if context.deadline is not None and time.perf_counter() >= context.deadline:
                break
            seed = int(child.generate_state(1)[0])
            start = replace(problem, params_guess=self._perturbed(problem, seed))
            t0 = time.perf_counter()
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                result = alg.solve_problem(start, context.but(seed=seed, warm=None))
            records.append(StartRecord.of(k, seed, result, time.perf_counter() - t0))
            outcomes.append((result, caught))
            if not _suspect(final(result)):
                break
        best = min(range(len(records)), key=lambda k: records[k].rank)
        result, caught = outcomes[best]
        return result, caught, records, best

    def _perturbed(self, problem: Any, seed: int) -> np.ndarray:
        """A start's parameter vector: the problem's guess (or the model's weights drawn with
        ``seed``), its fitted physical parameters times exp(N(0, restart_spread²)) within
        their bounds."""
        model = problem.model
        rng = np.random.default_rng(seed)
        p = model.init_params(rng)
        if problem.params_guess is not None:
            p = np.array(problem.params_guess, dtype=float)
        lb, ub = model.param_bounds()
        physical = np.arange(model.n_weights, model.n_params)
        factor = np.exp(self.restart_spread * rng.standard_normal(physical.size))
        p[physical] = np.clip(p[physical] * factor, lb[physical], ub[physical])
        return p


def _suspect(trained: Any) -> bool:
    """Whether a converged-looking trained model is likely a spurious optimum: inconsistent
    with its collocation trajectory, or a re-simulation that explains no more of some fitted
    column than the column's mean (``TrainingSolution.explained`` at most 0)."""
    report = trained.consistency
    if report is not None and not report.consistent:
        return True
    return bool(np.any(trained.explained() <= 0.0))


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
