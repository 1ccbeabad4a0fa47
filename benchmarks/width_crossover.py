#!/usr/bin/env python
"""Per-iteration cost against network width and trajectory count, and the time to an objective.

Van der Pol, ``K`` noise-free trajectories of 2 s (58 samples) from points of the circle of
radius 2 (:func:`multi_trajectory_vdp.circle_data`), the paper's two sigmoid networks widened to
2-h-h-1 (2(h² + 5h + 1) weights: h = 5, 10, 16, 24, 32 give 102, 302, 674, 1,394, 2,370),
λ = 1e-4, each trajectory on ``--intervals`` x 3 Radau nodes, no JIT.

``grid`` (the per-iteration costs): every cell (h, K) runs a fixed number of IPOPT iterations
(``--iterations``, tol 1e-12 so that they all run) with each path and reports the build time,
the first iteration's seconds (MUMPS's symbolic analysis is paid there, once per solve), the
median seconds of the later iterations (``s_per_iteration``, IPOPT and callbacks) and the IPOPT
and callback seconds per iteration over all of them (medians of ``--repeats``):

- ``exact``: the single NLP with the exact Hessian;
- ``limited-memory``: the single NLP with IPOPT's L-BFGS Hessian;
- ``bfgs``: the single NLP with the partial quasi-Newton Hessian (exact state blocks, damped
  BFGS weight block, ``PartialQuasiNewton("bfgs")``);
- ``admm``: consensus ADMM over ``--blocks`` blocks of trajectories (exact Hessian in each block,
  blocks solved one after another in this process), 2 rounds of ``--iterations`` iterations per
  block: the seconds of one round divided by the iterations, i.e. one iteration of every block
  (each block's symbolic analysis included: a round is a new IPOPT solve of every block).

A cell is skipped for ``exact`` and ``admm`` where the exact Hessian's symbolic build is
estimated above ``--skip-s`` (it grows like n_p², 85 s at 2,370 weights on a quiet machine), and
for every path but ``limited-memory`` where its work, nodes x states x weights², passes
``--max-work`` (1.7e9 took 57 s per exact iteration).

``converge`` (the crossover, ``--cells h:K ...``): each path from the same start until IPOPT's
tolerance (``--tol``), ``--max-iter`` or ``--max-s`` of IPOPT time; ADMM until its residuals
converge or ``--rounds``. Reported: the wall time (build included) at which each path first had
a feasible objective within 1 % and 10 % (``--within``) of the best final objective of the cell
(``t_to_0.01``, ``t_to_0.1``; ADMM: the blocks' objectives summed at a round whose primal
residual is below 1e-3), its final objective and iterations, and its (seconds, objective)
trace.

    python benchmarks/width_crossover.py grid [--widths 5 10 16 24 32] [--ks 1 8 32]
        [--paths exact limited-memory bfgs admm] [--iterations 4] [--repeats 2] [--json F]
    python benchmarks/width_crossover.py converge [--cells 5:8 16:8 24:8] [--json F]

The runs in ``benchmarks/results/width-crossover/`` (``docs/performance.md``, "Width and
trajectory count"), each with ``--json`` naming its file there:

    python benchmarks/width_crossover.py grid --widths 5 10 --ks 1 8 32 --repeats 2
    python benchmarks/width_crossover.py grid --widths 16 24 32 --ks 1 8 32 --repeats 1 \
        --skip-s 20 --max-work 1e9
    python benchmarks/width_crossover.py converge --cells 5:8 10:8 \
        --paths exact limited-memory admm --rounds 10 --max-s 90
    python benchmarks/width_crossover.py converge --cells 16:8 \
        --paths exact limited-memory admm --rounds 10 --max-s 150
"""

from __future__ import annotations

import argparse
import itertools
import json
import shlex
import statistics
import sys
import time
import warnings
from typing import Any

from multi_trajectory_vdp import circle_data
from quasi_newton_vdp import fmt

from collocnode import ConsensusADMM, IpoptOptions, NeuralODE, RadauIIA, TrainingProblem, solve
from collocnode.nn import MLP
from collocnode.tools._io import write_json
from collocnode.tools._machine import describe, load_average
from collocnode.tools._markdown import table
from collocnode.transcription._nlp.hessian import hessian_from_name

N_STEPS = 58  # 2 s at the preset's 0.035 s
PATHS = ("exact", "limited-memory", "bfgs", "admm")
FEASIBLE = 1e-6  # constraint violation below which an IPOPT iterate's objective counts
ADMM_FEASIBLE = 1e-3  # primal residual below which an ADMM round's objective counts
# the exact Hessian's symbolic build [s] per squared weight count: 85 s at 2,370 weights
BUILD_S_PER_WEIGHT2 = 85.0 / 2370**2


