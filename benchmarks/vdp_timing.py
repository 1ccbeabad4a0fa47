#!/usr/bin/env python
"""Van der Pol timing benchmark (Langenkamp et al. §4.2 setup).

Runs the paper's setup (500 intervals x 5 stages, two 2-5-5-1 sigmoid nets, σ = 0), the same
warm-started from smoothed data (``--warm-start`` of the VdP experiment), and the global
spectral variant (one interval, 70 fLGR nodes) several times with a warm JIT cache and reports
the median wall-time breakdown; the 500 x 5 and global setups run again with MUMPS's automatic
ordering as the reference for the experiment's default METIS ordering. In the same run it solves
one smaller mesh both ways, the structured transcription and the naive one (the whole NLP as one
CasADi graph, ``nlpsol(..., expand=True)``), and reports their ratio.

    python benchmarks/vdp_timing.py [--repeats 5] [--naive-intervals 50] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time

import casadi as ca
import numpy as np

from collocnode import problems
from collocnode._experiments.vdp import VdPOptions, seeds, train
from collocnode.models import NeuralODE
from collocnode.nn import MLP
from collocnode.tools._options import build
from collocnode.training import TrainingProblem
from collocnode.transcription import IpoptOptions, Mesh, StructuredNLP
from collocnode.transcription._ipopt.backends import solve_ipopt
from collocnode.transcription._nlp.naive import naive_solver


def timed_runs(opts: VdPOptions, repeats: int) -> dict:
    train(opts)  # warm-up: fills the JIT cache, loads libraries
    rows = []
    for _ in range(repeats):
        sol, _ = train(opts)
        rows.append(
            {
                **sol.timings,
                "iterations": sol.iterations,
                "status": sol.status.value,
                "objective": sol.objective,
            }
        )
    med = {
        k: statistics.median(r.get(k, 0.0) for r in rows)
        for k in ("build", "ipopt", "callbacks", "warm_start", "total", "iterations")
    }
    return {"median": med, "runs": rows}


def naive_vs_structured(intervals: int, stages: int) -> dict:
    """The same NLP on a smaller mesh, transcribed both ways (no JIT on either side)."""
    system = problems.get("vdp")
    noise_seed, weight_seed = seeds(0)
    data = system.generate(noise=0.0, seed=noise_seed).train
    model = NeuralODE([MLP((2, 5, 5, 1), "sigmoid") for _ in range(2)])
    prob = TrainingProblem(model, data, regularization=1e-4, initial_state=system.x0)
    dop = prob.to_dop(params_guess=model.init_params(np.random.default_rng(weight_seed)))
    mesh = Mesh.equidistant(0.0, 7.0, intervals, stages)
    ipopt = IpoptOptions(tol=1e-7, max_iter=200, print_level=0)
    out = {}

    t0 = time.perf_counter()
    nlp = StructuredNLP(dop, mesh)
    z0 = nlp.initial_guess()
    build = time.perf_counter() - t0
    res = solve_ipopt(nlp, z0, ipopt)
    out["structured"] = {
        "build": build,
        "solve": res.t_total,
        "total": build + res.t_total,
        "iterations": res.iterations,
        "objective": res.objective,
    }

    t0 = time.perf_counter()
    solver = naive_solver(dop, mesh, ipopt.ipopt_dict())
    build = time.perf_counter() - t0
    t0 = time.perf_counter()
    sol = solver(x0=z0, lbx=nlp.lbz, ubx=nlp.ubz, lbg=nlp.lbg, ubg=nlp.ubg)
    solve = time.perf_counter() - t0
    st = solver.stats()
    out["naive"] = {
        "build": build,
        "solve": solve,
        "total": build + solve,
        "iterations": st["iter_count"],
        "objective": float(sol["f"]),
    }
    out["ratio_total"] = out["naive"]["total"] / out["structured"]["total"]
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--naive-intervals", type=int, default=50)
    ap.add_argument("--backend", default="casadi", choices=("casadi", "cyipopt"))
    ap.add_argument("--json", default=None, help="also write the figures to this file")
    args = ap.parse_args()

    report = {
        "machine": {
            "cpus": __import__("os").cpu_count(),
            "python": platform.python_version(),
            "casadi": ca.__version__,
            "processor": platform.processor(),
        },
        "local_500x5": timed_runs(
            build(VdPOptions, print_level=0, backend=args.backend, warm_start=False), args.repeats
        ),
        "local_500x5_warm": timed_runs(
            build(VdPOptions, print_level=0, backend=args.backend, warm_start=True), args.repeats
        ),
        "global_70": timed_runs(
            build(VdPOptions, spectral=70, print_level=0, backend=args.backend, warm_start=False),
            args.repeats,
        ),
        # reference for the default METIS ordering: MUMPS's automatic choice, same runs
        "local_500x5_auto": timed_runs(
            build(
                VdPOptions,
                print_level=0,
                backend=args.backend,
                mumps_ordering="auto",
                warm_start=False,
            ),
            args.repeats,
        ),
        "global_70_auto": timed_runs(
            build(
                VdPOptions,
                spectral=70,
                print_level=0,
                backend=args.backend,
                mumps_ordering="auto",
                warm_start=False,
            ),
            args.repeats,
        ),
        "naive_vs_structured": naive_vs_structured(args.naive_intervals, 5),
    }
    print(f"{'setup':<18}{'total':>8}{'build':>8}{'IPOPT':>8}{'callbk':>8}{'iters':>7}")
    for key, timed in report.items():
        if "median" not in timed:
            continue
        m = timed["median"]
        print(
            f"{key:<18}{m['total']:8.2f}{m['build']:8.2f}{m['ipopt']:8.2f}"
            f"{m['callbacks']:8.2f}{m['iterations']:7.0f}"
        )
    nv = report["naive_vs_structured"]
    print(f"\nsame NLP on {args.naive_intervals}x5 nodes:")
    for key in ("structured", "naive"):
        r = nv[key]
        print(
            f"  {key:<11} build {r['build']:7.2f} s  solve {r['solve']:7.2f} s  "
            f"total {r['total']:7.2f} s  ({r['iterations']} iterations, "
            f"objective {r['objective']:.6g})"
        )
    print(f"  naive / structured total time: {nv['ratio_total']:.1f}x")
    print(f"(medians of {args.repeats} runs; JIT cache warm; backend {args.backend})")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(report, fh, indent=2)


if __name__ == "__main__":
    main()
