#!/usr/bin/env python
"""One training epoch of our PyTorch methods against the seed authors' own code, same machine.

For each case, our method (``make_trainer``, the settings of the reproduction row it serves)
and the authors' released code for the same method and system (the FNODE authors' first release
for FNODE Table 13, the MBD-NODE authors' ``MNODE-code`` for MBD-NODE Table 4) each train for a
few epochs, alternately, ``--repeats`` times. Their code is only run, never imported: it runs
in a process of its own in a fresh copy of their folder (as ``authors_code_fnode.py`` and
``authors_code_mbdnode.py`` run it, with ``--epochs`` / ``num_epochs`` set to ``--epochs``), and
an epoch ends where it prints its epoch line. Ours ends where the training callback runs. The
first epoch of each run is not counted (it holds the setup of both); each later epoch gives its
wall time and the CPU time its process spent in it (``/proc/PID/stat`` for theirs,
``time.process_time`` for ours), both with ``--threads`` threads. The report gives the medians
over all counted epochs and the ratio ours / theirs: below 1 ours is faster. On a machine
shared with other jobs the CPU times are the ones to read (a process waiting for a core does
not accumulate them); on a quiet machine both agree.

    python benchmarks/epoch_time.py --fnode-code sbel-reproducibility/2025/FNODE \\
        --mbdnode-code sbel-reproducibility/2024/MNODE-code [--cases NAME,...] [--epochs 4] \\
        [--repeats 3] [--threads 1] [--device cpu] [--json out.json]

The FNODE folder must be the first release of their code (``git checkout 8d00a6c``), the one
the Table 13 rows compare with; their code needs pandas, matplotlib, tqdm, torchdiffeq,
scikit-learn (FNODE) and autograd (MBD-NODE).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import authors_code_fnode
import authors_code_mbdnode
import authors_runs

from collocnode.tools import _machine as machine

_FNODE_EPOCH = re.compile(r"Epoch\s+\d+/\d+\s*\|")  # all four of their FNODE-release scripts
_MNODE_EPOCH = re.compile(r"Epoch \[\d+/\d+\]|^\[\d+\] loss:")  # main*.py of MNODE-code
# the row settings of MBD-NODE Table 4 (benchmarks/reproduce.sh, compare_mbdnode)
_T4_LSTM = {"lr": 5e-4, "layers": 3}
_T4_FCNN = {"lr": 5e-4, "lr_decay": 0.98}


@dataclass(frozen=True)
class Case:
    """One method on one system, ours and theirs.

    Attributes:
        method: our method's registry name; ``options`` its settings beyond its ``PAPER``
            defaults for ``problem`` (those of the reproduction row).
        code: ``"fnode"`` (the FNODE authors' folder) or ``"mbdnode"`` (MNODE-code).
        theirs: their method and test case: a line of their ``run_experiments.sh`` (FNODE) or
            a key of ``authors_code_mbdnode.RUNS``, or for ``"mbdnode"`` a (script module,
            config entries) pair when the run is not one of those.
        note: what differs between the two epochs beyond the implementation.
    """

    method: str
    problem: str
    preset: str | None
    code: str
    theirs: tuple[str, str]
    options: dict[str, Any] = field(default_factory=dict)
    script: tuple[str, dict[str, Any]] | None = None
    note: str = ""


CASES: dict[str, Case] = {
    # FNODE Table 13 (the FNODE authors' first release; our settings are the methods' PAPER)
    "fnode13-fnode-smsd": Case(
        "fnode", "smsd", "mbdnode_cubic", "fnode", ("fnode", "Single_Mass_Spring_Damper")
    ),
    "fnode13-mbdnode-smsd": Case(
        "mbdnode", "smsd", "mbdnode_cubic", "fnode", ("mbdnode", "Single_Mass_Spring_Damper")
    ),
    "fnode13-lstm-smsd": Case(
        "lstm",
        "smsd",
        "mbdnode_cubic",
        "fnode",
        ("lstm", "Single_Mass_Spring_Damper"),
        note="ours 299 windows per epoch (the first ones padded with the first sample), theirs 284",
    ),
    "fnode13-fcnn-smsd": Case(
        "fcnn", "smsd", "mbdnode_cubic", "fnode", ("fcnn", "Single_Mass_Spring_Damper")
    ),
    "fnode13-lstm-cart_pole": Case(
        "lstm", "cart_pole", "fnode_code", "fnode", ("lstm", "Cart_Pole")
    ),
    "fnode13-fnode-slider_crank": Case(
        "fnode", "slider_crank", "fnode_bb", "fnode", ("fnode", "Slider_Crank")
    ),
    "fnode13-mbdnode-slider_crank": Case(
        "mbdnode", "slider_crank", "fnode_bb", "fnode", ("mbdnode", "Slider_Crank")
    ),
    "fnode13-lstm-slider_crank": Case(
        "lstm", "slider_crank", "fnode_bb", "fnode", ("lstm", "Slider_Crank")
    ),
    "fnode13-fcnn-slider_crank": Case(
        "fcnn", "slider_crank", "fnode_bb", "fnode", ("fcnn", "Slider_Crank")
    ),
    # MBD-NODE Table 4 (MNODE-code, at the paper's settings; ours at the row's)
    "mbd4-mbdnode-smsd": Case(
        "mbdnode",
        "smsd",
        "mbdnode_arrays",
        "mbdnode",
        ("mbdnode", "Single_Mass_Spring_Damper"),
        options={"lr": 1e-3},
    ),
    "mbd4-lstm-smsd": Case(
        "lstm",
        "smsd",
        "mbdnode_arrays",
        "mbdnode",
        ("lstm", "Single_Mass_Spring_Damper"),
        options=_T4_LSTM,
        note="ours 299 windows per epoch, theirs 284",
    ),
    "mbd4-fcnn-smsd": Case(
        "fcnn",
        "smsd",
        "mbdnode_arrays",
        "mbdnode",
        ("fcnn", "Single_Mass_Spring_Damper"),
        options=_T4_FCNN,
    ),
    "mbd4-mbdnode_symplectic-sms": Case(
        "mbdnode_symplectic",
        "sms",
        None,
        "mbdnode",
        ("mbdnode", "Single_Mass_Spring_Symplectic"),
        note="both train on windows of one step, 299 of them per epoch (their configuration's "
        "step_delay of 10 never reaches their training function)",
    ),
    "mbd4-lnn-sms": Case(
        "lnn",
        "sms",
        None,
        "mbdnode",
        ("lnn", "Single_Mass_Spring"),
        script=("main_LNN", {"test_case": "Single_Mass_Spring"}),
    ),
}
DEFAULT_CASES = tuple(name for name in CASES if "slider_crank" not in name)


@dataclass
class Timing:
    """The counted epochs of one side of one case: wall and CPU time [s] each."""

    wall_s: list[float] = field(default_factory=list)
    cpu_s: list[float] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)

    def add(self, marks: list[tuple[float, float]]) -> None:
        """Epoch-end marks (wall, cpu) of one run; the first one closes the uncounted epoch."""
        for (w0, c0), (w1, c1) in itertools.pairwise(marks):
            self.wall_s.append(w1 - w0)
            self.cpu_s.append(c1 - c0)

    def median(self, which: str) -> float | None:
        values = getattr(self, which)
        return statistics.median(values) if values else None


# --- theirs ------------------------------------------------------------------------------------
def _their_argv(case: Case, folder: Path, epochs: int, device: str) -> tuple[list[str], str]:
    """Their command for ``epochs`` epochs, and the folder name of a fresh copy to run it in."""
    if case.code == "fnode":
        command = authors_code_fnode.published_commands(folder)[case.theirs]
        argv = authors_code_fnode._argv(command)  # ends in --device cpu
        return [*argv[:-1], device, "--epochs", str(epochs)], "FNODE"
    script, entries = case.script or authors_code_mbdnode.RUNS[case.theirs]
    module = Path(authors_code_mbdnode.SCRIPTS.get(script, script)).stem
    entries = {"test_case": case.theirs[1], **entries, "num_epochs": epochs}
    mass = str(authors_code_mbdnode.MASS.get(case.theirs[1], 1.0))
    driver = authors_code_mbdnode._DRIVER
    return [sys.executable, "-c", driver, module, json.dumps(entries), mass], "MNODE-code"


def _cpu_seconds(pid: int) -> float:
    """User + system CPU time of process ``pid`` so far [s] (Linux)."""
    fields_ = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields_[11]) + int(fields_[12])) / os.sysconf("SC_CLK_TCK")


def time_theirs(
    case: Case, folder: Path, epochs: int, threads: int, device: str, timeout_s: float
) -> tuple[list[tuple[float, float]], str]:
    """Runs their code until it has printed ``epochs`` epoch lines (then stops it): the (wall,
    cpu) mark of each, and the log's tail if it stopped before."""
    pattern = _FNODE_EPOCH if case.code == "fnode" else _MNODE_EPOCH
    argv, name = _their_argv(case, folder, epochs, device)
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), MKL_NUM_THREADS=str(threads))
    env |= {"MPLBACKEND": "Agg", "PYTHONUNBUFFERED": "1"}
    marks: list[tuple[float, float]] = []
    tail: list[str] = []
    with tempfile.TemporaryDirectory(prefix="epoch-time-") as scratch:
        work = Path(scratch) / name
        ignore = ("dataset", "results", ".git", "saved_models")
        shutil.copytree(folder, work, ignore=shutil.ignore_patterns(*ignore))
        proc = subprocess.Popen(
            argv, cwd=work, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        deadline = time.monotonic() + timeout_s
        try:
            assert proc.stdout is not None
            for line in proc.stdout:
                if pattern.search(line):
                    marks.append((time.perf_counter(), _cpu_seconds(proc.pid)))
                    if len(marks) >= epochs:
                        break
                tail = [*tail[-14:], line.rstrip()]
                if time.monotonic() > deadline:
                    tail.append(f"(stopped after {timeout_s:g} s)")
                    break
        finally:
            proc.kill()
            proc.wait()
    why = "" if len(marks) >= epochs else "\n".join(tail)
    return marks, why


# --- ours --------------------------------------------------------------------------------------
def time_ours(
    case: Case,
    epochs: int,
    device: str,
    extra: dict[str, Any] | None = None,
    losses: list[float] | None = None,
) -> list[tuple[float, float]]:
    """Trains our method for ``epochs`` epochs on the row's data (with the options ``extra``
    beyond the case's): the (wall, cpu) mark at the end of each epoch (the callback's entry).
    Each epoch's training loss is appended to ``losses`` when given."""
    from collocnode.compare._run.scenarios import scenario_for
    from collocnode.compare.methods import make_trainer

    data = scenario_for(case.problem).load(case.problem, case.preset, False, 0, None)
    options = {**case.options, **(extra or {}), "epochs": epochs, "device": device}
    trainer = make_trainer(case.method, case.problem, **options)
    marks: list[tuple[float, float]] = []

    def mark(progress: Any) -> None:
        marks.append((time.perf_counter(), time.process_time()))
        if losses is not None:
            losses.append(progress.loss)

    result = trainer.fit(data.system, data.split.train, callback=mark)
    if result.epochs != epochs:
        raise RuntimeError(f"{case.method}: {result.status}: {result.message}")
    return marks


# --- the run -----------------------------------------------------------------------------------
def _ratio(ours: float | None, theirs: float | None) -> float | None:
    return None if ours is None or not theirs else ours / theirs


def run_case(name: str, case: Case, folders: dict[str, Path], args: argparse.Namespace) -> dict:
    ours, theirs = Timing(), Timing()
    for repeat in range(args.repeats):
        sides = ("theirs", "ours") if repeat % 2 == 0 else ("ours", "theirs")
        for side in sides:
            if side == "ours":
                ours.add(time_ours(case, args.epochs, args.device))
                continue
            marks, why = time_theirs(
                case, folders[case.code], args.epochs, args.threads, args.device, args.timeout
            )
            theirs.add(marks)
            if why:
                theirs.failures.append(why)
        print(
            f"   {name} repeat {repeat + 1}: ours {ours.median('cpu_s')} s cpu, "
            f"theirs {theirs.median('cpu_s')} s cpu",
            flush=True,
        )
    found = {"case": name, **asdict(case), "ours_epochs": asdict(ours)}
    found["theirs_epochs"] = asdict(theirs)
    for which in ("wall_s", "cpu_s"):
        found[f"ours_median_{which}"] = ours.median(which)
        found[f"theirs_median_{which}"] = theirs.median(which)
        found[f"ratio_{which}"] = _ratio(ours.median(which), theirs.median(which))
    return found


def _fmt(x: float | None, digits: int = 3) -> str:
    return "–" if x is None else f"{x:.{digits}g}"


def markdown(results: list[dict]) -> str:
    lines = [
        "| case | ours / epoch, CPU [s] | theirs / epoch, CPU [s] | ratio (CPU) | "
        "ours / epoch, wall [s] | theirs / epoch, wall [s] | ratio (wall) |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in results:
        lines.append(
            f"| {r['case']} | {_fmt(r['ours_median_cpu_s'])} | {_fmt(r['theirs_median_cpu_s'])} "
            f"| {_fmt(r['ratio_cpu_s'], 2)} | {_fmt(r['ours_median_wall_s'])} | "
            f"{_fmt(r['theirs_median_wall_s'])} | {_fmt(r['ratio_wall_s'], 2)} |"
        )
    return "\n".join(lines)


def case_names(text: str) -> list[str]:
    """The case names of a comma-separated ``--cases``; exits naming any unknown one."""
    names = [n for n in text.split(",") if n]
    unknown = [n for n in names if n not in CASES]
    if unknown:
        raise SystemExit(f"--cases: unknown {', '.join(unknown)}; known: {', '.join(CASES)}")
    return names


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fnode-code", type=Path, help="the FNODE folder (first release)")
    parser.add_argument("--mbdnode-code", type=Path, help="the 2024/MNODE-code folder")
    parser.add_argument(
        "--cases",
        default=",".join(DEFAULT_CASES),
        help=f"comma-separated (default: all but the slider-crank; known: {', '.join(CASES)})",
    )
    parser.add_argument("--epochs", type=int, default=4, help="per run; the first is not counted")
    parser.add_argument("--repeats", type=int, default=3, help="runs of each side, alternating")
    parser.add_argument("--threads", type=int, default=1, help="torch threads of both sides")
    parser.add_argument("--device", default="cpu", help="cpu or cuda, for both sides")
    parser.add_argument("--timeout", type=float, default=1800, help="per run of theirs [s]")
    parser.add_argument("--json", type=Path, help="write the timings here")
    args = parser.parse_args(argv)

    names = case_names(args.cases)
    if args.epochs < 2 or args.repeats < 1:
        raise SystemExit("--epochs must be at least 2 and --repeats at least 1")
    folders = {"fnode": args.fnode_code, "mbdnode": args.mbdnode_code}
    for name in names:
        code = CASES[name].code
        if folders[code] is None:
            raise SystemExit(f"case {name} needs --{code}-code")
    used = {CASES[name].code for name in names}
    if "fnode" in used:
        authors_runs.require(authors_code_fnode.NEEDS)
    if "mbdnode" in used:
        authors_runs.require(authors_code_mbdnode.NEEDS)
    folders = {k: v.resolve() for k, v in folders.items() if v is not None}

    import torch

    torch.set_num_threads(args.threads)
    record: dict[str, Any] = {
        **machine.run_record("benchmarks/epoch_time.py", argv),
        "torch": torch.__version__,
        "code_commits": {k: authors_runs.commit(v) for k, v in folders.items()},
        "epochs": args.epochs,
        "repeats": args.repeats,
        "threads": args.threads,
        "device": args.device,
        "results": [],
    }
    for name in names:
        print(f"== {name}", flush=True)
        record["results"].append(run_case(name, CASES[name], folders, args))
        if args.json:
            args.json.parent.mkdir(parents=True, exist_ok=True)
            args.json.write_text(json.dumps(record, indent=2) + "\n")
    print(markdown(record["results"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
