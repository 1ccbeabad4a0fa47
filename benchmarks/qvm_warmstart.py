#!/usr/bin/env python
"""The quarter vehicle's warm start (strategy W), taken apart: which states the regression sees,
how many samples, which Hessian, how long it runs, and what that leaves the full problem.

``table`` (default): on the first ``--duration`` seconds (5.25 s: 5,251 samples, 312 x 5 mesh)
each row's regression, then 10 iterations of the full problem (no stagnation rule); quality at 0
and 10 of them: the unseen-road acceleration RMSE over the noise floor, and the largest friction
and spring errors over ±2σ of the training inputs as shares of the true curve's range. The
"noisy samples" row evaluates the forces at the observed states as they are ("fft" keeps the
samples and only differentiates them).

``smoothers``: on the same data, each smoother's error in the smoothed states against the
noise-free truth, as a share of each state's σ, on all samples and on every 5th.

``gates``: on 42 s, the regression alone, stopped once its objective stagnates (relative change
< 1e-4 over 5 iterations) at a block-constraint violation of at most 1e-4, 1e-3 or 1e-2; its
iterations, time and quality.

    python benchmarks/qvm_warmstart.py [table|smoothers|gates] [--duration 5.25]
        [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import replace
from types import SimpleNamespace
from typing import Any

import numpy as np

from collocnode._experiments.qvm import QVMOptions, evaluate, generate
from collocnode.recipes.qvm import QVMRecipe, hybrid_model
from collocnode.recipes.settings import RegressionSettings
from collocnode.tools._options import replace_flat
from collocnode.training._warmstart import fit_initial_guess, smooth_samples
from collocnode.transcription._ipopt.backends import IpoptOptions

# (label, smoothing, stride, Hessian, iteration limit): the regression runs to its limit
ROWS = (
    ("noisy samples", "fft", 10, "exact", 150),
    ("smoothing spline (GCV)", "spline", 10, "exact", 150),
    ("kernel (GCV)", "kernel", 10, "exact", 500),
    ("kernel", "kernel", 10, "gauss-newton", 500),
    ("kernel", "kernel", 10, "gauss-newton", 100),
    ("kernel", "kernel", 1, "gauss-newton", 100),
    ("kernel", "kernel", 40, "gauss-newton", 100),
    ("kernel", "kernel", 10, "gauss-newton", 30),
)
GATES = (1e-4, 1e-3, 1e-2)


def quality(model: Any, p: np.ndarray, system: Any, split: Any) -> dict[str, float]:
    """The unseen-road ratio and the characteristic errors of parameters ``p``."""
    sol = SimpleNamespace(model=model, p=p, params=model.split_params(p))
    metrics, _ = evaluate(sol, system, split)
    char = metrics["characteristic"]
    return {
        "test_rmse_ratio": metrics.get("test_rmse_ratio"),
        "friction_error": char["friction"]["max_rel_range"],
        "spring_error": char["spring"]["max_rel_range"],
    }


def table(duration: float) -> list[dict[str, Any]]:
    opts = QVMOptions(duration=duration)
    system, split = generate(opts)
    out = []
    for label, smoothing, stride, hessian, limit in ROWS:
        regression = RegressionSettings(
            smoothing=smoothing,
            stride=stride,
            regression_hessian=hessian,
            regression_max_iter=limit,
            regression_rtol=None,
        )
        recipe = replace_flat(
            replace(opts.recipe, strategy="W", regression=regression),
            print_level=0,
            max_iter=10,
            stagnation_window=0,
        )
        kept: dict[int, np.ndarray] = {}

        def keep(state: Any, kept: dict[int, np.ndarray] = kept) -> None:
            if state.iteration in (0, 10):
                kept[state.iteration] = state.params()

        trained = recipe.train(system, split.train, seed=opts.seed, callback=keep)
        model = trained.solution.model
        row = {
            "states": label,
            "stride": stride,
            "hessian": hessian,
            "regression": trained.notes["regression"],
            **{f"k={k}": quality(model, p, system, split) for k, p in sorted(kept.items())},
        }
        out.append(row)
        print(json.dumps(row, default=str), flush=True)
    return out


def smoothers(duration: float) -> list[dict[str, Any]]:
    system, split = generate(QVMOptions(duration=duration))
    data = split.train
    truth = system.simulate(data.t, np.zeros(5), road=system.road).x
    out = []
    for method in ("spline", "kernel"):
        for stride in (1, 5):
            start = time.perf_counter()
            x, _ = smooth_samples(data.t[::stride], data.x[::stride], method)
            err = (x - truth[::stride]) / truth.std(axis=0)
            row = {
                "method": method,
                "stride": stride,
                "wall_s": time.perf_counter() - start,
                "rms_error_by_state": dict(
                    zip(system.state_names, np.sqrt(np.mean(err**2, axis=0)).tolist(), strict=True)
                ),
            }
            out.append(row)
            print(json.dumps(row), flush=True)
    return out


def gates() -> list[dict[str, Any]]:
    opts = QVMOptions(duration=42.0)
    system, split = generate(opts)
    recipe = QVMRecipe(strategy="W")
    model = hybrid_model(system, *recipe.blocks(system, split.train))
    p0 = model.init_params(np.random.default_rng(opts.seed))
    problem = recipe.problem(model, split.train, system.road, "data", p0)
    out = []
    for gate in GATES:
        # the objective-change stop of ``stop_rtol``, with this constraint gate
        stop = {
            "acceptable_obj_change_tol": 1e-4,
            "acceptable_iter": 5,
            "acceptable_constr_viol_tol": gate,
            "acceptable_tol": 1e20,
            "acceptable_dual_inf_tol": 1e20,
            "acceptable_compl_inf_tol": 1e20,
        }
        start = time.perf_counter()
        fit = fit_initial_guess(
            problem,
            "kernel",
            ipopt=IpoptOptions(tol=1e-8, max_iter=500, print_level=0, extra=stop),
            jit=True,
            stride=10,
            hessian="gauss-newton",
        )
        row = {
            "gate": gate,
            "status": fit.status.value,
            "iterations": fit.iterations,
            "wall_s": time.perf_counter() - start,
            "timings": fit.timings,
            **quality(model, fit.p, system, split),
        }
        out.append(row)
        print(json.dumps(row, default=str), flush=True)
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("what", nargs="?", default="table", choices=("table", "smoothers", "gates"))
    ap.add_argument("--duration", type=float, default=5.25, help="seconds of road (table)")
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    if args.what == "table":
        rows = table(args.duration)
    elif args.what == "smoothers":
        rows = smoothers(args.duration)
    else:
        rows = gates()
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(rows, fh, indent=1, default=str)


if __name__ == "__main__":
    main()
