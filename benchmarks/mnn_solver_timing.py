#!/usr/bin/env python
"""MNN Table 2 (App. C.4): the NeuRLP solver against torchdiffeq's RK4 (adjoint) fitting noisy
sinusoids of 40-1000 steps: training time and final loss per length.

The paper states the task only ("fitting noisy sinusoidal waves of varying lengths"); ours,
kept fixed: the data y_k = sin(t_k) + ε_k, ε_k ~ N(0, 0.1²) (seed 0), t_k = k h with h = 0.1,
k = 0..L-1; the model of both methods a second-order linear ODE with constant coefficients,

    u'' + c₁ u' + c₀ u = 0,   u(0) = a, u'(0) = b,

with (c₀, c₁, a, b) learned from (0.5, 0.1, 0, 0.5) (the truth is (1, 0, 0, 1)), Adam with
learning rate 0.01 for ``--iterations`` steps, the loss the sum over the L samples of the
squared error of u (the paper's losses grow with the length: a sum). NeuRLP solves the ODE
over the whole length as one relaxed least-squares problem
(:mod:`collocnode.compare.methods.mnn_solver`,
dense Cholesky of the normal equations); RK4 integrates it with torchdiffeq's ``rk4`` at step h
and differentiates through ``odeint_adjoint``. Both in float64 on ``--device``; the time is the
wall time of the iterations (the first iteration, which loads kernels, included), the median of
``--repeats`` runs.

    python benchmarks/mnn_solver_timing.py [--lengths 40,100,300,500,1000] [--iterations 300]
        [--repeats 3] [--device cpu] [--json PATH]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

try:
    from collocnode.compare.methods.mnn_solver import solve_ode
    from collocnode.tools._machine import run_record
except ImportError:  # a GPU machine with torch but without collocnode's CasADi core

    def _module_at(relative: str) -> Any:
        """A module of this repository that needs only torch and the standard library, loaded
        from its file (importing it through the package would import CasADi)."""
        path = Path(__file__).resolve().parents[1] / relative
        spec = importlib.util.spec_from_file_location(path.stem, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module  # its dataclasses look their module up
        spec.loader.exec_module(module)
        return module

    solve_ode = _module_at("collocnode/compare/methods/mnn_solver.py").solve_ode
    run_record = _module_at("collocnode/tools/_machine.py").run_record


H = 0.1
NOISE = 0.1
START = (0.5, 0.1, 0.0, 0.5)  # c0, c1, u(0), u'(0)


def data(length: int, device: Any) -> tuple[torch.Tensor, torch.Tensor]:
    t = H * np.arange(length)
    y = np.sin(t) + NOISE * np.random.default_rng(0).standard_normal(length)
    as_t = {"dtype": torch.float64, "device": device}
    return torch.as_tensor(t, **as_t), torch.as_tensor(y, **as_t)


def _sync(device: Any) -> None:
    if torch.device(device).type == "cuda":
        torch.cuda.synchronize()


def fit_neurlp(t: torch.Tensor, y: torch.Tensor, iterations: int) -> tuple[float, float]:
    theta = torch.tensor(START, dtype=y.dtype, device=y.device, requires_grad=True)
    opt = torch.optim.Adam([theta], lr=0.01)
    L = y.numel()
    steps = torch.full((1, L - 1), H, dtype=y.dtype, device=y.device)
    rhs = torch.zeros((1, L), dtype=y.dtype, device=y.device)
    _sync(y.device)
    start = time.perf_counter()
    for _ in range(iterations):
        coeffs = torch.stack([theta[0], theta[1], torch.ones_like(theta[0])]).expand(1, L, 3)
        u = solve_ode(coeffs, rhs, theta[2:4][None, :], steps, ridge=1e-10)[0, :, 0]
        loss = ((u - y) ** 2).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
    _sync(y.device)
    return time.perf_counter() - start, float(loss.detach())


class _Linear(torch.nn.Module):
    def __init__(self, c: torch.Tensor) -> None:
        super().__init__()
        self.c = torch.nn.Parameter(c)

    def forward(self, _t: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
        return torch.stack([z[1], -self.c[0] * z[0] - self.c[1] * z[1]])


def fit_rk4(t: torch.Tensor, y: torch.Tensor, iterations: int) -> tuple[float, float]:
    from torchdiffeq import odeint_adjoint

    start_values = torch.tensor(START, dtype=y.dtype, device=y.device)
    field = _Linear(start_values[:2].clone())
    z0 = torch.nn.Parameter(start_values[2:].clone())
    opt = torch.optim.Adam([*field.parameters(), z0], lr=0.01)
    _sync(y.device)
    start = time.perf_counter()
    for _ in range(iterations):
        u = odeint_adjoint(field, z0, t, method="rk4", options={"step_size": H})[:, 0]
        loss = ((u - y) ** 2).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
    _sync(y.device)
    return time.perf_counter() - start, float(loss.detach())


METHODS = {"neurlp": fit_neurlp, "rk4": fit_rk4}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lengths", default="40,100,300,500,1000")
    ap.add_argument("--iterations", type=int, default=300)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--threads", type=int, default=None, help="torch CPU threads")
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    gpu = torch.cuda.get_device_name(device) if device.type == "cuda" else None
    record = {
        **run_record("benchmarks/mnn_solver_timing.py", argv, gpu),
        "config": {
            "h": H,
            "noise": NOISE,
            "start": START,
            "iterations": args.iterations,
            "repeats": args.repeats,
            "device": str(device),
            "threads": torch.get_num_threads(),
        },
        "lengths": [],
    }
    for length in (int(s) for s in args.lengths.split(",")):
        t, y = data(length, device)
        row: dict[str, Any] = {"steps": length}
        for name, fit in METHODS.items():
            runs = [fit(t, y, args.iterations) for _ in range(args.repeats)]
            row[name] = {
                "time_s": statistics.median(r[0] for r in runs),
                "times_s": [r[0] for r in runs],
                "loss": runs[-1][1],
                "mse": runs[-1][1] / length,
            }
        row["speedup"] = row["rk4"]["time_s"] / row["neurlp"]["time_s"]
        record["lengths"].append(row)
        print(
            f"{length:5d} steps: NeuRLP {row['neurlp']['time_s']:.2f} s, loss "
            f"{row['neurlp']['loss']:.3g} | RK4 {row['rk4']['time_s']:.2f} s, loss "
            f"{row['rk4']['loss']:.3g} | RK4 / NeuRLP time {row['speedup']:.2g}",
            flush=True,
        )
        if args.json:  # after every length: a run stopped at a limit keeps what it measured
            Path(args.json).parent.mkdir(parents=True, exist_ok=True)
            Path(args.json).write_text(json.dumps(record, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
