#!/usr/bin/env python
"""MUMPS's ordering per problem: the automatic choice, METIS, and the timed trial that picks one
(``IpoptOptions(mumps_ordering="trial")``, :class:`collocnode.OrderingTrial`), on the problems
where the fixed choices were measured to disagree.

Cases (``--cases``, default all but ``qvm-w``):

* ``vdp``: the Van der Pol experiment (``train_collocation.py vdp``; 500 x 5, σ = 0);
* ``vdp-global``: the same on one interval of 70 fLGR nodes;
* ``qvm-window``: the quarter vehicle's strategy I on its first 5.25 s (312 x 5);
* ``qvm-w``: the quarter vehicle's strategy W on 42 s, four states (minutes per run).

Each case runs once untimed (JIT cache, libraries), then ``--repeats`` times with each of
"auto", "metis" and "trial", interleaved so that a drift of the machine's speed hits all three
alike. Reported: medians of the training's total time, of IPOPT's time (the solve after the
trial for "trial") and of the trial's own time, the iterations, the ordering the trial chose in
each run, and the trial's total over the faster fixed ordering's.

    python benchmarks/ordering_trial.py [--cases vdp,vdp-global,qvm-window,qvm-w]
        [--repeats 3] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections.abc import Callable
from typing import Any

from collocnode.tools._machine import run_record
from collocnode.tools._options import build, replace_flat

ORDERINGS = ("auto", "metis", "trial")
CASES = ("vdp", "vdp-global", "qvm-window", "qvm-w")


def _row(sol: Any, timings: dict[str, float], iterations: int) -> dict[str, Any]:
    trial = dict(sol.solution.ordering_trial)
    return {
        "total_s": timings["total"],
        "ipopt_s": timings["ipopt"],
        "ordering_trial_s": timings.get("ordering_trial", 0.0),
        "iterations": iterations,
        "status": sol.status.value,
        "objective": sol.objective,
        "trial_s_per_iteration": trial,
        "chosen": min(trial, key=trial.__getitem__) if trial else None,
    }


def vdp_runner(spectral: int) -> Callable[[str], dict[str, Any]]:
    from collocnode._experiments.vdp import VdPOptions, train

    def run(ordering: str) -> dict[str, Any]:
        opts = build(
            VdPOptions,
            spectral=spectral,
            print_level=0,
            mumps_ordering=ordering,
            warm_start=False,
        )
        sol, _ = train(opts)
        return _row(sol, sol.timings, sol.iterations)

    return run


def qvm_runner(strategy: str, duration: float, four: bool) -> Callable[[str], dict[str, Any]]:
    from collocnode._experiments.qvm import QVMOptions, generate

    base = QVMOptions(duration=duration, seed=0)
    system, split = generate(base)

    def run(ordering: str) -> dict[str, Any]:
        recipe = replace_flat(
            base.recipe,
            strategy=strategy,
            print_level=0,
            road_as_input=four,
            mumps_ordering=ordering,
        )
        trained = recipe.train(system, split.train, seed=base.seed)
        times = trained.wall_times()
        return _row(trained.solution, times, trained.iterations)

    return run


def runner(case: str) -> Callable[[str], dict[str, Any]]:
    if case == "vdp":
        return vdp_runner(0)
    if case == "vdp-global":
        return vdp_runner(70)
    if case == "qvm-window":
        return qvm_runner("I", 5.25, four=False)
    return qvm_runner("W", 42.0, four=True)


def summarize(runs: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for ordering, rows in runs.items():
        out[ordering] = {
            k: statistics.median(r[k] for r in rows)
            for k in ("total_s", "ipopt_s", "ordering_trial_s", "iterations")
        }
        out[ordering]["statuses"] = sorted({r["status"] for r in rows})
    out["trial"]["chosen"] = [r["chosen"] for r in runs["trial"]]
    best = min(out["auto"]["total_s"], out["metis"]["total_s"])
    out["trial_over_best_fixed"] = out["trial"]["total_s"] / best
    out["metis_over_auto"] = out["metis"]["total_s"] / out["auto"]["total_s"]
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", default="vdp,vdp-global,qvm-window")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    cases = [c.strip() for c in args.cases.split(",") if c.strip()]
    for c in cases:
        if c not in CASES:
            ap.error(f"--cases: one of {', '.join(CASES)}, got {c!r}")
    report: dict[str, Any] = {
        **run_record("benchmarks/ordering_trial.py", argv),
        "settings": vars(args),
        "cases": {},
    }
    print(
        "| case | auto total [s] | METIS total [s] | trial total [s] (of it the trial) "
        "| trial chose | METIS / auto | trial / faster fixed |"
    )
    print("|---|---|---|---|---|---|---|")
    for case in cases:
        run = runner(case)
        run("auto")  # warm-up
        runs: dict[str, list[dict[str, Any]]] = {o: [] for o in ORDERINGS}
        for _ in range(args.repeats):
            for ordering in ORDERINGS:  # interleaved: a drift of the machine hits all three
                runs[ordering].append(run(ordering))
        s = summarize(runs)
        report["cases"][case] = {"median": s, "runs": runs}
        chosen = ", ".join(sorted(set(s["trial"]["chosen"])))
        print(
            f"| {case} | {s['auto']['total_s']:.2f} | {s['metis']['total_s']:.2f} | "
            f"{s['trial']['total_s']:.2f} ({s['trial']['ordering_trial_s']:.2f}) | {chosen} | "
            f"{s['metis_over_auto']:.2f} | {s['trial_over_best_fixed']:.2f} |",
            flush=True,
        )
        if args.json:  # after every case: a long run keeps what it finished
            with open(args.json, "w") as fh:
                json.dump(report, fh, indent=1, default=str)


if __name__ == "__main__":
    main()
