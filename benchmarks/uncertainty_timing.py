#!/usr/bin/env python
"""What ``sol.uncertainty()`` costs beside the solve: the covariance against one IPOPT
iteration, and the quarter vehicle's characteristic bands against its training.

Van der Pol: the paper's setup (500 intervals x 5 stages, two 2-5-5-1 sigmoid networks, 102
weights) on data with σ = 0.1 (``python scripts/train_collocation.py vdp --noise 0.1``); the
quarter vehicle: strategy W with the road as an input (four states, 12,501 nodes, 92 weights;
``--qvm-duration`` shortens the 42 s road, ``--qvm-max-iter`` caps the full problem's
iterations, 5 by default: the quality of the experiment's 26, see docs/performance.md).

Each system is trained once. One IPOPT iteration is the median wall time between consecutive
iterations of that solve (IPOPT's own work and the callbacks' function evaluations). Then
``sol.uncertainty()`` runs ``--repeats`` times per Hessian choice: the first call (it reads the
NLP's sparsity patterns once) is reported apart from the median of the others, with the
median of each step. For the quarter vehicle the bands of the friction and the spring over
±4σ of the training inputs (801 points, the experiment's figure) by the delta method and by 500
draws are timed too, against the training's wall time.

    python benchmarks/uncertainty_timing.py [--systems vdp,qvm] [--repeats 5]
        [--qvm-duration 42] [--qvm-max-iter 5] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
import warnings
from typing import Any

import numpy as np

from collocnode.tools._machine import describe, load_average
from collocnode.tools._options import replace_flat

HESSIANS = ("gauss-newton", "exact")


def per_iteration(sol: Any) -> float:
    """Median wall time between consecutive IPOPT iterations of the solve [s]."""
    times = np.array([h[0] for h in sol.solution.history])
    return float(np.median(np.diff(times)))


def time_uncertainty(sol: Any, repeats: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for hessian in HESSIANS:
        rows = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for _ in range(repeats + 1):
                rows.append(sol.uncertainty(hessian=hessian).timings)
        steps = {k for r in rows[1:] for k in r}
        out[hessian] = {
            "first_s": rows[0]["total"],
            "median_s": statistics.median(r["total"] for r in rows[1:]),
            "steps_median_s": {
                k: statistics.median(r.get(k, 0.0) for r in rows[1:]) for k in steps
            },
        }
    return out


def vdp(repeats: int) -> dict[str, Any]:
    from collocnode._experiments.vdp import VdPOptions, train

    opts = VdPOptions(noise=0.1)
    opts = replace_flat(opts, print_level=0, warm_start=False)
    start = time.perf_counter()
    sol, _ = train(opts)
    train_s = time.perf_counter() - start
    return {
        "status": sol.status.value,
        "iterations": sol.iterations,
        "train_s": train_s,
        "ipopt_iteration_s": per_iteration(sol),
        "uncertainty": time_uncertainty(sol, repeats),
    }


def qvm(repeats: int, duration: float, max_iter: int) -> dict[str, Any]:
    from collocnode._experiments.qvm import QVMOptions, generate
    from collocnode.recipes.qvm import QVMRecipe, input_spread

    recipe = replace_flat(
        QVMRecipe(strategy="W", road_as_input=True),
        print_level=0,
        max_iter=max_iter,
        stagnation_window=0,
    )
    opts = QVMOptions(duration=duration, recipe=recipe)
    system, split = generate(opts)
    start = time.perf_counter()
    trained = recipe.train(system, split.train, seed=0)
    train_s = time.perf_counter() - start
    sol = trained.solution
    result = {
        "status": sol.status.value,
        "iterations": sol.iterations,
        "train_s": train_s,
        "ipopt_iteration_s": per_iteration(sol),
        "uncertainty": time_uncertainty(sol, repeats),
    }
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        unc = sol.uncertainty()
    bands: dict[str, Any] = {}
    for name, sigma in zip(("friction", "spring"), input_spread(split.train), strict=True):
        x = np.linspace(-4 * sigma, 4 * sigma, 801)
        for method in ("delta", "sampling"):
            rows = []
            for _ in range(repeats):
                tick = time.perf_counter()
                unc.block_band(name, x, method=method, samples=500)
                rows.append(time.perf_counter() - tick)
            bands[f"{name}_{method}_s"] = statistics.median(rows)
    result["bands"] = bands
    result["bands_and_covariance_s"] = result["uncertainty"]["gauss-newton"]["first_s"] + sum(
        v for k, v in bands.items() if k.endswith("_delta_s")
    )
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--systems", default="vdp,qvm")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--qvm-duration", type=float, default=42.0)
    ap.add_argument("--qvm-max-iter", type=int, default=5)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    out: dict[str, Any] = {"machine": describe(), "load_average_start": load_average()}
    for system in args.systems.split(","):
        if system == "vdp":
            out["vdp"] = vdp(args.repeats)
        elif system == "qvm":
            out["qvm"] = qvm(args.repeats, args.qvm_duration, args.qvm_max_iter)
        else:
            raise SystemExit(f"unknown system {system!r}; choose from vdp, qvm")
        res = out[system]
        it = res["ipopt_iteration_s"]
        print(
            f"{system}: trained in {res['train_s']:.1f} s ({res['status']}, "
            f"{res['iterations']} iterations)"
        )
        print(f"  one IPOPT iteration {it:.3f} s")
        for hessian, row in res["uncertainty"].items():
            print(
                f"  {hessian}: median {row['median_s']:.3f} s ({row['median_s'] / it:.2f} "
                f"iterations), first call {row['first_s']:.3f} s; steps "
                + ", ".join(f"{k} {v:.3f}" for k, v in sorted(row["steps_median_s"].items()))
            )
        if "bands" in res:
            print(
                "  bands: "
                + ", ".join(f"{k} {v:.3f}" for k, v in res["bands"].items())
                + f"; covariance and delta bands {res['bands_and_covariance_s']:.2f} s = "
                f"{100 * res['bands_and_covariance_s'] / res['train_s']:.1f} % of the training"
            )
    out["load_average_end"] = load_average()
    out["command"] = (
        f"python benchmarks/uncertainty_timing.py --systems {args.systems} --repeats "
        f"{args.repeats} --qvm-duration {args.qvm_duration} --qvm-max-iter {args.qvm_max_iter}"
    )
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(out, fh, indent=1)


if __name__ == "__main__":
    main()
