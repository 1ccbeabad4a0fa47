#!/usr/bin/env python
"""Strategy W's regression on the quarter vehicle: subsample and stopping rule against time
and the quality of the regressed model alone.

The regression (:func:`collocnode.training._warmstart.fit_initial_guess`, Gauss-Newton Hessian,
the kernel smoother) fits the friction and spring networks to the observed accelerations at
the smoothed states of every ``stride``-th sample, and stops when its objective changes by less
than ``rtol`` (relative) per iteration for 5 iterations. For each (stride, rtol) this reports
the regression's wall time and IPOPT iterations and the quality of the regressed model before
any collocation: the unseen road's acceleration RMSE over its noise floor and the largest
error of each characteristic over its range (the experiment's measures,
:func:`collocnode._experiments.qvm.evaluate`). 42 s of data, the four-state model, seed 0.

    python benchmarks/qvm_regression.py [--strides 10 20 50 100] [--rtols 1e-4 1e-3 1e-2]
        [--repeats 1] [--json out.json]
"""

from __future__ import annotations

import argparse
import statistics
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from collocnode._experiments.qvm import QVMOptions, evaluate, generate
from collocnode.recipes.qvm import QVMRecipe, hybrid_model
from collocnode.tools._io import write_json
from collocnode.tools._machine import load_average, run_record
from collocnode.training._warmstart import fit_initial_guess


@dataclass
class Regressed:
    """What :func:`evaluate` reads of a solution: the model and its parameters."""

    model: Any
    p: np.ndarray

    @property
    def params(self) -> dict[str, Any]:
        return self.model.split_params(self.p)


def run(system: Any, split: Any, stride: int, rtol: float) -> dict[str, Any]:
    recipe = QVMRecipe(strategy="W", road_as_input=True)
    friction, spring = recipe.blocks(system, split.train)
    model = hybrid_model(system, friction, spring, road_as_input=True)
    p0 = model.init_params(np.random.default_rng(0))
    problem = recipe.problem(model, split.train, system.road, "data", p0)
    settings = recipe.regression
    start = time.perf_counter()
    warm = fit_initial_guess(
        problem,
        settings.smoothing,
        ipopt=settings.ipopt,
        jit=True,
        stride=stride,
        hessian=settings.regression_hessian,
        stop_rtol=rtol,
    )
    wall = time.perf_counter() - start
    metrics, _ = evaluate(Regressed(model, warm.p), system, split)
    return {
        "stride": stride,
        "rtol": rtol,
        "samples": int(warm.t.size),
        "wall_s": wall,
        "smooth_s": warm.timings["smooth"],
        "iterations": warm.iterations,
        "status": warm.status.value,
        "test_rmse_ratio": metrics["test_rmse_ratio"],
        "friction_max_rel_range": metrics["characteristic"]["friction"]["max_rel_range"],
        "spring_max_rel_range": metrics["characteristic"]["spring"]["max_rel_range"],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--strides", type=int, nargs="+", default=[10, 20, 50, 100])
    ap.add_argument("--rtols", type=float, nargs="+", default=[1e-4, 1e-3, 1e-2])
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    system, split = generate(QVMOptions())
    run(system, split, args.strides[0], args.rtols[-1])  # warm-up: JIT cache, imports
    report: dict[str, Any] = {**run_record("benchmarks/qvm_regression.py"), "rows": []}
    for stride in args.strides:
        for rtol in args.rtols:
            rows = [run(system, split, stride, rtol) for _ in range(args.repeats)]
            row = dict(rows[0])
            for key in ("wall_s", "smooth_s"):
                row[key] = statistics.median(r[key] for r in rows)
            report["rows"].append(row)
            print(
                f"stride {stride:4d} rtol {rtol:.0e}: {row['samples']:5d} samples, "
                f"{row['wall_s']:6.2f} s ({row['smooth_s']:.2f} smoothing), "
                f"{row['iterations']:4d} it. {row['status']:>10s}, test/floor "
                f"{row['test_rmse_ratio']:.3f}, friction "
                f"{100 * row['friction_max_rel_range']:.1f} %, spring "
                f"{100 * row['spring_max_rel_range']:.2f} %",
                flush=True,
            )
    report["load_at_end"] = load_average()
    if args.json:
        write_json(args.json, report)


if __name__ == "__main__":
    main()
