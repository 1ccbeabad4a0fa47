#!/usr/bin/env python
"""One training epoch of our PyTorch methods on each of several devices, same machine.

Our side of ``benchmarks/epoch_time.py`` (its cases and its ``time_ours``: the settings of the
reproduction row each case serves, the first epoch not counted) run on each device of
``--devices`` in turn, one process and one CPU thread, no authors' code. It prints one JSON line
per case and device (the counted epochs' wall times and their median) and writes them all to
``--json``. Needs CUDA for a ``cuda`` device.

With ``--cuda-graph``, each case on a CUDA device trains a second time from the same seed with
its training step captured as a CUDA graph (``cuda_graph=True``; the LSTM and the FCNN): its
line adds the ratio of the two medians and the relative difference of the two runs' loss in
each epoch. Those of the first ``--loss-epochs`` epochs (default 2: the first with the initial
learning rate, the second with the decayed one) must stay below ``--loss-rtol`` (exit status 1
otherwise); a graph that read a stale batch, gradient or learning rate would part there. Later
epochs are reported, not checked: in float32 the two runs part by rounding within a few epochs
(the graph's learning rate is a float32 tensor, the eager step's a double).

    python benchmarks/epoch_time_devices.py --devices cuda,cpu \\
        --cases fnode13-lstm-smsd,mbd4-lstm-smsd [--epochs 4] [--cuda-graph] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import epoch_time


def measure(name: str, device: str, epochs: int, cuda_graph: bool = False) -> dict:
    """The wall time of each epoch after the first of case ``name`` on ``device``, and every
    epoch's training loss."""
    start = time.perf_counter()
    timing = epoch_time.Timing()
    losses: list[float] = []
    extra = {"cuda_graph": True} if cuda_graph else None
    timing.add(epoch_time.time_ours(epoch_time.CASES[name], epochs, device, extra, losses))
    return {
        "case": name,
        "device": device,
        "cuda_graph": cuda_graph,
        "epoch_wall_s": timing.wall_s,
        "median_s": timing.median("wall_s"),
        "epoch_losses": losses,
        "total_s": time.perf_counter() - start,
    }


def graph_against_eager(graphed: dict, eager: dict) -> dict:
    """The graphed run's median epoch over the eager one's, and the relative difference of
    their losses in each epoch."""
    pairs = zip(graphed["epoch_losses"], eager["epoch_losses"], strict=True)
    diffs = [abs(a - b) / max(abs(b), 1e-300) for a, b in pairs]
    return {"time_ratio": graphed["median_s"] / eager["median_s"], "loss_rel_diffs": diffs}


def main(argv: list[str] | None = None) -> int:
    import torch

    from collocnode.tools import _machine as machine
    from collocnode.tools._io import write_json

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--devices", default="cuda,cpu")
    parser.add_argument("--cases", required=True, help="comma-separated case names")
    parser.add_argument(
        "--epochs", type=int, default=4, help="epochs per run, the first not counted"
    )
    parser.add_argument(
        "--cuda-graph",
        action="store_true",
        help="on a CUDA device, also train with the step captured as a CUDA graph",
    )
    parser.add_argument(
        "--loss-rtol",
        type=float,
        default=1e-5,
        help="largest relative difference of graphed and eager losses in the checked epochs",
    )
    parser.add_argument(
        "--loss-epochs", type=int, default=2, help="epochs whose losses are checked"
    )
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)
    names = epoch_time.case_names(args.cases)
    if args.epochs < 2:
        raise SystemExit(
            f"--epochs must be at least 2 (the first is not counted), got {args.epochs}"
        )
    devices = [d for d in args.devices.split(",") if d]
    torch.set_num_threads(1)
    gpu = torch.cuda.get_device_name(0) if torch.cuda.is_available() else None
    out = {
        **machine.run_record("benchmarks/epoch_time_devices.py", argv, gpu),
        "torch": torch.__version__,
        "results": [],
    }
    failures = 0
    for name in names:
        for device in devices:
            runs = [measure(name, device, args.epochs)]
            if args.cuda_graph and device.startswith("cuda"):
                runs.append(measure(name, device, args.epochs, cuda_graph=True))
                runs[1].update(graph_against_eager(runs[1], runs[0]))
                checked = runs[1]["loss_rel_diffs"][: args.loss_epochs]
                runs[1]["loss_ok"] = max(checked) <= args.loss_rtol
                failures += not runs[1]["loss_ok"]
            for r in runs:
                print(json.dumps(r), flush=True)
                out["results"].append(r)
            if args.json:
                write_json(args.json, out)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
