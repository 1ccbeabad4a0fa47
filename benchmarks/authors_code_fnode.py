#!/usr/bin/env python
"""The FNODE authors' released code, run here with their published commands (FNODE Table 13).

Each run is one line of the authors' ``run_experiments.sh`` (the FNODE folder of the public
repository ``uwsbel/sbel-reproducibility``), run unchanged apart from ``--device cpu``, in a fresh
copy of their folder so that no run reads a dataset another run left behind. The script records
the three errors their code logs (the MSE over the whole trajectory, over the training window and
over the extrapolation window) and the run's wall time, and writes ``authors_code.json``, which
``scripts/reproduction_report.py`` puts beside our rows of FNODE Table 13.

    git clone https://github.com/uwsbel/sbel-reproducibility
    pip install pandas matplotlib tqdm torchdiffeq scikit-learn   # their imports beyond torch
    python benchmarks/authors_code_fnode.py sbel-reproducibility/2025/FNODE \\
        --runs fnode:Single_Mass_Spring_Damper,fnode:Double_Pendulum --out runs/authors-fnode

Their code is the authors' and is only run, never imported: this script reads their command lines
and the numbers their logs print.
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
import shlex
import shutil
import sys
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import authors_runs
import numpy as np

# main_<script>.py of the authors' folder -> the method name compare.py uses
SCRIPTS = {
    "fnode": "main_fnode.py",
    "mbdnode": "main_mbdnode.py",
    "lstm": "main_lstm.py",
    "fcnn": "main_fcnn.py",
}
# what their code imports beyond torch (module -> the package that installs it); their LSTM
# scales its data with scikit-learn
NEEDS = {"pandas": "pandas", "matplotlib": "matplotlib", "tqdm": "tqdm",
         "torchdiffeq": "torchdiffeq", "sklearn": "scikit-learn"}  # fmt: skip

# the lines every one of the four scripts logs after its test rollout
_FULL = re.compile(r"Overall MSE \([^)]*\): *([-+0-9.eEinfa]+)")
_TRAIN = re.compile(r"Train Region MSE \([^)]*\): *([-+0-9.eEinfa]+)")
_TEST = re.compile(r"Extrapolation Region MSE \([^)]*\): *([-+0-9.eEinfa]+)")


@dataclass
class AuthorsRun:
    """One published command and what it printed here."""

    method: str
    test_case: str
    command: str  # the line of run_experiments.sh, as published
    status: str = "not run"  # success | failed (exit N) | timeout | no metrics
    full_mse: float | None = None
    train_mse: float | None = None
    test_mse: float | None = None
    wall_s: float | None = None
    log_tail: str = ""
    data: dict | None = None  # their generated data against our preset (see check_data)
    seed: int | None = None  # given to their script after the published --seed, which it replaces


def published_commands(folder: Path) -> dict[tuple[str, str], str]:
    """(method, test case) -> the line of ``run_experiments.sh`` that runs it (the first one)."""
    script_file = folder / "run_experiments.sh"
    if not script_file.is_file():
        raise SystemExit(f"--code: {folder} has no run_experiments.sh; pass the FNODE folder")
    by_script = {v: k for k, v in SCRIPTS.items()}
    commands: dict[tuple[str, str], str] = {}
    for line in script_file.read_text().splitlines():
        words = line.split()
        if len(words) < 2 or words[0] not in ("python", "python3") or words[1] not in by_script:
            continue
        match = re.search(r"--test_case\s+(\S+)", line)
        if match:
            commands.setdefault((by_script[words[1]], match.group(1)), " ".join(words))
    return commands


def _argv(command: str) -> list[str]:
    """The command as an argument list for this interpreter; the one shell expression the
    published file uses, ``$(python3 -c "print(1/3)")``, is evaluated here."""
    command = re.sub(
        r"\$\(python3? -c \"print\((\d+)/(\d+)\)\"\)",
        lambda m: repr(int(m.group(1)) / int(m.group(2))),
        command,
    )
    words = shlex.split(command)
    return [sys.executable, *words[1:], "--device", "cpu"]


# Test case -> (our problem, the preset that reproduces their data, the coordinate of ours that
# each of their bodies holds, the sample times their integrator used): "steps" are k·dt (their
# time column holds linspace(0, n·dt, n) instead), "labels" the times of their time column
# (solve_ivp evaluated there). Their slider-crank keeps the crank angle θ1 (our coordinate 2)
# alone.
DATA_PRESETS = {
    "Single_Mass_Spring_Damper": ("smsd", "mbdnode_cubic", (0,), "steps"),
    "Triple_Mass_Spring_Damper": ("tmsd", "default", (0, 1, 2), "steps"),
    "Cart_Pole": ("cart_pole", "fnode_code", (1, 0), "steps"),
    "Double_Pendulum": ("double_pendulum", "mbdnode", (0, 1), "labels"),
    "Slider_Crank": ("slider_crank", "fnode_bb_2025", (2,), "steps"),
}


def check_data(
    work: Path, case: str, command: str, presets: dict[str, str] | None = None
) -> dict | None:
    """Their generated data for ``case`` against our preset (``DATA_PRESETS``'s, or the one
    ``presets`` names for ``case``), from a finished run in ``work``:
    the largest difference between the states (their ``s_full.csv``: per body, position then
    velocity) and our preset's ground truth on the same sample times, and, where FNODE wrote
    its training labels (``train_*_accelerations.csv``), their RMS error against the exact
    accelerations of the preset at those samples relative to the accelerations' RMS. None where
    their data are missing or no preset is listed."""
    dataset = work / "dataset" / case
    states, times = dataset / "s_full.csv", dataset / "t_full.csv"
    if case not in DATA_PRESETS or not (states.is_file() and times.is_file()):
        return None
    problem, preset, system = _preset_system(case, presets)
    _, _, coords, grid = DATA_PRESETS[case]
    theirs = _csv_values(states)
    t = _csv_values(times).reshape(-1)
    if grid == "steps":
        t = t[0] + float(_options(command).get("--data_dt", 0.01)) * np.arange(len(t))
    # their columns per body: position, velocity; ours: every coordinate, then every velocity
    order = np.argsort(coords)
    kept = sorted(coords)
    full = system.simulate(t).x
    ours = full[:, [*kept, *(system.n_coords + c for c in kept)]]
    diff = ours - np.hstack([theirs[:, 2 * order], theirs[:, 2 * order + 1]])
    found = {
        "problem": problem,
        "preset": preset,
        "samples": len(t),
        "max_abs_diff": float(np.max(np.abs(diff))),
        "mse": float(np.mean(diff**2)),
    }
    for path in sorted(work.glob(f"results/{case}/**/train_*_accelerations.csv")):
        labels = _csv_values(path, skip=("time", "method"))[:, order]
        pairs = zip(t[: len(labels)], full, strict=False)  # the training window
        exact = np.stack([system.acceleration(ti, xi) for ti, xi in pairs])[:, kept]
        rms = float(np.sqrt(np.mean((labels - exact) ** 2) / np.mean(exact**2)))
        found[f"labels_rel_rms ({path.name})"] = rms
    return found


def _preset_system(case: str, presets: dict[str, str] | None) -> tuple[str, str, Any]:
    """(our problem, preset, its system) for ``case``: ``DATA_PRESETS``'s preset, or the one
    ``presets`` names."""
    from collocnode import problems

    problem, preset, _, _ = DATA_PRESETS[case]
    preset = (presets or {}).get(case, preset)
    return problem, preset, problems.get(problem, preset)


def _options(command: str) -> dict[str, str]:
    """The command's options, each with the word after it."""
    return dict(itertools.pairwise(_argv(command)))


