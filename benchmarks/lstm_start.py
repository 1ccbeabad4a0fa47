#!/usr/bin/env python
"""Which half of the LSTM's start moves its error: the training windows or the rollout's first
states.

The LSTM baseline starts in one of two ways (``LSTMOptions.start``): ``"padded"`` trains on every
window, the first ones padded with the first sample, and rolls out from the initial state alone;
``"data"``, as the authors' code of both papers does, trains on the full windows inside the data
only and rolls out from the first ``window`` true states. On MBD-NODE Table 4's cart-pole the two
rows of ``docs/results.md`` differ by about 4×; this script separates the two halves. For one
seed it trains the LSTM both ways on the row's data and settings (``scripts/compare.py cart_pole
--preset mbdnode --methods lstm --set lstm.epochs=400 --set lstm.lr=5e-4 --set lstm.layers=3``)
and rolls each trained model out both ways, scored as the comparison scores it (MSE over the
training window, the extrapolation window and the whole trajectory). The diagonal of the 2×2
table is the two stored rows again; the off-diagonal cells change one half alone.

    python benchmarks/lstm_start.py [--problem cart_pole] [--preset mbdnode] [--seed 0]
        [--epochs 400] [--lr 5e-4] [--layers 3] [--threads 1] [--json FILE]
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from collocnode.tools._io import write_json

STARTS = ("padded", "data")
SCORES = ("train_mse", "test_mse", "full_mse")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--problem", default="cart_pole")
    p.add_argument("--preset", default="mbdnode")
    p.add_argument("--seed", type=int, default=0, help="the seed of the data and the weights")
    p.add_argument("--epochs", type=int, default=400)
    p.add_argument("--lr", type=float, default=5e-4)
    p.add_argument("--layers", type=int, default=3)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--json", type=Path, default=None)
    return p.parse_args(argv)


def lstm_options(args: argparse.Namespace) -> dict[str, Any]:
    """The LSTM settings of the row (``--set lstm.KEY=VALUE`` of scripts/compare.py)."""
    return {"epochs": args.epochs, "lr": args.lr, "layers": args.layers}


def run_seed(args: argparse.Namespace, seed: int) -> dict[str, Any]:
    """Both trainings of one seed and their four rollouts: ``{train_start: {"status",
    "train_time_s", "rollouts": {rollout_start: {"train_mse", "test_mse", "full_mse",
    "diverged"}}}}``."""
    from collocnode.compare import make_trainer
    from collocnode.compare._run import CompareConfig
    from collocnode.compare._run.scenarios import StateRollout

    cfg = CompareConfig(
        args.problem,
        ("lstm",),
        preset=args.preset,
        device="cpu",
        seed=seed,
        options={"lstm": lstm_options(args)},
    )
    data = cfg.load()  # the data of scripts/compare.py with the same problem, preset and seed
    evaluation = StateRollout(data.system, data.split)
    out: dict[str, Any] = {}
    for train_start in STARTS:
        trainer = make_trainer("lstm", cfg.problem, **cfg.method_options("lstm"), start=train_start)
        start = time.perf_counter()
        fit = trainer.fit(data.system, data.split.train)
        trained = {"status": str(fit.status), "train_time_s": time.perf_counter() - start}
        rollouts = {}
        for rollout_start in STARTS:
            # the option's other use, after training: how many true states a rollout starts from
            trainer.options = replace(trainer.options, start=rollout_start)
            score = evaluation.score(trainer)
            cells = {k: score.columns.get(k) for k in SCORES}
            cells["diverged"] = score.divergence is not None
            rollouts[rollout_start] = cells
            print(
                f"seed {seed}: trained {train_start:6s} rolled out {rollout_start:6s}  "
                + "  ".join(f"{k} {cells[k]:.3g}" for k in SCORES if cells[k] is not None),
                flush=True,
            )
        out[train_start] = trained | {"rollouts": rollouts}
    return out


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    import torch

    from collocnode.tools._machine import run_record

    torch.set_num_threads(args.threads)
    result = {
        **run_record("benchmarks/lstm_start.py", argv),
        "problem": args.problem,
        "preset": args.preset,
        "options": lstm_options(args),
        "seed": args.seed,
        "trained": run_seed(args, args.seed),
    }
    if args.json is not None:
        write_json(args.json, result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
