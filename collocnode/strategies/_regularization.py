"""Choose the weight penalty λ on held-out data: a regularization path, warm-started.

λ of the weight penalty λ‖w‖² (Langenkamp et al. eq. 21a) decides whether a trained network
generalises: too small and the network fits the noise and may leave the data's attractor once
re-simulated, too large and it cannot fit the data.
[`RegularizationPath`][collocnode.RegularizationPath] solves the training problem along a grid of λ
from large to small -- each solve started from the previous solution, as glmnet's path is -- on the
data without a held-out part, scores each trained model by the error of its re-simulation on the
held-out part, keeps the best one whose model passes the consistency check, and (``refit=True``)
solves the whole problem at that λ from the problem's own initial guess, as a user who had known λ
would have. The path stops early once ``patience`` points in a row after the best one scored worse
or failed the check: a network regularized less than one that already overfits rarely does better,
and those points are the expensive ones.

Held-out data (``holdout``):

- a fraction f in (0, 1): the final f of a single trajectory's horizon; the model is trained on
  the rest (the samples there only) and re-simulated from its collocated initial state over the
  whole horizon: a forecast error;
- trajectory indices: those trajectories, each re-simulated from its own initial state (the
  problem's ``initial_state``, else its first sample);
- "auto": with several trajectories every fifth from the last (at least one), with one
  trajectory the final 20 % of its horizon.

The score is the RMS over the held-out samples and fitted columns of the re-simulation's error,
each column divided by its spread in the training data (dimensionless); a re-simulation that
fails scores +inf. A naive predictor is scored the same way: for a held-out window, the last
training sample held constant (persistence); for held-out trajectories, each column's training
mean. A chosen model no better than it is warned of (`NaivePredictorWarning`): its forecast
adds nothing a constant would not give.
"""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

import numpy as np

from .. import _validation as v
from .._status import SolverStatus
from ..algorithm import Algorithm, SolveContext, Wrapper, check_inner, final
from ..models._simulate import SimulationError, simulate
from ..tools import _markdown as markdown
from ..transcription._collocation import RadauIIA

#: the default grid: decades from 0.1 down to 1e-6
DECADES = (1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6)
#: the final share of a single trajectory's horizon held out by default
AUTO_WINDOW = 0.2


class NaivePredictorWarning(UserWarning):
    """The chosen model's held-out error is no better than a naive predictor's (persistence of
    the last training sample, or the training mean)."""


class UnverifiedChoiceWarning(UserWarning):
    """No point of the regularization path passed the consistency check and converged; the
    chosen λ is the one with the least held-out error regardless."""


@dataclass(frozen=True)
class PathPoint:
    """One λ of the path: how its solve ended and how its model scored.

    Attributes:
        regularization: λ.
        status: the solve's status; iterations: its IPOPT iterations; objective: its objective.
        holdout_error: the re-simulation's error on the held-out data (dimensionless, +inf
            where it failed).
        consistent: the consistency check's verdict (None where the check was off).
        largest_deviation: its largest scaled deviation (NaN where it did not run).
        seconds: wall time of the solve and the scoring [s].
    """

    regularization: float
    status: str
    iterations: int
    objective: float
    holdout_error: float
    consistent: bool | None
    largest_deviation: float
    seconds: float

    @property
    def usable(self) -> bool:
        ok = SolverStatus(self.status).ok
        return ok and self.consistent is not False and math.isfinite(self.holdout_error)