def exact_sampling(case: str, command: str) -> tuple[int, int, float]:
    """(samples, training samples, step [s]) of ``case``'s command, for
    :func:`write_exact_data`; exits naming the case where it cannot be read."""
    if case not in DATA_PRESETS:
        raise SystemExit(f"--exact-data: no preset is listed for {case}")
    words = _options(command)
    if "--data_total_steps" not in words or "--train_ratio" not in words:
        raise SystemExit(
            f"--exact-data: the command for {case} sets no --data_total_steps or --train_ratio"
        )
    n = int(words["--data_total_steps"])
    n_train = int(n * float(words["--train_ratio"]))  # as their scripts compute it
    return n, n_train, float(words.get("--data_dt", 0.01))


def write_exact_data(work: Path, case: str, command: str, presets: dict[str, str] | None) -> None:
    """Writes our preset's exact solution for ``case`` (``DATA_PRESETS``'s, or the one
    ``presets`` names) into ``work/dataset/<case>`` in their layout, so that their script loads
    it instead of generating its own samples (each of the four does when ``s_train.csv`` and
    ``t_train.csv`` exist): the states per body (position, velocity) at the sample times k·dt of
    their command's ``--data_dt`` (default 0.01 s), ``--data_total_steps`` of them, the first
    ``int(total · train_ratio)`` the training window, as their scripts split it."""
    n, n_train, dt = exact_sampling(case, command)
    t = dt * np.arange(n)
    _, _, system = _preset_system(case, presets)
    coords = DATA_PRESETS[case][2]
    x = system.simulate(t).x
    columns = [x[:, [c, system.n_coords + c]] for c in coords]  # their body order
    states = np.hstack(columns)
    names = [f"body{b}_{part}" for b in range(len(coords)) for part in ("position", "velocity")]
    if case == "Slider_Crank":  # the names their FNODE script selects
        names = ["theta_0_2pi", "omega"]
    folder = work / "dataset" / case
    folder.mkdir(parents=True)
    for part, rows in (
        ("full", slice(None)),
        ("train", slice(n_train)),
        ("test", slice(n_train, None)),
    ):
        np.savetxt(folder / f"s_{part}.csv", states[rows], delimiter=",", fmt="%.17g",
                   header=",".join(names), comments="")  # fmt: skip
        np.savetxt(folder / f"t_{part}.csv", t[rows], fmt="%.17g", header="time", comments="")


