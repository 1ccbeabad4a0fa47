#!/usr/bin/env python
"""Learn, discover, re-fit on the Lotka-Volterra UDE (SciML's "missing physics" setup).

The data and the model are those of ``examples/gallery/lotka_volterra_discovery.py``: α, β, γ,
δ = 1.3, 0.9, 0.8, 1.8, 21 samples on [0, 5] with 5 % noise (of each state's mean), known
α x and −δ y, a 2-5-5-2 tanh network for the interaction, 160 x 3 Radau IIA, λ = 1e-4. For
each seed (initial state and noise) ``Discovered`` trains the network, regresses its outputs at
the collocation nodes on the cubic polynomials in (x, y) (SSR path, AICc on the 21 samples) and
re-fits the coefficients by collocation, with the initial state free (the network's training
pins it to the noisy first sample, as SciML's does). Reported per seed:

- the discovered and re-fitted coefficients against -β x y and γ x y (relative error, spurious
  and missed terms);
- the held-out error: each model re-simulated from its own initial state (the first sample for
  the network, the estimated one for the closed form) against the truth on (5, 10], relative
  RMSE (RMS error over RMS of the true states);
- the consistency check of both models;
- wall times: training, discovery and re-fit, medians of ``--repeats`` runs; the discovery's
  share of the training time.

    python benchmarks/discovery_lv.py [--seeds 0,1,2,3,4] [--repeats 3] [--lambdas 1e-4]
        [--json PATH]
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pysindy as ps

from collocnode import (
    Discovered,
    HybridModel,
    IpoptOptions,
    RadauIIA,
    SimulationError,
    SparseRegression,
    TrainingProblem,
    solve,
)
from collocnode.nn import MLP
from collocnode.tools import _machine as machine
from collocnode.tools._io import write_json

ROOT = Path(__file__).resolve().parents[1]


def _example() -> Any:
    path = ROOT / "examples" / "gallery" / "lotka_volterra_discovery.py"
    spec = importlib.util.spec_from_file_location("lotka_volterra_discovery", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


LV = _example()
TRUTH = {
    "interaction[0]": {"prey predator": -LV.BETA},
    "interaction[1]": {"prey predator": LV.GAMMA},
}


def held_out_error(sol: Any, x0: np.ndarray) -> dict[str, float | None]:
    """RMSE and relative RMSE on (5, 10] of the model re-simulated from its own collocated
    initial state (the first sample where the training pinned it)."""
    t = np.linspace(0.0, LV.T_END, 401)
    ref = LV.truth(t, x0)
    held = t > LV.T_TRAIN
    try:
        err = sol.simulate(t).x - ref
    except SimulationError as exc:
        return {"rmse": None, "relative_rmse": None, "error": str(exc)}
    rmse = float(np.sqrt(np.mean(err[held] ** 2)))
    return {"rmse": rmse, "relative_rmse": rmse / float(np.sqrt(np.mean(ref[held] ** 2)))}


def one_seed(seed: int, lam: float, repeats: int) -> dict[str, Any]:
    x0, data = LV.make_data(seed)
    net = MLP((2, 5, 5, 2), "tanh", input_scale=tuple(data.x.std(axis=0)))
    model = HybridModel(n_states=2, blocks={"interaction": net}, rhs=LV.physics)
    problem = TrainingProblem(
        model, data, regularization=lam, initial_state="data", state_guess="data"
    )
    leaf = RadauIIA(160, 3, ipopt=IpoptOptions(tol=1e-7, max_iter=500, print_level=0))
    alg = Discovered(
        leaf,
        "interaction",
        SparseRegression(ps.PolynomialLibrary(degree=3)),
        refit_changes={"initial_state": None},
    )
    runs, times = [], {"train": [], "discover": [], "refit": []}
    for _ in range(repeats):
        start = time.perf_counter()
        sol = solve(problem, alg, seed=seed)
        total = time.perf_counter() - start
        r = sol.record(Discovered)
        for key in times:
            times[key].append(r.times.get(key, float("nan")))
        runs.append((sol, total))
    sol = runs[-1][0]
    r = sol.record(Discovered)
    median = {k: statistics.median(v) for k, v in times.items()}
    out: dict[str, Any] = {
        "seed": seed,
        "lambda": lam,
        "x0": x0.tolist(),
        "error": r.error,
        "network": {
            "status": r.trained.status.value,
            "iterations": r.trained.iterations,
            "consistent": r.trained.consistency.consistent,
            "largest_deviation": r.trained.consistency.largest,
            "held_out": held_out_error(r.trained, x0),
        },
        "wall_time_s": {k: v for k, v in times.items()},
        "median_s": median,
        "discover_share_of_training": median["discover"] / median["train"],
        "discover_and_refit_share_of_training": (median["discover"] + median["refit"])
        / median["train"],
    }
    if r.found is not None:
        out["discovered"] = {
            "equations": r.found.equations(),
            **r.found.coefficient_errors(TRUTH),
            "coefficients": r.found.coefficient_table(),
        }
    if r.refitted is not None:
        closed = sol
        out["refitted"] = {
            "equations": r.refitted.equations(),
            **r.refitted.coefficient_errors(TRUTH),
            "coefficients": r.refitted.coefficient_table(),
            "status": closed.status.value,
            "iterations": closed.iterations,
            "consistent": closed.consistency.consistent,
            "largest_deviation": closed.consistency.largest,
            "held_out": held_out_error(closed, x0),
        }
    return out


def summary_line(row: dict[str, Any]) -> str:
    net = row["network"]["held_out"]["relative_rmse"]
    ref = row.get("refitted", {})
    closed = ref.get("held_out", {}).get("relative_rmse")
    return (
        f"seed {row['seed']} λ {row['lambda']:g}: "
        f"{'; '.join(ref.get('equations', [row['error']]))} | coefficient error "
        f"{ref.get('max_relative_error', float('nan')):.3%}, exact support "
        f"{ref.get('exact_support')} | held-out relative RMSE network "
        f"{'–' if net is None else f'{net:.2%}'}, closed form "
        f"{'–' if closed is None else f'{closed:.2%}'} | train {row['median_s']['train']:.2f} s, "
        f"discover {row['median_s']['discover']:.3f} s "
        f"({row['discover_share_of_training']:.1%}), refit {row['median_s']['refit']:.2f} s"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", default="0,1,2,3,4")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--lambdas", default="1e-4")
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    seeds = [int(s) for s in args.seeds.split(",")]
    lambdas = [float(x) for x in args.lambdas.split(",")]
    record = {
        **machine.run_record("benchmarks/discovery_lv.py", argv),
        "config": {"seeds": seeds, "repeats": args.repeats, "lambdas": lambdas},
        "runs": [],
    }
    for lam in lambdas:
        for seed in seeds:
            row = one_seed(seed, lam, args.repeats)
            record["runs"].append(row)
            print(summary_line(row), flush=True)
    if args.json:
        write_json(args.json, record)
    return 0


if __name__ == "__main__":
    sys.exit(main())
