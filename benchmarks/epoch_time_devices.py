#!/usr/bin/env python
"""One training epoch of our PyTorch methods on each of several devices, same machine.

Our side of ``benchmarks/epoch_time.py`` (its cases and its ``time_ours``: the settings of the
reproduction row each case serves, the first epoch not counted) run on each device of
``--devices`` in turn, one process and one CPU thread, no authors' code. It prints one JSON line
per case and device (the counted epochs' wall times and their median) and writes them all to
``--json``. Needs CUDA for a ``cuda`` device.

    python benchmarks/epoch_time_devices.py --devices cuda,cpu \\
        --cases fnode13-lstm-smsd,mbd4-lstm-smsd [--epochs 4] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import epoch_time


def measure(name: str, device: str, epochs: int) -> dict:
    """The wall time of each epoch after the first of case ``name`` on ``device``."""
    start = time.perf_counter()
    timing = epoch_time.Timing()
    timing.add(epoch_time.time_ours(epoch_time.CASES[name], epochs, device))
    return {
        "case": name,
        "device": device,
        "epoch_wall_s": timing.wall_s,
        "median_s": timing.median("wall_s"),
        "total_s": time.perf_counter() - start,
    }


def main(argv: list[str] | None = None) -> int:
    import torch

    from collocnode.tools import machine

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--devices", default="cuda,cpu")
    parser.add_argument("--cases", required=True, help="comma-separated case names")
    parser.add_argument(
        "--epochs", type=int, default=4, help="epochs per run, the first not counted"
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
    for name in names:
        for device in devices:
            r = measure(name, device, args.epochs)
            print(json.dumps(r), flush=True)
            out["results"].append(r)
            if args.json:
                with open(args.json, "w") as f:
                    json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
