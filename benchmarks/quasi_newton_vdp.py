#!/usr/bin/env python
"""Exact vs partial quasi-Newton Hessians on wide Van der Pol networks (seed paper §2.5.4).

The paper's Van der Pol setup (σ = 0, two sigmoid networks 2-w-w-1, λ = 1e-4, constant state
guess) with the hidden width w raised to where the exact Hessian grows expensive: its p-p
block needs n_p second-derivative sweeps per node, and its symbolic construction alone grows
like n_p². Each Hessian choice of ``RadauIIA(hessian=...)`` is run on the same data, mesh and
initial weights; the table gives wall times (build / IPOPT / callbacks / total), iterations,
the status, the objective, the re-simulation RMSE against the truth on [0, 7], and the wall
time at which a run first reached (feasibly) 1 % of the best objective of its width.

    python benchmarks/quasi_newton_vdp.py [--widths 5 32 64] [--intervals 100] [--stages 3]
        [--hessians exact sr1 bfgs sr1-xp limited-memory] [--exact-max-width 32] [--json out.json]

``--exact-max-width`` skips the exact Hessian above that width (its symbolic build alone is
timed by ``--time-exact-build``).
"""

from __future__ import annotations

import argparse
import json
import platform
import time

import numpy as np

from collocnode._experiments.vdp import VdPOptions, evaluate, seeds, train
from collocnode.models import NeuralODE
from collocnode.nn import MLP
from collocnode.tools._markdown import table
from collocnode.tools._options import build
from collocnode.training import TrainingProblem
from collocnode.transcription._nlp.hessian import HESSIAN_NAMES
from collocnode.transcription._nlp.node_functions import build_node_functions


def run(width: int, hessian: str, args: argparse.Namespace) -> dict:
    opts = build(
        VdPOptions,
        warm_start=False,
        hidden=width,
        intervals=args.intervals,
        stages=args.stages,
        hessian=hessian,
        tol=args.tol,
        max_iter=args.max_iter,
        jit=False,  # compiling a wide exact Hessian takes longer than solving
        print_level=0,
        backend="cyipopt",
    )
    sol, _ = train(opts)
    ev = evaluate(sol, grid=11)
    return {
        "width": width,
        "n_params": sol.model.n_params,
        "hessian": hessian,
        "status": sol.status.value,
        "iterations": sol.iterations,
        "objective": sol.objective,
        "train_rmse": ev["train_rmse"],
        "nnz_hessian": sol.solution.size.nnz_hessian,
        **{k: sol.timings[k] for k in ("build", "ipopt", "callbacks", "total")},
        "s_per_iteration": (sol.timings["ipopt"] + sol.timings["callbacks"])
        / max(sol.iterations, 1),
        # (seconds since the solve started, objective) of the feasible iterates
        "_feasible": [(sol.timings["build"] + h[0], h[2]) for h in sol.history if h[3] <= FEASIBLE],
    }


FEASIBLE = 1e-6  # constraint violation below which an iterate's objective counts


def add_time_to_objective(rows: list[dict], within: float = 0.01) -> None:
    """Per width, the wall time (build included) at which each run first had a feasible iterate
    with objective within ``within`` of the best final objective of that width."""
    for width in {r["width"] for r in rows}:
        done = [r for r in rows if r["width"] == width and "objective" in r]
        if not done:
            continue
        target = (1 + within) * min(r["objective"] for r in done)
        for r in done:
            hit = [t for t, obj in r.pop("_feasible") if obj <= target]
            r["t_to_best_1pct"] = hit[0] if hit else None


def exact_build_time(width: int) -> dict:
    """Seconds to build the symbolic per-node functions, exact vs partial (no NLP, no solve)."""
    from collocnode import problems

    data = problems.get("vdp").generate(noise=0.0, seed=seeds(0)[0]).train
    model = NeuralODE([MLP((2, width, width, 1), "sigmoid") for _ in range(2)])
    dop = TrainingProblem(model, data, regularization=1e-4).to_dop(
        params_guess=model.init_params(np.random.default_rng(0))
    )
    out = {"width": width, "n_params": model.n_params}
    for mode in ("partial-pp", "exact"):
        t = time.perf_counter()
        build_node_functions(dop, mode)
        out[mode] = time.perf_counter() - t
    return out


def fmt(x: object) -> str:
    """A table cell: "–" for None, floats to 3 significant digits."""
    if x is None:
        return "–"
    if isinstance(x, float):
        return f"{x:.3g}"
    return str(x)


def markdown(rows: list[dict]) -> str:
    cols = [
        "width",
        "n_params",
        "hessian",
        "status",
        "iterations",
        "objective",
        "train_rmse",
        "build",
        "ipopt",
        "callbacks",
        "total",
        "s_per_iteration",
        "t_to_best_1pct",
    ]
    return table(cols, ([fmt(r.get(c)) for c in cols] for r in rows))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--widths", type=int, nargs="+", default=[5, 32, 64])
    ap.add_argument(
        "--hessians",
        nargs="+",
        default=["exact", "sr1", "bfgs", "sr1-xp", "limited-memory"],
        choices=HESSIAN_NAMES,
    )
    ap.add_argument("--intervals", type=int, default=100)
    ap.add_argument("--stages", type=int, default=3)
    ap.add_argument("--tol", type=float, default=1e-7)
    ap.add_argument("--max-iter", type=int, default=300)
    ap.add_argument("--exact-max-width", type=int, default=32)
    ap.add_argument("--time-exact-build", type=int, nargs="*", default=[])
    ap.add_argument("--json")
    args = ap.parse_args()

    rows = []
    for width in args.widths:
        for hessian in args.hessians:
            if hessian == "exact" and width > args.exact_max_width:
                rows.append({"width": width, "hessian": hessian, "status": "skipped"})
                continue
            row = run(width, hessian, args)
            rows.append(row)
            print(markdown([row]).splitlines()[-1], flush=True)
    add_time_to_objective(rows)
    builds = [exact_build_time(w) for w in args.time_exact_build]
    print(f"\n{platform.processor() or platform.machine()}, {args.intervals} x {args.stages}\n")
    print(markdown(rows))
    for b in builds:
        print(
            f"width {b['width']} ({b['n_params']} weights): symbolic node functions "
            f"{b['partial-pp']:.1f} s partial, {b['exact']:.1f} s exact"
        )
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"args": vars(args), "rows": rows, "builds": builds}, fh, indent=2)


if __name__ == "__main__":
    main()
