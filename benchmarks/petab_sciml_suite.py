"""The PEtab SciML test suite, run against ``collocnode.petab``: its ML-model import cases
(networks read and evaluated by ``collocnode.petab.sciml``), its hybrid problem-import cases and
its initialization cases (whole PEtab v2 problems read by ``import_petab``).

Problem import (``test_cases/sciml_problem_import``): for every case, import
``petab/problem.yaml`` and, at the nominal parameters, compare the log-likelihood (or the log
posterior, where the case gives that), every simulated observable and the gradient of either
(mechanistic parameters from ``grad_mech.tsv``, each network's from ``grad_<net>.hdf5``) with
the case's absolute tolerances. Initialization (``test_cases/initialization``): compare each
network's starting parameters with the reference file.

For every case folder (``NNN/`` with ``net.yaml``, ``solutions.yaml``, ``net_ps_K.hdf5``,
``net_input_K.hdf5`` or ``net_input_K_argJ.hdf5``, ``net_output_K.hdf5``): read the network,
evaluate it on every input set with its parameter set, and compare with the expected output at
the case's absolute tolerance (``tol`` in ``solutions.yaml``; the ML-import cases give none, so
``--atol``, default 1e-3: the suite's own generator checks at that). A case is *passed*,
*failed* (the largest error, or the error raised) or *refused* (a layer type or target the
reader does not support, with the reason). Prints one line per case and the counts; ``--out``
writes the same as JSON.

The suite is not part of this repository; clone sebapersson/petab_sciml_testsuite (or extract a
bare copy with ``git -C REPO archive HEAD test_cases | tar -x -C /tmp/sciml``) and pass its
``test_cases/ml_model_import`` folder:

    python benchmarks/petab_sciml_suite.py --suite /tmp/sciml/test_cases/ml_model_import \\
        --out runs/petab_sciml_suite.json
    python benchmarks/petab_sciml_suite.py --suite /tmp/sciml/test_cases/sciml_problem_import
    python benchmarks/petab_sciml_suite.py --suite /tmp/sciml/test_cases/initialization

The kind of case is told by the folder's name.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from collocnode.petab import PetabError, import_petab
from collocnode.petab.sciml import UnsupportedError, read_arrays_hdf5, read_network

DEFAULT_ATOL = 1e-3


def _only_array(path: Path, kind: str) -> np.ndarray:
    arrays = read_arrays_hdf5(path, kind)
    if len(arrays) != 1:
        raise PetabError(f"{path}: expected one array under {kind}, found {sorted(arrays)}")
    return next(iter(arrays.values()))


def _input_files(solutions: dict[str, Any], n_inputs: int) -> list[list[str]]:
    """Per input set, the input file of each forward argument (in placeholder order)."""
    if n_inputs == 1 and "net_input" in solutions:
        return [[name] for name in solutions["net_input"]]
    columns = [solutions.get(f"net_input_arg{j}") for j in range(n_inputs)]
    if any(c is None for c in columns):
        raise PetabError(f"solutions.yaml lists no net_input_arg0..{n_inputs - 1} files")
    return [list(files) for files in zip(*columns, strict=True)]


def run_case(folder: Path, atol: float) -> dict[str, Any]:
    """One case: ``{"case", "status", "max_error", "tolerance", "reason", ...}``."""
    record: dict[str, Any] = {"case": folder.name}
    try:
        solutions = yaml.safe_load((folder / "solutions.yaml").read_text())
        network = read_network(folder / solutions.get("net_file", "net.yaml"))
    except UnsupportedError as exc:
        return {**record, "status": "refused", "feature": exc.feature, "reason": exc.reason}
    except (PetabError, OSError, yaml.YAMLError) as exc:
        return {**record, "status": "failed", "reason": str(exc)}
    tolerance = float(solutions.get("tol", atol))
    record["tolerance"] = tolerance
    errors = []
    try:
        outputs = solutions["net_output"]
        inputs = _input_files(solutions, len(network.input_ids))
        ps_files = solutions.get("net_ps") or [None] * len(outputs)
        for ps_file, input_files, output_file in zip(ps_files, inputs, outputs, strict=True):
            params = network.parameters_from_hdf5(folder / ps_file) if ps_file else {}
            xs = [_only_array(folder / f, "inputs") for f in input_files]
            expected = _only_array(folder / output_file, "outputs")
            got = network.numpy(xs if len(xs) > 1 else xs[0], params)
            if got.shape != expected.shape:
                raise PetabError(
                    f"{output_file}: output shape {got.shape}, expected {expected.shape}"
                )
            errors.append(float(np.max(np.abs(got - expected), initial=0.0)))
    except (PetabError, ValueError, KeyError) as exc:
        return {**record, "status": "failed", "reason": f"{type(exc).__name__}: {exc}"}
    record["max_error"] = max(errors)
    record["errors"] = errors
    record["status"] = "passed" if max(errors) <= tolerance else "failed"
    return record


def _max_error(got: Any, expected: Any) -> float:
    return float(np.max(np.abs(np.asarray(got) - np.asarray(expected)), initial=0.0))


def run_problem_case(folder: Path, atol: float) -> dict[str, Any]:
    """One hybrid problem-import case: objective, simulations and gradient at the nominal
    parameters against the case's references."""
    import pandas as pd

    record: dict[str, Any] = {"case": folder.name}
    solutions = yaml.safe_load((folder / "solutions.yaml").read_text())
    try:
        problem = import_petab(folder / "petab" / "problem.yaml")
    except UnsupportedError as exc:
        return {**record, "status": "refused", "feature": exc.feature, "reason": exc.reason}
    except PetabError as exc:
        return {**record, "status": "failed", "reason": str(exc)}
    score = problem.score()
    if "llh" in solutions:
        value, expected, tol = score.llh, solutions["llh"], solutions["tol_llh"]
    else:
        value = -score.objective
        expected, tol = solutions["log_posterior"], solutions["tol_log_posterior"]
    simulated = problem.simulation_table()["simulation"].to_numpy()
    reference = pd.read_csv(folder / solutions["simulation_files"][0], sep="\t")
    errors = {
        "objective": abs(value - expected),
        "simulations": _max_error(simulated, reference["simulation"].to_numpy()),
    }
    tolerances = {
        "objective": float(tol),
        "simulations": float(solutions["tol_simulations"]),
        "gradient": float(solutions.get("tol_grad", atol)),
    }
    # the references are gradients of the log-likelihood (posterior): minus the objective's
    gradient = -problem.gradient()
    index = {pid: k for k, pid in enumerate(problem.parameter_ids)}
    grad_files = solutions.get("grad_files") or {}
    if "mech" in grad_files:
        mech = pd.read_csv(folder / grad_files["mech"], sep="\t")
        errors["gradient"] = _max_error(
            [gradient[index[pid]] for pid in mech["parameterId"]], mech["value"]
        )
    for use in problem.resolved.networks:
        if use.net_id not in grad_files:
            continue
        ours, ref = [], []
        # a frozen array's gradient is stored empty (shape (0,))
        for name, value in _gradient_arrays(folder / grad_files[use.net_id], use.net_id):
            ours.append(gradient[index[name]])
            ref.append(value)
        errors["gradient"] = max(errors.get("gradient", 0.0), _max_error(ours, ref))
    record.update(errors=errors, tolerances=tolerances)
    failed = [k for k, e in errors.items() if not e <= tolerances[k]]
    record["status"] = "failed" if failed else "passed"
    if failed:
        record["reason"] = ", ".join(f"{k} off by {errors[k]:.2e}" for k in failed)
    return record