def _csv_values(path: Path, skip: tuple[str, ...] = ("idx", "")) -> np.ndarray:
    """The numeric columns of a CSV with a header row, without the columns named in ``skip``."""
    with path.open() as f:
        header = f.readline().strip().split(",")
    keep = [i for i, name in enumerate(header) if name not in skip]
    return np.loadtxt(path, delimiter=",", skiprows=1, ndmin=2, usecols=keep)


def _last_float(pattern: re.Pattern[str], log: str) -> float | None:
    found = pattern.findall(log)
    return float(found[-1]) if found else None


def run_one(
    folder: Path,
    run: AuthorsRun,
    timeout_s: float,
    threads: int,
    keep: Path | None,
    extra: tuple[str, ...] = (),
    presets: dict[str, str] | None = None,
    exact_data: bool = False,
) -> None:
    """Runs ``run.command`` (with ``extra`` arguments appended) in a fresh copy of ``folder``
    and fills in ``run``; with ``exact_data`` on our preset's exact solution
    (:func:`write_exact_data`) instead of the samples their code generates."""
    with tempfile.TemporaryDirectory(prefix="authors-fnode-") as scratch:
        work = Path(scratch) / "FNODE"
        shutil.copytree(folder, work, ignore=shutil.ignore_patterns("dataset", "results", ".git"))
        if exact_data:
            write_exact_data(work, run.test_case, run.command, presets)
        argv = [*_argv(run.command), *extra]
        log, code, run.wall_s = authors_runs.run_logged(argv, work, timeout_s, threads)
        run.data = check_data(work, run.test_case, run.command, presets)
        log = log.replace(str(work), "FNODE")  # not this machine's scratch path
    run.full_mse = _last_float(_FULL, log)
    run.train_mse = _last_float(_TRAIN, log)
    run.test_mse = _last_float(_TEST, log)
    authors_runs.finish(run, code, log, keep)