@dataclass
class RegularizationPathRecord:
    """The result of [`RegularizationPath`][collocnode.RegularizationPath].

    Attributes:
        solution: the refit on the whole problem at the chosen λ (the chosen point's own result
            with ``refit=False``).
        path: one `PathPoint` per λ, in the order solved.
        chosen: the chosen λ.
        holdout: what was held out, in words.
        verified: whether the chosen point converged and passed the consistency check.
        naive_error: the held-out error of the naive predictor (module docstring), in the
            units of ``holdout_error``.
    """

    wraps: ClassVar[bool] = True

    solution: Any
    path: list[PathPoint]
    chosen: float
    holdout: str
    verified: bool
    times: dict[str, float] = field(default_factory=dict)
    naive_error: float = math.nan

    @property
    def status(self) -> SolverStatus:
        return final(self).status

    @property
    def iterations(self) -> int:
        """IPOPT iterations of the path and the refit."""
        refit = self.solution.iterations if self.times.get("refit") is not None else 0
        return int(sum(p.iterations for p in self.path) + refit)

    def describe(self) -> str:
        """The choice of λ, in one line."""
        verified = "" if self.verified else " (not verified: it failed or was inconsistent)"
        error = next(p.holdout_error for p in self.path if p.regularization == self.chosen)
        return (
            f"RegularizationPath: λ = {self.chosen:g} of {len(self.path)} on held-out "
            f"{self.holdout}{verified}; held-out error {error:.4g}, a naive predictor's "
            f"{self.naive_error:.4g}"
        )

    def table(self) -> str:
        """The path as a Markdown table, the chosen λ marked."""
        header = ("λ", "status", "iterations", "held-out error", "consistent")
        header += ("largest deviation", "time [s]")
        return markdown.table(
            header,
            (
                (
                    f"{p.regularization:g}{' (chosen)' if p.regularization == self.chosen else ''}",
                    p.status,
                    p.iterations,
                    f"{p.holdout_error:.4g}",
                    markdown.VERDICT[p.consistent],
                    f"{p.largest_deviation:.3g}",
                    f"{p.seconds:.2f}",
                )
                for p in self.path
            ),
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "chosen": self.chosen,
            "holdout": self.holdout,
            "verified": self.verified,
            "naive_error": self.naive_error if math.isfinite(self.naive_error) else None,
            "times": dict(self.times),
            "path": [
                {
                    "regularization": p.regularization,
                    "status": p.status,
                    "iterations": p.iterations,
                    "objective": p.objective,
                    "holdout_error": p.holdout_error if math.isfinite(p.holdout_error) else None,
                    "consistent": p.consistent,
                    "largest_deviation": p.largest_deviation,
                    "seconds": p.seconds,
                }
                for p in self.path
            ],
        }

    def figure(self) -> Any:
        """The held-out error against λ, consistent points filled, the chosen one marked."""
        from ..tools import _plotting as plotting

        return plotting.regularization_path(
            [p.regularization for p in self.path],
            [p.holdout_error for p in self.path],
            [p.consistent is not False for p in self.path],
            self.chosen,
        )


