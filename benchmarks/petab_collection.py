"""The Benchmark-Models-PEtab collection imported, scored and fitted by collocation.

Per model (each in a process of its own, with a time limit): the import time, the PEtab-way
log-likelihood at the nominal parameters (CVODES) against AMICI's reference where it lists one
(matched at 1e-3 relative, AMICI's own rule), and with ``--starts N`` a multistart of N
collocation fits from starts uniform on the parameter scale: per start its status, objective
(PEtab-way, CVODES), iterations and times, and the best objective's gap to the best known
optimum (the smaller of the collocation peer's PEtab.jl objective and the nominal parameters').
The model list and reference values are ``benchmarks/data/petab_benchmark_models.json``
(sources named in its README).

The collection is not part of this repository; clone Benchmarking-Initiative/Benchmark-Models-PEtab
and pass its ``Benchmark-Models`` folder:

    python benchmarks/petab_collection.py --collection PATH/Benchmark-Models
    python benchmarks/petab_collection.py --collection PATH/Benchmark-Models --starts 10 \\
        --models Boehm_JProteomeRes2014 Elowitz_Nature2000 --out runs/petab_collection.json
    python benchmarks/petab_collection.py --table RUN.json   # the docs' table of a stored run
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).parent
MODELS = HERE / "data" / "petab_benchmark_models.json"


def catalogue() -> dict[str, dict[str, Any]]:
    return {m["id"]: m for m in json.loads(MODELS.read_text())["models"]}


def best_known(entry: dict[str, Any], nominal_objective: float) -> float:
    """The best known objective: the nominal parameters' and the peer's PEtab.jl values."""
    values = [nominal_objective]
    peer = entry.get("peer") or {}
    for key in ("petab_reference_objective", "petab_min_objective"):
        value = peer.get(key)
        if isinstance(value, (int, float)) and np.isfinite(value):
            values.append(float(value))
    return float(np.nanmin(values))


def _summarise(out: dict[str, Any], best: float) -> None:
    """The random starts' figures of ``out`` from its ``fits`` so far."""
    fits = out["fits"]
    out["starts_run"] = len(fits)
    objectives = [f["objective"] for f in fits if "objective" in f]
    finite = [v for v in objectives if np.isfinite(v)]
    if finite:
        out["best_objective"] = min(finite)
        out["gap"] = (min(finite) - best) / max(abs(best), 1e-12)
        out["fraction_within_0.1%"] = float(
            np.mean([(v - best) <= 1e-3 * max(abs(best), 1e-12) for v in objectives])
        )


def _progress(out: dict[str, Any]) -> None:
    """The record so far, one JSON line: a model stopped at the timeout keeps what it finished
    (a factorization IPOPT cannot interrupt, MUMPS reallocating its workspace again and again,
    outlasts a fit's max_wall_time)."""
    print(json.dumps(out), flush=True)


def _fit_record(problem: Any, start: Any, options: dict[str, Any]) -> dict[str, Any]:
    try:
        fit = problem.fit(start=start, **options)
    except Exception as exc:  # a start CVODES cannot simulate: a failed start
        return {"status": "error", "reason": str(exc)[:200]}
    return _fit_fields(fit)


def _fit_fields(fit: Any) -> dict[str, Any]:
    """What the report keeps of a fit."""
    return {
        "status": fit.status.name,
        "objective": fit.objective,
        "collocation_objective": fit.collocation_objective,
        "iterations": fit.iterations,
        "seconds": fit.seconds,
    }


