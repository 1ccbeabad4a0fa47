#!/usr/bin/env python
"""Where a trained model's roll-out leaves the truth: its one-step fit against its roll-out.

Reads the folders that ``scripts/compare.py`` wrote (``compare.json`` and ``<method>.npz``: the
times, the data and the roll-out over the whole trajectory) and prints, per folder, the method's
best training loss, the first time at which the roll-out's squared error (mean over the states)
exceeds ``--threshold``, the MSE over the training window, and the states that carry most of
that MSE. A model whose training loss is small but whose roll-out leaves the truth early inside
its own training window has a roll-out error that the fit does not show: drift accumulated step
by step, not a poor fit.

    python benchmarks/rollout_drift.py runs/reproduce/fnode-table13-slider_crank/seed1-cpu \\
        [more run folders] [--method lstm] [--threshold 0.1] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

from collocnode.tools._io import write_json
from collocnode.tools._markdown import table


def drift(folder: Path, method: str, threshold: float) -> dict[str, Any]:
    """The figures of the module docstring for ``method``'s run in ``folder``."""
    report = json.loads((folder / "compare.json").read_text())
    rows = [r for r in report["rows"] if r["method"] == method]
    if not rows:
        raise SystemExit(f"{folder}: compare.json has no row of method {method!r}")
    arrays = np.load(folder / f"{method}.npz")
    t, x, pred = arrays["t"], arrays["x_data"], arrays["x_pred"]
    n_train = int(report["meta"]["n_train"])
    names = report["meta"]["state_names"]
    sq = (pred - x) ** 2  # (n, n_states)
    inst = sq.mean(axis=1)
    over = np.flatnonzero(inst > threshold)
    per_state = sq[:n_train].mean(axis=0)
    top = np.argsort(per_state)[::-1][:3]
    return {
        "folder": str(folder),
        "seed": report["meta"].get("seed"),
        "best_loss": rows[0].get("best_loss"),
        "first_exceeds_s": float(t[over[0]]) if over.size else None,
        "train_end_s": float(t[n_train - 1]),
        "train_mse": float(sq[:n_train].mean()),
        "full_mse": float(sq.mean()),
        "largest_states": {names[k]: float(per_state[k]) for k in top},
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folders", nargs="+", type=Path, help="run folders of scripts/compare.py")
    ap.add_argument("--method", default="lstm", help="the method's row and <method>.npz")
    ap.add_argument("--threshold", type=float, default=0.1, help="squared error, state mean")
    ap.add_argument("--json", type=Path, default=None, help="also write the figures here")
    args = ap.parse_args(argv)
    if not args.threshold > 0:
        ap.error(f"--threshold must be > 0, got {args.threshold}")
    results = [drift(folder, args.method, args.threshold) for folder in args.folders]
    print(
        table(
            [
                "run",
                "seed",
                "best training loss",
                f"roll-out error > {args.threshold:g} from [s]",
                "end of training window [s]",
                "MSE, training window",
                "MSE, whole trajectory",
                "largest in the training window",
            ],
            [
                [
                    r["folder"],
                    r["seed"],
                    f"{r['best_loss']:.2g}" if r["best_loss"] is not None else "–",
                    f"{r['first_exceeds_s']:.2f}" if r["first_exceeds_s"] is not None else "never",
                    f"{r['train_end_s']:.2f}",
                    f"{r['train_mse']:.2g}",
                    f"{r['full_mse']:.2g}",
                    ", ".join(f"{k} {v:.2g}" for k, v in r["largest_states"].items()),
                ]
                for r in results
            ],
        )
    )
    if args.json is not None:
        write_json(args.json, {"threshold": args.threshold, "runs": results})
    return 0


if __name__ == "__main__":
    sys.exit(main())
