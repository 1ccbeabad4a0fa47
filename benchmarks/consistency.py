#!/usr/bin/env python
"""The consistency check: its default tolerance, its cost, and refinement until consistent.

Three parts (``docs/collocation_extensions.md``, "Consistency check"):

* ``tolerance``: the largest scaled deviation (``sol.consistency.largest``: the re-simulated
  model against the collocation trajectory, in units of each state's spread in the data) of
  models that are fine -- the Van der Pol benchmark at its defaults, a few generic systems
  trained by their recipes, the quarter vehicle on a short road -- and of a failure case, a
  new user's first hybrid model: the Lotka-Volterra "universal differential equation" of the
  SciML tutorial (known linear growth and decay, one 2-5-5-2 tanh MLP for the unknown
  interaction), fitted to 21 noisy samples on [0, 5] with a 40 x 3 mesh and λ = 1e-5, and the
  same with 160 intervals and with λ = 1e-4.
* ``cost``: the check's wall time against the training time on the Van der Pol benchmark (the
  settings of ``python scripts/train_collocation.py vdp``), ``--runs`` runs; the median of the
  ratio measured in the same run.
* ``refine``: ``UntilConsistent(RadauIIA(40, 3), max_rounds=4)`` on the failure case (and on
  more noise realisations with ``--cases``): the per-round table.

    python benchmarks/consistency.py tolerance [--parts vdp generic qvm failure] [--json out.json]
    python benchmarks/consistency.py cost [--runs 5] [--json out.json]
    python benchmarks/consistency.py refine [--cases 4] [--json out.json]
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings
from dataclasses import asdict
from typing import Any

import casadi as ca
import numpy as np
from scipy.integrate import solve_ivp

from collocnode import (
    HybridModel,
    IpoptOptions,
    RadauIIA,
    SimulationError,
    TrainingProblem,
    Trajectory,
    problems,
    recipes,
    solve,
)
from collocnode.nn import MLP
from collocnode.strategies import UntilConsistent
from collocnode.tools._io import write_json
from collocnode.tools._options import replace_flat
from collocnode.training._consistency import InconsistentModelWarning

# the SciML UDE tutorial's Lotka-Volterra system: x' = αx − βxy, y' = −γy + δxy
ALPHA, BETA, GAMMA, DELTA = 1.3, 0.9, 0.8, 1.8
LV_X0 = np.array([0.44249296, 4.6280594])
LV_T = np.linspace(0.0, 5.0, 21)
#: the failure case: noise 5 % of each state's mean, noise seed 1, initial weights seed 1
FAILURE = {"noise": 0.05, "noise_seed": 1, "seed": 1}
QUIET = IpoptOptions(max_iter=1000, print_level=0)


def lotka_volterra(t: np.ndarray) -> np.ndarray:
    """The true states on ``t`` (n,), shape (n, 2)."""
    sol = solve_ivp(
        lambda _, x: [ALPHA * x[0] - BETA * x[0] * x[1], -GAMMA * x[1] + DELTA * x[0] * x[1]],
        (t[0], t[-1]),
        LV_X0,
        t_eval=t,
        method="DOP853",
        rtol=1e-12,
        atol=1e-12,
    )
    return sol.y.T


def _known_linear_terms(x, u, t, blocks, params):
    interaction = blocks["interaction"](x)
    return ca.vertcat(ALPHA * x[0] + interaction[0], -GAMMA * x[1] + interaction[1])


def ude_problem(noise: float, noise_seed: int, regularization: float) -> TrainingProblem:
    """The hybrid model of the failure case on 21 samples with noise ``noise`` times each
    state's mean (the tutorial's noise model)."""
    x = lotka_volterra(LV_T)
    rng = np.random.default_rng(noise_seed)
    noisy = x + noise * x.mean(axis=0) * rng.standard_normal(x.shape)
    names = ("prey", "predator")
    model = HybridModel(
        2, {"interaction": MLP((2, 5, 5, 2), "tanh")}, _known_linear_terms, state_names=names
    )
    data = Trajectory(LV_T, noisy, state_names=names)
    return TrainingProblem(model, data, regularization=regularization, initial_state="data")


def rmse_against_truth(sol: Any) -> dict[str, float | None]:
    """RMSE of the re-simulation from x(0) against the true system on the training window
    [0, 5] and after it (5, 10] (None if the simulation fails)."""
    t = np.linspace(0.0, 10.0, 1001)
    try:
        err = sol.simulate(t).x - lotka_volterra(t)
    except SimulationError:
        return {"train": None, "after": None}
    return {
        "train": float(np.sqrt(np.mean(err[t <= 5] ** 2))),
        "after": float(np.sqrt(np.mean(err[t > 5] ** 2))),
    }


def _row(name: str, sol: Any, train_s: float, **extra: Any) -> dict[str, Any]:
    c = sol.consistency
    row = {
        "case": name,
        "status": sol.status.value,
        "largest_deviation": c.largest,
        "worst_state": c.worst_state,
        "starts_at": c.starts_at,
        "rms_deviation_max": float(c.rms_deviation.max()),
        "check_s": c.wall_time_s,
        "train_s": train_s,
        **extra,
    }
    print(
        f"{name:<36} {row['status']:<10} largest {c.largest:9.3g} ({c.worst_state}) "
        f"check {c.wall_time_s:.2f} s / train {train_s:.1f} s"
        + (f"  RMSE vs truth {extra['rmse_vs_truth']}" if "rmse_vs_truth" in extra else ""),
        flush=True,
    )
    return row


def _timed(fn: Any) -> tuple[Any, float]:
    start = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - start


PARTS = ("vdp", "generic", "qvm", "failure")


def tolerance_cases(parts: tuple[str, ...] = PARTS) -> list[dict[str, Any]]:
    """The scaled deviation of fine models and of the failure case (see the module docstring),
    for the groups of cases in ``parts``."""
    rows = []
    if "vdp" in parts:
        from collocnode._experiments.vdp import VdPOptions
        from collocnode._experiments.vdp import train as train_vdp
        from collocnode.recipes.vdp import VDP

        (sol, _), s = _timed(lambda: train_vdp(VdPOptions(recipe=replace_flat(VDP, print_level=0))))
        rows.append(_row("vdp (benchmark defaults, 500 x 5)", sol, s))
    for name in ("sms", "pendulum", "dcdc", "two_body") if "generic" in parts else ():
        system = problems.get(name)
        split = system.generate(noise=0.0, seed=0)
        recipe = replace_flat(recipes.for_problem(name), print_level=0, max_iter=300)
        trained, s = _timed(lambda: recipe.train(system, split.train, seed=0))  # noqa: B023
        rows.append(_row(f"{name} (generic recipe)", trained.solution, s))
    if "qvm" in parts:
        from collocnode._experiments.qvm import QVMOptions
        from collocnode._experiments.qvm import train as train_qvm
        from collocnode.recipes.qvm import QVMRecipe

        opts = QVMOptions(duration=2.0, recipe=replace_flat(QVMRecipe(), print_level=0))
        (trained, _), s = _timed(lambda: train_qvm(opts))
        rows.append(_row("qvm (2 s road)", trained.solution, s))
    failure = (
        ("failure case: 40 x 3, λ = 1e-5", 40, 1e-5),
        ("same, 160 x 3", 160, 1e-5),
        ("same, λ = 1e-4", 40, 1e-4),
    )
    for label, intervals, lam in failure if "failure" in parts else ():
        prob = ude_problem(FAILURE["noise"], FAILURE["noise_seed"], lam)
        alg = RadauIIA(intervals, 3, ipopt=QUIET)
        sol, s = _timed(lambda: solve(prob, alg, seed=FAILURE["seed"]))  # noqa: B023
        rows.append(_row(label, sol, s, rmse_vs_truth=rmse_against_truth(sol)))
    return rows


def cost(runs: int) -> dict[str, Any]:
    """The check's wall time against the training time on the Van der Pol benchmark."""
    from collocnode._experiments.vdp import VdPOptions
    from collocnode._experiments.vdp import train as train_vdp
    from collocnode.recipes.vdp import VDP

    opts = VdPOptions(recipe=replace_flat(VDP, print_level=0))
    train_vdp(opts)  # fills the JIT cache, as every later run of the script finds it
    rows = []
    for _ in range(runs):
        sol, _ = train_vdp(opts)
        total = sol.timings["total"]
        rows.append(
            {"train_s": total, "check_s": sol.consistency.wall_time_s, "iterations": sol.iterations}
        )
        rows[-1]["ratio"] = rows[-1]["check_s"] / total
    return {
        "runs": rows,
        "median_train_s": statistics.median(r["train_s"] for r in rows),
        "median_check_s": statistics.median(r["check_s"] for r in rows),
        "median_ratio": statistics.median(r["ratio"] for r in rows),
    }


