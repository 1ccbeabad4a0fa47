"""The collocation algorithm: [`RadauIIA`][collocnode.RadauIIA] (the scheme, its mesh and the IPOPT
settings) and one collocation solve -- transcribe on given meshes, run IPOPT, package the
[`Solution`][collocnode.Solution].

[`RadauIIA`][collocnode.RadauIIA] is the leaf of every nest of algorithms (`collocnode.algorithm`):
it lowers the problem it is given to a dynamic optimization problem (``problem.lower``), starts from
the context's warm solution and meshes when a wrapper hands them down, and solves.

Before anything is built the NLP's size is estimated from the problem's dimensions and refused if
its derivative arrays would not fit in this machine's memory, and an exact-Hessian NLP whose
iterations are estimated to be slow (nodes x states x parameters² past a measured limit) is
announced by a [`FactorizationCostWarning`][collocnode.FactorizationCostWarning]. Ctrl-C before
IPOPT starts raises [`SolveInterrupted`][collocnode.SolveInterrupted] naming the phase ("build",
"compile"); inside IPOPT it stops the solve with status ``interrupted`` and keeps the last iterate.
A user callback (`collocnode.transcription._ipopt.iteration`) runs after every IPOPT iteration and
may stop the solve.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

import numpy as np

from .. import _validation as v
from .._status import SolveInterrupted, SolverStatus
from ..algorithm import Algorithm, SolveContext, Transcription
from ..tools import _progress as progress
from ._data_mesh import data_mesh
from ._ipopt.backends import IpoptResult, solve_ipopt
from ._ipopt.iteration import CallbackRunner, RunInfo
from ._ipopt.options import IpoptOptions
from ._mesh import Mesh
from ._nlp.build import (
    build_interruptibly,
    check_factorization,
    check_memory,
    locate_non_finite,
    stretched,
)
from ._nlp.hessian import Hessian, check_hessian
from ._nlp.jit import check_jit
from ._nlp.structured import StructuredNLP
from ._problem import DynamicOptimizationProblem
from ._radau import MAX_STAGES
from ._refine import as_solution, warm_started
from ._solution import Solution

#: equidistant intervals of ``RadauIIA(intervals="auto")`` on a problem without data
AUTO_FALLBACK = 100


@dataclass(frozen=True)
class RadauIIA(Transcription):
    """Radau IIA collocation at flipped Legendre-Gauss-Radau points, solved by IPOPT.

    Args:
        intervals: number of equidistant mesh intervals over the problem's horizon, or "auto":
            a mesh chosen from the problem's data (`data_mesh`: as fine as
            the sampling and the signal's rate of change ask for, non-uniform where they vary;
            `AUTO_FALLBACK` equidistant intervals for a problem without data).
        stages: collocation nodes per interval (order 2·stages − 1).
        mesh: an explicit [`Mesh`][collocnode.Mesh] (non-uniform grids, per-interval stages);
            overrides ``intervals``/``stages``.
        jit: compile the per-node derivative functions to C (cached on disk; needs gcc): True,
            False, or "auto": where it pays (a library already cached is used; otherwise
            the functions are compiled now when the NLP has enough nodes that compiled
            evaluations are estimated to save more than the compilation, else the solve runs
            them as built while a detached compiler fills the cache for the next run).
        threads: threads for the map over collocation nodes (default: the process's share,
            `collocnode.tools._threads.available_threads`: every core unless it runs as one of
            several tasks).
        ipopt: IPOPT settings.
        hessian: "exact" (default), "limited-memory" (IPOPT's L-BFGS of the whole Lagrangian
            Hessian), or a [`PartialQuasiNewton`][collocnode.PartialQuasiNewton] (exact state
            blocks, quasi-Newton parameter blocks; for wide networks, seed paper §2.5.4); see
            `collocnode.transcription._nlp.hessian`.

    ``RadauIIA.spectral(70)`` is the global spectral variant: one interval with 70 nodes.

    Examples:
        The accuracy of the collocation on x' = -x, against the exact exp(-t): 10 intervals of 3
        stages (order 5), and the spectral variant, one interval of 20 nodes:

        ```python
        import numpy as np

        from collocnode import DynamicOptimizationProblem, IpoptOptions, RadauIIA, solve

        decay = DynamicOptimizationProblem(  # x' = -x, x(0) = 1: nothing to optimize
            dynamics=lambda x, p, u, t: -x, n_states=1, n_params=0, tspan=(0.0, 5.0), x0=[1.0]
        )
        quiet = IpoptOptions(print_level=0)
        for alg in (
            RadauIIA(intervals=10, stages=3, ipopt=quiet),
            RadauIIA.spectral(20, ipopt=quiet),
        ):
            sol = solve(decay, alg)
            error = abs(sol(5.0)[0] - np.exp(-5.0))
            mesh = f"{sol.mesh.n_intervals} interval(s), {sol.mesh.n_nodes} nodes"
            print(f"{mesh}: error {error:.1e} at t = 5")
            assert error < 1e-5
        ```
    """

    intervals: int | str = 100
    stages: int = 3
    mesh: Mesh | None = None
    jit: bool | str = False
    threads: int | None = None
    ipopt: IpoptOptions = field(default_factory=IpoptOptions)
    hessian: Hessian = "exact"

    def __post_init__(self) -> None:
        check_hessian(self.hessian)
        check_jit(self.jit)
        if not (isinstance(self.intervals, str) and self.intervals == "auto"):
            v.positive_int("intervals", self.intervals)
        if v.positive_int("stages", self.stages) > MAX_STAGES:
            raise ValueError(f"stages must be at most {MAX_STAGES}, got {self.stages}")
        # one state per node is the least an NLP on this mesh holds
        v.fits_in_memory(
            f"intervals={self.intervals} × stages={self.stages}",
            self.n_intervals * int(self.stages) + 1,
            "collocation nodes",
        )
        if self.threads is not None:
            v.positive_int("threads", self.threads)
        if self.mesh is not None and not isinstance(self.mesh, Mesh):
            raise TypeError(f"mesh must be a Mesh, got {self.mesh!r}")
        if not isinstance(self.ipopt, IpoptOptions):
            raise TypeError(f"ipopt must be an IpoptOptions, got {self.ipopt!r}")

    @classmethod
    def spectral(cls, nodes: int, **kwargs: object) -> RadauIIA:
        """One interval with ``nodes`` collocation nodes (global spectral collocation)."""
        if v.positive_int("nodes", nodes) > MAX_STAGES:
            raise ValueError(f"nodes must be at most {MAX_STAGES}, got {nodes}")
        return cls(intervals=1, stages=int(nodes), **kwargs)  # type: ignore[arg-type]

    @property
    def auto(self) -> bool:
        """Whether the mesh is chosen from the problem's data."""
        return isinstance(self.intervals, str)

    @property
    def n_intervals(self) -> int:
        """The equidistant intervals of [`mesh_for`][collocnode.RadauIIA.mesh_for] (`AUTO_FALLBACK`
        for "auto")."""
        return AUTO_FALLBACK if self.auto else int(self.intervals)

    def mesh_for(self, tspan: tuple[float, float]) -> Mesh:
        """The mesh over ``tspan``: ``mesh`` (checked to span it) or an equidistant one (for
        ``intervals="auto"``, which needs the problem's data, `AUTO_FALLBACK` intervals;
        [`meshes_for`][collocnode.RadauIIA.meshes_for] chooses from the data)."""
        if self.mesh is not None:
            t0, tf = tspan
            tol = 1e-9 * max(1.0, abs(tf - t0))
            if abs(self.mesh.t0 - t0) > tol or abs(self.mesh.tf - tf) > tol:
                raise ValueError(
                    f"mesh spans [{self.mesh.t0}, {self.mesh.tf}] but the problem's horizon is "
                    f"[{t0}, {tf}]"
                )
            return self.mesh
        return Mesh.equidistant(tspan[0], tspan[1], self.n_intervals, self.stages)

    # ---- the algorithm protocol (collocnode.algorithm) ---------------------------------------
    #: its NLP can be built once and re-solved with new proximal values (.proximal)
    reusable_nlp: ClassVar[bool] = True

    def solve_problem(self, problem: Any, context: SolveContext) -> Any:
        """Lower ``problem`` to a dynamic optimization problem, start it from ``context.warm``
        (if any) on ``context.meshes`` (default: this mesh over every trajectory), cap IPOPT's
        wall time at the context's deadline, solve, and return the problem's own solution."""
        lowered = problem.lower(context)
        dop = lowered.dop
        if context.warm is not None:
            dop = warm_started(dop, as_solution(context.warm))
        meshes = None if context.meshes is None else list(context.meshes)
        if meshes is None and self.auto and self.mesh is None:
            meshes = self.meshes_for(problem)
        return lowered.finish(
            solve_collocation(dop, self.capped(context.remaining()), meshes, lowered.callback)
        )

    def with_threads(self, threads: int) -> RadauIIA:
        """This algorithm with ``threads`` threads for the map over collocation nodes."""
        return replace(self, threads=v.positive_int("threads", threads))

    def meshes_for(self, problem: Any) -> list[Mesh]:
        """This algorithm's mesh over the horizon of each trajectory of ``problem`` (chosen
        from its data, ``problem.mesh_data(k) -> (t, values)``, for ``intervals="auto"``)."""
        horizons = problem.horizons()
        if self.auto and self.mesh is None and hasattr(problem, "mesh_data"):
            return [
                data_mesh(*problem.mesh_data(k), h, self.stages) for k, h in enumerate(horizons)
            ]
        return [self.mesh_for(h) for h in horizons]

    def capped(self, seconds: float | None) -> RadauIIA:
        """This algorithm with IPOPT's wall time at most ``seconds`` (None: unchanged)."""
        if seconds is None:
            return self
        own = self.ipopt.max_wall_time
        return replace(self, ipopt=replace(self.ipopt, max_wall_time=min(own or seconds, seconds)))


