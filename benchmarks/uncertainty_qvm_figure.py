#!/usr/bin/env python
"""The quarter vehicle's learned friction and spring with their 95 % bands beside the truth
(the figure of docs/uncertainty.md).

Trains the experiment's recipe (``python scripts/train_collocation.py qvm --strategy W
--road-as-input``: the regression warm start, then the full problem on the 42 s road at 1 kHz
with 2 % noise under the experiment's stagnation rule), computes ``sol.uncertainty()`` (noise
estimated, Gauss-Newton) and the delta-method bands of both blocks over ±4σ of the training
inputs, and writes the figure and a JSON summary: the bands' half-widths and the share of the
±2σ grid where they hold the true characteristic, the learned curves' largest error, and the
wall times of training, covariance and bands.

    python benchmarks/uncertainty_qvm_figure.py [--duration 42] [--figure
        docs/figures/qvm_characteristic_bands.png] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from pathlib import Path

from collocnode._experiments.qvm import QVMOptions, characteristic_bands, generate
from collocnode.recipes.qvm import characteristic_errors, input_spread
from collocnode.tools import _plotting as plotting
from collocnode.tools._io import save_figure
from collocnode.tools._machine import describe, load_average
from collocnode.tools._options import replace_flat

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--duration", type=float, default=42.0)
    ap.add_argument(
        "--figure", default=str(ROOT / "docs" / "figures" / "qvm_characteristic_bands.png")
    )
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    opts = QVMOptions(duration=args.duration)
    recipe = replace_flat(opts.recipe, strategy="W", road_as_input=True, print_level=0)
    system, split = generate(opts)
    load = load_average()
    start = time.perf_counter()
    trained = recipe.train(system, split.train, seed=opts.seed)
    train_s = time.perf_counter() - start
    sol = trained.solution
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tick = time.perf_counter()
        unc = sol.uncertainty()
        covariance_s = time.perf_counter() - tick
        tick = time.perf_counter()
        bands = characteristic_bands(unc, system, split.train)
        bands_s = time.perf_counter() - tick
    panels = []
    for name, fn, xlabel, scale in (
        ("friction", system.friction, "Δv_s [m/s]", 1.0),
        ("spring", system.spring, "Δz_s [mm]", 1e3),
    ):
        x = bands[name]["x"]
        band = bands[name]["band"]
        sigma = input_spread(split.train)[0 if name == "friction" else 1]
        panels.append(
            {
                "x": x * scale,
                "true": fn(x),
                "learned": band.value,
                "lower": band.lower,
                "upper": band.upper,
                "sigma": sigma * scale,
                "xlabel": xlabel,
                "title": f"{name}: learned with its 95 % band",
            }
        )
    fig = plotting.characteristic_bands(panels)
    save_figure(fig, Path(args.figure))
    result = {
        "status": sol.status.value,
        "iterations": sol.iterations,
        "train_s": train_s,
        "covariance_s": covariance_s,
        "bands_s": bands_s,
        "bands_share_of_training": (covariance_s + bands_s) / train_s,
        "bands": {name: b["summary"] for name, b in bands.items()},
        "characteristic_errors": characteristic_errors(sol, system, split.train),
        "noise": dict(zip(unc.columns, unc.laplace.noise.tolist(), strict=True)),
        "identifiability": unc.identifiability.to_dict(),
        "warnings": [str(w.message) for w in caught],
        "machine": describe(),
        "load_average_start": load,
        "command": f"python benchmarks/uncertainty_qvm_figure.py --duration {args.duration}",
    }
    for name, summary in result["bands"].items():
        print(
            f"{name}: 95 % band over ±2σ: mean half-width {summary['mean_half_width']:.3g} N, "
            f"largest {summary['max_half_width']:.3g} N; truth inside on "
            f"{100 * summary['truth_inside_share']:.0f} % of the grid"
        )
    print(
        f"training {train_s:.1f} s ({result['status']}, {result['iterations']} iterations); "
        f"covariance {covariance_s:.2f} s, bands {bands_s:.2f} s "
        f"({100 * result['bands_share_of_training']:.1f} % of the training)"
    )
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(result, fh, indent=1)


if __name__ == "__main__":
    main()
