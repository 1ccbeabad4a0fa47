#!/usr/bin/env python
"""Evaluations per IPOPT iteration on Van der Pol 500 x 5: separate passes vs one fused pass.

Builds the paper's Van der Pol NLP once (:mod:`collocnode._experiments.vdp`, σ = 0, seed 0, the
cold start: 2,501 nodes, JIT-compiled node functions) and solves it again and again with each way
of evaluating the callbacks, the variants interleaved in every repeat so that the machine's load
affects them alike:

- ``casadi/separate``: CasADi ``nlpsol``; its ``grad_f`` and ``jac_g`` callbacks each evaluate
  the value map and the derivative map;
- ``casadi/fused``: the same with one fused map per callback (the default);
- ``cyipopt/call``: cyipopt, one Function call per IPOPT callback, each call allocating CasADi's
  work memory (a plain ``Function`` call from Python);
- ``cyipopt/separate``: one evaluation per callback into preallocated buffers;
- ``cyipopt/pairs``: f with g, the gradient with the Jacobian (two evaluations per iterate: the
  line search's rejected trial points would not pay for derivatives; Functions and plan built
  here, the library has only "fused" and "separate");
- ``cyipopt/fused``: f, g, gradient and Jacobian from one evaluation per iterate (the default).

Reports per variant the medians of the callback time per iteration, the whole solve, the IPOPT
callback calls and the Function evaluations (passes over the nodes) per iteration, the iterations
and objective (equal across variants up to round-off), and each fused/separate ratio of the same
run.

    python benchmarks/fused_evaluations.py [--repeats 3] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
from dataclasses import replace
from typing import Any

import casadi as ca
import numpy as np

import collocnode.transcription._collocation as collocation
import collocnode.transcription._ipopt.backends as backends
from collocnode._experiments.vdp import VdPOptions, train
from collocnode.tools._options import build

VARIANTS = (
    ("casadi", "separate"),
    ("casadi", "fused"),
    ("cyipopt", "call"),
    ("cyipopt", "separate"),
    ("cyipopt", "pairs"),
    ("cyipopt", "fused"),
)
_CASADI_CALLBACKS = ("nlp_f", "nlp_g", "nlp_grad_f", "nlp_jac_g", "nlp_hess_l")


class _Captured(Exception):
    pass


def vdp_nlp() -> tuple[Any, np.ndarray, Any]:
    """(nlp, z0, ipopt options) of the paper's Van der Pol run, built by the recipe itself (its
    solve is stopped before IPOPT starts)."""
    captured: dict[str, Any] = {}

    def grab(nlp, z0, options, hessian="exact", callback=None):
        captured.update(nlp=nlp, z0=z0, options=options)
        raise _Captured

    original = collocation.solve_ipopt
    collocation.solve_ipopt = grab
    try:
        train(build(VdPOptions, print_level=0, warm_start=False))
    except _Captured:
        pass
    finally:
        collocation.solve_ipopt = original
    return captured["nlp"], captured["z0"], captured["options"]


def add_pairs(nlp: Any) -> None:
    """The "pairs" plan for the cyipopt backend: ``fn_values`` (z -> f, g, the value maps) and
    ``fn_first`` (z -> grad, Jacobian nonzeros, the fused maps). Without a proximal term only."""
    assert not nlp.proximal.size
    graph = nlp.graph
    _, _, grad, jac_nz = graph.first
    nlp.fn_values = ca.Function("values", [graph.z], [graph.f, ca.densify(graph.g)])
    nlp.fn_first = ca.Function("first", [graph.z], [grad, ca.densify(jac_nz)])
    backends._PLANS["pairs"] = {
        "f": ("fn_values", 0),
        "g": ("fn_values", 1),
        "grad": ("fn_first", 0),
        "jac": ("fn_first", 1),
    }


class _PlainCall:
    """An evaluation as a plain ``Function`` call (CasADi allocates its work memory at every
    call), without a cache: one evaluation per IPOPT callback."""

    def __init__(self, fn: ca.Function) -> None:
        self.fn, self.evaluations = fn, 0

    def evaluate(self, *args: Any) -> list[np.ndarray]:
        self.evaluations += 1
        return [o.full().ravel() for o in self.fn.call([ca.DM(a) for a in args])]


def solve(nlp: Any, z0: np.ndarray, options: Any, backend: str, mode: str) -> dict[str, Any]:
    """One solve; the callback time, the IPOPT callback calls and the Function evaluations."""
    kept: dict[str, Any] = {}
    casadi_solver, problem, evaluation = (
        backends._casadi_solver,
        backends._CyipoptProblem,
        backends._Evaluation,
    )

    def keep_solver(*args: Any) -> Any:
        kept["solver"], alive = casadi_solver(*args)
        return kept["solver"], alive

    class KeptProblem(problem):
        def __init__(self, *args: Any) -> None:
            super().__init__(*args)
            kept["problem"] = self
            self.calls = 0

        def _timed(self, key: str, z: np.ndarray) -> np.ndarray:
            self.calls += 1
            return super()._timed(key, z)

        def hessian(self, *args: Any) -> np.ndarray:
            self.calls += 1
            return super().hessian(*args)

    backends._casadi_solver, backends._CyipoptProblem = keep_solver, KeptProblem
    if mode == "call":
        backends._Evaluation = _PlainCall
    try:
        res = backends.solve_ipopt(
            nlp,
            z0,
            replace(options, backend=backend),
            evaluations="separate" if mode == "call" else mode,
        )
    finally:
        backends._casadi_solver, backends._CyipoptProblem = casadi_solver, problem
        backends._Evaluation = evaluation
    if backend == "casadi":
        stats = kept["solver"].stats()
        calls = sum(stats[f"n_call_{k}"] for k in _CASADI_CALLBACKS)
        # grad_f and jac_g: two maps each when separate, one fused map each otherwise
        per_call = 2 if mode == "separate" else 1
        n = {k: stats[f"n_call_{k}"] for k in _CASADI_CALLBACKS}
        passes = n["nlp_f"] + n["nlp_g"] + per_call * (n["nlp_grad_f"] + n["nlp_jac_g"])
        passes += n["nlp_hess_l"]
    else:
        prob = kept["problem"]
        calls = prob.calls
        passes = sum(e.evaluations for e in prob.functions.values())
    it = max(res.iterations, 1)
    return {
        "iterations": res.iterations,
        "objective": res.objective,
        "callbacks_s": res.t_callbacks,
        "total_s": res.t_total,
        "callback_ms_per_iteration": 1e3 * res.t_callbacks / it,
        "calls_per_iteration": calls / it,
        "passes_per_iteration": passes / it,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--json", default=None, help="also write the figures to this file")
    args = ap.parse_args()

    nlp, z0, options = vdp_nlp()
    add_pairs(nlp)
    for backend in ("casadi", "cyipopt"):  # warm-up: loads the libraries, fills the JIT cache
        solve(nlp, z0, options, backend, "fused")
    runs: dict[str, list[dict[str, Any]]] = {f"{b}/{m}": [] for b, m in VARIANTS}
    for _ in range(args.repeats):
        for backend, mode in VARIANTS:
            runs[f"{backend}/{mode}"].append(solve(nlp, z0, options, backend, mode))
    keys = (
        "callback_ms_per_iteration",
        "total_s",
        "calls_per_iteration",
        "passes_per_iteration",
        "iterations",
    )
    median = {
        name: {k: statistics.median(r[k] for r in rows) for k in keys}
        | {"objective": rows[0]["objective"]}
        for name, rows in runs.items()
    }
    cb = lambda name: median[name]["callback_ms_per_iteration"]  # noqa: E731
    ratios = {
        "casadi fused/separate": cb("casadi/fused") / cb("casadi/separate"),
        "cyipopt fused/separate": cb("cyipopt/fused") / cb("cyipopt/separate"),
        "cyipopt fused/call": cb("cyipopt/fused") / cb("cyipopt/call"),
        "cyipopt pairs/separate": cb("cyipopt/pairs") / cb("cyipopt/separate"),
        "total cyipopt/fused / casadi/fused": median["cyipopt/fused"]["total_s"]
        / median["casadi/fused"]["total_s"],
    }
    print(f"Van der Pol 500 x 5, n_z = {nlp.layout.n_z}, medians of {args.repeats} runs")
    print(
        f"{'variant':<18} {'cb ms/it':>9} {'total s':>8} {'calls/it':>9} {'passes/it':>10} "
        f"{'iter':>5}  objective"
    )
    for name, m in median.items():
        print(
            f"{name:<18} {m['callback_ms_per_iteration']:9.1f} {m['total_s']:8.2f} "
            f"{m['calls_per_iteration']:9.2f} {m['passes_per_iteration']:10.2f} "
            f"{m['iterations']:5.0f}  {m['objective']!r}"
        )
    for name, r in ratios.items():
        print(f"{name}: {r:.2f}")
    if args.json:
        report = {
            "machine": {
                "cpus": os.cpu_count(),
                "load_average": os.getloadavg(),
                "python": platform.python_version(),
                "casadi": ca.__version__,
            },
            "repeats": args.repeats,
            "median": median,
            "ratios": ratios,
            "runs": runs,
        }
        with open(args.json, "w") as fh:
            json.dump(report, fh, indent=2)


if __name__ == "__main__":
    main()