def solve_collocation(
    dop: DynamicOptimizationProblem,
    alg: RadauIIA,
    meshes: list[Mesh] | None = None,
    callback: Callable[[Any], Any] | None = None,
) -> Solution:
    """Transcribe ``dop`` with ``alg`` and solve it with IPOPT.

    Args:
        dop: the problem.
        alg: the collocation scheme, Hessian choice and IPOPT settings.
        meshes: one mesh per segment (default: ``alg.mesh_for`` each segment's span).
        callback: called after every IPOPT iteration with an
            `IterationState` (protocol: `collocnode.transcription._ipopt.iteration`); its
            ``on_start`` runs before anything is built, its ``on_end`` when the solve has ended.

    Raises:
        ValueError: the NLP's derivative arrays would not fit in memory (nothing is built).
        SolveInterrupted: Ctrl-C before IPOPT started.
        Exception: whatever the callback's ``on_start`` raises (a bad setting).
    """
    watched = _watched(callback, progress.iteration_callback())
    runner = None if watched is None else CallbackRunner(watched)
    if runner is None:
        return _solve(dop, alg, meshes, None, False)
    runner.start(
        RunInfo(
            max_iterations=int(alg.ipopt.extra.get("max_iter", alg.ipopt.max_iter)),
            n_states=dop.n_states,
            n_params=dop.n_params,
        )
    )
    try:
        return _solve(dop, alg, meshes, runner, callback is not None)
    finally:
        runner.end()


