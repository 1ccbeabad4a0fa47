"""The collocation settings every recipe, experiment and comparison row shares, declared once.

A recipe embeds one `CollocationSettings` (its defaults are the recipe's paper settings) and
turns it into the algorithm object with `CollocationSettings.algorithm`; the experiments'
and the comparison's options embed the recipe, so no settings field is declared twice.
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import _validation as v
from ..algorithm import Algorithm
from ..strategies import StopWhenStagnant, TimeLimit, WarmStarted
from ..training._warmstart import HESSIANS, METHODS
from ..transcription import IpoptOptions, RadauIIA
from ..transcription._nlp.hessian import HESSIAN_NAMES, hessian_from_name
from ..transcription._radau import MAX_STAGES


@dataclass(frozen=True)
class CollocationSettings:
    """Mesh, IPOPT and regularization settings of a collocation training run.

    Attributes:
        intervals: mesh intervals over the training horizon (None: the recipe's default, e.g.
            one per sample interval).
        stages: Radau IIA stages per interval (order 2·stages − 1).
        spectral: > 0 replaces the mesh by one interval with this many fLGR nodes.
        regularization: λ of the weight penalty λ‖w‖² (None: the recipe's default).
        regularization_path: choose λ on held-out data instead
            ([`RegularizationPath`][collocnode.RegularizationPath] with its defaults: decades from
            0.1 to 1e-6, the final 20 % of a single trajectory's horizon or every fifth trajectory
            held out) and train the whole problem at the chosen λ; ``regularization`` is then
            not used. The recipes that support it report the path (a table and a figure).
        tol: IPOPT's convergence tolerance.
        max_iter: IPOPT's iteration limit (of each phase, for multi-phase recipes).
        jit: compile the node functions with gcc (cached on disk): True, False, or "auto"
            (where it pays; ``RadauIIA``'s ``jit``).
        hessian: "exact", "limited-memory" (IPOPT's L-BFGS) or a partial quasi-Newton update of
            the parameter blocks: "sr1", "bfgs" (H_pp) and "sr1-xp", "bfgs-xp" (H_xp too).
        backend: "casadi" or "cyipopt".
        mumps_ordering: MUMPS's fill-reducing ordering of the KKT matrix, or "trial": chosen
            per solve by a short timed trial of "auto" and "metis"
            ([`OrderingTrial`][collocnode.OrderingTrial]).
        print_level: IPOPT's output level (0 silent, 5 one line per iteration).
        max_wall_time: wall-time cap of the whole training [s], or None.
        stagnation_window: > 0 stops each phase once its objective moved by less than
            ``stagnation_rtol`` (relative) over this many iterations
            ([`StopOnStagnation`][collocnode.StopOnStagnation], the quarter-vehicle paper's
            "terminated early if no further significant improvement in objective"); the status
            is then "stopped_by_callback", never "success". 0 (the default): off.
        stagnation_rtol: the relative change of that rule.
    """

    intervals: int | None = None
    stages: int = 3
    spectral: int = 0
    regularization: float | None = None
    regularization_path: bool = False
    tol: float = 1e-7
    max_iter: int = 200
    jit: bool | str = False
    hessian: str = "exact"
    backend: str = "casadi"
    mumps_ordering: str = "auto"
    print_level: int = 0
    max_wall_time: float | None = None
    stagnation_window: int = 0
    stagnation_rtol: float = 1e-4

    def __post_init__(self) -> None:
        if self.intervals is not None:
            v.positive_int("intervals", self.intervals)
        if v.nonnegative_int("spectral", self.spectral) > MAX_STAGES:
            raise ValueError(f"spectral must be at most {MAX_STAGES} nodes, got {self.spectral}")
        if self.regularization is not None:
            v.nonnegative_float("regularization", self.regularization)
        if not isinstance(self.regularization_path, bool):
            raise TypeError(
                f"regularization_path must be True or False, got {self.regularization_path!r}"
            )
        v.choice("hessian", self.hessian, HESSIAN_NAMES)
        v.positive_float("stagnation_rtol", self.stagnation_rtol)
        if v.nonnegative_int("stagnation_window", self.stagnation_window) > self.max_iter:
            raise ValueError(
                f"stagnation_window = {self.stagnation_window} is longer than max_iter = "
                f"{self.max_iter}: the objective could never be seen to stagnate"
            )
        # mesh size, stages, tol, max_iter, jit, backend, ordering, print level, wall time
        self.algorithm(self.intervals or 1)

    def lam(self, default: float) -> float:
        """λ: ``regularization``, or the recipe's ``default`` where it is None."""
        return default if self.regularization is None else self.regularization

    def algorithm(
        self, intervals: int | None = None, max_wall_time: float | None = None
    ) -> RadauIIA:
        """The [`RadauIIA`][collocnode.RadauIIA] of these settings with ``intervals`` mesh intervals
        (default: ``self.intervals``) and IPOPT's wall-time limit ``max_wall_time`` (default: the
        settings' own)."""
        n = self.intervals if intervals is None else intervals
        if n is None:
            raise ValueError("intervals must be given: these settings leave them to the recipe")
        ipopt = IpoptOptions(
            tol=self.tol,
            max_iter=self.max_iter,
            backend=self.backend,
            print_level=self.print_level,
            mumps_ordering=self.mumps_ordering,
            max_wall_time=self.max_wall_time if max_wall_time is None else max_wall_time,
        )
        hessian = hessian_from_name(self.hessian)
        if self.spectral:
            return RadauIIA.spectral(self.spectral, jit=self.jit, ipopt=ipopt, hessian=hessian)
        return RadauIIA(n, self.stages, jit=self.jit, ipopt=ipopt, hessian=hessian)

    def solver(self, intervals: int | None = None, max_wall_time: float | None = None) -> Algorithm:
        """The algorithm of one phase: `algorithm` with ``intervals`` and
        ``max_wall_time``, inside the stagnation rule when it is on
        ([`StopWhenStagnant`][collocnode.StopWhenStagnant]: a fresh rule in every solve)."""
        alg: Algorithm = self.algorithm(intervals, max_wall_time)
        if self.stagnation_window:
            alg = StopWhenStagnant(alg, self.stagnation_window, self.stagnation_rtol)
        return alg

    def capped(self, alg: Algorithm, max_wall_time: float | None = None) -> Algorithm:
        """``alg`` with one wall-time cap for all its solves together: ``max_wall_time``
        (default: the settings' own; None: no cap)."""
        cap = self.max_wall_time if max_wall_time is None else max_wall_time
        return alg if cap is None else TimeLimit(alg, cap)


@dataclass(frozen=True)
class RegressionSettings:
    """The first phase of a warm-started strategy: the regression of
    `collocnode.training._warmstart.fit_initial_guess` (its arguments, with defaults measured
    on the quarter vehicle; docs/collocation_extensions.md).

    Attributes:
        smoothing: the smoother of the data ("kernel", "spline", "fft").
        stride: regress on every ``stride``-th sample.
        regression_hessian: "gauss-newton" or "exact".
        regression_max_iter: IPOPT's iteration limit of the regression.
        regression_rtol: stop the regression when its objective stagnates at this relative
            change (``stop_rtol``); None: run to tolerance 1e-8.
    """

    smoothing: str = "kernel"
    stride: int = 10
    regression_hessian: str = "gauss-newton"
    regression_max_iter: int = 500
    regression_rtol: float | None = 1e-4

    def __post_init__(self) -> None:
        v.choice("smoothing", self.smoothing, METHODS)
        v.positive_int("stride", self.stride)
        v.choice("regression_hessian", self.regression_hessian, HESSIANS)
        v.positive_int("regression_max_iter", self.regression_max_iter)
        if self.regression_rtol is not None:
            v.positive_float("regression_rtol", self.regression_rtol)

    @property
    def ipopt(self) -> IpoptOptions:
        """IPOPT's settings of the regression: tol 1e-8, ``regression_max_iter``, silent."""
        return IpoptOptions(tol=1e-8, max_iter=self.regression_max_iter, print_level=0)

    def warm_started(self, inner: Algorithm, *, jit: bool | str) -> WarmStarted:
        """``inner`` after the regression of these settings
        ([`WarmStarted`][collocnode.WarmStarted]), compiled with ``jit``."""
        return WarmStarted(
            inner,
            smoothing=self.smoothing,
            stride=self.stride,
            hessian=self.regression_hessian,
            stop_rtol=self.regression_rtol,
            ipopt=self.ipopt,
            jit=jit,
        )
