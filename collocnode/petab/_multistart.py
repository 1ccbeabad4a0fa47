"""Multistart of collocation fits over an imported problem's bounds, and its waterfall plot.

The community's protocol (pyPESTO, PEtab.jl, Data2Dynamics): starts uniform on each parameter's
estimation scale within its bounds, one local fit from each, the fits sorted by objective; the
*waterfall* plot shows the sorted objectives, and a plateau of starts at the lowest value says
that the best optimum was found more than once.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from concurrent.futures import Executor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from ._problem import PetabFit, PetabProblem


@dataclass(frozen=True)
class StartResult:
    """One start: its θ, and the fit or why there is none."""

    start: np.ndarray
    fit: PetabFit | None
    error: str = ""

    @property
    def objective(self) -> float:
        return np.inf if self.fit is None else self.fit.objective


@dataclass(frozen=True)
class MultistartResult:
    """The starts of a multistart, sorted by their PEtab-way objective (failed starts last).

    Attributes:
        results: one [`StartResult`][collocnode.petab.StartResult] per start that ran, best
            first.
        seconds: wall time of the whole multistart [s].
        not_started: starts drawn but not begun because the multistart's ``seconds`` budget
            was spent (0 without a budget).
    """

    results: tuple[StartResult, ...]
    seconds: float
    not_started: int = 0

    @property
    def best(self) -> PetabFit:
        fit = self.results[0].fit
        if fit is None:
            raise RuntimeError(f"no start succeeded: {self.results[0].error}")
        return fit

    @property
    def objectives(self) -> np.ndarray:
        """The sorted objectives (inf for a start without a fit)."""
        return np.array([r.objective for r in self.results])

    def converged_fraction(self, tolerance: float = 1e-3) -> float:
        """The fraction of starts within ``tolerance`` (relative) of the best objective."""
        values = self.objectives
        best = values[0]
        return float(np.mean(values - best <= tolerance * max(abs(best), 1e-12)))

    def summary(self) -> str:
        values = self.objectives
        finite = values[np.isfinite(values)]
        text = f"{len(values)} starts in {self.seconds:.1f} s; "
        if self.not_started:
            text += f"{self.not_started} not started (time budget); "
        if not finite.size:
            return text + "no start gave a fit"
        return text + (
            f"best objective {finite[0]:.6g}, reached by {self.converged_fraction():.0%} "
            f"of the starts (0.1 %); {len(values) - finite.size} without a fit"
        )


def _now() -> float:
    """The multistart's clock [s] (the budget's; a test replaces it)."""
    return time.perf_counter()


def _fit_one(problem: PetabProblem, theta0: np.ndarray, options: dict[str, Any]) -> StartResult:
    try:
        return StartResult(theta0, problem.fit(start=theta0, **options))
    except Exception as exc:  # a start CVODES cannot simulate is a failed start, not a crash
        return StartResult(theta0, None, f"{type(exc).__name__}: {exc}"[:300])


def multistart(
    problem: PetabProblem,
    n_starts: int,
    seed: int = 0,
    executor: Executor | None = None,
    callback: Callable[[int, StartResult], None] | None = None,
    seconds: float | None = None,
    **fit_options: Any,
) -> MultistartResult:
    """``n_starts`` collocation fits from starts uniform on the estimation scale.

    The starts are the first ``n_starts`` draws of ``seed`` whatever the budget, so a run with
    a larger budget repeats a smaller one's starts and adds to them.

    Args:
        problem: the imported problem.
        n_starts: number of starts.
        seed: seeds the starts
            ([`PetabProblem.sample_starts`][collocnode.petab.PetabProblem.sample_starts]).
        executor: runs the fits (a process pool, a Dask ``distributed`` client's executor);
            None: one after the other in this process. With an executor each worker imports
            the problem from its YAML file, and the fits come back without their collocation
            ``solution`` (it holds the problem's closures, which do not pickle).
        callback: called with (index, result) as each start finishes.
        seconds: a wall-clock budget for the whole multistart [s], or None: no start begins
            once it is spent (a fit under way finishes, within its own ``max_wall_time``); the
            starts left are counted in ``not_started``. With an executor, starts still
            queued at the budget are cancelled.
        fit_options: passed to [`PetabProblem.fit`][collocnode.petab.PetabProblem.fit]
            (``intervals``, ``stages``, ``ipopt``).
    """
    if seconds is not None and not (np.isfinite(seconds) and seconds > 0):
        raise ValueError(f"seconds must be a positive number of seconds or None, got {seconds!r}")
    t0 = _now()
    deadline = np.inf if seconds is None else t0 + seconds
    starts = problem.sample_starts(n_starts, seed)
    if executor is None:
        done: Iterable[StartResult] = (
            _fit_one(problem, s, fit_options) for s in starts if _now() < deadline
        )
    else:
        done = _on_executor(executor, str(problem.path), starts, fit_options, deadline)
    results = []
    for k, result in enumerate(done):
        results.append(result)
        if callback is not None:
            callback(k, result)
    ordered = sorted(results, key=lambda r: (not np.isfinite(r.objective), r.objective))
    return MultistartResult(tuple(ordered), _now() - t0, n_starts - len(results))


def _on_executor(
    executor: Executor,
    path: str,
    starts: np.ndarray,
    options: dict[str, Any],
    deadline: float,
) -> Iterable[StartResult]:
    """The starts' results in start order; at the deadline the queued ones are cancelled."""
    futures = [executor.submit(_fit_from_file, path, s, options) for s in starts]
    for future in futures:
        if _now() >= deadline:
            future.cancel()  # a fit under way is not cancelled and still reports
        if future.cancelled():
            continue
        yield future.result()


def _fit_from_file(path: str, theta0: np.ndarray, options: dict[str, Any]) -> StartResult:
    from ._problem import import_petab

    result = _fit_one(import_petab(path), theta0, options)
    if result.fit is None:
        return result
    # the collocation solution holds the problem's closures, which do not pickle
    return replace(result, fit=replace(result.fit, solution=None))


def waterfall(result: MultistartResult, path: str | Path, title: str = "") -> Path:
    """The waterfall plot of ``result`` (objective minus the best + 1, log scale, against the
    start's rank; failed starts are left out) written to ``path`` (PNG)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    values = result.objectives
    finite = values[np.isfinite(values)]
    fig, ax = plt.subplots(figsize=(5.0, 3.5))
    if finite.size:
        ranks = np.arange(1, finite.size + 1)
        ax.plot(ranks, finite - finite[0] + 1.0, "o-", color="C0", markersize=4)
    ax.set_yscale("log")
    ax.set_xlabel("start (sorted by objective)")
    ax.set_ylabel("objective − best + 1")
    failed = values.size - finite.size
    ax.set_title(title + (f" ({failed} starts without a fit)" if failed else ""))
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path