class _Watched:
    """The user's callback (or none) and the watcher's (`collocnode.tools._progress`) as
    one: the watcher's runs first and can neither stop the solve nor fail it; the user's
    decides, and its ``reason`` and ``outcome`` are the stop's."""

    def __init__(self, user: Callable[[Any], Any] | None, watcher: Callable[[Any], Any]) -> None:
        self.user, self.watcher = user, watcher

    def _each(self, hook: str, *args: Any) -> None:
        method = getattr(self.watcher, hook, None)
        if callable(method):
            with contextlib.suppress(Exception):
                method(*args)
        method = getattr(self.user, hook, None)
        if callable(method):
            method(*args)  # the user's errors propagate: a bad setting

    def on_start(self, info: RunInfo) -> None:
        self._each("on_start", info)

    def on_end(self) -> None:
        self._each("on_end")

    def __call__(self, state: Any) -> Any:
        with contextlib.suppress(Exception):
            self.watcher(state)
        return None if self.user is None else self.user(state)

    @property
    def reason(self) -> Any:
        return getattr(self.user, "reason", None)

    @property
    def outcome(self) -> Any:
        return getattr(self.user, "outcome", None)


def _watched(
    user: Callable[[Any], Any] | None, watcher: Callable[[Any], Any] | None
) -> Callable[[Any], Any] | None:
    """``user`` alone without a watcher's callback, else both as one (`_Watched`)."""
    return user if watcher is None else _Watched(user, watcher)