def _data_presets(items: list[str]) -> dict[str, str]:
    """``--data-preset`` values ``CASE=PRESET`` as a dict, each checked before any run."""
    presets: dict[str, str] = {}
    for item in items:
        case, _, preset = item.partition("=")
        if case not in DATA_PRESETS:
            raise SystemExit(
                f"--data-preset: {item!r} is not CASE=PRESET with CASE one of "
                f"{', '.join(DATA_PRESETS)}"
            )
        from collocnode import problems

        known = problems.presets(DATA_PRESETS[case][0])
        if preset not in known:
            raise SystemExit(f"--data-preset: {preset!r} is not a preset of {case} ({known})")
        presets[case] = preset
    return presets


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("code", type=Path, help="the FNODE folder of sbel-reproducibility")
    parser.add_argument(
        "--runs",
        default="",
        help="method:Test_Case,... (default: every line of their script for the four methods)",
    )
    parser.add_argument("--timeout", type=float, default=3600, help="per run [s]")
    parser.add_argument("--threads", type=int, default=1, help="torch threads per run")
    parser.add_argument("--out", type=Path, required=True, help="writes authors_code.json here")
    parser.add_argument(
        "--data-only",
        action="store_true",
        help="train for one epoch only and compare the data their code generates with our "
        "presets (data_check.json instead of authors_code.json)",
    )
    parser.add_argument(
        "--data-preset",
        action="append",
        default=[],
        metavar="CASE=PRESET",
        help="compare CASE's data with our PRESET instead of the first release's (e.g. "
        "Slider_Crank=fnode_bb for their code of 2026-02-11; repeatable)",
    )
    parser.add_argument(
        "--seed",
        type=int,
        default=None,
        help="their --seed instead of the published one (42): another training of the same "
        "command on the same data (their data have no noise)",
    )
    parser.add_argument(
        "--exact-data",
        action="store_true",
        help="train and score their code on our preset's exact solution (the --data-preset "
        "one) instead of the samples their code generates; the record's settings say so",
    )
    args = parser.parse_args(argv)
    presets = _data_presets(args.data_preset)

    authors_runs.require(NEEDS)
    folder = args.code.resolve()
    commands = published_commands(folder)
    wanted = [tuple(r.split(":", 1)) for r in args.runs.split(",") if r] or list(commands)
    wanted = list(dict.fromkeys(wanted))
    for key in wanted:
        if len(key) != 2 or key not in commands:
            known = ", ".join(f"{m}:{c}" for m, c in commands)
            raise SystemExit(f"--runs: {':'.join(key)!r} is not in run_experiments.sh ({known})")

    for method, case in wanted if args.exact_data else ():  # before any run
        exact_sampling(case, commands[(method, case)])
    args.out.mkdir(parents=True, exist_ok=True)
    out_file = args.out / ("data_check.json" if args.data_only else "authors_code.json")
    # their argparse keeps the last value of an option given twice
    extra = ("--epochs", "1") if args.data_only else ()
    extra += ("--seed", str(args.seed)) if args.seed is not None else ()
    record = authors_runs.start_record("authors_code_fnode.py", argv, folder, out_file, wanted)
    settings: dict[str, object] = {}
    if args.seed is not None:  # the report lists the seeds of one command together
        settings["seed"] = args.seed
    if args.exact_data:
        settings["data"] = "exact solution of our preset"
    if settings:
        record["settings"] = settings
    for method, case in wanted:
        run = AuthorsRun(method, case, commands[(method, case)], seed=args.seed)
        print(f"== {method} {case}: {run.command}", flush=True)
        run_one(
            folder, run, args.timeout, args.threads, args.out / "logs", extra, presets,
            args.exact_data,
        )  # fmt: skip
        print(
            f"   {run.status}: full {run.full_mse}, train {run.train_mse}, test {run.test_mse}, "
            f"{run.wall_s} s; data {run.data}",
            flush=True,
        )
        record["runs"].append(asdict(run))
        out_file.write_text(json.dumps(record, indent=2) + "\n")  # after each run: nothing lost
    return 0


if __name__ == "__main__":
    sys.exit(main())
