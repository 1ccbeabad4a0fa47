"""``solve(problem, algorithm)``: the one entry point, as in SciML."""

from __future__ import annotations

import time
from typing import overload

import numpy as np

from .status import SolverStatus
from .training import TrainingProblem, TrainingSolution
from .transcription.algorithm import RadauIIA
from .transcription.ipopt import solve_ipopt
from .transcription.nlp import StructuredNLP
from .transcription.problem import DynamicOptimizationProblem
from .transcription.solution import Solution


@overload
def solve(
    problem: TrainingProblem, alg: RadauIIA | None = ..., *, seed: int | None = ...
) -> TrainingSolution: ...
@overload
def solve(
    problem: DynamicOptimizationProblem, alg: RadauIIA | None = ..., *, seed: int | None = ...
) -> Solution: ...


def solve(problem, alg=None, *, seed=None):
    """Transcribe ``problem`` with ``alg`` (default ``RadauIIA()``) and solve it with IPOPT.

    Args:
        problem: a :class:`DynamicOptimizationProblem` or a :class:`TrainingProblem`.
        alg: the collocation scheme and IPOPT settings.
        seed: seeds the random initial weights of a training problem (ignored when the problem
            gives ``params_guess``).

    Returns:
        A :class:`Solution` (or :class:`TrainingSolution`). Its ``status`` says honestly how the
        solve ended; a failed solve still returns the last iterate.
    """
    alg = RadauIIA() if alg is None else alg
    if not isinstance(alg, RadauIIA):
        raise TypeError(f"alg must be a RadauIIA algorithm, got {alg!r}")
    if isinstance(problem, TrainingProblem):
        p0 = problem.params_guess
        if p0 is None:
            p0 = problem.model.init_params(np.random.default_rng(seed))
        return TrainingSolution(_solve_dop(problem.to_dop(params_guess=p0), alg), problem)
    if isinstance(problem, DynamicOptimizationProblem):
        return _solve_dop(problem, alg)
    raise TypeError(
        f"problem must be a DynamicOptimizationProblem or TrainingProblem, got {problem!r}"
    )


def _solve_dop(dop: DynamicOptimizationProblem, alg: RadauIIA) -> Solution:
    t_start = time.perf_counter()
    meshes = [alg.mesh_for(seg.tspan) for seg in dop.all_segments()]
    nlp = StructuredNLP(dop, meshes, jit=alg.jit, threads=alg.threads, hessian=alg.nlp_hessian)
    z0 = nlp.initial_guess()
    t_build = time.perf_counter() - t_start
    res = solve_ipopt(nlp, z0, alg.ipopt, hessian=alg.hessian)
    segment_states = nlp.segment_states(res.z)
    _, p = nlp.split(res.z)
    message = res.message
    if res.status == SolverStatus.EVALUATION_ERROR or not np.all(np.isfinite(res.z)):
        message = _locate_non_finite(nlp, res.z) or message
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
            "total": time.perf_counter() - t_start,
        },
        size=nlp.size,
        problem=dop,
        meshes=meshes,
        segment_states=segment_states,
    )


def _locate_non_finite(nlp: StructuredNLP, z: np.ndarray) -> str:
    """Where the model first produces a NaN/Inf at the iterate z (node and time), if anywhere."""
    if not np.all(np.isfinite(z)):
        i = int(np.flatnonzero(~np.isfinite(z))[0])
        if i < nlp.P0:
            node = i // nlp.nx
            return f"non-finite state at node {node} (t = {nlp.mesh.node_times[node]:.6g})"
        return f"non-finite parameter p[{i - nlp.P0}]"
    vals = nlp.node_values(z)
    for name, what in (("res", "dynamics"), ("g", "path constraints"), ("obj", "loss")):
        arr = vals[name]
        if arr.size and not np.all(np.isfinite(arr)):
            k = int(np.flatnonzero(~np.all(np.isfinite(arr), axis=0))[0])
            return f"non-finite {what} at collocation node {k} (t = {nlp.t_coll[k]:.6g})"
    return ""