def _solve(
    dop: DynamicOptimizationProblem,
    alg: RadauIIA,
    meshes: list[Mesh] | None,
    runner: CallbackRunner | None,
    user_callback: bool,
) -> Solution:
    t_start = time.perf_counter()
    progress.phase("build")
    if meshes is None:
        meshes = [alg.mesh_for(seg.tspan) for seg in dop.all_segments()]
    pulled = None
    if dop.proximal is not None:
        # the pull of a consensus method, with its values fixed for this solve
        n_nodes = sum(m.n_nodes for m in meshes)
        pulled = dop.proximal.indices(n_nodes, dop.node_width)
    nlp, z0 = build_nlp(dop, alg, meshes, proximal=pulled, advise=True)
    if pulled is not None:
        nlp.set_proximal(np.full(pulled.size, dop.proximal.rho), dop.proximal.center())
    t_build = time.perf_counter() - t_start
    progress.phase("solve")
    res = solve_ipopt(nlp, z0, alg.ipopt, hessian=alg.hessian, callback=runner)
    return package(nlp, res, t_build, time.perf_counter() - t_start, user_callback)


def build_nlp(
    dop: DynamicOptimizationProblem,
    alg: RadauIIA,
    meshes: list[Mesh] | None = None,
    proximal: np.ndarray | None = None,
    advise: bool = False,
) -> tuple[StructuredNLP, np.ndarray]:
    """The NLP of ``dop`` on ``meshes`` (default: ``alg``'s mesh of each segment) with an optional
    proximal term (`StructuredNLP`), and its initial guess; memory-checked first,
    then, with ``advise`` (an NLP that IPOPT will solve), a
    [`FactorizationCostWarning`][collocnode.FactorizationCostWarning] if its iterations are
    estimated to be slow; interruptible (SolveInterrupted("build"/"compile"))."""
    if meshes is None:
        meshes = [alg.mesh_for(seg.tspan) for seg in dop.all_segments()]
    check_memory(dop, meshes, seconds=alg.ipopt.max_wall_time)
    if advise:
        check_factorization(dop, meshes, alg.hessian)
    nlp = build_interruptibly(
        lambda checkpoint: StructuredNLP(
            dop,
            meshes,
            jit=alg.jit,
            threads=alg.threads,
            hessian=alg.hessian,
            checkpoint=checkpoint,
            proximal=proximal,
        )
    )
    try:
        return nlp, nlp.initial_guess()
    except KeyboardInterrupt as interrupt:
        raise SolveInterrupted("build") from interrupt


def package(
    nlp: StructuredNLP, res: IpoptResult, t_build: float, t_total: float, user_callback: bool
) -> Solution:
    """The [`Solution`][collocnode.Solution] of one IPOPT run on ``nlp`` (physical units, stretched
    meshes for a free final time, the place of a non-finite value in the message)."""
    dop, meshes = nlp.dop, nlp.meshes
    segment_states = nlp.segment_states(res.z)
    _, p = nlp.split(res.z)
    tf = nlp.final_time(res.z)
    if dop.free_final_time and np.isfinite(tf):
        meshes = [stretched(mesh, dop.tspan[0], tf) for mesh in meshes]
    message = res.message
    if res.status == SolverStatus.EVALUATION_ERROR or not np.all(np.isfinite(res.z)):
        message = locate_non_finite(nlp, res.z) or message
    return Solution(
        status=res.status,
        ipopt_status=res.ipopt_status,
        message=message,
        objective=res.objective,
        iterations=res.iterations,
        mesh=meshes[0],
        x_nodes=segment_states[0],
        p=p,
        lam_g=res.lam_g,
        history=res.history,
        timings={
            "build": t_build,
            "ipopt": res.t_ipopt,
            "callbacks": res.t_callbacks,
            **({"user_callback": res.t_user_callback} if user_callback else {}),
            **({"ordering_trial": res.t_ordering_trial} if res.ordering_trial else {}),
            "total": t_total,
        },
        size=nlp.layout.size,
        problem=dop,
        meshes=list(meshes),
        segment_states=segment_states,
        non_finite_evaluations=res.non_finite_evaluations,
        tf=tf,
        segment_unknowns=nlp.segment_unknowns(res.z),
        ordering_trial=dict(res.ordering_trial),
        nlp=nlp,
    )


def solve_dop(
    dop: DynamicOptimizationProblem, alg: Algorithm, callback: Callable[[Any], Any] | None = None
) -> Any:
    """``alg.solve_problem(dop, ...)`` with ``callback``: the DOP-level solve of 0.2, kept for
    one release (``collocnode.solve`` does this and checks the arguments)."""
    context = SolveContext(callback=callback)
    alg.validate(dop, context)
    return alg.solve_problem(dop, context)
