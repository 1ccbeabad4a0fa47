"""Spurious optima of the default solve on an SIR model, with and without Auto's restarts.

Only the infected fraction I is measured; β, γ and I(0) are fitted (S(0) = 1 − I(0) truth,
R(0) = 0 known). Five set-ups (rates, initial infection, horizon, samples, noise, the guess of
β and γ) with 100 noise seeds each are solved by ``solve(problem, seed=0)`` (Auto, restarts
on) and by ``Auto(restarts=0)``. A fit counts as spurious where β or γ is more than 30 % off
the truth or the status is not converged.

    python benchmarks/auto_restarts_sir.py --seeds 100 --out benchmarks/results/auto-restarts
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
from scipy.integrate import solve_ivp

from collocnode import Auto, HybridModel, Parameter, TrainingProblem, Trajectory, solve
from collocnode.tools._machine import describe

#: (β, γ, I(0), horizon, samples, noise, guess of β and γ)
SETUPS = (
    (0.5, 0.1, 0.01, 60.0, 31, 0.02, 0.3),
    (0.4, 0.1, 0.001, 100.0, 21, 0.01, 1.0),
    (0.8, 0.2, 0.01, 30.0, 16, 0.03, 0.1),
    (0.5, 0.1, 0.01, 40.0, 21, 0.01, 1.0),
    (0.3, 0.1, 0.01, 100.0, 26, 0.005, 0.5),
)


def sir_rhs(x: Any, u: Any, t: Any, blocks: Any, p: Any) -> list[Any]:
    s, i = x[0], x[1]
    return [-p["beta"] * s * i, p["beta"] * s * i - p["gamma"] * i, p["gamma"] * i]


def problem(setup: tuple, seed: int) -> TrainingProblem:
    beta, gamma, i0, horizon, samples, noise, guess = setup
    t = np.linspace(0.0, horizon, samples)
    truth = solve_ivp(
        lambda _, z: sir_rhs(z, None, None, None, {"beta": beta, "gamma": gamma}),
        (0.0, horizon),
        [1 - i0, i0, 0.0],
        t_eval=t,
        rtol=1e-11,
        atol=1e-12,
    ).y.T
    infected = truth[:, 1] + noise * np.random.default_rng(seed).standard_normal(t.size)
    model = HybridModel(
        n_states=3,
        blocks={},
        rhs=sir_rhs,
        parameters={
            "beta": Parameter(guess, fit=True, lb=0.0),
            "gamma": Parameter(guess, fit=True, lb=0.0),
        },
        state_names=("S", "I", "R"),
    )
    data = Trajectory(t, infected[:, None], state_names=("I",))
    return TrainingProblem(model, data, initial_state=[1 - i0, np.nan, 0.0])


def study(seeds: int) -> dict[str, Any]:
    rows = []
    for k, setup in enumerate(SETUPS):
        beta, gamma = setup[:2]
        for restarts in (0, Auto().restarts):
            spurious, seconds, restarted = [], 0.0, 0
            for seed in range(seeds):
                t0 = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    sol = solve(problem(setup, seed), Auto(restarts=restarts), seed=0)
                seconds += time.perf_counter() - t0
                restarted += bool(sol.record(Auto).starts)
                p = sol.p
                if (
                    not sol.status.ok
                    or abs(p[0] - beta) > 0.3 * beta
                    or abs(p[1] - gamma) > 0.3 * gamma
                ):
                    spurious.append(seed)
            rows.append(
                {
                    "setup": k,
                    "restarts": restarts,
                    "spurious": len(spurious),
                    "spurious_seeds": spurious,
                    "restarted": restarted,
                    "seconds": seconds,
                }
            )
            print(json.dumps(rows[-1]), flush=True)
    return {"seeds": seeds, "setups": [list(s) for s in SETUPS], "rows": rows}


def summary(result: dict[str, Any]) -> str:
    """The sentence docs/defaults.md quotes for a stored run."""
    total = result["seeds"] * len(result["setups"])

    def count(restarts: int) -> int:
        return sum(r["spurious"] for r in result["rows"] if (r["restarts"] > 0) == restarts)

    restarted = sum(r["restarted"] for r in result["rows"] if r["restarts"] > 0)
    return (
        f"on {count(False)} of {total} noise seeds over {len(result['setups'])} set-ups without "
        f"the restarts and on {count(True)} with them (the restarts ran on {restarted})"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=100)
    ap.add_argument("--out", type=Path, default=Path("runs/auto-restarts"))
    args = ap.parse_args()
    result = study(args.seeds)
    result["machine"] = describe()
    result["command"] = (
        f"python benchmarks/auto_restarts_sir.py --seeds {args.seeds} --out {args.out}"
    )
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "auto_restarts_sir.json").write_text(json.dumps(result, indent=1) + "\n")
    print(summary(result))


if __name__ == "__main__":
    main()