def n_weights(h: int) -> int:
    """Weights of the two 2-h-h-1 networks."""
    return 2 * (h * h + 5 * h + 1)


def problem(h: int, k: int) -> TrainingProblem:
    model = NeuralODE([MLP((2, h, h, 1), "sigmoid") for _ in range(2)])
    return TrainingProblem(
        model, circle_data(k, N_STEPS), regularization=1e-4, initial_state="data"
    )


def leaf(path: str, intervals: int, ipopt: IpoptOptions) -> RadauIIA:
    hessian = "exact" if path == "admm" else hessian_from_name(path)
    return RadauIIA(intervals, 3, jit=False, ipopt=ipopt, hessian=hessian)


def per_iteration(h: int, k: int, path: str, args: argparse.Namespace) -> dict[str, Any]:
    """One run of ``args.iterations`` IPOPT iterations (ADMM: 2 rounds of them per block)."""
    ipopt = IpoptOptions(
        max_iter=args.iterations, tol=1e-12, print_level=0, mumps_ordering=args.ordering
    )
    inner = leaf(path, args.intervals, ipopt)
    prob = problem(h, k)
    t0 = time.perf_counter()
    if path == "admm":
        alg = ConsensusADMM(inner, blocks=min(args.blocks, k), max_rounds=2, warm_start=False)
        res = solve(prob, alg, seed=0, check=False).record(ConsensusADMM)
        rounds = [r for r in res.rounds if r.round >= 0]
        round_s = statistics.median(r.wall_s for r in rounds)
        return {
            "build": sum(res.build_s),
            "round_s": round_s,
            "s_per_iteration": round_s / args.iterations,
            "slowest_block_per_iteration": statistics.median(
                max(r.block_s) / args.iterations for r in rounds
            ),
            "wall": time.perf_counter() - t0,
        }
    sol = solve(prob, inner, seed=0, check=False)
    t, its = sol.timings, max(sol.iterations, 1)
    size = sol.solution.size
    stamps = [hh[0] for hh in sol.history]  # wall s at the end of iterations 0, 1, ...
    steps = [b - a for a, b in itertools.pairwise(stamps)]
    return {
        "iterations": sol.iterations,
        "variables": size.n_variables,
        "nnz_hessian": size.nnz_hessian,
        "build": t["build"],
        # iteration 1 holds MUMPS's symbolic analysis, paid once per solve
        "first_s": steps[0] if steps else None,
        "s_per_iteration": statistics.median(steps[1:]) if len(steps) > 1 else None,
        "ipopt_per_iteration": t["ipopt"] / its,
        "callbacks_per_iteration": t["callbacks"] / its,
        "wall": time.perf_counter() - t0,
    }


def grid(args: argparse.Namespace) -> list[dict[str, Any]]:
    rows = []
    for h in args.widths:
        for k in args.ks:
            nodes = k * args.intervals * 3
            for path in args.paths:
                row: dict[str, Any] = {
                    "h": h,
                    "weights": n_weights(h),
                    "K": k,
                    "nodes": nodes,
                    "path": path,
                    # nodes x states x weights², the Schur fill of the KKT factorization
                    "work": nodes * 2 * n_weights(h) ** 2,
                }
                if path == "admm" and k < 2:
                    continue
                est = BUILD_S_PER_WEIGHT2 * n_weights(h) ** 2
                skip = None
                if path in ("exact", "admm") and est > args.skip_s:
                    skip = f"exact build estimated {est:.0f} s > {args.skip_s:g} s"
                elif path != "limited-memory" and row["work"] > args.max_work:
                    skip = f"work {row['work']:.3g} > {args.max_work:.3g}"
                if skip:
                    row["skipped"] = skip
                    rows.append(row)
                    print(json.dumps(row), flush=True)
                    continue
                runs = [per_iteration(h, k, path, args) for _ in range(args.repeats)]
                row.update({key: statistics.median(r[key] for r in runs) for key in runs[0]})
                rows.append(row)
                print(json.dumps(row), flush=True)
    return rows


