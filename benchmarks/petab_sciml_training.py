"""The PEtab SciML benchmark collection's two hybrid problems trained by collocation.

For Dandekar_Patterns2020 (SIR UDE, 54 parameters) and Ko_NeurIPS2023 (neural ODE, 2,902
parameters), vendored under ``tests/petab_import/data/benchmark_models_petab_sciml``: the
training and validation log-likelihoods at the collection's given parameters (CVODES, the
PEtab way), then one collocation fit of the training problem from those parameters, and the
log-likelihoods of the fitted parameters on both. The validation data are never seen by the
fit. Writes ``--out`` (JSON) and prints the markdown table docs/petab.md shows
(`markdown_table`).

    python benchmarks/petab_sciml_training.py \\
        --out benchmarks/results/petab-sciml-suite/training.json
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path
from typing import Any

import yaml

from collocnode.petab import import_petab
from collocnode.transcription import IpoptOptions

DATA = (
    Path(__file__).resolve().parents[1]
    / "tests"
    / "petab_import"
    / "data"
    / "benchmark_models_petab_sciml"
)

#: per problem the fit's settings: the exact Hessian for the small network; for 2,902
#: parameters IPOPT's L-BFGS (the exact Hessian's parameter block is dense: 2,902², several
#: seconds per factorization); an iteration cap, as the valley of an over-parameterized
#: network is long and flat
SETTINGS: dict[str, dict[str, Any]] = {
    "Dandekar_Patterns2020": {"intervals": 30, "hessian": "exact", "max_iter": 500},
    "Ko_NeurIPS2023": {"intervals": 30, "hessian": "limited-memory", "max_iter": 300},
}


def run(name: str) -> dict[str, Any]:
    folder = DATA / name
    settings = SETTINGS[name]
    train = import_petab(folder / f"train_{name}.yaml")
    validation = import_petab(folder / f"validation_{name}.yaml")
    expected = yaml.safe_load((folder / f"expected_{name}.yaml").read_text())["llh"]
    t0 = time.perf_counter()
    fit = train.fit(
        intervals=settings["intervals"],
        hessian=settings["hessian"],
        ipopt=IpoptOptions(print_level=0, max_iter=settings["max_iter"]),
    )
    seconds = time.perf_counter() - t0
    return {
        "problem": name,
        "parameters": train.n_theta,
        "settings": settings,
        "expected": expected,
        "given": {"training": train.score().llh, "validation": validation.score().llh},
        "fitted": {
            "training": train.score(fit.theta).llh,
            "validation": validation.score(fit.theta).llh,
        },
        "status": fit.status.name,
        "iterations": fit.iterations,
        "agrees": fit.agrees,
        "seconds": seconds,
    }


def markdown_table(results: list[dict[str, Any]]) -> str:
    """The table docs/petab.md shows."""
    lines = [
        "| problem | θ | expected llh (train / validation) | given θ, ours | "
        "collocation fit from the given θ | fit's llh (train / validation) |",
        "|---|---|---|---|---|---|",
    ]
    for r in results:
        s = r["settings"]
        lines.append(
            f"| {r['problem']} | {r['parameters']} | "
            f"{r['expected']['training']:.3f} / {r['expected']['validation']:.3f} | "
            f"{r['given']['training']:.3f} / {r['given']['validation']:.3f} | "
            f"{r['status']}, {r['iterations']} iterations ({s['hessian']} Hessian, "
            f"{s['intervals']} intervals), {r['seconds']:.0f} s | "
            f"{r['fitted']['training']:.3f} / {r['fitted']['validation']:.3f} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="write the results as JSON")
    parser.add_argument("--problems", nargs="*", default=list(SETTINGS))
    args = parser.parse_args(argv)
    results = []
    for name in args.problems:
        results.append(run(name))
        print(json.dumps(results[-1]), flush=True)
    print(markdown_table(results))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        record = {"machine": platform.processor() or platform.machine(), "results": results}
        args.out.write_text(json.dumps(record, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
