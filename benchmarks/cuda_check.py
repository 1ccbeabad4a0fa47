#!/usr/bin/env python
"""Every PyTorch method of the comparison on a CUDA device: it trains, its weights and data live
on the device, and its rollout equals the CPU rollout from the same weights.

For each method, a trainer with its quick settings fits a few epochs of its system on
``--device`` (float64, so that the two devices can be compared closely), predicts the whole
trajectory there, and a CPU trainer given the same weights predicts it again: the largest
difference between the two rollouts is reported against ``--tol`` (relative to the largest
state of the data), and both must reach the same sample.

A barely trained model can be chaotic: on one CPU, moving the 2-epoch LNN's initial state by
1e-15 (relative) moves its blow-up from sample 131 to 1262, and its rollouts part by 1e-6
from sample 100 on. So the CPU also rolls out from such a nudged initial state. Where that
rollout parts from the CPU's by more than ``--tol`` (at sample k), the method is
"rounding-sensitive": the devices are compared over the first k/2 samples only, since beyond
that the rollout cannot tell a device's error from rounding. Exits 1 if any method fails.
Needs a machine with CUDA (the test suite does not).

    python benchmarks/cuda_check.py [--device cuda] [--methods fnode,lstm] [--epochs 2]
"""

from __future__ import annotations

import argparse
import sys
import time
import traceback

import numpy as np

from collocnode import problems
from collocnode.compare.methods import make_trainer
from collocnode.tools._fixed_step import DivergenceError

# method -> (problem, preset, options beyond its quick settings): a system it applies to
CHECKS: dict[str, tuple[str, str | None, dict]] = {
    "fnode": ("smsd", None, {}),
    "mbdnode": ("cart_pole", "mbdnode", {}),
    "mbdnode_symplectic": ("sms", None, {"window": 4}),
    "lstm": ("smsd", None, {}),
    "fcnn": ("smsd", None, {}),
    "hnn": ("sms", None, {}),
    "lnn": ("sms", None, {}),
    "node": ("smsd", None, {"shooting": 5}),
    "snde": ("two_body", None, {}),
    "mnn": ("vdp", None, {"horizon": 4}),
}


def _rollout(trainer: object, t: np.ndarray, x0: np.ndarray) -> np.ndarray:
    """The rollout, or the part before a divergence (a barely trained model may leave the finite
    range)."""
    try:
        return trainer.predict(t, x0)
    except DivergenceError as exc:
        return exc.partial


def _difference(a: np.ndarray, b: np.ndarray, n: int, scale: float) -> float:
    """The largest difference of two rollouts over their first ``n`` samples, over ``scale``."""
    return float(np.max(np.abs(a[:n] - b[:n]), initial=0.0)) / scale


def _parting(a: np.ndarray, b: np.ndarray, atol: float) -> int | None:
    """The first sample where two rollouts differ by more than ``atol`` or one of them has
    stopped; None if they reach the same sample within it."""
    n = min(len(a), len(b))
    apart = np.flatnonzero(np.max(np.abs(a[:n] - b[:n]), axis=1) > atol) if n else []
    if len(apart):
        return int(apart[0])
    return None if len(a) == len(b) else n


# the nudge of the initial state, relative: a few rounding units of float64
NUDGE = 1e-15


def _device_of(trainer: object) -> set[str]:
    return {p.device.type for m in trainer.modules() for p in m.parameters()}


def check(name: str, device: str, epochs: int, tol: float) -> dict:
    problem, preset, extra = CHECKS[name]
    system = problems.get(problem, preset)
    split = system.generate(seed=0)
    options = {**extra, "epochs": epochs, "dtype": "float64"}
    trainer = make_trainer(name, problem, quick=True, device=device, **options)
    start = time.perf_counter()
    result = trainer.fit(system, split.train)
    seconds = time.perf_counter() - start
    t, x0 = split.full.t, split.full.x[0]
    on_device = _rollout(trainer, t, x0)
    cpu = make_trainer(name, problem, quick=True, device="cpu", **{**options, "epochs": 1})
    cpu.fit(system, split.train)
    for ours, theirs in zip(cpu.modules(), trainer.modules(), strict=True):
        ours.load_state_dict({k: v.cpu() for k, v in theirs.state_dict().items()})
    on_cpu = _rollout(cpu, t, x0)
    nudged = _rollout(cpu, t, x0 + NUDGE * np.maximum(np.abs(x0), 1.0))
    scale = float(np.max(np.abs(split.full.x))) or 1.0
    k = _parting(nudged, on_cpu, tol * scale)
    rounding_sensitive = k is not None
    compared = k // 2 if rounding_sensitive else len(on_cpu)
    # the device's rollout must reach the compared samples, or end where the CPU's ends
    reached = len(on_device) >= compared if rounding_sensitive else len(on_device) == len(on_cpu)
    diff = _difference(on_device, on_cpu, compared, scale) if reached else float("inf")
    devices = _device_of(trainer)
    ok = (
        result.status == "success"
        and devices == {device.split(":")[0]}
        and bool(np.all(np.isfinite(on_device)))
        and compared > 0
        and diff < tol
    )
    return {
        "method": name,
        "system": problem,
        "status": str(result.status),
        "parameters_on": sorted(devices),
        "seconds_per_epoch": seconds / max(result.epochs, 1),
        "rollout_difference": diff,
        "rollout_samples": len(on_device),
        "cpu_rollout_samples": len(on_cpu),
        "samples_compared": compared,
        "rounding_sensitive": rounding_sensitive,
        "ok": ok,
    }


def _compared(r: dict) -> str:
    if "samples_compared" not in r:
        return "–"
    n, of = r["samples_compared"], r["cpu_rollout_samples"]
    return f"{n} of {of} (rounding-sensitive)" if r["rounding_sensitive"] else str(n)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--methods", default=",".join(CHECKS))
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument(
        "--tol", type=float, default=1e-6, help="largest rollout difference, relative"
    )
    args = parser.parse_args(argv)
    names = [n for n in args.methods.split(",") if n]
    unknown = sorted(set(names) - set(CHECKS))
    if unknown:
        raise SystemExit(f"--methods: unknown {', '.join(unknown)}; known: {', '.join(CHECKS)}")
    failures = 0
    print(
        "| method | system | status | parameters on | s / epoch | samples compared | "
        "rollout difference | ok |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for name in names:
        try:
            r = check(name, args.device, args.epochs, args.tol)
        except Exception:  # one method's failure is reported, the others still run
            traceback.print_exc()
            r = {"method": name, "system": CHECKS[name][0], "status": "raised", "ok": False}
        failures += not r["ok"]
        print(
            f"| {r['method']} | {r['system']} | {r['status']} | "
            f"{', '.join(r.get('parameters_on', ()))} | {r.get('seconds_per_epoch', 0):.3g} | "
            f"{_compared(r)} | {r.get('rollout_difference', float('nan')):.2g} | "
            f"{'yes' if r['ok'] else 'NO'} |",
            flush=True,
        )
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
