#!/usr/bin/env python
"""What a user waits for: the whole ``train_collocation.py`` process, default against the paper.

Runs the command line as a user does (a fresh Python process each time, files written to a
temporary ``--out``) and times the whole process; ``result.json`` gives the training's own
clock (warm start, build, IPOPT, callbacks) and the run's quality. Each case runs the
experiment's default (the warm start for Van der Pol; strategy W, four states and the settled
characteristics for the quarter vehicle) and the paper's setup (``--no-warm-start``;
``--strategy II --no-road-as-input --settle-rtol 0``), alternately, so that the load of the
machine falls on both alike. ``--cold-cache`` gives every run an empty cache
(``COLLOCNODE_CACHE``: the compiled libraries and the quarter vehicle's kept simulations of its
true model): the first run on a fresh machine, compile and data included. A compilation the
run left running in the background (``jit="auto"``) is waited for before the next run starts,
and the seconds it ran on after the process are reported (``background_s``).

    python benchmarks/first_run.py --cases vdp --repeats 3 [--cold-cache]
    python benchmarks/first_run.py --cases qvm --setups default --repeats 1 --json out.json

Reported per case and setup: medians of the process wall time, the training's total (warm
start included), the IPOPT iterations, and the quality (Van der Pol: the re-simulation's RMSE
over the training window and the extrapolation; quarter vehicle: the unseen road's RMSE over
its noise floor and the characteristics' largest error over their range).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from collocnode.tools._cache import cache_dir
from collocnode.tools._io import write_json
from collocnode.tools._machine import load_average, run_record

ROOT = Path(__file__).resolve().parent.parent

#: the experiment's default and the paper's setup, by case
SETUPS: dict[str, dict[str, list[str]]] = {
    # "compile-first": the node functions and the regression's compiled before they are used,
    # as the default did before it compiled only where that pays (``jit="auto"``)
    "vdp": {"default": [], "paper": ["--no-warm-start"], "compile-first": ["--jit"]},
    "qvm": {
        "default": [],
        "paper": ["--strategy", "II", "--no-road-as-input", "--settle-rtol", "0"],
        "compile-first": ["--jit"],
    },
}


def quality(case: str, result: dict[str, Any]) -> dict[str, Any]:
    """The run's figures of merit from its ``result.json``."""
    if case == "vdp":
        keys = ("train_rmse", "extrapolation_rmse")
        return {k: result.get(k) for k in keys}
    characteristic = result.get("characteristic", {})
    return {
        "test_rmse_ratio": result.get("test_rmse_ratio"),
        **{
            f"{name}_max_rel_range": characteristic.get(name, {}).get("max_rel_range")
            for name in ("friction", "spring")
        },
    }


def run_once(case: str, extra: list[str], cold_cache: bool) -> dict[str, Any]:
    """One process of ``train_collocation.py case extra``: its wall time and its record."""
    with tempfile.TemporaryDirectory(prefix="collocnode_first_run_") as tmp:
        env = dict(os.environ)
        if cold_cache:
            env["COLLOCNODE_CACHE"] = str(Path(tmp) / "cache")
        out = Path(tmp) / "run"
        command = [sys.executable, "scripts/train_collocation.py", case, *extra, "--quiet"]
        start = time.perf_counter()
        done = subprocess.run(
            [*command, "--out", str(out)], cwd=ROOT, env=env, capture_output=True, text=True
        )
        wall = time.perf_counter() - start
        if done.returncode != 0 or not (out / "result.json").exists():
            tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
            return {"process_s": wall, "exit": done.returncode, "error": " | ".join(tail)}
        result = json.loads((out / "result.json").read_text())
        background = wait_for_background(Path(env.get("COLLOCNODE_CACHE") or cache_dir()))
    timings = result.get("wall_time_s", {})
    return {
        "process_s": wall,
        "background_s": background,
        "exit": done.returncode,
        "training_s": timings.get("total"),
        "timings": timings,
        "status": result.get("status"),
        "iterations": result.get("iterations"),
        **quality(case, result),
    }


def wait_for_background(cache: Path, limit: float = 120.0) -> float:
    """Seconds until the JIT compilations a run left in the background in ``cache`` (their
    private folders, ``.collocnode_*``) are done, so that the next run does not share the
    machine with them; 0 where there are none."""
    if not cache.is_dir():
        return 0.0
    start = time.perf_counter()
    while any(cache.glob(".collocnode_*")) and time.perf_counter() - start < limit:
        time.sleep(0.05)
    return time.perf_counter() - start


def median(rows: list[dict[str, Any]], key: str) -> float | None:
    values = [r[key] for r in rows if isinstance(r.get(key), (int, float))]
    return statistics.median(values) if values else None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", nargs="+", choices=sorted(SETUPS), default=["vdp"])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument(
        "--cold-cache",
        action="store_true",
        help="an empty cache (compiled libraries, kept simulations) every run",
    )
    ap.add_argument(
        "--setups",
        nargs="+",
        choices=("default", "paper", "compile-first"),
        default=["default", "paper"],
    )
    ap.add_argument("--json", default=None, help="also write the figures to this file")
    args = ap.parse_args()
    report: dict[str, Any] = {
        **run_record("benchmarks/first_run.py"),
        "cold_cache": args.cold_cache,
        "cases": {},
    }
    for case in args.cases:
        runs: dict[str, list[dict[str, Any]]] = {name: [] for name in args.setups}
        if not args.cold_cache:  # fill the JIT cache once, outside the figures
            run_once(case, SETUPS[case]["default"], cold_cache=False)
        for _ in range(args.repeats):
            for name in args.setups:
                runs[name].append(run_once(case, SETUPS[case][name], args.cold_cache))
        summary = {}
        for name, rows in runs.items():
            keys = [k for k in rows[0] if isinstance(rows[0][k], (int, float)) and k != "exit"]
            summary[name] = {k: median(rows, k) for k in keys}
            summary[name]["statuses"] = sorted({str(r.get("status")) for r in rows})
            print(case, name, json.dumps(summary[name]), flush=True)
        report["cases"][case] = {"median": summary, "runs": runs}
    report["load_at_end"] = load_average()
    if args.json:
        write_json(args.json, report)


if __name__ == "__main__":
    main()
