#!/usr/bin/env python
"""Cost of training one set of weights on several trajectories (Van der Pol, K trajectories).

K trajectories of the Van der Pol oscillator start from K points of the circle of radius 2 (the
paper's x(0) = (2, 0) is the first) and share the two 2-5-5-1 sigmoid networks of the paper. Each
trajectory has its own node states on its own mesh (``--intervals`` x 5 over [0, 7]); the
weights are one set. Every K runs a fixed number of IPOPT iterations (``--iterations``), so the
per-iteration costs compare like with like, and reports the NLP size, the build time and the
IPOPT and callback time per iteration, each as a ratio to K = 1 (medians of ``--repeats`` runs,
JIT cache warm). Linear growth means the ratios track K.

    python benchmarks/multi_trajectory_vdp.py [--ks 1 2 4 8] [--intervals 100] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import statistics

import numpy as np

from collocnode import Trajectory, problems, solve
from collocnode.models import NeuralODE
from collocnode.nn import MLP
from collocnode.training import TrainingProblem
from collocnode.transcription import IpoptOptions, RadauIIA


def circle_data(k: int, n_steps: int | None = None) -> list[Trajectory]:
    """K noise-free Van der Pol trajectories from K points of the circle of radius 2, the
    first at (2, 0); ``n_steps`` samples of 0.035 s each (None: the preset's 7 s)."""
    system = problems.get("vdp")
    angles = 2 * np.pi * np.arange(k) / k
    starts = 2.0 * np.column_stack([np.cos(angles), np.sin(angles)])
    return [
        system.generate(noise=0.0, x0=x0, n_steps=n_steps, n_train=n_steps).train for x0 in starts
    ]


def run(k: int, intervals: int, iterations: int, jit: bool = True) -> dict:
    data = circle_data(k)
    model = NeuralODE([MLP((2, 5, 5, 1), "sigmoid") for _ in range(2)])
    problem = TrainingProblem(model, data, regularization=1e-4, initial_state="data")
    ipopt = IpoptOptions(max_iter=iterations, tol=1e-12, print_level=0, mumps_ordering="metis")
    sol = solve(problem, RadauIIA(intervals, 5, jit=jit, ipopt=ipopt), seed=0)
    t = sol.timings
    size = sol.solution.size
    return {
        "variables": size.n_variables,
        "nnz_jacobian": size.nnz_jacobian,
        "nnz_hessian": size.nnz_hessian,
        "build": t["build"],
        "ipopt_per_it": t["ipopt"] / max(sol.iterations, 1),
        "callbacks_per_it": t["callbacks"] / max(sol.iterations, 1),
        "iterations": sol.iterations,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    ap.add_argument("--ks", type=int, nargs="+", default=[1, 2, 4, 8])
    ap.add_argument("--intervals", type=int, default=100)
    ap.add_argument("--iterations", type=int, default=20)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()

    rows = {}
    for k in args.ks:
        run(k, args.intervals, 2)  # warm-up: fills the JIT cache
        runs = [run(k, args.intervals, args.iterations) for _ in range(args.repeats)]
        rows[k] = {key: statistics.median(r[key] for r in runs) for key in runs[0]}
    base = rows[args.ks[0]]
    cols = ("variables", "nnz_jacobian", "nnz_hessian", "build", "ipopt_per_it", "callbacks_per_it")
    print(f"{'K':>3} " + " ".join(f"{c:>17}" for c in cols))
    for k, r in rows.items():
        cells = [f"{r[c]:9.4g} ({r[c] / base[c]:4.1f}x)" for c in cols]
        print(f"{k:>3} " + " ".join(f"{c:>17}" for c in cells))
    print(f"(medians of {args.repeats} runs, {args.iterations} IPOPT iterations each; times in s)")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({str(k): r for k, r in rows.items()}, fh, indent=2)


if __name__ == "__main__":
    main()
