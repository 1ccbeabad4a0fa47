#!/usr/bin/env python
"""Consensus ADMM against the single NLP on the same data (Van der Pol, two ways to split).

- ``trajectories``: ``--trajectories`` Van der Pol trajectories (initial states drawn uniformly
  from [-2, 2]², noise 0.1) trained together, the two 2-5-5-1 sigmoid networks of the paper;
  ADMM splits them into ``--blocks`` groups.
- ``windows``: one long noisy trajectory (``--horizon`` seconds) cut into ``--blocks`` time
  windows, the states at the joins shared.

Per repeat (seed = repeat number; medians over ``--repeats``):
- the single NLP in a fresh process (its peak resident memory is that process's), and
- ADMM on a local Dask cluster of 1 and of 2 worker processes (one thread each), every block an
  actor on a worker;

each scored by the held-out error: the trained model simulated from held-out initial states
(``--held-out`` trajectories, noise-free, same horizon as training) against the true solution,
the median over them of the mean squared error; ``windows`` scores the continuation of the
trajectory instead (the next 7 s). Reported: held-out error, final objective (ADMM: the
blocks' objectives summed, proximal terms excluded), wall time, the median round time with 1
and 2 workers, the largest worker's peak resident memory above its idle size, and the
critical path (slowest build + Σ over rounds of the slowest block's solve) as the projection
of the wall time with one worker per block.

    python benchmarks/admm_consensus.py trajectories [--trajectories 32] [--blocks 4]
    python benchmarks/admm_consensus.py windows [--horizon 80] [--blocks 8]
    common: [--intervals N] [--rounds 30] [--rho 0.1] [--no-warm-start] [--repeats 3] [--json F]
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time
import warnings
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context

import numpy as np

from collocnode import (
    ConsensusADMM,
    IpoptOptions,
    NeuralODE,
    RadauIIA,
    TrainingProblem,
    problems,
    solve,
)
from collocnode.nn import MLP
from collocnode.tools._machine import peak_memory_mb

HORIZON = 7.0  # the Van der Pol preset's training window [s]


def setup(kind: str, seed: int, args: argparse.Namespace):
    """(training problem, held-out [(t, x_true)]) of one repeat."""
    system = problems.get("vdp")
    rng = np.random.default_rng(seed)
    model = NeuralODE([MLP((2, 5, 5, 1), "sigmoid"), MLP((2, 5, 5, 1), "sigmoid")])
    if kind == "trajectories":
        starts = rng.uniform(-2, 2, (args.trajectories + args.held_out, 2))
        train = [
            system.generate(noise=0.1, seed=seed * 1000 + i, x0=x0).train
            for i, x0 in enumerate(starts[: args.trajectories])
        ]
        held = [system.generate(x0=x0).train for x0 in starts[args.trajectories :]]
        held = [(d.t, d.x) for d in held]
    else:
        dt = 0.035  # the preset's sample step
        n_train = round(args.horizon / dt)
        split = system.generate(noise=0.1, seed=seed, n_steps=n_train + 200, n_train=n_train)
        train = split.train
        clean = system.generate(n_steps=n_train + 200, n_train=n_train).test
        held = [(clean.t, clean.x)]
    problem = TrainingProblem(model, train, regularization=1e-4, state_guess="data")
    return problem, held


def held_out_error(sol, held) -> float:
    errors = []
    for t, x in held:
        try:
            errors.append(float(np.mean((sol.simulate(t, x[0]).x - x) ** 2)))
        except Exception:  # a diverging model scores as such
            errors.append(float("inf"))
    return float(np.median(errors))


def inner(args: argparse.Namespace, horizon: float) -> RadauIIA:
    intervals = args.intervals or round(horizon / HORIZON * 50)
    return RadauIIA(intervals, 3, ipopt=IpoptOptions(max_iter=500, print_level=0))


def monolithic(kind: str, seed: int, args: argparse.Namespace) -> dict:
    """The single NLP (run in a fresh process: its peak memory is this solve's)."""
    warnings.simplefilter("ignore")
    problem, held = setup(kind, seed, args)
    t = time.perf_counter()
    sol = solve(problem, inner(args, problem.horizon[1]), seed=seed, check=False)
    return {
        "status": str(sol.status),
        "wall_s": time.perf_counter() - t,
        "objective": float(sol.objective),
        "held_out": held_out_error(sol, held),
        "iterations": int(sol.iterations),
        "peak_mb": peak_memory_mb(),
    }


def admm(kind: str, seed: int, args: argparse.Namespace, workers: int) -> dict:
    from distributed import Client, LocalCluster

    warnings.simplefilter("ignore")
    problem, held = setup(kind, seed, args)
    with (
        LocalCluster(
            n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        Client(cluster) as client,
    ):
        client.run(__import__, "collocnode")
        idle = client.run(peak_memory_mb)
        alg = ConsensusADMM(
            inner(args, problem.horizon[1]),
            blocks=args.blocks,
            split=kind,
            max_rounds=args.rounds,
            rho=args.rho,
            warm_start=not args.no_warm_start,
            acceleration=args.acceleration,
            client=client,
        )
        t = time.perf_counter()
        sol = solve(problem, alg, seed=seed, check=False)
        wall = time.perf_counter() - t
        peak = client.run(peak_memory_mb)
    res = sol.record(ConsensusADMM)
    rounds = [r for r in res.rounds if r.round >= 0]
    return {
        "status": str(sol.status),
        "wall_s": wall,
        "objective": float(res.rounds[-1].objective),
        "held_out": held_out_error(sol, held),
        "rounds": len(rounds),
        "round_s": statistics.median(r.wall_s for r in rounds),
        "critical_path_s": res.critical_path_s,
        "primal_residual": rounds[-1].primal_residual,
        "worker_peak_mb": max(peak[w] - idle[w] for w in peak),
        "worker_idle_mb": max(idle.values()),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    ap.add_argument("kind", choices=("trajectories", "windows"))
    ap.add_argument("--trajectories", type=int, default=32)
    ap.add_argument("--held-out", type=int, default=8)
    ap.add_argument("--horizon", type=float, default=80.0)
    ap.add_argument("--blocks", type=int, default=None, help="default 4 (trajectories), 8")
    ap.add_argument("--intervals", type=int, default=None, help="default 50 per 7 s")
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--rho", type=float, default=0.1)
    ap.add_argument("--no-warm-start", action="store_true")
    ap.add_argument(
        "--acceleration", action="store_true", help="Nesterov momentum with restart on ADMM"
    )
    ap.add_argument(
        "--workers", default="1,2", help="local Dask worker counts to run ADMM on (default 1,2)"
    )
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    args.blocks = args.blocks or (4 if args.kind == "trajectories" else 8)

    counts = sorted({int(w) for w in args.workers.split(",")})
    if not counts or counts[0] < 1:
        ap.error(f"--workers expects positive worker counts, got {args.workers!r}")

    def label(workers: int) -> str:
        return f"ADMM, {workers} worker{'s' if workers > 1 else ''}"

    runs: dict[str, list[dict]] = {"single NLP": [], **{label(w): [] for w in counts}}
    for seed in range(args.repeats):
        with ProcessPoolExecutor(1, mp_context=get_context("spawn")) as pool:
            runs["single NLP"].append(pool.submit(monolithic, args.kind, seed, args).result())
        for workers in counts:
            runs[label(workers)].append(admm(args.kind, seed, args, workers))
        print(f"repeat {seed}: " + json.dumps({k: v[-1] for k, v in runs.items()}), flush=True)

    def med(name: str, key: str) -> float:
        return statistics.median(r[key] for r in runs[name])

    print(f"\n{args.kind}: {args.blocks} blocks, medians of {args.repeats} repeats")
    print(f"{'':<16} {'held-out MSE':>12} {'objective':>10} {'wall s':>8} {'peak MB':>8}")
    for name in runs:
        peak = "worker_peak_mb" if name.startswith("ADMM") else "peak_mb"
        print(
            f"{name:<16} {med(name, 'held_out'):>12.4g} {med(name, 'objective'):>10.5g} "
            f"{med(name, 'wall_s'):>8.1f} {med(name, peak):>8.0f}"
        )
    print("rounds: " + ", ".join(f"{label(w)} {med(label(w), 'rounds'):g}" for w in counts))
    if counts[:2] == [1, 2]:
        one, two = med(label(1), "round_s"), med(label(2), "round_s")
        print(f"round time: 1 worker {one:.3f} s, 2 workers {two:.3f} s (ratio {two / one:.2f})")
    last = label(counts[-1])
    print(
        f"projection, one worker per block: {med(last, 'critical_path_s'):.1f} s "
        f"(critical path); worker idle size {med(last, 'worker_idle_mb'):.0f} MB"
    )
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(
                {"args": vars(args), "machine": platform.platform(), "runs": runs}, fh, indent=2
            )


if __name__ == "__main__":
    main()