def _gradient_arrays(path: Path, net_id: str) -> list[tuple[str, float]]:
    """The entries of a gradient file in the parameter layout, named as
    ``collocnode.petab`` names a network's θ entries (``net.layer.array[k]``, row-major)."""
    import h5py

    out = []
    with h5py.File(path, "r") as f:
        group = f["parameters"][net_id]
        for layer in group:
            for array in group[layer]:
                values = np.asarray(group[layer][array][()], dtype=float).ravel()
                out.extend((f"{net_id}.{layer}.{array}[{k}]", v) for k, v in enumerate(values))
    return out


def run_initialization_case(folder: Path, atol: float) -> dict[str, Any]:
    """One initialization case: each network's starting parameters against the reference."""
    record: dict[str, Any] = {"case": folder.name}
    solutions = yaml.safe_load((folder / "solutions.yaml").read_text())
    tol = float(solutions.get("tol", atol))
    try:
        problem = import_petab(folder / "petab" / "problem.yaml")
    except PetabError as exc:
        return {**record, "status": "failed", "reason": str(exc)}
    errors = {}
    for use in problem.resolved.networks:
        network = use.network
        ref = network.parameters_from_hdf5(folder / solutions["parameter_files"][use.net_id])
        errors[use.net_id] = _max_error(use.arrays.values, network.parameters_to_vector(ref))
    record.update(errors=errors, tolerances={k: tol for k in errors})
    record["status"] = "passed" if all(e <= tol for e in errors.values()) else "failed"
    return record


