"""``scripts/fit_petab.py``: import a PEtab problem, fit it by a multistart of collocation fits,
and write the report (``result.json``), the waterfall plot and the fit against the data."""

from __future__ import annotations

import argparse
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from ..tools._io import write_json
from .exits import EXIT_FAILED, EXIT_USAGE, fail, first_line

PROG = "fit_petab.py"


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=PROG,
        description="Fit a PEtab problem by Radau IIA collocation (multistart over its bounds) "
        "and score it the PEtab way (CVODES).",
    )
    p.add_argument(
        "problem",
        help="a PEtab YAML file, a folder holding one, or a model name of --collection",
    )
    p.add_argument("--collection", type=Path, help="a folder of PEtab problems, one per name")
    p.add_argument("--starts", type=int, default=10, help="multistart starts (default 10)")
    p.add_argument("--seed", type=int, default=0, help="seed of the starts")
    p.add_argument("--intervals", type=int, default=30, help="mesh intervals per experiment")
    p.add_argument("--stages", type=int, default=3, help="Radau IIA stages per interval")
    p.add_argument("--workers", type=int, default=1, help="processes running the starts")
    p.add_argument(
        "--budget",
        type=float,
        metavar="SECONDS",
        help="wall-clock budget of the multistart: no start begins once it is spent",
    )
    p.add_argument("--out", type=Path, help="output folder (default runs/petab/NAME)")
    p.add_argument("--debug", action="store_true", help="a traceback instead of one line")
    return p


def find_yaml(name: str, collection: Path | None) -> Path:
    """The problem file that ``name`` means (argument help)."""
    path = Path(name)
    if collection is not None and not path.exists():
        path = collection / name
    if path.is_dir():
        found = sorted(p for p in path.glob("*.yaml") if not p.stem.endswith("_solution"))
        if len(found) != 1:
            raise ValueError(f"{path}: {len(found)} PEtab YAML files; name one")
        return found[0]
    if not path.is_file():
        raise ValueError(f"{name}: no such PEtab problem (a YAML file or a folder with one)")
    return path


def petab(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        from ..petab import PetabError, import_petab, multistart, waterfall
    except ImportError as exc:  # the petab extra is not installed
        print(f"{PROG}: error: {exc}; pip install -e '.[petab]'", file=sys.stderr)
        return EXIT_USAGE
    try:
        if args.starts < 1 or args.workers < 1 or args.intervals < 1 or args.stages < 1:
            raise ValueError("--starts, --workers, --intervals and --stages must be >= 1")
        if args.budget is not None and not (np.isfinite(args.budget) and args.budget > 0):
            raise ValueError(f"--budget must be a positive number of seconds, got {args.budget}")
        path = find_yaml(args.problem, args.collection)
        problem = import_petab(path)
    except (ValueError, PetabError) as exc:
        return fail(PROG, first_line(exc), args.debug)
    name = path.stem.lstrip("_")
    out = args.out or Path("runs") / "petab" / name
    out.mkdir(parents=True, exist_ok=True)
    print(problem)
    nominal = problem.score()
    print(f"nominal parameters: objective {nominal.objective:.6g} (llh {nominal.llh:.6g})")

    def report(k: int, r: Any) -> None:
        text = r.fit.summary() if r.fit is not None else f"no fit: {r.error[:120]}"
        print(f"start {k + 1}/{args.starts}: {text}", flush=True)

    options = {"intervals": args.intervals, "stages": args.stages}
    if args.workers > 1:
        with ProcessPoolExecutor(args.workers) as pool:
            result = multistart(
                problem, args.starts, args.seed, pool, report, args.budget, **options
            )
    else:
        result = multistart(problem, args.starts, args.seed, None, report, args.budget, **options)
    print(result.summary())
    waterfall(result, out / "waterfall.png", name)
    record = _record(problem, nominal, result, args)
    if result.results[0].fit is not None:
        _fit_figure(problem, result.best.theta, out / "fit.png", name)
    write_json(out / "result.json", record)
    print(f"wrote {out / 'result.json'}, {out / 'waterfall.png'}")
    return 0 if record["status"] == "success" else EXIT_FAILED


def _record(problem: Any, nominal: Any, result: Any, args: argparse.Namespace) -> dict:
    best = result.results[0].fit
    starts = [
        {
            "start": r.start.tolist(),
            "status": r.fit.status.name if r.fit else "error",
            "objective": r.objective if r.fit else None,
            "collocation_objective": r.fit.collocation_objective if r.fit else None,
            "iterations": r.fit.iterations if r.fit else None,
            "seconds": r.fit.seconds if r.fit else None,
            "error": r.error,
        }
        for r in result.results
    ]
    success = best is not None and best.status.name == "SUCCESS"
    return {
        "command": "python scripts/fit_petab.py " + " ".join(sys.argv[1:]),
        "problem": str(problem.path),
        "status": "success" if success else "failed",
        "parameters": problem.parameter_ids,
        "scales": problem.scales,
        "nominal": {"theta": problem.nominal.tolist(), "objective": nominal.objective},
        "best": None
        if best is None
        else {
            "theta": best.theta.tolist(),
            "objective": best.objective,
            "llh": best.score.llh,
            "status": best.status.name,
        },
        "converged_fraction": result.converged_fraction(),
        "seconds": result.seconds,
        "budget": args.budget,
        "not_started": result.not_started,
        "starts": starts,
    }


def _fit_figure(problem: Any, theta: np.ndarray, path: Path, title: str) -> None:
    """Each observable's measurements and its simulation at θ, one panel per observable."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    m = problem.resolved.measurements
    simulated = problem.simulate(theta).values
    ids = list(dict.fromkeys(m.observable))[:12]
    cols = min(3, len(ids))
    rows = -(-len(ids) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4 * cols, 2.8 * rows), squeeze=False)
    for ax, oid in zip(axes.flat, ids, strict=False):
        rows_of = np.array([o == oid for o in m.observable])
        for k in np.unique(m.experiment[rows_of]):
            sel = rows_of & (m.experiment == k)
            order = np.argsort(m.time[sel])
            ax.plot(m.time[sel], m.value[sel], "o", markersize=3, color=f"C{k % 10}")
            ax.plot(m.time[sel][order], simulated[sel][order], "-", color=f"C{k % 10}")
        ax.set_title(oid, fontsize=9)
        ax.set_xlabel("time")
    for ax in list(axes.flat)[len(ids) :]:
        ax.set_visible(False)
    fig.suptitle(f"{title}: data (dots) and the fitted model (lines, CVODES)", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