@dataclass(frozen=True)
class RegularizationPath(Wrapper):
    """Choose λ of the weight penalty on held-out data (see the module docstring).

    Args:
        inner: the algorithm of every solve (default ``RadauIIA()``).
        lambdas: the grid, solved from the largest to the smallest (default: decades from 0.1
            to 1e-6); positive numbers, at least one.
        holdout: "auto", a fraction of a single trajectory's horizon in (0, 1), or a sequence
            of trajectory indices.
        refit: solve the whole problem at the chosen λ (from the problem's own guess).
        patience: stop the path after this many points in a row that score worse than the
            best one or fail the check (0: solve every λ).

    Returns (from ``solve``) a
    [`RegularizationPathRecord`][collocnode.strategies.RegularizationPathRecord].
    """

    hands_down: ClassVar[frozenset[str]] = frozenset({"warm"})
    honours: ClassVar[frozenset[str]] = frozenset({"warm"})
    # the held-out parts have trajectories of their own: meshes per trajectory do not apply
    passes_on: ClassVar[frozenset[str]] = frozenset({"deadline"})
    record_type: ClassVar[type] = RegularizationPathRecord

    problem_kinds: ClassVar[frozenset[str]] = frozenset({"training"})

    inner: Algorithm = field(default_factory=RadauIIA)
    lambdas: Sequence[float] = DECADES
    holdout: Any = "auto"
    refit: bool = True
    patience: int = 2

    def __post_init__(self) -> None:
        check_inner(self, self.inner)
        if isinstance(self.lambdas, (str, bytes)) or not isinstance(self.lambdas, Sequence):
            raise TypeError(f"lambdas must be a sequence of numbers, got {self.lambdas!r:.80}")
        if not self.lambdas:
            raise ValueError("lambdas must hold at least one λ, got an empty grid")
        grid = [v.positive_float(f"lambdas[{i}]", x) for i, x in enumerate(self.lambdas)]
        object.__setattr__(self, "lambdas", tuple(sorted(set(grid), reverse=True)))
        h = self.holdout
        if isinstance(h, str):
            v.choice("holdout", h, ("auto",))
        elif isinstance(h, Sequence):
            object.__setattr__(
                self,
                "holdout",
                tuple(v.nonnegative_int(f"holdout[{i}]", k) for i, k in enumerate(h)),
            )
            if not self.holdout:
                raise ValueError("holdout must name at least one trajectory, got none")
        elif not 0 < v.positive_float("holdout", h) < 1:
            raise ValueError(f"holdout must be a fraction in (0, 1) of the horizon, got {h!r}")
        if not isinstance(self.refit, bool):
            raise TypeError(f"refit must be True or False, got {self.refit!r}")
        v.nonnegative_int("patience", self.patience)

    def validate(self, problem: Any, context: SolveContext) -> None:
        super().validate(problem, context)
        _Split.of(problem, self.holdout)  # one clear error if it leaves nothing to train on

    def solve_problem(self, problem: Any, context: SolveContext) -> RegularizationPathRecord:
        split = _Split.of(problem, self.holdout)
        path: list[PathPoint] = []
        results: list[Any] = []
        warm = context.warm
        t_path = time.perf_counter()
        for lam in self.lambdas:
            t0 = time.perf_counter()
            part = replace(split.train, regularization=lam)
            result = self.inner.solve_problem(part, context.but(warm=warm))
            trained = final(result)
            if context.check is not None and trained.consistency is None:
                trained.consistency = trained.check_consistency(context.check)
            report = trained.consistency
            path.append(
                PathPoint(
                    regularization=lam,
                    status=trained.status.value,
                    iterations=int(result.iterations),
                    objective=float(trained.objective),
                    holdout_error=split.error(trained),
                    consistent=None if report is None else bool(report.consistent),
                    largest_deviation=float("nan") if report is None else report.largest,
                    seconds=time.perf_counter() - t0,
                )
            )
            results.append(result)
            if np.all(np.isfinite(trained.p)):
                warm = result
            if self.patience and _worse_since_best(path) >= self.patience:
                break
        times = {"path": time.perf_counter() - t_path}
        k, verified = _choose(path)
        if not verified:
            warnings.warn(
                "no λ of the path both converged and gave a consistent model; the one with the "
                f"least held-out error, {path[k].regularization:g}, is kept",
                UnverifiedChoiceWarning,
                stacklevel=3,
            )
        chosen, solution = path[k].regularization, results[k]
        naive = split.naive_error()
        if not path[k].holdout_error < naive:
            warnings.warn(
                f"the chosen model's held-out error, {path[k].holdout_error:.4g}, is no better "
                f"than a naive predictor's, {naive:.4g} ({split.naive_name()}, on "
                f"{split.describe()}): its forecast adds nothing a constant would not",
                NaivePredictorWarning,
                stacklevel=3,
            )
        if self.refit:
            t0 = time.perf_counter()
            whole = replace(problem, regularization=chosen)
            solution = self.inner.solve_problem(whole, context)
            times["refit"] = time.perf_counter() - t0
        return RegularizationPathRecord(
            solution, path, chosen, split.describe(), verified, times, naive
        )


def _worse_since_best(path: list[PathPoint]) -> int:
    """Points after the best usable one that scored worse or are not usable."""
    usable = [k for k, p in enumerate(path) if p.usable]
    if not usable:
        return 0
    best = min(usable, key=lambda k: path[k].holdout_error)
    return len(path) - 1 - best


def _choose(path: list[PathPoint]) -> tuple[int, bool]:
    """The index of the chosen point and whether it is verified (converged and consistent)."""
    usable = [k for k, p in enumerate(path) if p.usable]
    if usable:
        return min(usable, key=lambda k: path[k].holdout_error), True
    finite = [k for k, p in enumerate(path) if math.isfinite(p.holdout_error)]
    if finite:
        return min(finite, key=lambda k: path[k].holdout_error), False
    return 0, False


