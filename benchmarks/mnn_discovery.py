#!/usr/bin/env python
"""MNN §5.1 (Figures 2, 7, 8, App. B.1): equation discovery by SINDy, by MNN and by collocation
followed by discovery, on four systems.

The paper's exact tanh and rational systems and its noise are lost in the text; ours (kept
fixed):

- ``planar``: the cubic damped oscillator of Brunton et al. 2016, x' = -0.1 x³ + 2 y³,
  y' = -2 x³ - 0.1 y³, from (2, 0) on [0, 25];
- ``lorenz``: σ, ρ, β = 10, 28, 8/3 from (1, 1, 1) (the paper's), on [0, 10] at dt = 0.01
  (1,001 samples; the paper has 10,000);
- ``tanh``: x' = tanh(-0.1 x + 2 y), y' = tanh(-2 x - 0.1 y) (a damped oscillator saturated by
  tanh) from (2, 0) on [0, 25];
- ``rational``: x' = (-0.1 x + 2 y) / (1 + 0.5 x²), y' = (-2 x - 0.1 y) / (1 + 0.5 x²) from
  (2, 0) on [0, 25].

One trajectory each, sampled at dt = 0.02 (0.01 for Lorenz), Gaussian noise of 1 % of each
state's standard deviation (seed 0). The methods, each with a library that holds the truth
(cubic polynomials for ``planar``, ``tanh`` and ``rational``, quadratic for ``lorenz``):

- ``sindy``: pysindy's SINDy (``compare.py``'s method: smoothed finite differences, STLSQ at
  pysindy's default threshold 0.1), a polynomial library only, as in the paper (it cannot
  express tanh or a quotient);
- ``mnn``: MNN discovery (:mod:`collocnode.compare.methods.mnn_discovery`) with f of the
  system's form (identity, tanh, quotient), threshold 0.05;
- ``collocation``: a neural ODE (one tanh network per state, 8-8 for the planar systems, 12-12
  for Lorenz, λ = 1e-5) trained by collocation on 500 x 3 Radau IIA from a regression warm
  start (``WarmStarted``), then :class:`collocnode.Discovered` on its right-hand side with the
  system's form (SSR path, AICc), the re-fit of the coefficients, and one pruning pass that
  drops the terms under 3 % of their output and re-fits (with a thousand samples the criterion
  keeps small terms that fit the network's own error).

Scores: the coefficients against the truth (largest relative error of the true terms, spurious
and missed terms; for a form the method cannot express, none), and the vector-field error as in
Figure 2: the RMS of |f̂ - f| over the RMS of |f|, on a grid over a box around the training
trajectory ("away from it": [-3, 3]² for the planar systems, whose trajectory stays within
radius 2; [-25, 25] x [-30, 30] x [0, 55] for Lorenz) and along the training trajectory.

    python benchmarks/mnn_discovery.py [--systems planar,lorenz,tanh,rational]
        [--methods sindy,mnn,collocation] [--max-wall-time SECONDS] [--quick] [--json PATH]
        [--merge-into STORED_JSON]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from collocnode import (
    Discovered,
    IpoptOptions,
    NeuralODE,
    RadauIIA,
    SparseRegression,
    TrainingProblem,
    Trajectory,
    WarmStarted,
    solve,
)
from collocnode.nn import MLP
from collocnode.problems import get as get_system
from collocnode.problems._base import System
from collocnode.tools import _machine as machine
from collocnode.tools._io import write_json

NOISE = 0.01  # of each state's standard deviation
SINDY_THRESHOLD = 0.1  # pysindy's default
MNN_THRESHOLD = 0.05
PRUNE = 0.03  # the pruning pass of collocation + discovery


class _Planar(System):
    state_names = ("x", "y")
    PRESETS = {"default": {}}
    dt = 0.02
    n_steps = 1251
    n_train = 1251

    @property
    def x0(self) -> np.ndarray:
        return np.array([2.0, 0.0])


class PlanarCubic(_Planar):
    name = "planar"

    def rhs(self, t, x, u=None):
        x = np.asarray(x, dtype=float)
        a, b = x[..., 0], x[..., 1]
        return np.stack([-0.1 * a**3 + 2 * b**3, -2 * a**3 - 0.1 * b**3], axis=-1)


class TanhPlanar(_Planar):
    name = "tanh"

    def rhs(self, t, x, u=None):
        x = np.asarray(x, dtype=float)
        a, b = x[..., 0], x[..., 1]
        return np.stack([np.tanh(-0.1 * a + 2 * b), np.tanh(-2 * a - 0.1 * b)], axis=-1)


class RationalPlanar(_Planar):
    name = "rational"

    def rhs(self, t, x, u=None):
        x = np.asarray(x, dtype=float)
        a, b = x[..., 0], x[..., 1]
        q = 1 + 0.5 * a**2
        return np.stack([(-0.1 * a + 2 * b) / q, (-2 * a - 0.1 * b) / q], axis=-1)


@dataclass(frozen=True)
class Case:
    """A system, its form, library degree, the true coefficients (output -> term -> value, in
    the form's parameterisation) and the box of the vector-field error."""

    system: Any
    form: str
    degree: int
    truth: dict[str, dict[str, float]]
    box: tuple[tuple[float, float], ...]
    grid: int
    n_steps: int
    intervals: int
    hidden: int


def cases() -> dict[str, Case]:
    planar_box = ((-3.0, 3.0), (-3.0, 3.0))
    lorenz = get_system("lorenz")
    return {
        "planar": Case(
            PlanarCubic(),
            "linear",
            3,
            {"x'": {"x^3": -0.1, "y^3": 2.0}, "y'": {"x^3": -2.0, "y^3": -0.1}},
            planar_box,
            41,
            1251,
            500,
            8,
        ),
        "lorenz": Case(
            lorenz,
            "linear",
            2,
            {
                "x'": {"x": -10.0, "y": 10.0},
                "y'": {"x": 28.0, "y": -1.0, "x z": -1.0},
                "z'": {"z": -8.0 / 3.0, "x y": 1.0},
            },
            ((-25.0, 25.0), (-30.0, 30.0), (0.0, 55.0)),
            15,
            1001,
            500,
            12,
        ),
        "tanh": Case(
            TanhPlanar(),
            "tanh",
            3,
            {"x'": {"x": -0.1, "y": 2.0}, "y'": {"x": -2.0, "y": -0.1}},
            planar_box,
            41,
            1251,
            500,
            8,
        ),
        "rational": Case(
            RationalPlanar(),
            "rational",
            3,
            {
                "x'": {"x": -0.1, "y": 2.0, "den:x^2": 0.5},
                "y'": {"x": -2.0, "y": -0.1, "den:x^2": 0.5},
            },
            planar_box,
            41,
            1251,
            500,
            8,
        ),
    }


def training_data(case: Case, quick: bool) -> tuple[Trajectory, np.ndarray]:
    """The noisy training trajectory and the noise-free states."""
    n = case.n_steps // 4 if quick else case.n_steps
    clean = case.system.simulate(case.system.time_grid(n))
    rng = np.random.default_rng(0)
    noisy = clean.x + NOISE * clean.x.std(axis=0) * rng.standard_normal(clean.x.shape)
    return Trajectory(clean.t, noisy, state_names=case.system.state_names), clean.x


def vector_field_errors(case: Case, field: Any, clean: np.ndarray) -> dict[str, float | None]:
    """RMS |f̂ - f| / RMS |f| on the box grid and along the (noise-free) training states."""
    axes = [np.linspace(lo, hi, case.grid) for lo, hi in case.box]
    grid = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, len(axes))
    out = {}
    for key, points in (("box", grid), ("trajectory", clean)):
        true = case.system.rhs(0.0, points)
        with np.errstate(all="ignore"):
            found = np.asarray(field(points), dtype=float)
        err = np.sqrt(np.mean(np.sum((found - true) ** 2, axis=1)))
        ref = np.sqrt(np.mean(np.sum(true**2, axis=1)))
        out[key] = float(err / ref) if np.isfinite(err) else None
    return out


