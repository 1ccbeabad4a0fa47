#!/usr/bin/env python
"""Coverage of the Laplace intervals of ``sol.uncertainty()`` over noise seeds.

A damped oscillator with one fitted physical parameter and a small network block (a hybrid
model, the situation the intervals are for):

    x' = v,      v' = -k x - D(v),      D(0) = 0 (a block constraint),

the truth k = 4 and D(v) = 0.3 v + 0.5 v³, the model's D a 1-4-1 tanh network (13 weights)
with the weight penalty λ = 1e-5. Positions and velocities are observed at 61 times on [0, 6]
with Gaussian noise of σ = 0.02 (a new draw per seed), x(0) = (1, 0) known. Per seed: train,
then the 95 % interval of k (noise estimated from the residuals) and of D at three velocities;
the study counts how often they contain the truth. A correct interval method covers 95 % of
the seeds up to the binomial spread (±4.4 % at 100 seeds, two standard errors).

    python benchmarks/uncertainty_coverage.py [--seeds 100] [--noise 0.02] [--hessian gauss-newton]
        [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from typing import Any

import casadi as ca
import numpy as np
from scipy.integrate import solve_ivp

from collocnode import (
    BlockConstraint,
    HybridModel,
    IpoptOptions,
    Parameter,
    RadauIIA,
    TrainingProblem,
    Trajectory,
    solve,
)
from collocnode.nn import MLP
from collocnode.tools.machine import describe

K_TRUE = 4.0
X0 = np.array([1.0, 0.0])
HORIZON = 6.0
SAMPLES = 61
LAMBDA = 1e-5
#: where the learned damping is checked against the truth [m/s]
VELOCITIES = np.array([-1.0, 0.5, 1.5])


def damping(v: np.ndarray) -> np.ndarray:
    return 0.3 * v + 0.5 * v**3


def truth(t: np.ndarray) -> np.ndarray:
    def rhs(_: float, s: np.ndarray) -> np.ndarray:
        return np.array([s[1], -K_TRUE * s[0] - damping(s[1])])

    sol = solve_ivp(rhs, (t[0], t[-1]), X0, t_eval=t, method="DOP853", rtol=1e-12, atol=1e-12)
    return sol.y.T


def model() -> HybridModel:
    net = MLP((1, 4, 1), "tanh", input_scale=(1.0,), output_scale=(1.0,))
    return HybridModel(
        n_states=2,
        blocks={"damping": net},
        rhs=lambda s, u, t, b, p: ca.vertcat(s[1], -p["k"] * s[0] - b["damping"](s[1])),
        parameters={"k": Parameter(3.0, fit=True, lb=0.0)},
        state_names=("x", "v"),
    )


def problem(seed: int, noise: float) -> TrainingProblem:
    t = np.linspace(0.0, HORIZON, SAMPLES)
    rng = np.random.default_rng(seed)
    x = truth(t) + noise * rng.standard_normal((t.size, 2))
    return TrainingProblem(
        model(),
        Trajectory(t=t, x=x, state_names=("x", "v")),
        regularization=LAMBDA,
        initial_state=X0,
        state_guess="data",
        block_constraints=(BlockConstraint("damping", 0.0),),
    )


ALG = RadauIIA(60, 3, ipopt=IpoptOptions(tol=1e-9, max_iter=500, print_level=0))


def one_seed(seed: int, noise: float, hessian: str = "gauss-newton") -> dict[str, Any]:
    """Train on seed ``seed``'s data; the intervals of k and D and whether they hold the truth."""
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol = solve(problem(seed, noise), ALG, seed=seed)
        train_s = time.perf_counter() - start
        unc = sol.uncertainty(hessian=hessian)
    lo, hi = unc.interval("k")
    band = unc.block_band("damping", VELOCITIES)
    return {
        "seed": seed,
        "status": sol.status.value,
        "consistent": None if sol.consistency is None else sol.consistency.consistent,
        "k": float(unc.quantities.values[unc.quantities.index("k")]),
        "k_std": unc.std("k"),
        "k_covered": bool(lo <= K_TRUE <= hi),
        "damping_covered": band.contains(damping(VELOCITIES)).tolist(),
        "noise": unc.laplace.noise.tolist(),
        "train_s": train_s,
        "uncertainty_s": unc.timings["total"],
    }


def study(seeds: int, noise: float, hessian: str) -> dict[str, Any]:
    rows = [one_seed(s, noise, hessian) for s in range(seeds)]
    ok = [r for r in rows if r["status"] == "success"]
    k_std = np.array([r["k_std"] for r in ok])
    k_hat = np.array([r["k"] for r in ok])
    return {
        "seeds": seeds,
        "converged": len(ok),
        "noise": noise,
        "hessian": hessian,
        "k_coverage": float(np.mean([r["k_covered"] for r in ok])),
        "damping_coverage": np.mean([r["damping_covered"] for r in ok], axis=0).tolist(),
        "k_mean_std": float(k_std.mean()),
        "k_spread": float(k_hat.std(ddof=1)),
        "k_bias": float(k_hat.mean() - K_TRUE),
        "median_train_s": float(np.median([r["train_s"] for r in rows])),
        "median_uncertainty_s": float(np.median([r["uncertainty_s"] for r in rows])),
        "rows": rows,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=100)
    ap.add_argument("--noise", type=float, default=0.02)
    ap.add_argument("--hessian", default="gauss-newton", choices=("gauss-newton", "exact"))
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    result = study(args.seeds, args.noise, args.hessian)
    result["machine"] = describe()
    result["command"] = (
        f"python benchmarks/uncertainty_coverage.py --seeds {args.seeds} --noise {args.noise} "
        f"--hessian {args.hessian}"
    )
    print(
        f"{result['converged']}/{args.seeds} converged; 95 % interval of k covers the truth in "
        f"{result['k_coverage']:.0%}; damping at v = {VELOCITIES.tolist()}: "
        f"{', '.join(f'{c:.0%}' for c in result['damping_coverage'])}"
    )
    print(
        f"std of k: mean Laplace {result['k_mean_std']:.4g}, spread over seeds "
        f"{result['k_spread']:.4g} (bias {result['k_bias']:+.2g}); median train "
        f"{result['median_train_s']:.2f} s, uncertainty {result['median_uncertainty_s']:.3f} s"
    )
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(result, fh, indent=1)


if __name__ == "__main__":
    main()