def to_target(
    h: int, k: int, path: str, args: argparse.Namespace
) -> tuple[dict[str, Any], list[tuple[float, float]]]:
    """One path to convergence: its summary and its (wall s, objective) of counted iterates."""
    ipopt = IpoptOptions(
        max_iter=args.max_iter,
        tol=args.tol,
        print_level=0,
        max_wall_time=args.max_s,
        mumps_ordering=args.ordering,
    )
    inner = leaf(path, args.intervals, ipopt)
    prob = problem(h, k)
    if path == "admm":
        block_ipopt = IpoptOptions(
            print_level=0, max_wall_time=args.max_s, mumps_ordering=args.ordering
        )
        inner = leaf(path, args.intervals, block_ipopt)
        alg = ConsensusADMM(inner, blocks=min(args.blocks, k), max_rounds=args.rounds)
        t0 = time.perf_counter()
        res = solve(prob, alg, seed=0, check=False).record(ConsensusADMM)
        wall = time.perf_counter() - t0
        clock, trace = sum(res.build_s), []
        for r in res.rounds:
            clock += r.wall_s
            if r.round >= 0 and r.primal_residual <= ADMM_FEASIBLE:
                trace.append((clock, r.objective))
        last = res.rounds[-1]
        summary = {
            "status": "converged" if res.converged else "round limit",
            "objective": last.objective,
            "rounds": len([r for r in res.rounds if r.round >= 0]),
            "iterations": sum(sum(r.iterations) for r in res.rounds),
            "primal_residual": last.primal_residual,
            "critical_path_s": res.critical_path_s,
            "wall": wall,
        }
        return summary, trace
    t0 = time.perf_counter()
    sol = solve(prob, inner, seed=0, check=False)
    wall = time.perf_counter() - t0
    build = sol.timings["build"]
    trace = [(build + hh[0], hh[2]) for hh in sol.history if hh[3] <= FEASIBLE]
    summary = {
        "status": sol.status.value,
        "objective": float(sol.objective),
        "iterations": sol.iterations,
        "build": build,
        "s_per_iteration": (sol.timings["ipopt"] + sol.timings["callbacks"])
        / max(sol.iterations, 1),
        "wall": wall,
    }
    return summary, trace


def converge(args: argparse.Namespace) -> list[dict[str, Any]]:
    rows = []
    for cell in args.cells:
        h, k = (int(x) for x in cell.split(":"))
        done = []
        for path in args.paths:
            if path == "admm" and k < 2:
                continue
            summary, trace = to_target(h, k, path, args)
            row = {"h": h, "weights": n_weights(h), "K": k, "nodes": k * args.intervals * 3}
            row.update({"path": path, **summary})
            done.append((row, trace))
            print(json.dumps(row), flush=True)
        best = min(r["objective"] for r, _ in done)
        for row, trace in done:
            for within in args.within:
                hit = [t for t, obj in trace if obj <= (1 + within) * best]
                row[f"t_to_{within:g}"] = hit[0] if hit else None
            row["trace"] = [[round(t, 3), obj] for t, obj in trace]
            rows.append(row)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("mode", choices=("grid", "converge"))
    ap.add_argument("--widths", type=int, nargs="+", default=[5, 10, 16, 24, 32])
    ap.add_argument("--ks", type=int, nargs="+", default=[1, 8, 32])
    ap.add_argument("--cells", nargs="+", default=["5:8", "16:8", "24:8"])
    ap.add_argument("--paths", nargs="+", default=list(PATHS), choices=PATHS)
    ap.add_argument("--intervals", type=int, default=20, help="mesh intervals per trajectory")
    ap.add_argument("--blocks", type=int, default=4, help="ADMM blocks of trajectories")
    ap.add_argument("--iterations", type=int, default=4)
    ap.add_argument("--ordering", default="auto", help="MUMPS ordering (IpoptOptions)")
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--skip-s", type=float, default=60.0)
    ap.add_argument("--max-work", type=float, default=1.8e9)
    ap.add_argument("--tol", type=float, default=1e-6)
    ap.add_argument("--max-iter", type=int, default=300)
    ap.add_argument("--max-s", type=float, default=120.0, help="IPOPT seconds per solve")
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--within", type=float, nargs="+", default=[0.01, 0.1])
    ap.add_argument("--json", default=None)
    args = ap.parse_args()

    warnings.simplefilter("ignore")
    meta = {
        "command": "python " + shlex.join(sys.argv),
        "machine": describe(),
        "load_average": load_average(),
        "args": vars(args),
    }
    if args.mode == "grid":
        rows = grid(args)
        cols = ["h", "weights", "K", "nodes", "path", "build", "first_s", "s_per_iteration"]
        cols += ["ipopt_per_iteration", "callbacks_per_iteration", "skipped"]
    else:
        rows = converge(args)
        cols = ["h", "weights", "K", "nodes", "path", "status", "iterations", "objective"]
        cols += ["wall", *(f"t_to_{w:g}" for w in args.within)]
    meta["load_average_end"] = load_average()
    print(f"\n{meta['machine']}, load {meta['load_average']} → {meta['load_average_end']}\n")
    print(table(cols, [[fmt(r.get(c, "–")) for c in cols] for r in rows]))
    if args.json:
        write_json(args.json, {**meta, "rows": rows})


if __name__ == "__main__":
    main()