def run_one(
    collection: Path,
    model_id: str,
    starts: int,
    seed: int,
    seconds: float,
    budget: float | None = None,
    nominal_seconds: float | None = None,
) -> dict[str, Any]:
    """Everything measured on one model (runs in a process of its own): ``seconds`` caps each
    random start's fit, ``nominal_seconds`` the fit from the nominal parameters (default
    ``seconds``), ``budget`` the random starts together (no start begins once it is spent)."""
    from collocnode import IpoptOptions
    from collocnode.petab import PetabError, import_petab, multistart

    entry = catalogue()[model_id]
    path = collection.parent / entry["yaml"]
    out: dict[str, Any] = {"id": model_id}
    t0 = time.perf_counter()
    try:
        problem = import_petab(path)
    except PetabError as exc:
        out.update(status="refused", reason=str(exc)[:300])
        return out
    out["import_seconds"] = time.perf_counter() - t0
    out["n_states"] = problem.resolved.model.n_states
    out["n_theta"] = problem.n_theta
    out["n_experiments"] = len(problem.resolved.experiments)
    out["n_measurements"] = len(problem.resolved.measurements.time)
    t0 = time.perf_counter()
    score = problem.score()
    out["score_seconds"] = time.perf_counter() - t0
    out["nominal_llh"] = score.llh
    out["nominal_objective"] = score.objective
    reference = entry.get("amici_reference_llh")
    out["amici_reference_llh"] = reference
    if reference is not None:
        out["llh_matches_amici"] = bool(np.isclose(score.llh, reference, rtol=1e-3, atol=1e-3))
    out["status"] = "imported"
    if not starts:
        return out
    _progress(out)
    cap = seconds if nominal_seconds is None else nominal_seconds
    # from the nominal parameters (in this collection mostly the published estimate): does
    # collocation hold the known optimum?
    out["nominal_fit"] = _fit_record(
        problem, None, {"ipopt": IpoptOptions(print_level=0, max_wall_time=cap)}
    )
    best = best_known(entry, score.objective)
    out["best_known_objective"] = best
    out["fits"] = []
    _progress(out)

    def record(k: int, result: Any) -> None:
        if result.fit is None:
            out["fits"].append({"start": k, "status": "error", "reason": result.error[:200]})
        else:
            out["fits"].append({"start": k, **_fit_fields(result.fit)})
        _summarise(out, best)
        _progress(out)

    done = multistart(
        problem,
        starts,
        seed,
        callback=record,
        seconds=budget,
        ipopt=IpoptOptions(print_level=0, max_wall_time=seconds),
    )
    out["starts_not_started"] = done.not_started
    _summarise(out, best)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--collection", type=Path, help="the collection's Benchmark-Models folder")
    parser.add_argument("--models", nargs="*", help="model ids (default: the continuous 23)")
    parser.add_argument("--starts", type=int, default=0, help="collocation fits per model")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--start-seconds", type=float, default=60.0, help="IPOPT's cap per fit")
    parser.add_argument(
        "--nominal-seconds",
        type=float,
        help="IPOPT's cap on the fit from the nominal parameters (default: --start-seconds)",
    )
    parser.add_argument(
        "--budget",
        type=float,
        help="seconds for a model's random starts together: no start begins once spent",
    )
    parser.add_argument("--timeout", type=float, default=1800.0, help="seconds per model")
    parser.add_argument("--out", type=Path, default=Path("runs/petab_collection.json"))
    parser.add_argument("--one", help=argparse.SUPPRESS)
    parser.add_argument(
        "--table",
        nargs="+",
        type=Path,
        metavar="JSON",
        help="print the Markdown table of a stored import run (and a stored fit run)",
    )
    args = parser.parse_args(argv)
    if args.table:
        stored = [json.loads(p.read_text()) for p in args.table]
        print(markdown_table(stored[0], stored[-1] if stored[-1].get("starts") else None))
        print()
        print(summary(stored[-1]) if stored[-1].get("starts") else import_summary(stored[-1]))
        return 0
    if args.one:
        record = run_one(
            args.collection,
            args.one,
            args.starts,
            args.seed,
            args.start_seconds,
            args.budget,
            args.nominal_seconds,
        )
        print(json.dumps(record))
        return 0
    if args.collection is None:
        parser.error("--collection is required (except with --table)")
    known = catalogue()
    models = args.models or [m for m, e in known.items() if not e["possible_discontinuities"]]
    records = []
    for model_id in models:
        records.append(_run_model(args, model_id))
        print(_line(records[-1]), flush=True)
        _write(args, argv or sys.argv[1:], records)
    imported = sum(r.get("status") == "imported" for r in records)
    matched = sum(bool(r.get("llh_matches_amici")) for r in records)
    listed = sum(r.get("amici_reference_llh") is not None for r in records)
    print(f"{imported}/{len(records)} imported; llh matches AMICI's for {matched}/{listed} listed")
    return 0