@dataclass(frozen=True)
class _Split:
    """The problem without its held-out part, and how a model scores on that part."""

    whole: Any
    train: Any
    held: tuple[int, ...]  # held-out trajectories (of ``whole``)
    cut: float | None  # the end of the training window of a single trajectory

    @classmethod
    def of(cls, problem: Any, holdout: Any) -> _Split:
        n = problem.n_trajectories
        if isinstance(holdout, str):
            holdout = AUTO_WINDOW if n == 1 else tuple(range(n - 1, -1, -5))
        if isinstance(holdout, tuple):
            bad = [k for k in holdout if k >= n]
            if bad:
                raise ValueError(
                    f"holdout: trajectory {bad[0]} is out of range for a problem with {n}"
                )
            rest = [k for k in range(n) if k not in holdout]
            if not rest:
                raise ValueError(
                    f"holdout {holdout} leaves no trajectory to train on (the problem has {n})"
                )
            return cls(problem, problem.subset(rest), tuple(sorted(holdout)), None)
        if n != 1:
            raise ValueError(
                f"holdout={holdout!r} holds out the end of one trajectory, the problem has {n}; "
                "give the indices of trajectories to hold out"
            )
        t0, tf = problem.horizon
        t = problem.trajectories[0].t
        cut = t0 + (1.0 - float(holdout)) * (tf - t0)
        kept = t[(t >= t0) & (t <= cut)]
        if kept.size < 2 or not np.any(t > cut):
            raise ValueError(
                f"holdout={holdout!r} of [{t0:g}, {tf:g}] leaves {kept.size} samples to train "
                f"on and {int(np.sum(t > cut))} to score; hold out a share in between"
            )
        cut = float(kept[-1])
        return cls(problem, problem.window(t0, cut, cut=True), (), cut)

    def describe(self) -> str:
        if self.cut is not None:
            t0, tf = self.whole.horizon
            return f"the final {(tf - self.cut) / (tf - t0):.0%} of the horizon (t > {self.cut:g})"
        return f"trajectories {list(self.held)}"

    def _rollout(self, trained: Any, k: int) -> np.ndarray | None:
        """The trained model re-simulated over the samples of trajectory k of the whole
        problem (from its collocated start for a window, else its own initial state); None
        where the simulation fails."""
        whole, data = self.whole, self.whole.trajectories[k]
        t0, tf = whole.horizon_of(k)
        t = data.t[(data.t >= t0) & (data.t <= tf)]
        if self.cut is not None:
            x0 = trained.solution.states(t[0], 0)
        else:
            given = whole.initial_states()[k]
            x0 = data.x[0] if given is None else given
        try:
            sim = simulate(
                whole.model, trained.p, t, x0, inputs=whole.input_function(k), method="cvodes"
            )
        except (SimulationError, ValueError):
            return None
        cols = [sim.x[:, i] if kind == "x" else sim.y[:, i] for kind, i in whole.columns]
        return np.column_stack(cols)

    def naive_name(self) -> str:
        return "the last training sample held" if self.cut is not None else "the training mean"

    def _naive(self, k: int, n: int) -> np.ndarray:
        """The naive predictor's values at the n samples of trajectory k (module docstring)."""
        if self.cut is not None:
            data = self.whole.trajectories[0]
            targets, seen = self.whole.targets(0), self.whole.observed(0)
            before = np.flatnonzero(data.t <= self.cut)
            last = np.array(
                [targets[before[seen[before, c]][-1], c] for c in range(targets.shape[1])]
            )
            return np.tile(last, (n, 1))
        train = self.train
        values = np.vstack([train.targets(j) for j in range(train.n_trajectories)])
        seen = np.vstack([train.observed(j) for j in range(train.n_trajectories)])
        mean = np.array([values[seen[:, c], c].mean() for c in range(values.shape[1])])
        return np.tile(mean, (n, 1))

    def naive_error(self) -> float:
        """The held-out score of the naive predictor."""
        return self.error(None)

    def error(self, trained: Any) -> float:
        """The held-out score of ``trained`` (module docstring); of the naive predictor for
        None."""
        scales = _spread(self.train)
        squares, count = 0.0, 0
        for k in self.held or (0,):
            if trained is None:
                data = self.whole.trajectories[k]
                t0, tf = self.whole.horizon_of(k)
                q = self._naive(k, int(np.sum((data.t >= t0) & (data.t <= tf))))
            else:
                q = self._rollout(trained, k)
            if q is None or not np.all(np.isfinite(q)):
                return math.inf
            data = self.whole.trajectories[k]
            t0, tf = self.whole.horizon_of(k)
            inside = (data.t >= t0) & (data.t <= tf)
            target = self.whole.targets(k)[inside]
            seen = self.whole.observed(k)[inside]
            if self.cut is not None:
                seen = seen & (data.t[inside] > self.cut)[:, None]
            residual = np.where(seen, (q - target) / scales, 0.0)
            squares += float(np.sum(residual**2))
            count += int(seen.sum())
        return math.sqrt(squares / count) if count else math.inf


def _spread(problem: Any) -> np.ndarray:
    """Each fitted column's standard deviation over the observed training samples (1 where it
    is constant)."""
    values = np.vstack([problem.targets(k) for k in range(problem.n_trajectories)])
    seen = np.vstack([problem.observed(k) for k in range(problem.n_trajectories)])
    s = np.array([values[seen[:, c], c].std() for c in range(values.shape[1])])
    return np.where(s > 0, s, 1.0)