def coefficient_errors(found: dict[str, dict[str, float]], truth: dict) -> dict[str, Any]:
    worst, spurious, missed = 0.0, [], []
    for out, true in truth.items():
        table = found.get(out, {})
        spurious += [f"{out}: {t}" for t in table if t not in true]
        for term, c in true.items():
            if term not in table:
                missed.append(f"{out}: {term}")
                worst = float("inf")
            else:
                worst = max(worst, abs(table[term] - c) / abs(c))
    return {
        "max_relative_error": worst,
        "spurious": spurious,
        "missed": missed,
        "exact_support": not spurious and not missed,
    }


# --- the methods ------------------------------------------------------------------------------
def run_sindy(case: Case, data: Trajectory, quick: bool) -> dict[str, Any]:
    from collocnode.compare.methods.registry import make_trainer

    trainer = make_trainer("sindy", degree=case.degree, threshold=SINDY_THRESHOLD)
    fit = trainer.fit(case.system, data)
    found = {f"{k}'": row for k, row in trainer.coefficients().items()}
    return {
        "status": fit.status,
        "train_time_s": fit.train_time_s,
        "equations": trainer.equations(),
        "coefficients": found,
        "field": trainer.vector_field,
        "expressible": case.form == "linear",
    }


def run_mnn(case: Case, data: Trajectory, quick: bool) -> dict[str, Any]:
    import torch

    from collocnode.compare.methods.mnn_discovery import MNNDiscovery

    torch.set_num_threads(1)
    epochs = 40 if quick else 1000
    trainer = MNNDiscovery(
        form=case.form,
        degree=case.degree,
        epochs=epochs,
        cycles=2 if quick else 10,
        stride=2,
        threshold=MNN_THRESHOLD,
        coefficient_lr=0.1,
        lr=1e-3,
        device="cpu",
    )
    fit = trainer.fit(case.system, data)
    return {
        "status": fit.status,
        "train_time_s": fit.train_time_s,
        "epochs": fit.epochs,
        "equations": trainer.equations(),
        "coefficients": trainer.coefficients(),
        "field": trainer.vector_field,
        "expressible": True,
    }


