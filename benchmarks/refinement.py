#!/usr/bin/env python
"""Adaptive mesh refinement vs uniform meshes: nodes and wall time to reach a tolerance.

Two problems:

* ``front``: x' = −10 (x − g) + g', g = tanh(40 (t − 1/2)), x(0) = g(0) on [0, 1] (exact
  solution g: a steep front in the middle). Adaptive h- and hp-refinement from 4 x 3 stages
  against the smallest uniform 3-stage mesh whose estimate meets the same tolerance (found by
  doubling, then bisection, on the number of intervals).
* ``vdp``: the Van der Pol neural ODE training problem (Langenkamp et al. §4.2, σ = 0 and 0.1),
  adaptive h-refinement from 20 x 3 stages against the smallest uniform 3-stage mesh (searched
  the same way) and against the paper's 500 x 5 mesh; all from the same random weights.

Every solve uses MUMPS with METIS ordering and ``mumps_scaling 0``: with MUMPS' default scaling
IPOPT stops in its first iteration (MUMPS error -9, "Restoration_Failed") on the front problem
from 512 uniform intervals on. JIT is on; one warm-up solve fills the cache.

    python benchmarks/refinement.py [--tol 1e-6] [--seeds 3] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from dataclasses import replace
from typing import Any

import casadi as ca
import numpy as np

from collocnode import problems
from collocnode._experiments.vdp import T_ROBUST, VdPOptions, seeds
from collocnode._solve import solve
from collocnode.models import NeuralODE
from collocnode.models._simulate import SimulationError
from collocnode.nn import MLP
from collocnode.tools._options import build
from collocnode.training import TrainingProblem
from collocnode.transcription import (
    AdaptiveRefinement,
    DynamicOptimizationProblem,
    IpoptOptions,
    RadauIIA,
)
from collocnode.transcription._refine import RefinementRule, interval_errors

MUMPS = {"mumps_pivot_order": 5, "mumps_scaling": 0}
STEEP = 40.0


def front() -> DynamicOptimizationProblem:
    def g(t):
        return ca.tanh(STEEP * (t - 0.5))

    return DynamicOptimizationProblem(
        dynamics=lambda x, p, u, t: -10.0 * (x - g(t)) + STEEP * (1 - g(t) ** 2),
        n_states=1,
        n_params=0,
        tspan=(0.0, 1.0),
        lagrange=lambda x, p, u, t: x[0] ** 2,
        x0=[np.tanh(-STEEP / 2)],
        x_guess=[0.0],
    )


def uniform_search(problem: Any, alg: RadauIIA, tol: float, start: int, **kw: Any) -> dict:
    """Smallest number of uniform intervals whose estimate is <= tol; every solve is timed and
    the time of the whole search is reported separately from the time of the final mesh."""
    record: dict[int, tuple[Any, float, float]] = {}

    def attempt(n: int) -> bool:
        t0 = time.perf_counter()
        sol = solve(problem, replace(alg, intervals=n), **kw)
        err = float(interval_errors(sol).max())
        record[n] = (sol, err, time.perf_counter() - t0)
        return sol.status.ok and err <= tol

    lo, hi = start, start
    while not attempt(hi):
        lo, hi = hi, 2 * hi
    while hi - lo > max(1, lo // 20):  # bisect to within 5 %
        mid = (lo + hi) // 2
        if attempt(mid):
            hi = mid
        else:
            lo = mid
    sol, err, wall = record[hi]
    return {
        "intervals": hi,
        "nodes": sol.mesh.n_nodes,
        "max_error": err,
        "iterations": sol.iterations,
        "wall_s": wall,
        "search_s": sum(r[2] for r in record.values()),
        "solution": sol,
    }


def front_study(tol: float) -> dict:
    alg = RadauIIA(4, 3, ipopt=IpoptOptions(tol=1e-12, print_level=0, extra=MUMPS))
    tt = np.linspace(0.0, 1.0, 4001)
    exact = np.tanh(STEEP * (tt - 0.5))
    out: dict[str, Any] = {}
    for strategy in ("h", "hp"):
        sol = solve(front(), AdaptiveRefinement(alg, tol=tol, rule=RefinementRule(strategy)))
        res = sol.record(AdaptiveRefinement)
        out[f"adaptive {strategy}"] = {
            "converged": res.converged,
            "rounds": len(res.rounds),
            "intervals": res.mesh.n_intervals,
            "nodes": res.mesh.n_nodes,
            "max_error": float(res.errors.max()),
            "true_error": float(np.max(np.abs(sol(tt)[:, 0] - exact))),
            "wall_s": res.wall_time,
            "table": res.table(),
        }
    uni = uniform_search(front(), alg, tol, start=16)
    sol = uni.pop("solution")
    uni["true_error"] = float(np.max(np.abs(sol(tt)[:, 0] - exact)))
    out["uniform 3-stage"] = uni
    return out


def _rmse(sol: Any) -> float | None:
    system = problems.get("vdp")
    t = np.linspace(0.0, T_ROBUST, 1601)
    try:
        x = sol.simulate(t, system.x0, rtol=1e-9, atol=1e-9).x
    except SimulationError:
        return None
    return float(np.sqrt(np.mean((x - system.simulate(t).x) ** 2)))


def vdp_study(noise: float, seed: int, tol: float) -> dict:
    opts = build(VdPOptions, noise=noise, seed=seed, print_level=0)
    system = problems.get("vdp")
    noise_seed, weight_seed = seeds(seed)
    data = system.generate(noise=noise, seed=noise_seed).train
    model = NeuralODE([MLP((2, 5, 5, 1), "sigmoid") for _ in range(2)])
    problem = TrainingProblem(model, data, regularization=opts.lam, initial_state=system.x0)
    ipopt = IpoptOptions(tol=opts.tol, max_iter=opts.max_iter, print_level=0, extra=MUMPS)
    out: dict[str, Any] = {}

    adaptive = AdaptiveRefinement(RadauIIA(20, 3, jit=True, ipopt=ipopt), tol=tol)
    sol = solve(problem, adaptive, seed=weight_seed)
    res = sol.record(AdaptiveRefinement)
    out["adaptive h"] = {
        "converged": res.converged,
        "rounds": len(res.rounds),
        "nodes": res.mesh.n_nodes,
        "max_error": float(res.errors.max()),
        "iterations": res.iterations,
        "wall_s": res.wall_time,
        "rmse_0_32": _rmse(sol),
        "table": res.table(),
    }
    uni = uniform_search(
        problem, RadauIIA(20, 3, jit=True, ipopt=ipopt), tol, start=25, seed=weight_seed
    )
    out["uniform 3-stage"] = uni | {"rmse_0_32": _rmse(uni.pop("solution"))}
    t0 = time.perf_counter()
    paper = solve(problem, RadauIIA(500, 5, jit=True, ipopt=ipopt), seed=weight_seed)
    out["uniform 500x5"] = {
        "nodes": paper.mesh.n_nodes,
        "max_error": float(interval_errors(paper).max()),
        "iterations": paper.iterations,
        "wall_s": time.perf_counter() - t0,
        "rmse_0_32": _rmse(paper),
    }
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    ap.add_argument("--tol", type=float, default=1e-6)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--noise", type=float, nargs="+", default=[0.0, 0.1])
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    report: dict[str, Any] = {"settings": vars(args)}

    report["front"] = front_study(args.tol)
    print(f"front, tol {args.tol:g}\n| mesh | nodes | max estimate | true error | wall [s] |")
    print("|---|---|---|---|---|")
    for key, r in report["front"].items():
        print(
            f"| {key} | {r['nodes']} | {r['max_error']:.2e} | {r['true_error']:.2e} | "
            f"{r['wall_s']:.2f} |"
        )

    vdp_study(0.0, 10_000, 1e-2)  # warm-up: JIT caches
    report["vdp"] = {}
    for noise in args.noise:
        runs = [vdp_study(noise, k, args.tol) for k in range(args.seeds)]
        report["vdp"][f"σ={noise:g}"] = runs
        print(f"\nvdp σ = {noise:g}, tol {args.tol:g}, medians of {args.seeds} seeds")
        print("| mesh | nodes | max estimate | iterations | wall [s] | RMSE [0, 32] |")
        print("|---|---|---|---|---|---|")
        for key in ("adaptive h", "uniform 3-stage", "uniform 500x5"):
            rows = [r[key] for r in runs]
            med = {
                k: statistics.median(float(r[k]) for r in rows)
                for k in ("nodes", "max_error", "iterations", "wall_s")
            }
            rmse = [r["rmse_0_32"] for r in rows]
            rm = statistics.median(x if x is not None else np.inf for x in rmse)
            print(
                f"| {key} | {med['nodes']:.0f} | {med['max_error']:.1e} | "
                f"{med['iterations']:.0f} | {med['wall_s']:.2f} | {rm:.3f} |"
            )
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(report, fh, indent=2, default=str)


if __name__ == "__main__":
    main()