RUNNERS = {
    "ml_model_import": run_case,
    "sciml_problem_import": run_problem_case,
    "initialization": run_initialization_case,
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", type=Path, required=True, help="test_cases/ml_model_import")
    parser.add_argument("--out", type=Path, help="write the results as JSON")
    parser.add_argument(
        "--source", help="what the JSON records as the suite (e.g. repository@commit:folder)"
    )
    parser.add_argument("--atol", type=float, default=DEFAULT_ATOL, help="when a case has no tol")
    args = parser.parse_args(argv)
    folders = sorted(p for p in args.suite.iterdir() if (p / "solutions.yaml").is_file())
    if not folders:
        parser.error(f"no case folders (with solutions.yaml) under {args.suite}")
    kind = args.suite.name if args.suite.name in RUNNERS else "ml_model_import"
    records = []
    for folder in folders:
        r = RUNNERS[kind](folder, args.atol)
        records.append(r)
        if r["status"] == "refused":
            print(f"{r['case']}  refused  {r['feature']}: {r['reason']}")
        elif "errors" in r and isinstance(r["errors"], dict):
            parts = ", ".join(
                f"{k} {e:.1e} (tol {r['tolerances'][k]:g})" for k, e in r["errors"].items()
            )
            print(f"{r['case']}  {r['status']}  {parts}")
        elif "max_error" in r:
            error, tol = r["max_error"], r["tolerance"]
            print(f"{r['case']}  {r['status']}  max|error| {error:.2e} (tol {tol:g})")
        else:
            print(f"{r['case']}  failed  {r['reason']}")
    counts = Counter(r["status"] for r in records)
    refused: dict[str, list[str]] = {}  # reason -> the cases' refused types
    for r in records:
        if r["status"] == "refused":
            refused.setdefault(r["reason"], []).append(f"{r['case']} {r['feature']}")
    print(
        f"{len(records)} cases: {counts['passed']} passed, {counts['failed']} failed, "
        f"{counts['refused']} refused"
    )
    for reason, cases in sorted(refused.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        print(f"  refused {len(cases):2d}: {reason}: {', '.join(cases)}")
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        summary = {
            "suite": args.source or args.suite.name,
            "kind": kind,
            "default_atol": args.atol,
            "counts": {k: counts[k] for k in ("passed", "failed", "refused")},
            "refused_by_reason": dict(refused),
            "cases": records,
        }
        args.out.write_text(json.dumps(summary, indent=1) + "\n")
    return 1 if counts["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