def run_collocation(
    case: Case, data: Trajectory, quick: bool, max_wall_time: float | None = None
) -> dict[str, Any]:
    """The neural ODE by collocation, then discovery on its right-hand side; ``max_wall_time``
    [s] limits each IPOPT solve (a solve it stops reports ``time_limit``)."""
    import pysindy as ps

    D = case.system.n_states
    scale = tuple(data.x.std(axis=0))
    h = case.hidden
    nets = [MLP((D, h, h, 1), "tanh", input_scale=scale) for _ in range(D)]
    model = NeuralODE(nets, state_names=case.system.state_names)
    problem = TrainingProblem(model, data, regularization=1e-5, state_guess="data")
    leaf = RadauIIA(
        case.intervals // 4 if quick else case.intervals,
        3,
        ipopt=IpoptOptions(
            tol=1e-7, max_iter=30 if quick else 500, print_level=0, max_wall_time=max_wall_time
        ),
    )
    regression = SparseRegression(ps.PolynomialLibrary(degree=case.degree), form=case.form)
    alg = Discovered(WarmStarted(leaf), None, regression, prune=PRUNE)
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the record holds the consistency and the error
        sol = solve(problem, alg, seed=0)
    total = time.perf_counter() - start
    r = sol.record(Discovered)
    out: dict[str, Any] = {
        "status": sol.status.value,
        "train_time_s": total,
        "wall_time_s": dict(r.times),
        "error": r.error,
        "network_status": r.trained.status.value,
        "network_consistent": r.trained.consistency.consistent,
        "expressible": True,
    }
    closed = r.refitted or r.found
    if closed is None:
        out.update(equations=[], coefficients={}, field=None)
        return out
    out.update(
        equations=closed.equations(),
        coefficients=closed.coefficient_table(),
        discovered_equations=r.found.equations(),
        field=closed,
        refit_consistent=None if r.refitted is None else sol.consistency.consistent,
    )
    return out


METHODS = {"sindy": run_sindy, "mnn": run_mnn, "collocation": run_collocation}


