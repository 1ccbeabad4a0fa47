#!/usr/bin/env python
"""Accuracy of the control transcription against known optima, as the mesh is refined.

The problems of ``tests/transcription/test_optimal_control.py``: a finite-horizon LQR (cost
against ½ x0ᵀP(0)x0 from the Riccati equation integrated to 1e-12; control against the feedback
-R⁻¹BᵀP(t)x(t)), the minimum-time double integrator (tf = 2), the Bryson–Denham problem with
l = 1/9 (J = 4), once with its junctions on grid points and once inside intervals, and the
index-1 DAE x' = -z, 0 = z³ + z - x⁶ - x² (x = 1/(1 + t)). Prints one table per problem: the
error per mesh and the observed order log2(e_n / e_2n).

    python benchmarks/control_accuracy.py [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "transcription"))

from test_optimal_control import (
    T_LQR,
    X0_LQR,
    B,
    R,
    bryson_denham,
    dae_problem,
    lqr_problem,
    min_time_problem,
    radau,
    riccati,
)

from collocnode import solve


def lqr(n: int) -> dict[str, float]:
    P = riccati()
    sol = solve(lqr_problem(), radau(n))
    t = np.linspace(0.05, T_LQR, 41)
    feedback = np.array([-(np.linalg.solve(R, B.T) @ P(tk) @ sol(tk))[0] for tk in t])
    return {
        "cost": abs(sol.objective - 0.5 * X0_LQR @ P(0.0) @ X0_LQR),
        "control": float(np.max(np.abs(sol.controls(t)[:, 0] - feedback))),
    }


def min_time(n: int) -> dict[str, float]:
    return {"tf": abs(solve(min_time_problem(), radau(n)).tf - 2.0)}


def bryson(n: int) -> dict[str, float]:
    return {"cost": abs(solve(bryson_denham(), radau(n)).objective - 4.0)}


def dae(n: int) -> dict[str, float]:
    sol = solve(dae_problem(), radau(n))
    t = sol.mesh.grid
    return {"x at grid": float(np.max(np.abs(sol(t)[:, 0] - 1 / (1 + t))))}


CASES = {
    "LQR (m = 3)": (lqr, (5, 10, 20, 40)),
    "minimum time, even N (m = 3)": (min_time, (4, 8, 16)),
    "minimum time, odd N (m = 3)": (min_time, (5, 11, 21)),
    "Bryson-Denham, junctions on the grid (m = 3)": (bryson, (6, 12, 30)),
    "Bryson-Denham, junctions inside intervals (m = 3)": (bryson, (8, 16, 32, 64)),
    "index-1 DAE (m = 3)": (dae, (5, 10, 20)),
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    out = {}
    for title, (case, meshes) in CASES.items():
        rows = {n: case(n) for n in meshes}
        out[title] = rows
        print(f"\n{title}")
        for i, (n, errs) in enumerate(rows.items()):
            cells = []
            for key, err in errs.items():
                prev = rows[meshes[i - 1]][key] if i else None
                rate = (
                    f" (order {np.log(prev / err) / np.log(n / meshes[i - 1]):.1f})"
                    if prev and err > 0
                    else ""
                )
                cells.append(f"{key} error {err:.2e}{rate}")
            print(f"  N = {n:3d}: " + ", ".join(cells))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({k: {str(n): e for n, e in v.items()} for k, v in out.items()}, fh, indent=2)


if __name__ == "__main__":
    main()
