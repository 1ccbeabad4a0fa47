#!/usr/bin/env python
"""Consensus ADMM on the quarter vehicle (Langenkamp et al. §4.1) against the single NLP.

Both start where strategy W's polish starts: the regression of the blocks on the observed
accelerations (eq. 15, :func:`collocnode.training._warmstart.fit_initial_guess`), its smoothed
states as the node states' guess. The model is the paper's four-state formulation, the mesh the
paper's (2500 intervals per 42 s, 5 stages), the data 2 % noise at 1 kHz.

- ``windows``: the preset's 42 s road cut into ``--blocks`` time windows (the states at the
  joins shared). The single NLP is strategy W's polish as ``train_collocation.py qvm`` runs it
  (the stagnation rule of §4.1.3 on, at most 150 iterations).
- ``roads``: ``--roads`` roads of 42 s each (a fleet of drives; the training roads are
  class "D" with seeds 0, 2, 3, ...: seed 1 is left out because the unseen test road is the
  class "C" road of seed 1, the same random phases), one block per road. The single NLP is
  built and run for ``--single-iterations`` IPOPT iterations on 1, 2, 4, ... roads
  (``--single-roads``): its peak memory and time per iteration, extrapolated to all ``--roads``
  by a straight line through the measured points (stated as an extrapolation). With
  ``--single-iterations 0`` it runs strategy W's whole polish instead and is scored like ADMM
  (``--single-roads 8 --single-iterations 0 --workers 0``: the single NLP on all roads alone).

ADMM runs on a local Dask cluster (``--workers``, one thread each), every block an actor; each
round re-solves every block for at most ``--block-iterations`` IPOPT iterations from its last
iterate (inexact ADMM). Every run is scored as the experiment scores strategy W: the unseen
road's acceleration RMSE over the noise floor, and the learned friction and spring against the
truth (largest error / range of the true curve over ±2σ of road 0's training inputs).
Memory is a process's peak resident size; a worker's is counted above its idle size. The
critical path (slowest build + Σ over rounds of the slowest block) projects the wall time with
one worker per block. Repeats use seeds 0, 1, ... (the noise and the initial weights); the
summary gives medians.

    python benchmarks/admm_qvm.py windows [--blocks 8] [--rounds 20] [--workers 1,2]
    python benchmarks/admm_qvm.py roads [--roads 8] [--single-roads 1,2,4] [--single-iterations 3]
        [--workers 2]
    common: [--block-iterations 10] [--rho 1] [--acceleration] [--repeats 3 / 1] [--json F]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
import warnings
from concurrent.futures import ProcessPoolExecutor
from dataclasses import replace
from multiprocessing import get_context
from typing import Any

import numpy as np

from collocnode import ConsensusADMM, RadauIIA, problems, solve
from collocnode._experiments.qvm import QVMOptions, evaluate
from collocnode.problems._road import ISO8608Road
from collocnode.recipes.qvm import HORIZON_S, hybrid_model
from collocnode.tools._machine import peak_memory_mb, run_record
from collocnode.tools._options import replace_flat
from collocnode.training._warmstart import fit_initial_guess


def road_seeds(n: int) -> list[int]:
    """Seeds of ``n`` training roads: 0, 2, 3, ... (1 is the unseen road's phases)."""
    return [0, *range(2, n + 1)]


def setup(kind: str, n_roads: int, args: argparse.Namespace) -> dict[str, Any]:
    """The regression-started training problem of one run, with what scores it."""
    base = QVMOptions(seed=args.seed, duration=args.duration)
    recipe = replace_flat(
        base.recipe, strategy="W", road_as_input=True, print_level=0, jit=not args.no_jit
    )
    system = problems.get("qvm")
    systems = [system] + [
        type(system)(road=ISO8608Road.paper_calibrated("D", seed=s))
        for s in road_seeds(n_roads)[1:]
    ]
    splits = [
        s.generate(noise=base.noise, seed=args.seed + k, n_steps=round(args.duration * 1000) + 1)
        for k, s in enumerate(systems)
    ]
    data = [s.train for s in splits]
    friction, spring = recipe.blocks(system, data[0])
    model = hybrid_model(system, friction, spring, road_as_input=True)
    p0 = model.init_params(np.random.default_rng(args.seed))
    if kind == "windows":
        problem = recipe.problem(model, data[0], system.road, "data", p0)
    else:
        problem = recipe.problem(model, data, [s.road for s in systems], "data", p0)
    t = time.perf_counter()
    regression = recipe.regression.warm_started(RadauIIA(), jit=recipe.collocation.jit)
    fit = fit_initial_guess(
        problem,
        regression.smoothing,
        seed=args.seed,
        ipopt=regression.ipopt,
        jit=regression.jit,
        stride=regression.stride,
        hessian=regression.hessian,
        stop_rtol=regression.stop_rtol,
    )
    return {
        "system": system,
        "split": splits[0],
        "settings": recipe.collocation,
        "problem": fit.problem,
        "regression_s": time.perf_counter() - t,
        # per road, scaled to its duration as the recipe does
        "intervals": max(1, round(recipe.collocation.intervals * args.duration / HORIZON_S)),
    }


def scores(sol: Any, run: dict[str, Any]) -> dict[str, Any]:
    metrics, _ = evaluate(sol, run["system"], run["split"])
    char = metrics["characteristic"]
    return {
        "test_rmse_ratio": metrics.get("test_rmse_ratio"),
        "friction_error": char["friction"]["max_rel_range"],
        "spring_error": char["spring"]["max_rel_range"],
        "simulation_error": metrics["simulation_error"],
    }


def single(kind: str, n_roads: int, args: argparse.Namespace) -> dict[str, Any]:
    """The single NLP, in a fresh process (its peak memory is this run's)."""
    warnings.simplefilter("ignore")
    run = setup(kind, n_roads, args)
    settings = run["settings"]
    limited = kind == "roads" and args.single_iterations > 0
    if limited:  # memory and time per iteration only
        settings = replace(settings, max_iter=args.single_iterations, stagnation_window=0)
    t = time.perf_counter()
    sol = solve(run["problem"], settings.solver(run["intervals"]), check=False)
    wall = time.perf_counter() - t
    out = {
        "roads": n_roads,
        "status": str(sol.status),
        "wall_s": wall,
        "timings": dict(sol.timings),
        "iterations": int(sol.iterations),
        # IPOPT's own work and the function evaluations, per iteration
        "per_iteration_s": (sol.timings["ipopt"] + sol.timings["callbacks"])
        / max(int(sol.iterations), 1),
        "objective": float(sol.objective),
        "n_variables": sol.size.n_variables,
        "regression_s": run["regression_s"],
        "peak_mb": peak_memory_mb(),
    }
    if not limited:
        out.update(scores(sol, run))
    return out


def admm(kind: str, args: argparse.Namespace, workers: int) -> dict[str, Any]:
    from distributed import Client, LocalCluster

    warnings.simplefilter("ignore")
    run = setup(kind, args.roads if kind == "roads" else 1, args)
    settings = replace(
        run["settings"], max_iter=args.block_iterations, stagnation_window=0, max_wall_time=None
    )
    with (
        LocalCluster(
            n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        Client(cluster) as client,
    ):
        client.run(__import__, "collocnode")
        idle = client.run(peak_memory_mb)
        alg = ConsensusADMM(
            settings.algorithm(run["intervals"]),
            blocks=args.blocks,
            split="windows" if kind == "windows" else "trajectories",
            max_rounds=args.rounds,
            rho=args.rho,
            warm_start=False,  # the regression is every block's start
            acceleration=args.acceleration,
            client=client,
        )
        t = time.perf_counter()
        sol = solve(run["problem"], alg, check=False)
        wall = time.perf_counter() - t
        peak = client.run(peak_memory_mb)
    res = sol.record(ConsensusADMM)
    rounds = [r for r in res.rounds if r.round >= 0]
    return {
        "status": str(sol.status),
        "wall_s": wall,
        "regression_s": run["regression_s"],
        "objective": float(rounds[-1].objective),
        "rounds": len(rounds),
        "round_s": statistics.median(r.wall_s for r in rounds),
        "build_s": max(res.build_s),
        "critical_path_s": res.critical_path_s,
        "primal_residual": rounds[-1].primal_residual,
        "dual_residual": rounds[-1].dual_residual,
        "rho": rounds[-1].rho,
        "history": [
            {"objective": r.objective, "primal": r.primal_residual, "wall_s": r.wall_s}
            for r in rounds
        ],
        "worker_peak_mb": max(peak[w] - idle[w] for w in peak),
        "worker_idle_mb": max(idle.values()),
        **scores(sol, run),
    }


def fresh(fn: Any, *a: Any) -> Any:
    """``fn(*a)`` in a fresh process (its peak memory is the call's own)."""
    with ProcessPoolExecutor(1, mp_context=get_context("spawn")) as pool:
        return pool.submit(fn, *a).result()


def line_through(xs: list[float], ys: list[float], at: float) -> float:
    """The least-squares straight line through (xs, ys), evaluated at ``at``."""
    if len(xs) == 1:
        return ys[0] * at / xs[0]
    slope, offset = np.polyfit(xs, ys, 1)
    return float(slope * at + offset)


def median_rows(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Medians of the numeric fields over the repeats."""
    out: dict[str, Any] = {"statuses": sorted({str(r["status"]) for r in rows})}
    for key, value in rows[0].items():
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            values = [r[key] for r in rows if r.get(key) is not None]
            out[key] = statistics.median(values) if values else None
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("kind", choices=("windows", "roads"))
    ap.add_argument("--blocks", type=int, default=None, help="default 8 windows / one per road")
    ap.add_argument("--roads", type=int, default=8)
    ap.add_argument("--single-roads", default="1,2,4", help="roads of the single-NLP runs")
    ap.add_argument(
        "--single-iterations",
        type=int,
        default=3,
        help="roads: IPOPT iterations of the single NLP (0: strategy W's whole polish, scored)",
    )
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--block-iterations", type=int, default=10)
    ap.add_argument("--rho", type=float, default=1.0)
    ap.add_argument("--acceleration", action="store_true")
    ap.add_argument(
        "--workers", default=None, help="default 1,2 (windows), 2 (roads); 0: no ADMM run"
    )
    ap.add_argument("--repeats", type=int, default=None, help="seeds 0, 1, ...: default 3 / 1")
    ap.add_argument("--duration", type=float, default=42.0, help="seconds of each road (<= 42)")
    ap.add_argument("--no-jit", action="store_true", help="no gcc (quick runs)")
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    args.blocks = args.blocks or (8 if args.kind == "windows" else args.roads)
    args.repeats = args.repeats or (3 if args.kind == "windows" else 1)
    workers = args.workers or ("1,2" if args.kind == "windows" else "2")
    counts = sorted({int(w) for w in workers.split(",")} - {0})
    report: dict[str, Any] = {
        **run_record("benchmarks/admm_qvm.py"),
        "args": vars(args),
        "repeats": [],
    }

    def save() -> None:
        if args.json:
            with open(args.json, "w") as fh:
                json.dump(report, fh, indent=1, default=str)

    def show(label: str, row: dict[str, Any]) -> None:
        row = {k: v for k, v in row.items() if k != "history"}
        print(f"{label}: " + json.dumps(row, default=str), flush=True)

    if args.kind == "roads":  # the single NLP's memory and time per iteration, seed 0
        args.seed = 0
        report["single"] = []
        for n in sorted({int(r) for r in args.single_roads.split(",")}):
            report["single"].append(fresh(single, "roads", n, args))
            show(f"single NLP, {n} roads", report["single"][-1])
            save()
        xs = [r["roads"] for r in report["single"]]
        report["extrapolated"] = {
            key: line_through(xs, [r[key] for r in report["single"]], args.roads)
            for key in ("peak_mb", "per_iteration_s", "n_variables")
        }
        show(f"single NLP on {args.roads} roads, extrapolated", report["extrapolated"])
    for seed in range(args.repeats):
        args.seed = seed
        run: dict[str, Any] = {"seed": seed, "admm": {}}
        report["repeats"].append(run)
        if args.kind == "windows":
            run["single"] = fresh(single, "windows", 1, args)
            show(f"seed {seed}, single NLP", run["single"])
        for w in counts:
            run["admm"][str(w)] = admm(args.kind, args, w)
            show(f"seed {seed}, ADMM on {w} workers", run["admm"][str(w)])
            save()
    labelled = [(f"ADMM on {w} workers", str(w)) for w in counts]
    if args.kind == "windows":
        labelled.insert(0, ("single NLP", None))
    print(f"\nmedians of {args.repeats} repeats")
    for label, key in labelled:
        rows = [r["single"] if key is None else r["admm"][key] for r in report["repeats"]]
        show(label, median_rows(rows))
    save()


if __name__ == "__main__":
    main()