def refine(cases: int) -> list[dict[str, Any]]:
    """``UntilConsistent(RadauIIA(40, 3), max_rounds=4)`` on the failure case and on further
    (noise seed, weight seed) pairs of the same problem that are inconsistent on 40 x 3."""
    pairs = [(FAILURE["noise"], FAILURE["noise_seed"], FAILURE["seed"])]
    pairs += [(0.05, 1, 0), (0.1, 0, 0), (0.1, 3, 0)][: max(0, cases - 1)]
    out = []
    for noise, noise_seed, seed in pairs:
        prob = ude_problem(noise, noise_seed, 1e-5)
        alg = UntilConsistent(RadauIIA(40, 3, ipopt=QUIET), max_rounds=4)
        sol, s = _timed(lambda: solve(prob, alg, seed=seed))  # noqa: B023
        res = sol.record(UntilConsistent)
        out.append(
            {
                "noise": noise,
                "noise_seed": noise_seed,
                "seed": seed,
                "converged": res.converged,
                "wall_s": s,
                "rounds": [asdict(r) for r in res.rounds],
                "table": res.table(),
                "grid": res.mesh.grid.tolist(),
                "rmse_vs_truth": rmse_against_truth(sol),
            }
        )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("part", choices=("tolerance", "cost", "refine"))
    parser.add_argument("--runs", type=int, default=5, help="cost: training runs")
    parser.add_argument("--cases", type=int, default=4, help="refine: problems (1-4)")
    parser.add_argument(
        "--parts", nargs="+", choices=PARTS, default=PARTS, help="tolerance: groups of cases"
    )
    parser.add_argument("--json", help="write the results to this file")
    args = parser.parse_args()
    # the warnings name inconsistent models; the tables below say the same
    warnings.simplefilter("ignore", InconsistentModelWarning)
    if args.part == "tolerance":
        result: Any = tolerance_cases(tuple(args.parts))  # prints a line per case
    elif args.part == "cost":
        result = cost(args.runs)
        for r in result["runs"]:
            print(f"train {r['train_s']:.2f} s  check {r['check_s']:.3f} s  ratio {r['ratio']:.2%}")
        print(
            f"median: train {result['median_train_s']:.2f} s, check "
            f"{result['median_check_s']:.3f} s, ratio {result['median_ratio']:.2%}"
        )
    else:
        result = refine(args.cases)
        for r in result:
            print(
                f"noise {r['noise']}, noise seed {r['noise_seed']}, seed {r['seed']}: "
                f"converged {r['converged']} in {r['wall_s']:.1f} s, "
                f"RMSE vs truth {r['rmse_vs_truth']}"
            )
            print(r["table"])
    if args.json:
        write_json(args.json, result)


if __name__ == "__main__":
    main()
