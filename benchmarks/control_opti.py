#!/usr/bin/env python
"""A large optimal control problem solved by collocnode and by plain CasADi, same discretization.

The controlled Van der Pol oscillator (the problem of CasADi's own collocation examples)

    x1' = (1 - x2²) x1 - x2 + u,   x2' = x1,   x(0) = (0, 1),   -1 <= u <= 1,   x1 >= -0.25
    minimize ∫_0^10 x1² + x2² + u² dt

on N equal intervals with m-stage Radau IIA collocation, the controls at every collocation point.
The CasADi side is written the way a CasADi user writes it: ``casadi.Opti`` with one variable
block per interval (start state, stage states, stage controls), collocation and continuity
constraints, quadrature of the cost, ``expand=True`` and IPOPT with exact Hessians. Both sides
solve the same discrete problem (their objectives agree to IPOPT's tolerance), from the same
guess, with the same IPOPT options; the script reports build and solve times of each and the
ratios, median of ``--repeats`` runs.

    python benchmarks/control_opti.py [--intervals 2000] [--stages 3] [--repeats 3] [--json F]
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time

import casadi as ca
import numpy as np

from collocnode import Controls, DynamicOptimizationProblem, IpoptOptions, RadauIIA, solve
from collocnode.transcription import radau_table

T_END, X0 = 10.0, (0.0, 1.0)
IPOPT = {"tol": 1e-8, "print_level": 0, "max_iter": 500}


def rhs(x, u):
    return ca.vertcat((1 - x[1] ** 2) * x[0] - x[1] + u[0], x[0])


def running_cost(x, u):
    return x[0] ** 2 + x[1] ** 2 + u[0] ** 2


def collocnode_run(intervals: int, stages: int) -> dict:
    t0 = time.perf_counter()
    dop = DynamicOptimizationProblem(
        dynamics=lambda x, p, u, t: rhs(x, u),
        n_states=2,
        n_params=0,
        tspan=(0.0, T_END),
        lagrange=lambda x, p, u, t: running_cost(x, u),
        x0=X0,
        x_lb=[-0.25, -np.inf],
        controls=Controls(1, lb=-1.0, ub=1.0, guess=0.0),
    )
    sol = solve(dop, RadauIIA(intervals, stages, ipopt=IpoptOptions(**IPOPT)))
    total = time.perf_counter() - t0
    return {
        "build": sol.timings["build"],
        "solve": total - sol.timings["build"],
        "total": total,
        "iterations": sol.iterations,
        "objective": sol.objective,
        "status": sol.status.value,
    }


def opti_run(intervals: int, stages: int) -> dict:
    """The same discretization written with casadi.Opti, as in CasADi's collocation examples."""
    t0 = time.perf_counter()
    table = radau_table(stages)
    D, b, h = table.D, table.b, T_END / intervals
    opti = ca.Opti()
    J = 0
    xk = opti.variable(2)
    opti.subject_to(xk == ca.DM(X0))
    opti.set_initial(xk, 0)
    for _ in range(intervals):
        Xc = opti.variable(2, stages)
        Uc = opti.variable(1, stages)
        opti.subject_to(opti.bounded(-1, Uc, 1))
        opti.subject_to(Xc[0, :] >= -0.25)
        opti.set_initial(Xc, 0)
        opti.set_initial(Uc, 0)
        points = ca.horzcat(xk, Xc)  # the interval's start state and its stage states
        for j in range(stages):
            xj, uj = Xc[:, j], Uc[:, j]
            slope = ca.mtimes(points, ca.DM(D[j]))  # Σ_l D_jl x_l
            opti.subject_to(slope == h * rhs(xj, uj))
            J += h * b[j] * running_cost(xj, uj)
        xk = Xc[:, -1]  # c_m = 1: the last stage state starts the next interval
    opti.minimize(J)
    opti.solver("ipopt", {"expand": True, "print_time": False}, IPOPT)
    t_build = time.perf_counter() - t0
    try:
        sol = opti.solve()
        stats, objective = sol.stats(), float(sol.value(J))
    except RuntimeError:
        stats, objective = opti.stats(), float("nan")
    total = time.perf_counter() - t0
    return {
        "build": t_build,
        "solve": total - t_build,
        "total": total,
        "iterations": int(stats["iter_count"]),
        "objective": objective,
        "status": str(stats["return_status"]),
    }


def median_of(runs: list[dict]) -> dict:
    keys = ("build", "solve", "total", "iterations")
    return {k: statistics.median(r[k] for r in runs) for k in keys}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    ap.add_argument("--intervals", type=int, default=2000)
    ap.add_argument("--stages", type=int, default=3)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()

    result = {"intervals": args.intervals, "stages": args.stages, "machine": platform.processor()}
    for name, run in (("collocnode", collocnode_run), ("casadi_opti", opti_run)):
        runs = [run(args.intervals, args.stages) for _ in range(args.repeats)]
        result[name] = {"median": median_of(runs), "runs": runs}
        med = result[name]["median"]
        print(
            f"{name:12s} build {med['build']:7.2f} s  solve {med['solve']:7.2f} s  "
            f"total {med['total']:7.2f} s  iterations {med['iterations']:.0f}  "
            f"objective {runs[-1]['objective']:.10g}  ({runs[-1]['status']})"
        )
    ours, theirs = result["collocnode"]["median"], result["casadi_opti"]["median"]
    result["ratio_opti_over_collocnode"] = {k: theirs[k] / ours[k] for k in ("build", "total")}
    print(
        f"Opti / collocnode: build {theirs['build'] / ours['build']:.1f}x, "
        f"total {theirs['total'] / ours['total']:.1f}x"
    )
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(result, fh, indent=2)


if __name__ == "__main__":
    main()