def _run_model(args: argparse.Namespace, model_id: str) -> dict[str, Any]:
    """One model in a process of its own, within ``args.timeout``; its record."""
    command = [
        sys.executable,
        __file__,
        "--collection",
        str(args.collection),
        "--one",
        model_id,
        "--starts",
        str(args.starts),
        "--seed",
        str(args.seed),
        "--start-seconds",
        str(args.start_seconds),
        *(["--budget", str(args.budget)] if args.budget else []),
        *(["--nominal-seconds", str(args.nominal_seconds)] if args.nominal_seconds else []),
    ]
    t0 = time.perf_counter()
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=args.timeout)
        last = _last_record(done.stdout)
        record = last or {"id": model_id, "status": "crashed", "reason": done.stderr[-300:]}
    except subprocess.TimeoutExpired as exc:
        # what the model finished before it was stopped (run() gives the output as bytes)
        last = _last_record((exc.stdout or b"").decode(errors="replace"))
        record = {**last, "stopped": "timeout"} if last else {"id": model_id, "status": "timeout"}
        record["reason"] = f"{args.timeout:.0f} s"
    record["wall_seconds"] = time.perf_counter() - t0
    # the report names files inside the collection, not where this machine keeps it
    local = str(args.collection.resolve().parent) + "/"
    return json.loads(json.dumps(record).replace(local, ""))


def _last_record(output: str) -> dict[str, Any] | None:
    """The last JSON record a model's process printed (its records so far), or None."""
    lines = [line for line in output.splitlines() if line.startswith("{")]
    return json.loads(lines[-1]) if lines else None


def _write(args: argparse.Namespace, argv: list[str], records: list[dict[str, Any]]) -> None:
    args.out.parent.mkdir(parents=True, exist_ok=True)
    run = {
        "command": _command(argv, args.collection),
        "starts": args.starts,
        "seed": args.seed,
        "start_seconds": args.start_seconds,
        "nominal_seconds": args.nominal_seconds or args.start_seconds,
        "budget": args.budget,
        "models": records,
    }
    args.out.write_text(json.dumps(run, indent=1))


