#!/usr/bin/env python
"""The loss at the measurement times against the interpolated loss at the nodes.

Every case trains the same model on the same noisy data from the same initial weights twice,
once per loss (``TrainingProblem(loss="nodes")``: the data's cubic spline at the collocation
nodes, Radau quadrature; ``loss="samples"``: the collocation polynomial at the sample times,
cell-weighted), and measures the held-out error: the learned ODE re-simulated from x(0) at tight
tolerance against the noise-free truth, on the training window and on a window after it.

Studies (``--study``):

* ``heldout``: sparse (fewer samples than collocation nodes) and dense data on
  - ``vdp``: Van der Pol as the seed paper trains it (two 2-5-5-1 sigmoid nets, x(0) known,
    λ = 1e-4, 500 x 5 mesh, tol 1e-7, at most 200 iterations, constant state guess), σ = 0.1;
    sparse: 21 samples on [0, 7], dense: the paper's 201; held-out window (7, 20];
  - ``lv``: the Lotka-Volterra universal differential equation of Rackauckas et al. (2020):
    x' = αx + U1(x, y), y' = −δy + U2(x, y) with α, δ known and the interaction (−βxy, γxy)
    learned by a 2-5-5-2 tanh net; x(0) = (0.44, 4.63) known, noise 5 % of the mean state,
    λ = 1e-4, 100 x 3 mesh; sparse: the paper's 21 samples on [0, 5], dense: 201; held-out
    window (5, 10].
* ``robustness``: the Van der Pol σ = 0.1 robustness study of ``scripts/train_collocation.py
  vdp --noise 0.1 --seeds N`` (same seeds, data, weights and settings), success = RMSE <= 0.1
  over [0, 32], once with each loss.

Runs are sequential; run it with ``nice`` on a shared machine.

    nice python benchmarks/sample_loss.py --study heldout --seeds 10 --json heldout.json
    nice python benchmarks/sample_loss.py --study heldout --cases vdp:sparse --lam 1e-3
    nice python benchmarks/sample_loss.py --study robustness --seeds 20 --json robust.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import casadi as ca
import numpy as np

from collocnode import HybridModel, TrainingProblem, Trajectory, problems, solve
from collocnode._experiments.vdp import T_ROBUST, seeds
from collocnode.models._simulate import SimulationError, simulate
from collocnode.nn import MLP
from collocnode.recipes.vdp import VDP
from collocnode.transcription import IpoptOptions, RadauIIA

LOSSES = ("nodes", "samples")


@dataclass(frozen=True)
class Case:
    """One system at one sampling: data, model, settings and the held-out check."""

    system: str
    sampling: str  # "sparse" or "dense"
    data: Callable[[int], Trajectory]  # noise seed -> noisy training samples
    model: Callable[[], HybridModel]
    x0: np.ndarray
    alg: RadauIIA
    lam: float
    t_train: float
    t_end: float
    truth: Callable[[np.ndarray], np.ndarray]  # t -> noise-free states (n, n_states)


# ---- Van der Pol (seed paper §4.2) ------------------------------------------------------------


def vdp_case(n_samples: int, sampling: str) -> Case:
    system = problems.get("vdp")
    t = np.linspace(0.0, 7.0, n_samples)

    def data(noise_seed: int) -> Trajectory:
        return system.simulate(t).with_noise(0.1, seed=noise_seed)

    def model() -> HybridModel:
        return VDP.model(system, _identity_layout(system), [])

    return Case(
        "vdp",
        sampling,
        data,
        model,
        system.x0,
        VDP.collocation.algorithm(),
        1e-4,
        7.0,
        20.0,
        lambda tt: system.simulate(tt).x,
    )


def _identity_layout(system: Any) -> Any:
    from collocnode.problems._layout import StateLayout

    return StateLayout.for_system(system)


# ---- Lotka-Volterra universal differential equation (Rackauckas et al. 2020) -----------------

LV = {"alpha": 1.3, "beta": 0.9, "gamma": 0.8, "delta": 1.8}
LV_X0 = np.array([0.44249296, 4.6280594])


def lv_truth(t: np.ndarray) -> np.ndarray:
    from scipy.integrate import solve_ivp

    a, b, c, d = (LV[k] for k in ("alpha", "beta", "gamma", "delta"))
    sol = solve_ivp(
        lambda _, x: [a * x[0] - b * x[0] * x[1], c * x[0] * x[1] - d * x[1]],
        (0.0, float(t[-1])),
        LV_X0,
        t_eval=t,
        method="DOP853",
        rtol=1e-12,
        atol=1e-12,
    )
    return sol.y.T


def lv_model() -> HybridModel:
    def rhs(x, u, t, blocks, params):
        interaction = blocks["U"](x)
        return ca.vertcat(LV["alpha"] * x[0] + interaction[0], -LV["delta"] * x[1] + interaction[1])

    net = MLP((2, 5, 5, 2), "tanh", input_shift=(1.0, 2.0), input_scale=(1.0, 2.0))
    return HybridModel(n_states=2, blocks={"U": net}, rhs=rhs, state_names=("x", "y"))


def lv_case(n_samples: int, sampling: str) -> Case:
    t = np.linspace(0.0, 5.0, n_samples)
    x = lv_truth(t)
    sigma = 0.05 * x.mean(axis=0)  # the UDE paper's 5 % of the mean

    def data(noise_seed: int) -> Trajectory:
        return Trajectory(t, x, state_names=("x", "y")).with_noise(sigma, seed=noise_seed)

    opts = IpoptOptions(tol=1e-7, max_iter=300, print_level=0, mumps_ordering="metis")
    return Case(
        "lv",
        sampling,
        data,
        lv_model,
        LV_X0,
        RadauIIA(100, 3, jit=True, ipopt=opts),
        1e-4,
        5.0,
        10.0,
        lv_truth,
    )


CASES = {
    ("vdp", "sparse"): lambda: vdp_case(21, "sparse"),
    ("vdp", "dense"): lambda: vdp_case(201, "dense"),
    ("lv", "sparse"): lambda: lv_case(21, "sparse"),
    ("lv", "dense"): lambda: lv_case(201, "dense"),
}


# ---- runs ----------------------------------------------------------------------------------------


def train(case: Case, loss: str, seed: int) -> tuple[Any, float]:
    noise_seed, weight_seed = seeds(seed)
    problem = TrainingProblem(
        case.model(),
        case.data(noise_seed),
        regularization=case.lam,
        initial_state=case.x0,
        state_guess="constant",
        loss=loss,
        # the stored study weighed its (evenly spaced) samples by their cells
        **({"sample_weights": "cells"} if loss == "samples" else {}),
    )
    start = time.perf_counter()
    sol = solve(problem, case.alg, seed=weight_seed)
    return sol, time.perf_counter() - start


def resimulate(sol: Any, x0: np.ndarray, t: np.ndarray) -> np.ndarray | None:
    try:
        return simulate(sol.model, sol.p, t, x0, rtol=1e-10, atol=1e-10).x
    except SimulationError:
        return None


def heldout_run(case: Case, loss: str, seed: int) -> dict[str, Any]:
    sol, seconds = train(case, loss, seed)
    t = np.linspace(0.0, case.t_end, 2001)
    x = resimulate(sol, case.x0, t)
    row: dict[str, Any] = {
        "system": case.system,
        "sampling": case.sampling,
        "loss": loss,
        "lam": case.lam,
        "seed": seed,
        "status": sol.status.value,
        "iterations": sol.iterations,
        "seconds": seconds,
        "train_rmse": None,
        "heldout_rmse": None,
    }
    if x is not None:
        err = x - case.truth(t)
        inside = t <= case.t_train
        row["train_rmse"] = float(np.sqrt(np.mean(err[inside] ** 2)))
        row["heldout_rmse"] = float(np.sqrt(np.mean(err[~inside] ** 2)))
    return row


def robustness_run(loss: str, seed: int, tol: float = 0.1) -> dict[str, Any]:
    """One seed of ``train_collocation.py vdp --noise 0.1 --seeds N`` with the given loss."""
    system = problems.get("vdp")
    case = vdp_case(201, "dense")
    noise_seed, _ = seeds(seed)
    data = system.generate(noise=0.1, seed=noise_seed).train  # the study's own data
    case = replace(case, data=lambda _: data)
    sol, seconds = train(case, loss, seed)
    t = np.linspace(0.0, T_ROBUST, 1601)
    x = resimulate(sol, system.x0, t)
    rmse = None if x is None else float(np.sqrt(np.mean((x - system.simulate(t).x) ** 2)))
    return {
        "loss": loss,
        "seed": seed,
        "status": sol.status.value,
        "iterations": sol.iterations,
        "seconds": seconds,
        "rmse_0_32": rmse,
        "success": rmse is not None and rmse <= tol,
    }


# ---- reports -------------------------------------------------------------------------------------


def _median(values: list[float | None]) -> float:
    finite = [v for v in values if v is not None]
    return statistics.median(finite) if finite else float("nan")


def heldout_table(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| system | data | loss | runs | converged | median held-out RMSE | mean held-out RMSE "
        "| median train RMSE | median iterations | median s | samples-loss wins |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    keys = sorted({(r["system"], r["sampling"]) for r in rows})
    for system, sampling in keys:
        both = {
            loss: [r for r in rows if (r["system"], r["sampling"], r["loss"]) == key]
            for loss in LOSSES
            for key in [(system, sampling, loss)]
        }
        by_seed = {loss: {r["seed"]: r for r in both[loss]} for loss in LOSSES}
        common = sorted(set(by_seed["nodes"]) & set(by_seed["samples"]))
        wins = sum(_err(by_seed["samples"][s]) < _err(by_seed["nodes"][s]) for s in common)
        for loss in LOSSES:
            rs = both[loss]
            held = [r["heldout_rmse"] for r in rs]
            finite = [h if h is not None else float("inf") for h in held]
            lines.append(
                f"| {system} | {sampling} | {loss} | {len(rs)} "
                f"| {sum(r['status'] == 'success' for r in rs)} | {_median(held):.4g} "
                f"| {np.mean(finite):.4g} | {_median([r['train_rmse'] for r in rs]):.4g} "
                f"| {_median([r['iterations'] for r in rs]):.0f} "
                f"| {_median([r['seconds'] for r in rs]):.1f} "
                f"| {f'{wins}/{len(common)}' if loss == 'samples' else ''} |"
            )
    return "\n".join(lines)


def _err(row: dict[str, Any]) -> float:
    return float("inf") if row["heldout_rmse"] is None else row["heldout_rmse"]


def robustness_table(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| loss | seeds | success (RMSE <= 0.1 on [0, 32]) | converged | median RMSE "
        "| 90th percentile RMSE | median iterations | median s |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for loss in LOSSES:
        rs = [r for r in rows if r["loss"] == loss]
        if not rs:
            continue
        rmse = [r["rmse_0_32"] if r["rmse_0_32"] is not None else float("inf") for r in rs]
        lines.append(
            f"| {loss} | {len(rs)} | {np.mean([r['success'] for r in rs]):.0%} "
            f"| {sum(r['status'] == 'success' for r in rs)}/{len(rs)} "
            f"| {np.median(rmse):.3g} | {np.percentile(rmse, 90):.3g} "
            f"| {_median([r['iterations'] for r in rs]):.0f} "
            f"| {_median([r['seconds'] for r in rs]):.1f} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--study", choices=("heldout", "robustness"), default="heldout")
    parser.add_argument("--seeds", type=int, default=10, help="seeds 0 .. N-1 per case and loss")
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument(
        "--cases",
        nargs="+",
        default=[f"{s}:{d}" for s, d in CASES],
        help="system:sampling pairs of the heldout study (default: all)",
    )
    parser.add_argument(
        "--lam", type=float, help="λ of every heldout case instead of its own (1e-4)"
    )
    parser.add_argument("--json", help="write every run's row to this file")
    args = parser.parse_args()
    rows: list[dict[str, Any]] = []
    seeds_run = range(args.first_seed, args.first_seed + args.seeds)
    if args.study == "heldout":
        for name in args.cases:
            system, sampling = name.split(":")
            case = CASES[(system, sampling)]()
            if args.lam is not None:
                case = replace(case, lam=args.lam)
            for seed in seeds_run:
                for loss in LOSSES:
                    rows.append(heldout_run(case, loss, seed))
                    print(json.dumps(rows[-1]), flush=True)
        table = heldout_table(rows)
    else:
        for seed in seeds_run:
            for loss in LOSSES:
                rows.append(robustness_run(loss, seed))
                print(json.dumps(rows[-1]), flush=True)
        table = robustness_table(rows)
    print(table)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"study": args.study, "rows": rows, "table": table}, fh, indent=1)


if __name__ == "__main__":
    main()
