"""Training phases before the full problem, as algorithms that wrap the one solving it.

- [`WarmStarted`][collocnode.WarmStarted]: smooth the data and regress the model's right-hand side
  on the derivative estimates (`collocnode.training._warmstart.fit_initial_guess`, the
  pre-training the seed paper's §2.5.2 suggests), then solve the full problem from the
  regressed weights and the smoothed states.
- [`Pretrained`][collocnode.Pretrained]: train on the first part of the data (the quarter vehicle's
  strategy II, Langenkamp et al. §4.1.2), simulate the pre-trained model over the whole horizon, and
  solve the full problem from its states and weights.

Both hand their inner algorithm a better initial guess; given a solution to start from already
(``context.warm``, e.g. in a later round of [`UntilConsistent`][collocnode.UntilConsistent] or of
consensus ADMM) they have nothing to add and pass the solve straight on.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

from .. import _validation as v
from .._data import Trajectory
from .._status import SolverStatus
from ..algorithm import Algorithm, SolveContext, Wrapper, check_inner, final
from ..models._simulate import SimulationError, simulate
from ..tools import _progress as progress
from ..training._warmstart import HESSIANS, METHODS, WarmStart, fit_initial_guess
from ..transcription._collocation import RadauIIA
from ..transcription._ipopt.iteration import RunInfo, stop_requested
from ..transcription._ipopt.options import IpoptOptions
from ..transcription._nlp.jit import check_jit

#: statuses of a phase that end the strategy there: Ctrl-C (and a stop by the user's callback,
#: told apart from a stop by a stopping rule of the phase)
_INTERRUPTED = SolverStatus.INTERRUPTED


@dataclass
class PhasedRecord:
    """The result of a phased strategy: the full problem's result and what came before it.

    Attributes:
        solution: the inner algorithm's result on the full problem, or the last phase's where
            a phase ended the strategy (Ctrl-C, the user's callback).
        phases: the results of the earlier phases that solved an NLP, by name
            (``"pretrain"``), in the order they ran.
        times: wall times [s] of the work between the NLP solves (``"warm_start"``: the
            regression; ``"simulate"``: the pre-trained model's simulation).
        notes: facts of the run (the regression's outcome; whether the pre-trained model could
            be simulated over the whole horizon).
        regression: the warm start's report (`WarmStart`),
            or None.
    """

    wraps: ClassVar[bool] = True

    solution: Any
    phases: dict[str, Any] = field(default_factory=dict)
    times: dict[str, float] = field(default_factory=dict)
    notes: dict[str, Any] = field(default_factory=dict)
    regression: WarmStart | None = None

    @property
    def status(self) -> SolverStatus:
        return final(self).status

    @property
    def iterations(self) -> int:
        """IPOPT iterations of every phase's NLP (the regression's not included)."""
        return int(self.solution.iterations) + sum(int(p.iterations) for p in self.phases.values())

    def describe(self) -> str:
        """The phases before the full problem, in one line."""
        name = "Pretrained" if "pretrain" in self.phases else "WarmStarted"
        before = [*self.times, *self.phases]
        return f"{name}: before the full problem {', '.join(before) or 'nothing'}"


@dataclass(frozen=True)
class WarmStarted(Wrapper):
    """Regress the model on smoothed data first, then solve the full problem from there.

    Args:
        inner: the algorithm of the full problem (default ``RadauIIA()``).
        smoothing: the smoother of the data, "spline", "kernel" or "fft"
            (`collocnode.training._warmstart.smooth_samples`).
        stride: regress on every ``stride``-th sample.
        hessian: the regression's Hessian, "exact" or "gauss-newton".
        stop_rtol: stop the regression once its objective's relative change per iteration
            stays below this (None: run to ``ipopt.tol``).
        ipopt: IPOPT settings of the regression (default: tol 1e-8, 500 iterations, silent);
            its wall time is capped at the context's deadline.
        jit: compile the regression's per-sample derivatives to C (cached; needs gcc): True,
            False, or "auto" (where it pays, `collocnode.transcription._nlp.jit`).

    The regression's starting weights are the problem's ``params_guess``, else the draw of
    ``solve``'s seed. Given a solution to start from it does nothing but the inner solve.

    Examples:
        Regress the networks on the smoothed derivatives of every 4th sample, then solve the full
        problem from those weights:

        ```python
        from collocnode import (
            IpoptOptions,
            NeuralODE,
            RadauIIA,
            TrainingProblem,
            WarmStarted,
            problems,
            solve,
        )
        from collocnode.nn import MLP

        system = problems.get("vdp")
        split = system.generate(noise=0.1, seed=0)
        model = NeuralODE([MLP((2, 5, 5, 1), "sigmoid"), MLP((2, 5, 5, 1), "sigmoid")])
        problem = TrainingProblem(model, split.train, regularization=1e-4, initial_state=system.x0)
        inner = RadauIIA(intervals=30, stages=3, ipopt=IpoptOptions(print_level=0))
        sol = solve(problem, WarmStarted(inner, stride=4), seed=0)  # regress on every 4th sample
        print(sol.describe())
        print(sol.status, sol.iterations, "iterations of the full problem")
        ```
    """

    # a warm start from the context makes the phases step aside: it goes on to the inner solve
    record_type: ClassVar[type] = PhasedRecord

    problem_kinds: ClassVar[frozenset[str]] = frozenset({"training"})

    inner: Algorithm = field(default_factory=RadauIIA)
    smoothing: str = "spline"
    stride: int = 1
    hessian: str = "exact"
    stop_rtol: float | None = None
    ipopt: IpoptOptions | None = None
    jit: bool | str = False

    def __post_init__(self) -> None:
        check_inner(self, self.inner)
        v.choice("smoothing", self.smoothing, METHODS)
        v.positive_int("stride", self.stride)
        v.choice("hessian", self.hessian, HESSIANS)
        if self.stop_rtol is not None:
            v.positive_float("stop_rtol", self.stop_rtol)
        if self.ipopt is not None and not isinstance(self.ipopt, IpoptOptions):
            raise TypeError(f"ipopt must be an IpoptOptions or None, got {self.ipopt!r:.80}")
        check_jit(self.jit)

    def validate(self, problem: Any, context: SolveContext) -> None:
        super().validate(problem, context)
        if problem.mask is not None:
            raise ValueError(
                "WarmStarted smooths every sample of the fitted columns; a problem with a mask "
                "(missing values) is not supported"
            )

    def solve_problem(self, problem: Any, context: SolveContext) -> Any:
        if context.warm is not None:
            return self.inner.solve_problem(problem, context)
        ipopt = self.ipopt or IpoptOptions(tol=1e-8, max_iter=500, print_level=0)
        remaining = context.remaining()
        if remaining is not None:
            own = ipopt.max_wall_time
            ipopt = replace(ipopt, max_wall_time=min(own or remaining, remaining))
        progress.phase("regression")  # the warm start's regression (its own IPOPT solve)
        fit = fit_initial_guess(
            problem,
            self.smoothing,
            seed=context.seed,
            ipopt=ipopt,
            jit=self.jit,
            stride=self.stride,
            hessian=self.hessian,
            stop_rtol=self.stop_rtol,
        )
        with progress.labelled("full problem"):
            result = self.inner.solve_problem(fit.problem, context)
        notes = {
            "regression": {
                "status": fit.status.value,
                "iterations": fit.iterations,
                "objective": fit.objective,
                "samples": int(fit.t.size),
                "wall_time_s": fit.timings,
            }
        }
        return PhasedRecord(
            solution=result,
            times={"warm_start": fit.timings["total"]},
            notes=notes,
            regression=fit,
        )


@dataclass(frozen=True)
class Pretrained(Wrapper):
    """Train on the first ``fraction`` of the data, then solve the full problem from there.

    The pre-training solves the problem cut to the samples in [t0, t0 + fraction (tf − t0)]
    (``TrainingProblem.window(..., cut=True)``: its own scaling, the initial state kept) with
    ``pretrain``; the pre-trained model is then simulated over every sample time of the whole
    horizon from the collocated initial state (``simulate``'s method) and its states and
    weights start the full problem, solved by ``inner``. Where the simulation fails the full
    problem starts from its own state guess and the pre-trained weights.

    Args:
        inner: the algorithm of the full problem (default ``RadauIIA()``).
        pretrain: the algorithm of the pre-training (default: ``inner``). Its mesh is the one
            of the window, so give it one scaled to the window.
        fraction: the share of the horizon pre-trained on, in (0, 1).
        method: the integrator of the simulation ([`collocnode.simulate`][collocnode.simulate]).

    A pre-training ended by Ctrl-C or by the user's callback ends the strategy: its result is
    then the solution (no other phases). A stop by a stopping rule of the phase
    ([`StopWhenStagnant`][collocnode.StopWhenStagnant]) goes on to the full problem. One trajectory
    only.
    """

    record_type: ClassVar[type] = PhasedRecord

    problem_kinds: ClassVar[frozenset[str]] = frozenset({"training"})

    inner: Algorithm = field(default_factory=RadauIIA)
    pretrain: Algorithm | None = None
    fraction: float = 0.125
    method: str = "rk4"

    def __post_init__(self) -> None:
        check_inner(self, self.inner)
        if self.pretrain is not None and not isinstance(self.pretrain, Algorithm):
            raise TypeError(
                f"Pretrained.pretrain must be an algorithm object or None, got "
                f"{self.pretrain!r:.80}"
            )
        f = v.positive_float("fraction", self.fraction)
        if f >= 1:
            raise ValueError(f"fraction must be < 1, got {f}")
        if not isinstance(self.method, str):
            raise TypeError(f"method must be an integrator name, got {self.method!r:.80}")

    def map_leaves(self, fn: Any) -> Algorithm:
        pretrain = None if self.pretrain is None else self.pretrain.map_leaves(fn)
        return replace(self, inner=self.inner.map_leaves(fn), pretrain=pretrain)

    @property
    def first(self) -> Algorithm:
        """The algorithm of the pre-training."""
        return self.inner if self.pretrain is None else self.pretrain

    def kinds(self) -> frozenset[str]:
        return super().kinds() & self.first.kinds()

    def callbacks(self) -> bool:
        return super().callbacks() and self.first.callbacks()

    def validate(self, problem: Any, context: SolveContext) -> None:
        super().validate(problem, context)
        self.first.validate(problem, context)
        if problem.n_trajectories != 1:
            raise ValueError(
                f"Pretrained pre-trains on the start of one trajectory, the problem has "
                f"{problem.n_trajectories}"
            )

    def window(self, problem: Any) -> Any:
        """The pre-training problem: ``problem`` cut to the first ``fraction`` of its
        samples (the sample nearest to the fraction of the horizon ends it)."""
        t = problem.trajectories[0].t
        t0, tf = problem.horizon
        inside = t[(t >= t0) & (t <= tf)]
        n = round((inside.size - 1) * self.fraction) + 1
        return problem.window(t0, float(inside[max(n, 2) - 1]), cut=True)

    def solve_problem(self, problem: Any, context: SolveContext) -> Any:
        if context.warm is not None:
            return self.inner.solve_problem(problem, context)
        watch = _Watch(context.callback)
        with progress.labelled("pretraining"):
            pre = self.first.solve_problem(
                self.window(problem), context.but(callback=watch.callback, meshes=None)
            )
        trained = final(pre)
        if trained.status == _INTERRUPTED or watch.user_stopped:
            return PhasedRecord(solution=pre)
        t_sim = time.perf_counter()
        progress.phase("simulation")  # of the pre-trained model: the full problem's guess
        t = problem.trajectories[0].t
        t = t[(t >= problem.horizon[0]) & (t <= problem.horizon[1])]
        full = replace(problem, params_guess=trained.p)
        try:
            x0 = trained.solution.states(t[0], 0)
            sim = simulate(
                problem.model,
                trained.p,
                t,
                x0,
                inputs=problem.input_function(0),
                method=self.method,
                trajectory_params=trained.trajectory_params[0],
            )
            full = replace(full, state_guess=Trajectory(t, sim.x))
            simulated = True
        except SimulationError:
            simulated = False  # the full problem starts from its own state guess
        t_sim = time.perf_counter() - t_sim
        with progress.labelled("full problem"):
            result = self.inner.solve_problem(full, context)
        return PhasedRecord(
            solution=result,
            phases={"pretrain": pre},
            times={"simulate": t_sim},
            notes={"simulation_ok": simulated},
        )


class _Watch:
    """The user's callback, watched: whether it asked to stop or raised (as against a stopping
    rule of the phase, which may also stop it)."""

    def __init__(self, callback: Any) -> None:
        self.user = callback
        self.user_stopped = False
        self.callback = None if callback is None else _Watched(self)


class _Watched:
    """The user's callback with its hooks and reason, recording a stop on its watch."""

    def __init__(self, watch: _Watch) -> None:
        self._watch = watch

    @property
    def reason(self) -> Any:
        return getattr(self._watch.user, "reason", None)

    @property
    def outcome(self) -> Any:
        return getattr(self._watch.user, "outcome", None)

    def on_start(self, info: RunInfo) -> None:
        hook = getattr(self._watch.user, "on_start", None)
        if callable(hook):
            hook(info)

    def on_end(self) -> None:
        hook = getattr(self._watch.user, "on_end", None)
        if callable(hook):
            hook()

    def __call__(self, state: Any) -> Any:
        try:
            returned = self._watch.user(state)
        except Exception:
            self._watch.user_stopped = True
            raise
        if stop_requested(returned):
            self._watch.user_stopped = True
        return returned
