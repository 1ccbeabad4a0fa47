#!/usr/bin/env python
"""Cold vs warm-started collocation training on Van der Pol (Langenkamp et al. §4.2 setup).

For each noise level and seed the same data and the same random initial weights are trained
twice on the paper's mesh (500 intervals x 5 Radau stages, two 2-5-5-1 sigmoid nets, tol 1e-7,
at most 200 iterations):

* cold: the paper's guess, x(t0) at every node and the random weights;
* warm: :func:`collocnode.training._warmstart.fit_initial_guess` (GCV smoothing spline, regression
of
  the networks on the derivative estimates, starting from the same random weights), then the NLP.

A run succeeds when its re-simulation from x(0) stays within an RMSE of 0.1 of the noise-free
truth over [0, 32] (the criterion of ``scripts/train_collocation.py vdp --seeds``). Warm wall
time includes the smoothing and the regression. One warm-up run per arm fills the JIT caches
first and is not counted. Runs are sequential so that their timings do not compete.

    python benchmarks/warmstart_vdp.py [--seeds 20] [--noise 0 0.1] [--metis] [--json out.json]
    python benchmarks/warmstart_vdp.py --smoothing-only [--seeds 20] [--noise 0 0.1 0.5]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from dataclasses import replace
from typing import Any

import numpy as np

from collocnode import problems
from collocnode._experiments.vdp import T_ROBUST, VdPOptions, seeds
from collocnode._solve import solve
from collocnode.models import NeuralODE
from collocnode.models._simulate import SimulationError
from collocnode.nn import MLP
from collocnode.tools._options import build
from collocnode.training import TrainingProblem
from collocnode.training._warmstart import METHODS, fit_initial_guess, smooth


def _problem(opts: VdPOptions) -> tuple[TrainingProblem, int]:
    system = problems.get("vdp")
    noise_seed, weight_seed = seeds(opts.seed)
    data = system.generate(noise=opts.noise, seed=noise_seed).train
    nets = [MLP((2, *opts.recipe.hidden, 1), opts.recipe.activation) for _ in range(2)]
    problem = TrainingProblem(
        NeuralODE(nets, state_names=system.state_names),
        data,
        regularization=opts.lam,
        initial_state=system.x0,
        state_guess="constant",
    )
    return problem, weight_seed


def _rmse(sol: Any) -> float | None:
    system = problems.get("vdp")
    t = np.linspace(0.0, T_ROBUST, 1601)
    try:
        x = sol.simulate(t, system.x0, rtol=1e-9, atol=1e-9).x
    except SimulationError:
        return None
    return float(np.sqrt(np.mean((x - system.simulate(t).x) ** 2)))


def run_one(opts: VdPOptions, arm: str, method: str, metis: bool) -> dict[str, Any]:
    problem, weight_seed = _problem(opts)
    alg = opts.recipe.collocation.algorithm()
    if metis:
        alg = replace(alg, ipopt=replace(alg.ipopt, extra={"mumps_pivot_order": 5}))
    t0 = time.perf_counter()
    row: dict[str, Any] = {"seed": opts.seed, "noise": opts.noise, "arm": arm}
    if arm == "warm":
        ws = fit_initial_guess(problem, method, seed=weight_seed, jit=True)
        row.update(
            regression_status=ws.status.value,
            regression_iterations=ws.iterations,
            regression_s=ws.timings["total"],
        )
        sol = solve(ws.problem, alg)
    else:
        sol = solve(problem, alg, seed=weight_seed)
    row.update(
        status=sol.status.value,
        iterations=sol.iterations,
        nlp_s=sol.timings["total"],
        total_s=time.perf_counter() - t0,
        objective=sol.objective,
    )
    row["rmse_0_32"] = _rmse(sol)
    row["success"] = row["rmse_0_32"] is not None and row["rmse_0_32"] <= opts.success_tol
    return row


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    out = {
        "runs": len(rows),
        "success_rate": float(np.mean([r["success"] for r in rows])),
        "converged": sum(r["status"] == "success" for r in rows),
        "median_iterations": statistics.median(r["iterations"] for r in rows),
        "median_total_s": statistics.median(r["total_s"] for r in rows),
        "median_nlp_s": statistics.median(r["nlp_s"] for r in rows),
    }
    if "regression_s" in rows[0]:
        out["median_regression_s"] = statistics.median(r["regression_s"] for r in rows)
        out["median_regression_iterations"] = statistics.median(
            r["regression_iterations"] for r in rows
        )
    return out


def smoothing_table(noises: list[float], n_seeds: int) -> None:
    """RMSE of the smoothed states and derivative estimates against the noise-free truth on the
    Van der Pol training window, median over the seeds' noise realisations."""
    system = problems.get("vdp")
    print("| σ | method | state RMSE | derivative RMSE |\n|---|---|---|---|")
    for noise in noises:
        for method in METHODS:
            sx, sd = [], []
            for k in range(n_seeds):
                split = system.generate(noise=noise, seed=seeds(k)[0])
                truth = system.simulate(split.train.t).x
                xs, xd = smooth(split.train, method)
                sx.append(np.sqrt(np.mean((xs - truth) ** 2)))
                sd.append(np.sqrt(np.mean((xd - system.rhs(0.0, truth)) ** 2)))
            print(f"| {noise:g} | {method} | {np.median(sx):.2g} | {np.median(sd):.2g} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--noise", type=float, nargs="+", default=[0.0, 0.1])
    ap.add_argument("--method", default="spline", choices=("spline", "kernel", "fft"))
    ap.add_argument("--metis", action="store_true", help="MUMPS with METIS ordering (both arms)")
    ap.add_argument("--json", default=None, help="also write every run to this file")
    ap.add_argument(
        "--smoothing-only",
        action="store_true",
        help="only compare the smoothers' state and derivative errors (no training)",
    )
    args = ap.parse_args()
    if args.smoothing_only:
        smoothing_table(args.noise, args.seeds)
        return

    base = build(VdPOptions, print_level=0)
    report: dict[str, Any] = {"settings": vars(args), "summary": {}, "runs": []}
    arms = ("cold", "warm")
    for noise in args.noise:
        opts = replace(base, noise=noise)
        for arm in arms:  # one warm-up run per arm fills the JIT caches; not counted
            run_one(replace(opts, seed=10_000), arm, args.method, args.metis)
        rows: dict[str, list[dict[str, Any]]] = {arm: [] for arm in arms}
        for k in range(args.seeds):
            # cold and warm alternate, so that a change in machine load hits both alike
            for arm in arms:
                rows[arm].append(run_one(replace(opts, seed=k), arm, args.method, args.metis))
        for arm in arms:
            report["runs"] += rows[arm]
            report["summary"][f"{arm} σ={noise:g}"] = summarize(rows[arm])
            print(f"σ = {noise:g} {arm}: {summarize(rows[arm])}", flush=True)

    print(
        "\n| σ | start | success | IPOPT converged | median NLP iterations | median total [s] "
        "| median NLP [s] | median regression [s] |\n|---|---|---|---|---|---|---|---|"
    )
    for key, s in report["summary"].items():
        arm, sigma = key.split(" ")
        reg = f"{s['median_regression_s']:.2f}" if "median_regression_s" in s else "–"
        print(
            f"| {sigma[2:]} | {arm} | {100 * s['success_rate']:.0f} % | "
            f"{s['converged']}/{s['runs']} | {s['median_iterations']:.0f} | "
            f"{s['median_total_s']:.2f} | "
            f"{s['median_nlp_s']:.2f} | {reg} |"
        )
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(report, fh, indent=2, default=str)


if __name__ == "__main__":
    main()
