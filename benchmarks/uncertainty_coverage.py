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

``--case pendulum``: a pendulum's g/L (truth 9.81/0.8) fitted beside a learned damping d(ω)
(truth 0.3ω + 0.1ω|ω|, a 1-6-1 tanh network, d(0) = 0, λ = 1e-5), three swings from (1, 0),
(2, 0) and (0.5, 1) sampled at 61 times on [0, 6], the noise unequal per state (σ 0.01 rad on
θ, 0.05 rad/s on ω) and the default settings (each column weighted alike, the initial states
fitted); ``--initial-state data`` holds them at the first noisy samples instead. Per seed the
95 % interval of g/L, with the default covariance (the sandwich where the loss's weights are
not the noise's) and with the inverse information alone (what the default was before).

    python benchmarks/uncertainty_coverage.py --case pendulum --seeds 50 [--initial-state data]
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
from collocnode.tools._machine import describe

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


GL_TRUE = 9.81 / 0.8
PENDULUM_NOISE = np.array([0.01, 0.05])
PENDULUM_STARTS = ([1.0, 0.0], [2.0, 0.0], [0.5, 1.0])


def pendulum_truth(t: np.ndarray, x0: list[float]) -> np.ndarray:
    def rhs(_: float, z: np.ndarray) -> list[float]:
        return [z[1], -GL_TRUE * np.sin(z[0]) - (0.3 * z[1] + 0.1 * z[1] * abs(z[1]))]

    return solve_ivp(rhs, (t[0], t[-1]), x0, t_eval=t, rtol=1e-10, atol=1e-10).y.T


def pendulum_problem(seed: int, initial_state: str) -> TrainingProblem:
    t = np.linspace(0.0, HORIZON, SAMPLES)
    rng = np.random.default_rng(seed)
    data = [
        Trajectory(t, x + PENDULUM_NOISE * rng.standard_normal(x.shape), state_names=("th", "om"))
        for x in (pendulum_truth(t, x0) for x0 in PENDULUM_STARTS)
    ]
    model = HybridModel(
        n_states=2,
        blocks={"d": MLP((1, 6, 1), "tanh")},
        rhs=lambda x, u, t, b, p: [x[1], -p["gL"] * ca.sin(x[0]) - b["d"](x[1])],
        parameters={"gL": Parameter(10.0, fit=True, lb=1.0, ub=50.0)},
        state_names=("th", "om"),
    )
    extra = {"initial_state": "data"} if initial_state == "data" else {}
    return TrainingProblem(
        model,
        data,
        regularization=LAMBDA,
        state_guess="data",
        block_constraints=(BlockConstraint("d", 0.0),),
        **extra,
    )


def pendulum_study(seeds: int, initial_state: str) -> dict[str, Any]:
    from collocnode.training._uncertainty import laplace

    alg = RadauIIA(60, 3, ipopt=IpoptOptions(max_iter=300, print_level=0))
    rows = []
    for seed in range(seeds):
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            sol = solve(pendulum_problem(seed, initial_state), alg, seed=0)
            train_s = time.perf_counter() - start
            default = sol.uncertainty().std("gL")
            # the inverse information alone: the sandwich switched off, for comparison
            threshold, laplace.EQUAL_TEMPERATURES = laplace.EQUAL_TEMPERATURES, np.inf
            try:
                information = sol.uncertainty().std("gL")
            finally:
                laplace.EQUAL_TEMPERATURES = threshold
        value = float(sol.params["gL"])
        rows.append(
            {
                "seed": seed,
                "status": sol.status.value,
                "gL": value,
                "std": default,
                "std_information": information,
                "covered": bool(abs(value - GL_TRUE) <= 1.959964 * default),
                "covered_information": bool(abs(value - GL_TRUE) <= 1.959964 * information),
                "train_s": train_s,
            }
        )
    ok = [r for r in rows if r["status"] == "success"]
    values = np.array([r["gL"] for r in ok])
    return {
        "case": "pendulum",
        "initial_state": initial_state,
        "seeds": seeds,
        "converged": len(ok),
        "coverage": float(np.mean([r["covered"] for r in ok])),
        "coverage_information": float(np.mean([r["covered_information"] for r in ok])),
        "median_std": float(np.median([r["std"] for r in ok])),
        "median_std_information": float(np.median([r["std_information"] for r in ok])),
        "spread": float(values.std(ddof=1)),
        "bias": float(values.mean() - GL_TRUE),
        "median_train_s": float(np.median([r["train_s"] for r in rows])),
        "rows": rows,
    }


def pendulum_summary(result: dict[str, Any]) -> str:
    """The sentence docs/uncertainty.md quotes for a stored pendulum run."""
    return (
        f"initial states {result['initial_state']}: the 95 % interval of g/L covers the truth "
        f"in {result['coverage']:.0%} of {result['converged']} seeds (median std "
        f"{result['median_std']:.4f} against a spread of {result['spread']:.4f}); the inverse "
        f"information alone {result['coverage_information']:.0%} (median std "
        f"{result['median_std_information']:.4f})"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--case", default="oscillator", choices=("oscillator", "pendulum"))
    ap.add_argument("--seeds", type=int, default=100)
    ap.add_argument("--noise", type=float, default=0.02)
    ap.add_argument("--hessian", default="gauss-newton", choices=("gauss-newton", "exact"))
    ap.add_argument("--initial-state", default="fitted", choices=("fitted", "data"))
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    if args.case == "pendulum":
        result = pendulum_study(args.seeds, args.initial_state)
        result["machine"] = describe()
        result["command"] = (
            f"python benchmarks/uncertainty_coverage.py --case pendulum --seeds {args.seeds} "
            f"--initial-state {args.initial_state}"
        )
        print(pendulum_summary(result))
        if args.json:
            with open(args.json, "w") as fh:
                json.dump(result, fh, indent=1)
        return
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