def run_case(
    name: str,
    case: Case,
    methods: list[str],
    quick: bool,
    max_wall_time: float | None = None,
) -> dict[str, Any]:
    data, clean = training_data(case, quick)
    rows = {}
    for method in methods:
        try:
            limit = {"max_wall_time": max_wall_time} if method == "collocation" else {}
            row = METHODS[method](case, data, quick, **limit)
        except Exception as exc:  # one failing method must not stop the others
            rows[method] = {"status": "failed", "error": f"{type(exc).__name__}: {exc}"}
            print(f"{name} {method}: failed: {exc}", flush=True)
            continue
        field = row.pop("field")
        row["vector_field_error"] = (
            vector_field_errors(case, field, clean)
            if field is not None
            else {"box": None, "trajectory": None}
        )
        row["coefficient_errors"] = (
            coefficient_errors(row["coefficients"], case.truth) if row["expressible"] else None
        )
        rows[method] = row
        ce = row["coefficient_errors"]
        vf = row["vector_field_error"]
        print(
            f"{name} {method}: {row['status']}, {row['train_time_s']:.1f} s | "
            f"{'; '.join(row['equations'])} | "
            + (
                f"exact support {ce['exact_support']}, coefficient error "
                f"{ce['max_relative_error']:.3g} | "
                if ce
                else "form not expressible | "
            )
            + f"field error box {vf['box']}, trajectory {vf['trajectory']}",
            flush=True,
        )
    return {
        "form": case.form,
        "degree": case.degree,
        "truth": case.truth,
        "box": case.box,
        "samples": data.n_samples,
        "dt": float(data.t[1] - data.t[0]),
        "noise": NOISE,
        "methods": rows,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--systems", default="planar,lorenz,tanh,rational")
    ap.add_argument("--methods", default="sindy,mnn,collocation")
    ap.add_argument("--quick", action="store_true", help="a short smoke run (not the results)")
    ap.add_argument("--json", default=None)
    ap.add_argument(
        "--max-wall-time",
        type=float,
        default=None,
        help="collocation: the limit of each IPOPT solve [s] (default: none)",
    )
    ap.add_argument(
        "--merge-into",
        default=None,
        help="a stored record: this run's methods replace or join its (written to --json)",
    )
    args = ap.parse_args(argv)
    all_cases = cases()
    systems = args.systems.split(",")
    methods = args.methods.split(",")
    for s in systems:
        if s not in all_cases:
            ap.error(f"unknown system {s!r}; valid: {', '.join(all_cases)}")
    for m in methods:
        if m not in METHODS:
            ap.error(f"unknown method {m!r}; valid: {', '.join(METHODS)}")
    record = {
        **machine.run_record("benchmarks/mnn_discovery.py", argv),
        "quick": args.quick,
        "systems": {},
    }
    for name in systems:
        record["systems"][name] = run_case(
            name, all_cases[name], methods, args.quick, args.max_wall_time
        )
    if args.merge_into:
        record = merged(json.loads(Path(args.merge_into).read_text()), record)
    if args.json:
        write_json(args.json, record)
    return 0


def merged(earlier: dict[str, Any], run: dict[str, Any]) -> dict[str, Any]:
    """``earlier`` (a stored record) with the methods of ``run`` replacing or adding theirs, per
    system: the command becomes both commands joined by ``&&`` and ``runs`` lists each run's
    header and what it contributed, so the record says which run measured which cell."""
    keys = ("command", "machine", "created", "load_at_start", "note")
    header = {k: run[k] for k in keys if k in run}
    header["systems"] = {name: sorted(case["methods"]) for name, case in run["systems"].items()}
    # a record merged before lists its runs; a single run becomes the first of them
    first = [{k: earlier[k] for k in keys if k in earlier}] if "runs" not in earlier else []
    out = {k: v for k, v in earlier.items() if k != "note"}
    out["systems"] = dict(earlier["systems"])
    for name, case in run["systems"].items():
        before = out["systems"].get(name)
        methods = {**(before["methods"] if before else {}), **case["methods"]}
        out["systems"][name] = {**case, "methods": methods}
    out["command"] = f"{earlier['command']} && {run['command']}"
    out["runs"] = [*first, *earlier.get("runs", ()), header]
    return out


if __name__ == "__main__":
    sys.exit(main())
