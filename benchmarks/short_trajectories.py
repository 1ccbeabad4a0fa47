"""Many short noisy trajectories: which network, mesh, λ and algorithm train a model from them.

The data: a damped pendulum θ'' = -9.81 sin θ - 0.3 θ' (period about 2 s), ``--trajectories``
trajectories of 2 s each from random initial states (θ0, ω0 uniform in [-2, 2]), sampled every
0.05 s (41 samples), with Gaussian noise of 10 % of each state's spread over the data. The model
learns the acceleration, q'' = NN(q, q') (a second-order neural ODE), its inputs and output
scaled by the data's spreads.

Each variant is one way to pose and solve that problem; the score is the held-out error: the
trained model simulated from the true initial states of ``--held-out`` new trajectories over the
same 2 s, its RMS error against the noise-free truth divided by each state's spread (so the
noise itself is 0.1 on this scale), and the consistency verdict of the trained model.

- ``large-fixed``: a 2-16-16-1 network, λ = 1e-4, one mesh interval per sample interval, the
  initial state fixed to the first (noisy) sample; IPOPT capped at ``--cap`` iterations: the
  cost per iteration of the setting first tried;
- ``small-fixed``: the same with a 2-8-1 network, IPOPT to convergence or ``--max-iter``;
  the fixed variants record each IPOPT iteration's wall time;
- ``small-auto``: the 2-8-1 network posed with no λ and no algorithm: ``solve(problem)``
  (the data mesh, the regularization path over held-out trajectories, the warm start,
  UntilConsistent);
- ``small-auto-free``: as ``small-auto``, with the initial states free (not fixed to the noisy
  first sample) and the loss at the samples;
- ``small-admm``: as ``small-auto-free`` at the λ that variant's path chose, by consensus ADMM
  over 5 blocks of trajectories (each on the data mesh).

    python benchmarks/short_trajectories.py --out runs/short_trajectories
    python benchmarks/short_trajectories.py --trajectories 10 --variants small-fixed  # quick
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
from scipy.integrate import solve_ivp

from collocnode import (
    ConsensusADMM,
    IpoptOptions,
    NeuralODE,
    RadauIIA,
    SimulationError,
    TrainingProblem,
    Trajectory,
    solve,
)
from collocnode.nn import MLP
from collocnode.strategies import AutoRecord, ConsensusADMMRecord
from collocnode.tools._io import write_json
from collocnode.tools._machine import describe, load_average

G, DAMPING = 9.81, 0.3
DURATION, STEP, NOISE = 2.0, 0.05, 0.10
VARIANTS = ("small-auto-free", "small-admm", "small-auto", "small-fixed", "large-fixed")


def pendulum(_: float, z: np.ndarray) -> list[float]:
    return [z[1], -G * np.sin(z[0]) - DAMPING * z[1]]


def truth(x0: np.ndarray, t: np.ndarray) -> np.ndarray:
    sol = solve_ivp(pendulum, (t[0], t[-1]), x0, t_eval=t, rtol=1e-10, atol=1e-12)
    return sol.y.T


def data_sets(n_train: int, n_held: int, seed: int = 0) -> dict[str, Any]:
    """Noisy training trajectories and noise-free held-out ones (their initial states)."""
    rng = np.random.default_rng(seed)
    t = np.arange(0.0, DURATION + STEP / 2, STEP)
    starts = rng.uniform(-2.0, 2.0, (n_train + n_held, 2))
    clean = [truth(x0, t) for x0 in starts]
    spread = np.vstack(clean[:n_train]).std(axis=0)
    noisy = [x + NOISE * spread * rng.standard_normal(x.shape) for x in clean[:n_train]]
    return {
        "t": t,
        "train": [Trajectory(t, x, state_names=("theta", "omega")) for x in noisy],
        "held_starts": starts[n_train:],
        "held_truth": clean[n_train:],
        "spread": spread,
    }


def network(hidden: tuple[int, ...], sets: dict[str, Any]) -> MLP:
    x = np.vstack([tr.x for tr in sets["train"]])
    accel = np.concatenate([np.gradient(tr.x[:, 1], tr.t) for tr in sets["train"]])
    return MLP(
        (2, *hidden, 1),
        "tanh",
        input_scale=tuple(x.std(axis=0)),
        output_scale=(float(accel.std()),),
    )


def held_out_error(trained: Any, sets: dict[str, Any]) -> float | None:
    """RMS error of the model's simulations from the held-out initial states, per state
    divided by its spread (None where a simulation failed)."""
    errors = []
    for x0, x in zip(sets["held_starts"], sets["held_truth"], strict=True):
        try:
            sim = trained.simulate(sets["t"], x0).x
        except SimulationError:
            return None
        errors.append((sim - x) / sets["spread"])
    return float(np.sqrt(np.mean(np.concatenate(errors) ** 2)))


def pose(
    variant: str, sets: dict[str, Any], lam: float | None, cap: int, max_iter: int = 300
) -> tuple[TrainingProblem, Any]:
    """The problem and algorithm of one variant (None: ``solve``'s default)."""
    hidden = (16, 16) if variant == "large-fixed" else (8,)
    model = NeuralODE(network(hidden, sets), second_order=True, state_names=("theta", "omega"))
    free = variant in ("small-auto-free", "small-admm")
    kwargs: dict[str, Any] = {
        "initial_state": None if free else "data",
        "state_guess": "data",
        "loss": "samples" if free else "nodes",
    }
    n_intervals = sets["t"].size - 1
    if variant in ("large-fixed", "small-fixed"):
        problem = TrainingProblem(model, sets["train"], regularization=1e-4, **kwargs)
        limit = cap if variant == "large-fixed" else max_iter
        ipopt = IpoptOptions(tol=1e-7, max_iter=limit, print_level=0)
        return problem, RadauIIA(n_intervals, 3, ipopt=ipopt)
    if variant == "small-admm":
        problem = TrainingProblem(model, sets["train"], regularization=lam, **kwargs)
        inner = RadauIIA(intervals="auto", ipopt=IpoptOptions(print_level=0))
        return problem, ConsensusADMM(inner, blocks=5, max_rounds=30)
    return TrainingProblem(model, sets["train"], **kwargs), None


def run(
    variant: str, sets: dict[str, Any], lam: float | None, cap: int, max_iter: int = 300
) -> dict[str, Any]:
    problem, alg = pose(variant, sets, lam, cap, max_iter)
    stamps: list[float] = []  # wall time [s] at the end of each IPOPT iteration

    def stamp(state: Any) -> None:
        stamps.append(state.elapsed_s)

    start = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        callback = stamp if variant.endswith("fixed") else None
        trained = solve(problem, alg, seed=0, callback=callback)
    seconds = time.perf_counter() - start
    admm = next((r for r in trained.records if isinstance(r, ConsensusADMMRecord)), None)
    auto = next((r for r in trained.records if isinstance(r, AutoRecord)), None)
    rounds = None if admm is None else admm.rounds
    if rounds is None:  # Auto's record counts the path's iterations too
        iterations = int((auto or trained).iterations)
    else:  # consensus ADMM: every block's iterations of every round
        iterations = sum(sum(r.iterations) for r in rounds)
    report = trained.consistency
    row: dict[str, Any] = {
        "variant": variant,
        "network": "-".join(str(n) for n in problem.model.blocks["f"].sizes),
        "status": trained.status.value,
        "iterations": iterations,
        "admm_rounds": None if rounds is None else len(rounds),
        "seconds": seconds,
        "seconds_per_iteration": seconds / max(iterations, 1),
        # the final solve's own split (for Auto: its last solve only)
        "final_build_s": trained.timings.get("build"),
        "final_ipopt_s": trained.timings.get("ipopt"),
        "final_iterations": int(trained.iterations),
        "lambda": trained.problem.regularization,
        "intervals_per_trajectory": trained.solution.meshes[0].n_intervals,
        "consistent": None if report is None else bool(report.consistent),
        "largest_deviation": None if report is None else float(report.largest),
        "held_out_error": held_out_error(trained, sets),
        "warnings": sorted({type(w.message).__name__ for w in caught}),
    }
    if stamps:
        row["iteration_s"] = list(np.diff(stamps))
    if auto is not None and auto.path is not None:
        row["path"] = auto.path.to_dict()
        row["path_s"] = auto.times.get("path")
        row["final_s"] = auto.times.get("solve")
    return row


def markdown(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| variant | status | λ | intervals per trajectory | iterations | time [s] | "
        "s per iteration | consistent (largest deviation) | held-out error |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lam = "-" if r["lambda"] is None else f"{r['lambda']:g}"
        dev = "-" if r["largest_deviation"] is None else f"{r['largest_deviation']:.2g}"
        err = "failed" if r["held_out_error"] is None else f"{r['held_out_error']:.3f}"
        lines.append(
            f"| {r['variant']} | {r['status']} | {lam} | {r['intervals_per_trajectory']} | "
            f"{r['iterations']} | {r['seconds']:.1f} | {r['seconds_per_iteration']:.2f} | "
            f"{r['consistent']} ({dev}) | {err} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trajectories", type=int, default=50)
    parser.add_argument("--held-out", type=int, default=10)
    parser.add_argument("--variants", nargs="*", default=list(VARIANTS), choices=VARIANTS)
    parser.add_argument("--cap", type=int, default=30, help="large-fixed's IPOPT iterations")
    parser.add_argument("--max-iter", type=int, default=300, help="small-fixed's IPOPT limit")
    parser.add_argument("--out", type=Path, default=Path("runs/short_trajectories"))
    args = parser.parse_args()
    command = "python benchmarks/short_trajectories.py " + shlex.join(sys.argv[1:])
    load_before = load_average()
    sets = data_sets(args.trajectories, args.held_out)
    rows: list[dict[str, Any]] = []
    lam = None
    for variant in args.variants:
        if variant == "small-admm" and lam is None:
            rows.append(run("small-auto-free", sets, None, args.cap, args.max_iter))
            lam = rows[-1]["lambda"]
        row = run(variant, sets, lam, args.cap, args.max_iter)
        if variant == "small-auto-free":
            lam = row["lambda"]
        rows.append(row)
        print(json.dumps({k: v for k, v in row.items() if k != "path"}, default=str), flush=True)
        store(args, command, load_before, rows)  # each variant as it ends
    print(markdown(rows))


def store(args: argparse.Namespace, command: str, load_before: Any, rows: list) -> None:
    args.out.mkdir(parents=True, exist_ok=True)
    record = {
        "command": command,
        "machine": describe(),
        "load_average": {"before": load_before, "after": load_average()},
        "data": {
            "trajectories": args.trajectories,
            "held_out": args.held_out,
            "duration_s": DURATION,
            "step_s": STEP,
            "noise": NOISE,
        },
        "rows": rows,
    }
    write_json(args.out / "short_trajectories.json", record)
    (args.out / "short_trajectories.md").write_text(markdown(rows) + "\n")


if __name__ == "__main__":
    main()
