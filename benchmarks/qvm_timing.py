#!/usr/bin/env python
"""Quarter-vehicle timing benchmark (Langenkamp et al. §4.1, Table 1): every training strategy,
several runs each, with phase times, iterations, IPOPT's time per iteration and the quality
figures of the issue's targets.

Each run generates the preset's noisy data (42 s at 1 kHz, 2 % noise; ``--duration`` shortens
it), trains with the recipe of ``scripts/train_collocation.py qvm`` (the paper's settings:
2500 intervals per 42 s x 5 stages, at most 150 iterations per phase, the stagnation rule of
§4.1.3 on) and evaluates it as the experiment does: the learned friction and spring against the
truth over ±2σ of the training inputs (largest error / range of the true curve) and the
unseen-road acceleration RMSE over the noise floor (the true model against the same noisy
observations). Untimed warm-up runs per strategy (``--warm-ups``, default 1) fill the JIT
cache first; the compiled code is cached on disk, so after an earlier run 0 suffice. "wall" is
the whole training call (the data generation excluded), "phases" the recipe's own account of its
phases (build, IPOPT, callbacks, regression, simulation); the difference is the work outside
those clocks: the consistency check after each solve (a re-simulation of the trained model; the
"check" column is the last solve's) and, for strategies I-III, the linear model's simulation for
the state guess.

``--formulations five,four`` runs each strategy with the road height as a fifth state (the
reference) and as a known input (the paper's four states, ``--road-as-input``), and the table
gives the four-state IPOPT time per iteration over the five-state one of the same run.

    python benchmarks/qvm_timing.py [--strategies W,III,II,I] [--formulations five,four]
        [--repeats 3] [--warm-ups 1] [--duration 42] [--max-iter 150]
        [--rational-form pole-free|paper] [--mumps-ordering auto|metis|...|trial] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from typing import Any

from collocnode._experiments.qvm import QVMOptions, evaluate, generate
from collocnode.tools._machine import run_record
from collocnode.tools._options import replace_flat

PHASES = ("build", "ordering_trial", "ipopt", "callbacks", "warm_start", "simulate", "total")


def strategy_label(recipe: Any) -> str:
    """The strategy's name, with strategy III's form of eq. 19 where it is the paper's."""
    paper = recipe.strategy == "III" and recipe.rational_form == "paper"
    return recipe.strategy + (" (eq. 19 as written)" if paper else "")


def one_run(opts: QVMOptions) -> dict[str, Any]:
    """Train once with ``opts`` and return the row of the benchmark."""
    system, split = generate(opts)
    start = time.perf_counter()
    trained = opts.recipe.train(system, split.train, seed=opts.seed)
    wall = time.perf_counter() - start
    sol = trained.solution
    metrics, _ = evaluate(sol, system, split)
    times = trained.wall_times()
    ipopt_iterations = trained.iterations
    char = metrics["characteristic"]
    return {
        "strategy": strategy_label(opts.recipe),
        "formulation": "four" if opts.recipe.road_as_input else "five",
        "status": sol.status.value,
        "message": sol.message,
        "phases": {name: phase.status.value for name, phase in trained.phases.items()},
        "iterations": ipopt_iterations,
        "regression": trained.notes.get("regression"),
        **{f"{k}_s": times.get(k, 0.0) for k in PHASES},
        "wall_s": wall,
        # the consistency check after the last solve (strategy II checks its pre-training too)
        "check_s": sol.consistency.wall_time_s if sol.consistency is not None else None,
        # --mumps-ordering trial: IPOPT s per iteration of each ordering tried (last solve)
        "ordering_trial": dict(sol.solution.ordering_trial),
        "ipopt_per_iteration_s": times["ipopt"] / max(ipopt_iterations, 1),
        "objective": sol.objective,
        "test_rmse_ratio": metrics.get("test_rmse_ratio"),
        "friction_error": char["friction"]["max_rel_range"],
        "spring_error": char["spring"]["max_rel_range"],
        "simulation_error": metrics["simulation_error"],
    }