def markdown_table(imported: dict[str, Any], fitted: dict[str, Any] | None = None) -> str:
    """The docs' table of a stored import run and (optionally) a stored fit run.

    Columns: the model's size; the import time; the nominal parameters' log-likelihood by
    CVODES beside AMICI's reference (✓: within 1e-3 relative); the fit from the nominal
    parameters (its objective, its gap to the best known objective, IPOPT's status and the
    fit's seconds); the best of the random starts and the fraction of them within 0.1 % of
    the best known objective.
    """
    fits = {r["id"]: r for r in (fitted or {}).get("models", [])}
    starts = (fitted or {}).get("starts", 0)
    budgeted = bool((fitted or {}).get("budget"))
    up_to, ran = ("up to ", ", starts run") if budgeted else ("", "")
    lines = [
        "| model | states | θ | import [s] | nominal llh | AMICI's llh | fit from nominal "
        f"(gap, status, s) | best of {up_to}{starts} random starts (gap{ran}) "
        "| starts within 0.1 % "
        "| peer, GPU (status, build s, solve s) |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in imported["models"]:
        if r.get("status") != "imported":
            reason = r.get("reason", r.get("status", "")).replace("|", "/")
            what = (
                "no record: the model's import, score and fits took more than"
                if r.get("status") == "timeout"
                else "not imported:"
            )
            lines.append(f"| {r['id']} | | | | {what} {reason[:100]} | | | | | {_peer(r['id'])} |")
            continue
        ref = r.get("amici_reference_llh")
        ref_text = (
            "" if ref is None else f"{ref:.6g} " + ("✓" if r.get("llh_matches_amici") else "✗")
        )
        f = fits.get(r["id"], {})
        nominal_fit = _fit_cell(f.get("nominal_fit"), f.get("best_known_objective"))
        best = ""
        if "best_objective" in f:
            ran = f", {f['starts_run']} run" if "starts_not_started" in f else ""
            best = f"{f['best_objective']:.6g} ({f['gap']:.1e}{ran})"
        elif f.get("status") and f.get("status") != "imported":
            best = f["status"]
        if f.get("stopped"):
            # a fit outlasted its cap (one factorization IPOPT cannot interrupt) and the model
            # was stopped at the timeout: what finished before is kept
            best = f"{best} stopped at the {f['reason']} timeout".strip()
        within = f"{f['fraction_within_0.1%']:.0%}" if "fraction_within_0.1%" in f else ""
        lines.append(
            f"| {r['id']} | {r['n_states']} | {r['n_theta']} | {r['import_seconds']:.1f} | "
            f"{r['nominal_llh']:.6g} | {ref_text} | {nominal_fit} | {best} | {within} | "
            f"{_peer(r['id'])} |"
        )
    return "\n".join(lines)


def summary(run: dict[str, Any]) -> str:
    """The docs' sentence on a stored run: what imported, matched and reached the optimum."""
    models = run["models"]
    imported = [m for m in models if m.get("status") == "imported" or "nominal_fit" in m]
    listed = [m for m in imported if m.get("amici_reference_llh") is not None]
    matched = sum(bool(m.get("llh_matches_amici")) for m in listed)
    nominal = [m["nominal_fit"] for m in imported if "objective" in (m.get("nominal_fit") or {})]
    reach = sum(
        _within(m["nominal_fit"].get("objective"), m.get("best_known_objective"))
        for m in imported
        if m.get("nominal_fit")
    )
    reach_random = sum(
        _within(m.get("best_objective"), m.get("best_known_objective")) for m in imported
    )
    either = sum(
        _within(m.get("best_objective"), m.get("best_known_objective"))
        or _within((m.get("nominal_fit") or {}).get("objective"), m.get("best_known_objective"))
        for m in imported
    )
    seconds = [f["seconds"]["total"] for f in nominal]
    builds = [f["seconds"]["build"] for f in nominal]
    if run.get("budget"):
        ran = [m["starts_run"] for m in imported if "starts_run" in m]
        starts = (
            f"from up to {run['starts']} random starts per model within {run['budget']:.0f} s "
            f"(median {np.median(ran):.0f} run)"
        )
    else:
        starts = f"from {run['starts']} random starts per model"
    return (
        f"{len(imported)} of {len(models)} models import, and the CVODES log-likelihood at the "
        f"nominal parameters matches AMICI's reference log-likelihood for {matched} of "
        f"{len(listed)} models that list one. From the nominal parameters, {reach} of "
        f"{len(imported)} fits reach the best known objective within 0.1 % (a fit's median "
        f"{np.median(seconds):.1f} s; the NLP's build at most {max(builds):.1f} s, median "
        f"{np.median(builds):.2f} s); {starts}, {reach_random} models reach it; "
        f"{either} models by either."
    )


def import_summary(run: dict[str, Any]) -> str:
    """The docs' sentence on a stored run without fits (``--starts 0``)."""
    models = run["models"]
    imported = [m for m in models if m.get("status") == "imported"]
    listed = [m for m in imported if m.get("amici_reference_llh") is not None]
    matched = [m["id"] for m in listed if m.get("llh_matches_amici")]
    return (
        f"{len(imported)} of {len(models)} models import, and the CVODES log-likelihood at the "
        f"nominal parameters matches AMICI's reference for {len(matched)} of the {len(listed)} "
        f"that list one ({', '.join(m.split('_')[0] for m in matched)})."
    )


def _within(value: float | None, best: float | None) -> bool:
    if value is None or best is None or not np.isfinite(value):
        return False
    return bool(value - best <= 1e-3 * max(abs(best), 1e-12))


def _peer(model_id: str) -> str:
    """The collocation peer's GPU row (ExaModelsPEtab + MadNLP; its STAT codes: 0 solved,
    0A acceptable, T timeout, R restoration failure, E error)."""
    peer = (catalogue().get(model_id) or {}).get("peer") or {}
    row = (peer.get("results_table_row") or {}).get("gpu") or {}
    if not row:
        return "not run"
    return f"{row.get('STAT', '')}, {row.get('CMPL_s', '')}, {row.get('SOL_s', '')}"


def _fit_cell(fit: dict[str, Any] | None, best: float | None) -> str:
    if not fit:
        return ""
    if "objective" not in fit:
        return fit.get("status", "")
    gap = (fit["objective"] - best) / max(abs(best), 1e-12) if best is not None else np.nan
    return f"{fit['objective']:.6g} ({gap:.1e}, {fit['status']}, {fit['seconds']['total']:.1f})"


def _command(argv: list[str], collection: Path) -> str:
    """The command line, with the collection's folder named as in the module docstring."""
    words = ["PATH/Benchmark-Models" if w == str(collection) else w for w in argv]
    return "python benchmarks/petab_collection.py " + " ".join(words)


def _line(r: dict[str, Any]) -> str:
    if r.get("status") != "imported":
        return f"{r['id']}: {r.get('status')} ({r.get('reason', '')[:160]})"
    text = (
        f"{r['id']}: import {r['import_seconds']:.1f} s, llh {r['nominal_llh']:.6g}"
        f" (AMICI {r['amici_reference_llh']})"
    )
    if "best_objective" in r:
        text += f", best of {len(r['fits'])} {r['best_objective']:.6g}, gap {r['gap']:.2e}"
    return text


if __name__ == "__main__":
    sys.exit(main())