def median_row(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Medians of the numeric fields over the runs (None where a run has none)."""
    out: dict[str, Any] = {
        "strategy": rows[0]["strategy"],
        "formulation": rows[0]["formulation"],
        "runs": len(rows),
    }
    for key, value in rows[0].items():
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            values = [r[key] for r in rows if r[key] is not None]
            out[key] = statistics.median(values) if values else None
    out["statuses"] = sorted({r["status"] for r in rows})
    return out


def table(medians: list[dict[str, Any]]) -> str:
    # the four-state time per iteration over the five-state one of the same strategy
    per_it = {(m["strategy"], m["formulation"]): m["ipopt_per_iteration_s"] for m in medians}
    for m in medians:
        five = per_it.get((m["strategy"], "five"))
        m["per_iteration_ratio"] = (
            m["ipopt_per_iteration_s"] / five if five and m["formulation"] == "four" else None
        )
    cols = (
        ("strategy", "strategy", "{}"),
        ("formulation", "states", "{}"),
        ("wall_s", "wall [s]", "{:.1f}"),
        ("total_s", "phases [s]", "{:.1f}"),
        ("warm_start_s", "regression [s]", "{:.1f}"),
        ("build_s", "build [s]", "{:.1f}"),
        ("ordering_trial_s", "ordering trial [s]", "{:.1f}"),
        ("ipopt_s", "IPOPT [s]", "{:.1f}"),
        ("check_s", "check [s]", "{:.1f}"),
        ("iterations", "iterations", "{:.0f}"),
        ("ipopt_per_iteration_s", "IPOPT / it. [s]", "{:.2f}"),
        ("per_iteration_ratio", "vs five", "{:.2f}"),
        ("test_rmse_ratio", "test RMSE / floor", "{:.3f}"),
        ("friction_error", "friction err.", "{:.1%}"),
        ("spring_error", "spring err.", "{:.1%}"),
        ("statuses", "status", "{}"),
    )
    lines = [
        "| " + " | ".join(h for _, h, _ in cols) + " |",
        "|" + "---|" * len(cols),
    ]
    for m in medians:
        cells = []
        for key, _, fmt in cols:
            value = m.get(key)
            if key == "statuses":
                value = ", ".join(value)
            cells.append("–" if value is None else fmt.format(value))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--strategies", default="W,III,II,I")
    ap.add_argument("--formulations", default="five", help="five, four or five,four")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--warm-ups", type=int, default=1, help="untimed runs before each strategy")
    ap.add_argument("--duration", type=float, default=42.0, help="seconds of road (≤ 42)")
    ap.add_argument("--stagnation-window", type=int, default=10, help="0: the rule off")
    ap.add_argument(
        "--settle-rtol", type=float, default=0.0, help="the settled-characteristics rule; 0: off"
    )
    ap.add_argument("--max-iter", type=int, default=150, help="IPOPT iterations per phase")
    ap.add_argument("--mumps-ordering", default="auto", help="auto, metis, amd, ... or trial")
    ap.add_argument(
        "--rational-form",
        default="pole-free",
        help="strategy III's form of eq. 19: pole-free or paper (as written, 32 parameters)",
    )
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    strategies = [s.strip() for s in args.strategies.split(",") if s.strip()]
    formulations = [f.strip() for f in args.formulations.split(",") if f.strip()]
    for f in formulations:
        if f not in ("five", "four"):
            ap.error(f"--formulations: 'five' or 'four', got {f!r}")
    report: dict[str, Any] = {
        **run_record("benchmarks/qvm_timing.py", argv),
        "settings": vars(args),
        "strategies": {},
    }
    medians = []
    for strategy, formulation in ((s, f) for s in strategies for f in formulations):
        base = QVMOptions(duration=args.duration, seed=args.seed)
        recipe = replace_flat(
            base.recipe,
            strategy=strategy,
            print_level=0,
            stagnation_window=args.stagnation_window,
            settle_rtol=args.settle_rtol,
            road_as_input=formulation == "four",
            rational_form=args.rational_form,
            mumps_ordering=args.mumps_ordering,
            max_iter=args.max_iter,
        )
        opts = replace_flat(base, recipe=recipe)
        for _ in range(args.warm_ups):  # the JIT cache and the libraries
            one_run(opts)
        rows = []
        for k in range(args.repeats):
            rows.append(one_run(opts))
            r = rows[-1]
            print(
                f"{strategy} ({formulation} states) run {k + 1}: {r['total_s']:.1f} s, "
                f"{r['iterations']} it, {r['status']}, ratio {r['test_rmse_ratio']}, friction "
                f"{r['friction_error']:.3f}, spring {r['spring_error']:.3f}",
                flush=True,
            )
        medians.append(median_row(rows))
        key = f"{strategy}/{formulation}"
        report["strategies"][key] = {"median": medians[-1], "runs": rows}
        if args.json:  # written after every strategy: a long run keeps what it finished
            with open(args.json, "w") as fh:
                json.dump(report, fh, indent=1, default=str)
    print(table(medians))


if __name__ == "__main__":
    main()
