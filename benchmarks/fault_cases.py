#!/usr/bin/env python
"""Faults a run must survive: kill -9, SIGTERM and Ctrl-C, full disks, a wrong or lost Dask
scheduler, ``--overwrite`` of folders the program did not write, ``--resume`` with other
settings, special and crafted model files, a corrupt JIT cache, a sample loss too large to build.

Each case runs the command lines (``scripts/train_collocation.py``, ``scripts/compare.py``) or a
short library script of the checkout under test in fresh processes (each in a session of its
own, so that a kill reaches the whole process group), injects its fault, and classifies what
happened as one of:

* ``clear``: the fault is handled: the run recovers (a resume reruns exactly the missing units),
  or it stops with one line that says what happened, and the record it leaves is right;
* ``traceback``: a Python traceback, an unclear or misleading message, or bad input reported as
  a failed run (exit 1 instead of 2);
* ``silent``: the run goes on or ends with a record that is not so (a wrong phase, storage errors
  counted as failed seeds, a name taken that should be refused, names dropped);
* ``hang``: no answer within the case's limit (an unreachable scheduler: 30 s; a run after
  SIGTERM: the grace period of a batch system, 20 s);
* ``data lost``: finished work is deleted, replaced or stranded where ``--resume`` does not look.

    python benchmarks/fault_cases.py [--root CHECKOUT] [--out DIR] [--only TEXT] [--list]

``--root`` is the checkout whose scripts and package are tested (default: this one), so the
same cases classify an earlier commit (``git worktree add ../base BASE`` or ``git archive``).
Writes ``DIR/fault_cases.json`` (default ``runs/fault_cases``) with every case's outcome and
note and the counts, and prints them. Measured with a quiet machine in mind: the timing cases
(SIGTERM's grace, the scheduler's 30 s) allow for a loaded one; about 15 minutes on 2 cores.
"""

from __future__ import annotations

import argparse
import contextlib
import http.server
import json
import os
import platform
import re
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

HERE = Path(__file__).resolve().parents[1]
OUTCOMES = ("clear", "traceback", "silent", "hang", "data lost")
ONE_THREAD = {k: "1" for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")}
SCHEDULER_LIMIT_S = 30.0  # a wrong --scheduler must be answered within this
GRACE_S = 20.0  # a batch system's grace period between SIGTERM and SIGKILL

# command-line settings: a tiny training (well under a second per seed), a study whose seeds
# take a few seconds each, and seeds whose solves take many minutes (wide networks, a tight
# tolerance)
TINY = ("--intervals", "8", "--stages", "2", "--max-iter", "5", "--no-jit", "--quiet")
STUDY = ("--intervals", "40", "--stages", "3", "--quiet")
LONG = (
    "--intervals",
    "300",
    "--stages",
    "5",
    "--hidden",
    "16",
    "--tol",
    "1e-14",
    "--max-iter",
    "3000",
    "--no-jit",
)  # hundreds of iterations of about 2 s each
QUICK_COMPARE = ("--quick", "--device", "cpu", "--no-progress")


class Verdict(NamedTuple):
    outcome: str
    note: str


@dataclass(frozen=True)
class Observed:
    """How one process ended: its exit code (None: still running at the limit, then killed),
    its wall time [s] and its output."""

    code: int | None
    seconds: float
    stdout: str
    stderr: str

    @property
    def hung(self) -> bool:
        return self.code is None

    @property
    def lines(self) -> list[str]:
        return [line.strip() for line in self.stderr.splitlines() if line.strip()]

    @property
    def traceback(self) -> bool:
        return "Traceback (most recent call last)" in self.stderr

    @property
    def last(self) -> str:
        lines = self.lines
        return lines[-1][:240] if lines else ""


class Lab:
    """One case's sandbox: a scratch folder, the checkout under test, processes started in
    sessions of their own."""

    def __init__(self, root: Path, scratch: Path) -> None:
        self.root, self.dir = root, scratch
        self.env = {
            **os.environ,
            **ONE_THREAD,
            "PYTHONPATH": str(root),
            "PYTHONUNBUFFERED": "1",
            "MPLBACKEND": "Agg",
            "COLLOCNODE_CACHE": str(scratch / "jit-cache"),
        }
        self._n = 0

    def script(self, name: str, *args: object) -> list[str]:
        return [sys.executable, str(self.root / "scripts" / name), *map(str, args)]

    def python(self, code: str, *args: object) -> list[str]:
        return [sys.executable, "-c", textwrap.dedent(code), *map(str, args)]

    def start(self, argv: Sequence[str], env: dict[str, str] | None = None) -> subprocess.Popen:
        self._n += 1
        out = open(self.dir / f"stdout-{self._n}.txt", "w+")  # closed by finish()
        err = open(self.dir / f"stderr-{self._n}.txt", "w+")
        proc = subprocess.Popen(
            list(argv),
            cwd=self.dir,
            env={**self.env, **(env or {})},
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            start_new_session=True,
            preexec_fn=_default_signals,
        )
        proc.files = (out, err)  # type: ignore[attr-defined]
        proc.started = time.monotonic()  # type: ignore[attr-defined]
        return proc

    def finish(self, proc: subprocess.Popen, limit: float) -> Observed:
        try:
            code: int | None = proc.wait(limit)
        except subprocess.TimeoutExpired:
            code = None
        seconds = time.monotonic() - proc.started  # type: ignore[attr-defined]
        self.kill(proc)
        out, err = proc.files  # type: ignore[attr-defined]
        texts = []
        for fh in (out, err):
            fh.seek(0)
            texts.append(fh.read())
            fh.close()
        return Observed(code, seconds, *texts)

    def run(self, argv: Sequence[str], limit: float, env: dict[str, str] | None = None) -> Observed:
        return self.finish(self.start(argv, env), limit)

    def kill(self, proc: subprocess.Popen, sig: int = signal.SIGKILL) -> None:
        """``sig`` to the process's whole group (its workers, its compilers)."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, sig)
        if sig == signal.SIGKILL:
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(30)

    def output(self, proc: subprocess.Popen) -> str:
        out, _ = proc.files  # type: ignore[attr-defined]
        return Path(out.name).read_text()

    def wait_until(
        self, ready: Callable[[], bool], limit: float, proc: subprocess.Popen | None = None
    ) -> bool:
        """Poll ``ready`` for up to ``limit`` seconds (False at once if ``proc`` has ended)."""
        end = time.monotonic() + limit
        while time.monotonic() < end:
            if ready():
                return True
            if proc is not None and proc.poll() is not None:
                return ready()
            time.sleep(0.1)
        return False

    def count(self, pattern: str) -> int:
        """Finished units anywhere under the scratch folder, hidden folders included."""
        return sum(1 for p in self.dir.rglob(pattern) if not p.name.endswith(".tmp"))

    def json(self, path: Path) -> dict[str, Any] | None:
        try:
            return json.loads(path.read_text())
        except (OSError, ValueError):
            return None


def _default_signals() -> None:
    """A case's process starts with SIGINT and SIGTERM at their defaults, as from a terminal,
    whatever this runner inherited (a background job ignores SIGINT, and so would its
    children)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _children(pid: int) -> list[int]:
    """The pids of the processes whose parent is ``pid`` (Linux /proc)."""
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                out.append(int(entry.name))
    return out


def _cpu_seconds(pid: int) -> float:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _pool_workers(pid: int) -> list[int]:
    workers = []
    for child in _children(pid):
        try:
            cmd = Path(f"/proc/{child}/cmdline").read_bytes()
        except OSError:
            continue
        if b"spawn_main" in cmd or b"forkserver" in cmd:
            workers.append(child)
    return workers


# ---- judging ------------------------------------------------------------------------------------


def refusal(obs: Observed, *words: str, code: int = 2, limit: float | None = None) -> Verdict:
    """A fault that must be refused: exit ``code``, one stderr line holding every word of
    ``words`` (any one of the alternatives in a ``a|b`` word), no traceback, within ``limit``."""
    if obs.hung or (limit is not None and obs.seconds > limit):
        return Verdict("hang", f"no answer within {limit or obs.seconds:.0f} s")
    if obs.traceback:
        return Verdict("traceback", f"traceback (exit {obs.code}): {obs.last}")
    if obs.code != code:
        return Verdict("traceback", f"exit {obs.code} instead of {code}: {obs.last}")
    if len(obs.lines) != 1:
        return Verdict("traceback", f"{len(obs.lines)} stderr lines: {obs.last}")
    line = obs.lines[0]
    missing = [w for w in words if not any(a.lower() in line.lower() for a in w.split("|"))]
    if missing:
        return Verdict("traceback", f"does not say {missing[0]!r}: {line[:240]}")
    return Verdict("clear", f"{obs.seconds:.1f} s: {line[:240]}")


def library(obs: Observed) -> dict[str, Any]:
    """The JSON line a library case prints last (``{"error": ...}`` or its findings)."""
    for line in reversed(obs.stdout.splitlines()):
        if line.startswith("{"):
            with contextlib.suppress(ValueError):
                return json.loads(line)
    return {}


# ---- servers that are not a Dask scheduler ----------------------------------------------------


@contextlib.contextmanager
def silent_server() -> Iterator[int]:
    """Accepts connections and keeps them open without a word (as a dashboard port does to
    Dask's binary handshake)."""
    srv = socket.create_server(("127.0.0.1", 0))
    held: list[socket.socket] = []
    stop = threading.Event()

    def serve() -> None:
        srv.settimeout(0.2)
        while not stop.is_set():
            with contextlib.suppress(OSError):
                held.append(srv.accept()[0])

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield srv.getsockname()[1]
    finally:
        stop.set()
        thread.join()
        for conn in held:
            conn.close()
        srv.close()


@contextlib.contextmanager
def http_server(directory: Path) -> Iterator[int]:
    handler = type(
        "Quiet",
        (http.server.SimpleHTTPRequestHandler,),
        {"log_message": lambda *a: None, "timeout": 120},
    )
    srv = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), lambda *a: handler(*a, directory=str(directory))
    )
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    try:
        yield srv.server_address[1]
    finally:
        srv.shutdown()
        srv.server_close()


@contextlib.contextmanager
def bad_request_server() -> Iterator[int]:
    """Answers whatever it receives with ``HTTP/1.1 400 Bad Request`` and closes."""
    srv = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def serve() -> None:
        srv.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = srv.accept()
            except OSError:
                continue
            with conn, contextlib.suppress(OSError):
                conn.settimeout(2)
                conn.recv(4096)
                conn.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield srv.getsockname()[1]
    finally:
        stop.set()
        thread.join()
        srv.close()


@contextlib.contextmanager
def dashboard_port() -> Iterator[int]:
    """The dashboard (HTTP) port of a real Dask scheduler."""
    from distributed import LocalCluster

    with LocalCluster(
        n_workers=0, processes=False, protocol="tcp", dashboard_address="127.0.0.1:0"
    ) as cluster:
        yield int(cluster.dashboard_link.split(":")[-1].split("/")[0])


@contextlib.contextmanager
def closed_port() -> Iterator[int]:
    with socket.create_server(("127.0.0.1", 0)) as srv:
        port = srv.getsockname()[1]
    yield port


SERVERS: dict[str, tuple[Callable[[Path], Any], str]] = {
    # what answers, the word the one line must hold
    "a silent server": (lambda d: silent_server(), "answer"),
    "an HTTP server": (http_server, "HTTP"),
    "an HTTP server answering 400": (lambda d: bad_request_server(), "HTTP"),
    "a Dask dashboard port": (lambda d: dashboard_port(), "dashboard"),
    "a closed port": (lambda d: closed_port(), "refused|reached"),
}


# ---- the cases ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class FaultCase:
    group: str
    name: str
    wants: str
    run: Callable[[Lab], Verdict]

    @property
    def label(self) -> str:
        return f"{self.group}: {self.name}"


CASES: list[FaultCase] = []


def case(group: str, name: str, wants: str) -> Callable[[Callable[[Lab], Verdict]], Any]:
    def register(fn: Callable[[Lab], Verdict]) -> Callable[[Lab], Verdict]:
        CASES.append(FaultCase(group, name, wants, fn))
        return fn

    return register


def judge_resume(lab: Lab, obs: Observed, out: Path, total: int, stored: int) -> Verdict:
    """A resume after a kill: exit 0, every seed done, exactly the stored ones reused."""
    if obs.hung:
        return Verdict("hang", f"--resume did not end within {obs.seconds:.0f} s")
    if obs.traceback:
        return Verdict("traceback", f"--resume: traceback: {obs.last}")
    result = lab.json(out / "result.json") or {}
    if obs.code != 0:
        kept = len(list((out / "seeds").glob("seed-*.json"))) if out.is_dir() else 0
        if kept < stored:
            return Verdict(
                "data lost",
                f"--resume exit {obs.code} ({obs.last}); {stored - kept} of {stored} finished "
                "seeds are where --resume does not look",
            )
        return Verdict("traceback", f"--resume exit {obs.code}: {obs.last}")
    done, reused = result.get("seeds_completed"), result.get("seeds_reused")
    if done != total or reused != stored:
        return Verdict(
            "silent", f"{done} of {total} seeds done, {reused} reused of the {stored} stored"
        )
    return Verdict("clear", f"{stored} stored seeds reused, {total - stored} run; exit 0")


def kill9_then_resume(lab: Lab, workers: int) -> Verdict:
    out = lab.dir / "run"
    argv = lab.script("train_collocation.py", "vdp", *STUDY, "--seeds", 6, "--workers", workers)
    argv += ["--out", str(out)]
    proc = lab.start(argv)
    if not lab.wait_until(lambda: lab.count("seed-*.json") >= 2, 300, proc):
        lab.kill(proc)
        return Verdict("traceback", "the study ended or stalled before 2 seeds were stored")
    lab.kill(proc)  # kill -9 of the process group: the OOM killer, a lost node
    stored = lab.count("seed-*.json")
    return judge_resume(lab, lab.run([*argv, "--resume"], 600), out, 6, stored)


@case("kill -9", "study, 1 process, after 2 of 6 seeds, then --resume", "reruns the 4 missing")
def _kill9_serial(lab: Lab) -> Verdict:
    return kill9_then_resume(lab, 1)


@case("kill -9", "study, 2 worker processes, then --resume", "reruns exactly the missing seeds")
def _kill9_pool(lab: Lab) -> Verdict:
    return kill9_then_resume(lab, 2)


@case("kill -9", "a --resume killed in turn, then --resume", "keeps what both runs finished")
def _kill9_twice(lab: Lab) -> Verdict:
    out = lab.dir / "run"
    argv = lab.script("train_collocation.py", "vdp", *STUDY, "--seeds", 6, "--workers", 1)
    argv += ["--out", str(out)]
    proc = lab.start(argv)
    if not lab.wait_until(lambda: lab.count("seed-*.json") >= 2, 300, proc):
        lab.kill(proc)
        return Verdict("traceback", "the study ended or stalled before 2 seeds were stored")
    lab.kill(proc)
    first = lab.count("seed-*.json")
    proc = lab.start([*argv, "--resume"])
    if not lab.wait_until(lambda: lab.count("seed-*.json") >= first + 2, 300, proc):
        obs = lab.finish(proc, 5)
        if obs.code not in (0, None):
            return judge_resume(lab, obs, out, 6, first)
        return Verdict("traceback", "the resumed study ended before it stored 2 more seeds")
    lab.kill(proc)
    stored = lab.count("seed-*.json")
    return judge_resume(lab, lab.run([*argv, "--resume"], 600), out, 6, stored)


@case("kill -9", "compare.py --workers 2 after 1 method, then --resume", "trains only the rest")
def _kill9_compare(lab: Lab) -> Verdict:
    out = lab.dir / "cmp"
    argv = lab.script("compare.py", "vdp", "--methods", "fnode,node,lstm", *QUICK_COMPARE)
    argv += ["--workers", "2", "--out", str(out)]
    proc = lab.start(argv)
    if not lab.wait_until(lambda: lab.count("fnode.json") + lab.count("node.json") >= 1, 300, proc):
        lab.kill(proc)
        return Verdict("traceback", "the comparison ended or stalled before a method was stored")
    lab.kill(proc)
    stored = {p.stem: lab.json(p) for p in lab.dir.rglob("methods/*.json")}
    obs = lab.run([*argv, "--resume"], 600)
    if obs.hung:
        return Verdict("hang", "--resume did not end")
    if obs.traceback:
        return Verdict("traceback", obs.last)
    report = lab.json(out / "compare.json")
    if obs.code != 0 or report is None:
        return Verdict(
            "data lost",
            f"--resume exit {obs.code} ({obs.last}); {sorted(stored)} "
            "finished methods are where --resume does not look",
        )
    rows = {r["method"]: r for r in report["rows"]}
    for name, record in stored.items():
        if rows[name]["train_time_s"] != (record or {}).get("result", {}).get("row", {}).get(
            "train_time_s"
        ):
            return Verdict("silent", f"{name} was stored and trained again")
    return Verdict("clear", f"{sorted(stored)} reused, the others trained; exit 0")


@case("signals", "SIGTERM to a study's parent, 2 workers in long solves", "ends within 20 s")
def _sigterm_pool(lab: Lab) -> Verdict:
    out = lab.dir / "run"
    argv = lab.script("train_collocation.py", "vdp", *LONG, "--seeds", 2, "--workers", 2)
    proc = lab.start([*argv, "--out", str(out)])

    def solving() -> bool:
        workers = _pool_workers(proc.pid)
        return len(workers) >= 2 and all(_cpu_seconds(w) > 8 for w in workers)

    if not lab.wait_until(solving, 300, proc):
        lab.kill(proc)
        obs = lab.finish(proc, 1)
        return Verdict(
            "traceback", f"the workers did not start solving (exit {obs.code}): {obs.last}"
        )
    sent = time.monotonic()
    proc.send_signal(signal.SIGTERM)  # the parent only, as a batch system's scancel does
    obs = lab.finish(proc, GRACE_S + 10)
    after = time.monotonic() - sent
    if obs.hung:
        return Verdict("hang", f"still running {after:.0f} s after SIGTERM (grace {GRACE_S:g} s)")
    if after > GRACE_S:
        return Verdict("hang", f"exited {after:.0f} s after SIGTERM (grace {GRACE_S:g} s)")
    if obs.traceback:
        return Verdict("traceback", obs.last)
    result = lab.json(out / "result.json") or {}
    if obs.code != 130 or result.get("status") != "interrupted":
        return Verdict("silent", f"exit {obs.code}, status {result.get('status')}")
    return Verdict("clear", f"exited {after:.1f} s after SIGTERM, status interrupted")


@case("signals", "Ctrl-C on compare.py --workers 2 with an idle worker", "no worker traceback")
def _ctrl_c_idle_worker(lab: Lab) -> Verdict:
    out = lab.dir / "cmp"
    argv = lab.script("compare.py", "vdp", "--methods", "lstm,node", *QUICK_COMPARE)
    argv += ["--set", "node.epochs=400", "--workers", "2", "--out", str(out)]
    proc = lab.start(argv)
    if not lab.wait_until(lambda: lab.count("lstm.json") >= 1, 300, proc):
        lab.kill(proc)
        return Verdict("traceback", "lstm was not stored while node trained")
    time.sleep(1.0)  # its worker is idle now
    lab.kill(proc, signal.SIGINT)  # Ctrl-C: the terminal signals the whole foreground group
    obs = lab.finish(proc, 120)
    if obs.hung:
        return Verdict("hang", "no exit within 120 s of Ctrl-C")
    if obs.traceback:
        worker = "SpawnProcess" in obs.stderr or "process" in obs.stderr.lower()
        return Verdict("traceback", ("a worker's " if worker else "") + f"traceback: {obs.last}")
    return Verdict("clear", f"exit {obs.code}: {obs.last}")


@case("signals", "Ctrl-C during a study's seeds", "result.json says phase training")
def _ctrl_c_phase(lab: Lab) -> Verdict:
    out = lab.dir / "run"
    argv = lab.script("train_collocation.py", "vdp", *STUDY, "--seeds", 6, "--workers", 1)
    proc = lab.start([*argv, "--out", str(out)])
    if not lab.wait_until(lambda: lab.count("seed-*.json") >= 1, 300, proc):
        lab.kill(proc)
        return Verdict("traceback", "no seed was stored")
    lab.kill(proc, signal.SIGINT)
    obs = lab.finish(proc, 120)
    if obs.hung:
        return Verdict("hang", "no exit within 120 s of Ctrl-C")
    if obs.traceback:
        return Verdict("traceback", obs.last)
    result = lab.json(out / "result.json") or {}
    if result.get("phase") != "training":
        return Verdict("silent", f"phase {result.get('phase')!r} recorded for a stop in training")
    return Verdict("clear", f"exit {obs.code}, phase training")


@case("--overwrite", "a folder holding thesis.tex and notes.txt", "refused, nothing touched")
def _overwrite_foreign(lab: Lab) -> Verdict:
    out = lab.dir / "thesis"
    out.mkdir()
    (out / "thesis.tex").write_text("\\documentclass{article}\n")
    (out / "notes.txt").write_text("three years of notes\n")
    obs = lab.run(
        lab.script("train_collocation.py", "vdp", *TINY, "--out", out, "--overwrite"), 300
    )
    lost = [n for n in ("thesis.tex", "notes.txt") if not (out / n).is_file()]
    if lost:
        return Verdict("data lost", f"{', '.join(lost)} deleted (exit {obs.code})")
    return refusal(obs, "--out", "--overwrite")


def overwrite_then(lab: Lab, argv_new: list[str], env: dict[str, str], stop: bool) -> Verdict:
    out = lab.dir / "run"
    first = lab.run(lab.script("train_collocation.py", "vdp", *TINY, "--out", out), 300)
    old = (lab.json(out / "result.json") or {}).get("run_id")
    if first.code not in (0, 1) or old is None:
        return Verdict("traceback", f"the first run failed: {first.last}")
    argv = lab.script("train_collocation.py", *argv_new, "--out", out, "--overwrite")
    if stop:  # Ctrl-C once IPOPT's first iteration is on screen
        proc = lab.start(argv, env)
        seen = lab.wait_until(
            lambda: re.search(r"^\s*1\s+[-+]?\d\.\d+e[-+]\d+", lab.output(proc), re.M), 300, proc
        )
        if seen:
            lab.kill(proc, signal.SIGINT)
        obs = lab.finish(proc, 120)
    else:
        obs = lab.run(argv, 300, env)
    if obs.hung:
        return Verdict("hang", "the second run did not end")
    now = lab.json(out / "result.json") or {}
    if now.get("run_id") != old:
        return Verdict(
            "data lost",
            f"the complete run was replaced by one with status {now.get('status')!r} "
            f"(exit {obs.code})",
        )
    if obs.traceback:
        return Verdict("traceback", obs.last)
    return Verdict("clear", f"exit {obs.code}; the earlier run kept: {obs.last}")


@case("--overwrite", "of a complete run by a run that fails", "the earlier run is kept")
def _overwrite_failed(lab: Lab) -> Verdict:
    cache = lab.dir / "unsafe-cache"
    cache.mkdir()
    cache.chmod(0o777)  # loading compiled code from it is refused: the training fails
    tiny = [a for a in TINY if a != "--no-jit"]
    return overwrite_then(lab, ["vdp", *tiny, "--jit"], {"COLLOCNODE_CACHE": str(cache)}, False)


@case("--overwrite", "of a complete run by a run stopped with Ctrl-C", "the earlier run is kept")
def _overwrite_interrupted(lab: Lab) -> Verdict:
    return overwrite_then(lab, ["vdp", *LONG], {}, True)


def wrong_scheduler(lab: Lab, script: str, server: str) -> Verdict:
    make, word = SERVERS[server]
    out = lab.dir / "run"
    with make(lab.dir) as port:
        address = f"tcp://127.0.0.1:{port}"
        if script == "train_collocation.py":
            argv = lab.script(script, "vdp", *TINY, "--seeds", 2, "--scheduler", address)
        else:
            argv = lab.script(script, "vdp", "--methods", "lstm", *QUICK_COMPARE)
            argv += ["--scheduler", address]
        obs = lab.run([*argv, "--out", str(out)], SCHEDULER_LIMIT_S + 15)
    verdict = refusal(obs, "--scheduler|scheduler", word, limit=SCHEDULER_LIMIT_S)
    if verdict.outcome == "clear" and out.exists():
        return Verdict("silent", f"--out was created before the scheduler was checked: {obs.last}")
    return verdict


for _server in SERVERS:
    case("--scheduler", f"train_collocation.py at {_server}", "exit 2, one line, in 30 s")(
        lambda lab, s=_server: wrong_scheduler(lab, "train_collocation.py", s)
    )
for _server in ("a silent server", "an HTTP server"):
    case("--scheduler", f"compare.py at {_server}", "exit 2, one line, in 30 s")(
        lambda lab, s=_server: wrong_scheduler(lab, "compare.py", s)
    )


@case("--scheduler", "the scheduler killed mid-study", "stored counts and the resume command")
def _scheduler_lost(lab: Lab) -> Verdict:
    with closed_port() as port:
        address = f"tcp://127.0.0.1:{port}"
    scheduler = lab.start(
        [
            sys.executable,
            "-m",
            "distributed.cli.dask_scheduler",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--no-dashboard",
        ]
    )
    worker = lab.start(
        [
            sys.executable,
            "-m",
            "distributed.cli.dask_worker",
            address,
            "--nworkers",
            "1",
            "--nthreads",
            "1",
            "--no-dashboard",
        ]
    )
    out = lab.dir / "run"
    try:
        argv = lab.script("train_collocation.py", "vdp", *STUDY, "--seeds", 8)
        proc = lab.start([*argv, "--scheduler", address, "--out", str(out)])
        if not lab.wait_until(lambda: lab.count("seed-*.json") >= 2, 300, proc):
            lab.kill(proc)
            obs = lab.finish(proc, 1)
            return Verdict("traceback", f"no 2 seeds stored on the cluster: {obs.last}")
        lab.kill(scheduler)
        stored = lab.count("seed-*.json")
        obs = lab.finish(proc, 300)
    finally:
        lab.kill(worker)
        lab.kill(scheduler)
    if obs.hung:
        return Verdict("hang", "the study did not end after losing its scheduler")
    if obs.traceback:
        return Verdict("traceback", obs.last)
    result = lab.json(out / "result.json") or {}
    if obs.code != 1 or not obs.lines or "--resume" not in obs.lines[-1]:  # `last` is cut
        return Verdict("traceback", f"exit {obs.code}, no resume command: {obs.last}")
    if result.get("seeds_completed") != stored:
        return Verdict(
            "silent", f"seeds_completed {result.get('seeds_completed')} with {stored} stored"
        )
    return Verdict("clear", f"{stored} seeds recorded; {obs.last[:160]}")


@case("ADMM", "a block's worker lost beyond Dask's allowed-failures", "a partial, failed result")
def _admm_lost(lab: Lab) -> Verdict:
    code = """
        import json, os, signal
        import dask
        from distributed import Client, LocalCluster
        from collocnode import ConsensusADMM, IpoptOptions, RadauIIA, solve
        from collocnode.strategies._admm import blocks as admm_blocks
        from tests.helpers import decay_problem

        original, rounds = admm_blocks.Actors.solve, []

        def solve_and_kill(self, rho, center):
            rounds.append(len(rounds))
            if rounds[-1] in (2, 4):
                address = self.actors[0]._address
                pid = self.client.run(os.getpid, workers=[address])[address]
                os.kill(pid, signal.SIGKILL)
            return original(self, rho, center)

        admm_blocks.Actors.solve = solve_and_kill
        inner = RadauIIA(20, 3, ipopt=IpoptOptions(tol=1e-10, print_level=0))
        with dask.config.set({"distributed.scheduler.allowed-failures": 1}):
            with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                              dashboard_address=None) as cluster, Client(cluster) as client:
                alg = ConsensusADMM(inner, blocks=2, client=client, rho=1.0, max_rounds=300,
                                    eps_abs=1e-6, eps_rel=1e-5, balance=2.0)
                try:
                    sol = solve(decay_problem(4), alg, check=False)
                except Exception as exc:
                    print(json.dumps({"error": f"{type(exc).__name__}: {exc}"[:200]}))
                else:
                    res = sol.record(ConsensusADMM)
                    print(json.dumps({"status": sol.status.value, "rounds": len(res.rounds),
                                      "message": sol.message[:200]}))
    """
    obs = lab.run(lab.python(code), 300, {"PYTHONPATH": f"{lab.root}"})
    found = library(obs)
    if obs.hung:
        return Verdict("hang", "no result within 300 s")
    if "error" in found:
        return Verdict("data lost", f"every round discarded: {found['error']}")
    if found.get("status") == "failed" and found.get("rounds", 0) >= 2:
        return Verdict("clear", f"{found['rounds']} rounds kept, status failed: {found['message']}")
    return Verdict("silent", f"{found or obs.last}")


MODEL_FILE = """
    import json, sys
    import numpy as np
    from collocnode import NeuralODE
    from collocnode.nn import MLP
    from collocnode.serialize import load_model, save_model

    model = NeuralODE([MLP((2, 3, 1), "tanh"), MLP((2, 3, 1), "tanh")],
                      state_names=("PLACEHOLDER0", "b"))
    path = save_model("model.json", model, np.linspace(-1, 1, model.n_params))
    text = path.read_text()
    EDIT
    path.write_text(text)
    try:
        loaded = load_model(path)
    except (ValueError, TypeError, OSError) as exc:
        print(json.dumps({"error": f"{type(exc).__name__}: {exc}"[:300]}))
    else:
        print(json.dumps({"loaded": list(loaded.model.state_names)[0][:40]}))
"""


def crafted_model(lab: Lab, edit: str, words: Sequence[str]) -> Verdict:
    obs = lab.run(lab.python(MODEL_FILE.replace("EDIT", edit)), 120)
    found = library(obs)
    if obs.hung:
        return Verdict("hang", "load_model did not return")
    if "loaded" in found:
        return Verdict("silent", f"loaded, state name {found['loaded']!r}")
    if "error" in found and all(w in found["error"].lower() for w in words):
        return Verdict("clear", found["error"][:240])
    return Verdict("traceback", (found.get("error") or obs.last)[:240])


@case("model files", "load_model on a FIFO", "refused before it is opened")
def _fifo(lab: Lab) -> Verdict:
    code = """
        import json, os, sys
        from collocnode.serialize import load_model
        os.mkfifo("model.json")
        try:
            load_model("model.json")
        except (ValueError, OSError) as exc:
            print(json.dumps({"error": f"{type(exc).__name__}: {exc}"}))
    """
    obs = lab.run(lab.python(code), 30)
    if obs.hung:
        return Verdict("hang", "load_model blocked on the FIFO for 30 s")
    found = library(obs)
    return Verdict("clear", found["error"]) if "error" in found else Verdict("traceback", obs.last)


MODEL_EDITS = {
    "a duplicate key": (
        "text = text.replace('\"format_version\": 1,', '\"format_version\": 1, ' * 2)",
        ("duplicate",),
    ),
    "no weight checksum": (
        "doc = json.loads(text); del doc['p_sha256']; text = json.dumps(doc)",
        ("p_sha256",),
    ),
    "a state name with a newline": (
        "text = text.replace('\"PLACEHOLDER0\"', json.dumps('a\\nb'))",
        ("state_names",),
    ),
    "a state name with a bidirectional override": (
        "text = text.replace('\"PLACEHOLDER0\"', json.dumps('\\u202eevil'))",
        ("state_names",),
    ),
    "a state name of a megabyte": (
        "text = text.replace('\"PLACEHOLDER0\"', json.dumps('x' * 2**20))",
        ("state_names",),
    ),
}
for _name, (_edit, _words) in MODEL_EDITS.items():
    case("model files", _name, "refused, naming what")(
        lambda lab, e=_edit, w=_words: crafted_model(lab, e, w)
    )


@case("data", "a pandas DataFrame as x", "its column names become the state names")
def _dataframe(lab: Lab) -> Verdict:
    code = """
        import json
        import numpy as np, pandas as pd
        from collocnode._data import Trajectory
        t = np.linspace(0, 1, 5)
        frame = pd.DataFrame({"position": np.sin(t), "velocity": np.cos(t)})
        print(json.dumps({"names": list(Trajectory(t, frame).state_names)}))
    """
    obs = lab.run(lab.python(code), 120)
    names = library(obs).get("names")
    if names == ["position", "velocity"]:
        return Verdict("clear", f"state_names {names}")
    if names is None:
        return Verdict("traceback", obs.last)
    return Verdict("silent", f"state_names {names}: the column names were dropped")


@case("JIT cache", "a corrupt cached library", "rebuilt with a one-line warning")
def _corrupt_jit(lab: Lab) -> Verdict:
    code = """
        import json, warnings
        from pathlib import Path
        from collocnode import DynamicOptimizationProblem, RadauIIA, solve
        from collocnode.tools._cache import cache_dir

        def problem():
            return DynamicOptimizationProblem(
                dynamics=lambda x, p, u, t: -x, n_states=1, n_params=0, tspan=(0.0, 1.0),
                lagrange=lambda x, p, u, t: x[0] ** 2, x0=[1.0])

        solve(problem(), RadauIIA(4, 2, jit=True))
        libraries = list(cache_dir().glob("*.so"))
        for lib in libraries:
            lib.write_bytes(b"\\x7fELF not a library any more")
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            try:
                sol = solve(problem(), RadauIIA(4, 2, jit=True))
            except Exception as exc:
                print(json.dumps({"error": f"{type(exc).__name__}: {str(exc)[:200]}"}))
                raise SystemExit
        lines = [str(w.message) for w in seen if "jit" in str(w.message).lower()]
        print(json.dumps({"status": sol.status.value, "warnings": lines,
                          "libraries": len(libraries)}))
    """
    obs = lab.run(lab.python(code), 300)
    found = library(obs)
    if obs.hung:
        return Verdict("hang", "no result within 300 s")
    if "error" in found or not found:
        return Verdict("traceback", (found.get("error") or obs.last)[:240])
    if found["status"] != "success" or len(found["warnings"]) != 1:
        return Verdict("silent", f"status {found['status']}, warnings {found['warnings']}")
    if "\n" in found["warnings"][0]:
        return Verdict("traceback", "the warning is not one line")
    return Verdict("clear", found["warnings"][0][:240])


@case("NLP size", "loss='samples' with 10^6 samples, 3 GB of address space", "refused up front")
def _million_samples(lab: Lab) -> Verdict:
    code = """
        import json, resource, time
        import numpy as np
        from collocnode import IpoptOptions, NeuralODE, RadauIIA, TrainingProblem, problems, solve
        from collocnode._data import Trajectory
        from collocnode.nn import MLP

        size = 0
        for line in open("/proc/self/status"):
            if line.startswith("VmSize:"):
                size = int(line.split()[1]) * 1024
        limit = size + 3 * 2**30
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        system = problems.get("vdp")
        t = np.linspace(0.0, 7.0, 10**6)
        data = Trajectory(t, system.simulate(t).x)
        model = NeuralODE([MLP((2, 5, 5, 1), "sigmoid"), MLP((2, 5, 5, 1), "sigmoid")])
        problem = TrainingProblem(model, data, regularization=1e-4, initial_state=system.x0,
                                  loss="samples")
        start = time.perf_counter()
        try:
            sol = solve(problem, RadauIIA(50, 3, ipopt=IpoptOptions(max_iter=5, print_level=0)),
                        seed=0, check=False)
        except (ValueError, MemoryError) as exc:
            print(json.dumps({"error": f"{type(exc).__name__}: {str(exc)[:400]}",
                              "seconds": time.perf_counter() - start}))
        else:
            print(json.dumps({"status": sol.status.value}))
    """
    obs = lab.run(lab.python(code), 60)
    if obs.hung:
        return Verdict("hang", "neither refused nor built within 60 s")
    found = library(obs)
    error = found.get("error", "")
    if error.startswith("ValueError") and "sample" in error:
        return Verdict("clear", f"{found['seconds']:.1f} s: {error[:200]}")
    if "status" in found:
        return Verdict("clear", f"built and solved within the limit: {found['status']}")
    return Verdict("traceback", (error or obs.last)[:240])


@case("--resume", "a finished study with another --noise", "exit 2, result.json untouched")
def _resume_other_noise(lab: Lab) -> Verdict:
    out = lab.dir / "run"
    argv = lab.script("train_collocation.py", "vdp", *TINY, "--seeds", 2, "--workers", 1)
    argv += ["--out", str(out)]
    first = lab.run(argv, 300)
    before = (out / "result.json").read_text() if (out / "result.json").is_file() else None
    if first.code not in (0, 1) or before is None:
        return Verdict("traceback", f"the first study failed: {first.last}")
    obs = lab.run([*argv, "--resume", "--noise", "0.1"], 300)
    after = (out / "result.json").read_text() if (out / "result.json").is_file() else None
    if after != before:
        status = (json.loads(after) if after else {}).get("status")
        return Verdict("data lost", f"result.json replaced (status {status!r}, exit {obs.code})")
    verdict = refusal(obs, "noise")
    if verdict.outcome == "clear" and len(obs.lines[0]) > 300:
        return Verdict("traceback", f"a {len(obs.lines[0])}-character line")
    return verdict


@case("--resume", "compare.py with another method option", "exit 2, compare.json untouched")
def _resume_compare_other(lab: Lab) -> Verdict:
    out = lab.dir / "cmp"
    argv = lab.script("compare.py", "vdp", "--methods", "lstm", *QUICK_COMPARE, "--workers", "2")
    argv += ["--out", str(out)]
    first = lab.run(argv, 300)
    before = (out / "compare.json").read_text() if (out / "compare.json").is_file() else None
    if first.code != 0 or before is None:
        return Verdict("traceback", f"the first comparison failed: {first.last}")
    obs = lab.run([*argv, "--resume", "--set", "lstm.lr=0.5"], 300)
    if (out / "compare.json").read_text() != before:
        return Verdict("data lost", f"compare.json replaced (exit {obs.code})")
    return refusal(obs, "lstm")


ENOSPC = """
    import errno, os, sys
    import collocnode.tools._io as io

    original = io.atomic_write_bytes
    mode = os.environ["FAULT"]
    stored = []

    def full(path, data):
        name = str(path)
        if mode == "everywhere" or (mode == "after-one-seed" and "seeds" in name and stored):
            raise OSError(errno.ENOSPC, "No space left on device", name)
        if name.endswith(".json") and "seeds" in name:
            stored.append(name)
        return original(path, data)

    io.atomic_write_bytes = full
    if mode == "jit-cache":
        import pathlib
        write_text = pathlib.Path.write_text

        def cache_full(self, *args, **kwargs):
            if str(self).startswith(os.environ["COLLOCNODE_CACHE"]):
                raise OSError(errno.ENOSPC, "No space left on device", str(self))
            return write_text(self, *args, **kwargs)

        pathlib.Path.write_text = cache_full
    from collocnode._cli import train_collocation
    sys.exit(train_collocation(sys.argv[1:]))
"""


def disk_full(lab: Lab, mode: str, args: Sequence[object]) -> tuple[Observed, dict[str, Any]]:
    out = lab.dir / "run"
    obs = lab.run(lab.python(ENOSPC, *args, "--out", out), 600, {"FAULT": mode})
    return obs, lab.json(out / "result.json") or {}


def judge_storage(obs: Observed, result: dict[str, Any], seeds: bool) -> Verdict:
    """A run stopped by a full disk: one error line (warnings the seeds print aside), exit 1,
    and for a study status failed, phase storage, no seed counted as failed for it."""
    if obs.hung:
        return Verdict("hang", "no exit")
    if obs.traceback:
        return Verdict("traceback", f"{obs.stderr.count('Traceback')} tracebacks: {obs.last}")
    errors = [line for line in obs.lines if line.startswith("train_collocation.py:")]
    if seeds and obs.code == 0:
        return Verdict(
            "silent",
            f"exit 0, status {result.get('status')!r}, {len(result.get('seeds_with_errors', []))}"
            f" storage errors counted as failed seeds, success_rate {result.get('success_rate')}",
        )
    if obs.code != 1 or len(errors) != 1:
        return Verdict("traceback", f"exit {obs.code}, {len(errors)} error lines: {obs.last}")
    if seeds:
        wrong = []
        if result.get("phase") != "storage" or result.get("status") != "failed":
            wrong.append(f"status {result.get('status')!r}, phase {result.get('phase')!r}")
        if result.get("seeds_with_errors") or result.get("seeds_completed") is None:
            wrong.append(
                f"{len(result.get('seeds_with_errors') or [])} storage errors counted as failed "
                f"seeds, success_rate {result.get('success_rate')}"
            )
        if wrong:
            return Verdict("silent", "; ".join(wrong))
    return Verdict("clear", errors[0][:240])


@case("full disk", "no space at all, one training", "one line, no second traceback")
def _disk_full_everywhere(lab: Lab) -> Verdict:
    obs, result = disk_full(lab, "everywhere", ["vdp", *TINY])
    return judge_storage(obs, result, seeds=False)


@case("full disk", "space for one seed, 1 process", "status failed, phase storage, not science")
def _disk_full_serial(lab: Lab) -> Verdict:
    obs, result = disk_full(lab, "after-one-seed", ["vdp", *TINY, "--seeds", 4, "--workers", 1])
    return judge_storage(obs, result, seeds=True)


@case("full disk", "space for one seed, 2 worker processes", "the same as with 1 process")
def _disk_full_pool(lab: Lab) -> Verdict:
    obs, result = disk_full(lab, "after-one-seed", ["vdp", *TINY, "--seeds", 4, "--workers", 2])
    return judge_storage(obs, result, seeds=True)


@case("full disk", "the JIT cache's disk full inside a seed", "phase storage, no failed seeds")
def _disk_full_jit(lab: Lab) -> Verdict:
    tiny = [a for a in TINY if a != "--no-jit"]
    obs, result = disk_full(lab, "jit-cache", ["vdp", *tiny, "--jit", "--seeds", 2, "--workers", 1])
    return judge_storage(obs, result, seeds=True)


# ---- running and reporting -----------------------------------------------------------------------


def run_case(fault: FaultCase, root: Path, scratch: Path) -> dict[str, Any]:
    start = time.perf_counter()
    folder = Path(tempfile.mkdtemp(dir=scratch))
    try:
        outcome, note = fault.run(Lab(root, folder))
    except Exception as exc:  # a broken case is reported, not fatal to the pass
        outcome, note = "traceback", f"the case itself failed: {type(exc).__name__}: {exc}"
    return {
        "case": fault.label,
        "wants": fault.wants,
        "outcome": outcome,
        "note": note,
        "seconds": round(time.perf_counter() - start, 1),
    }


def summarize(results: Sequence[dict[str, Any]]) -> dict[str, int]:
    counts = Counter(r["outcome"] for r in results)
    return {k: counts.get(k, 0) for k in OUTCOMES}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=HERE, help="the checkout under test")
    parser.add_argument("--out", type=Path, default=Path("runs/fault_cases"))
    parser.add_argument("--only", default=None, help="run the cases whose name contains this")
    parser.add_argument("--list", action="store_true", help="list the cases and exit")
    args = parser.parse_args(argv)
    cases = [c for c in CASES if not args.only or args.only in c.label]
    if args.list:
        for c in cases:
            print(f"{c.label}  -> {c.wants}")
        print(f"{len(cases)} cases")
        return 0
    root = args.root.resolve()
    commit = subprocess.run(
        ["git", "-C", str(root), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    args.out.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    results = []
    with tempfile.TemporaryDirectory(prefix="faults-") as scratch:
        for k, fault in enumerate(cases, 1):
            result = run_case(fault, root, Path(scratch))
            results.append(result)
            print(f"[{k:2}/{len(cases)}] {result['outcome']:9} {fault.label}", flush=True)
    doc = {
        "root": str(root),
        "commit": commit or None,
        "python": platform.python_version(),
        "machine": f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.1f} at the end",
        "cases": len(results),
        "counts": summarize(results),
        "wall_s": round(time.perf_counter() - start, 1),
        "results": results,
    }
    path = args.out / "fault_cases.json"
    path.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
    print(f"\n{doc['cases']} cases in {doc['wall_s']} s; written to {path}")
    for outcome, n in doc["counts"].items():
        print(f"  {outcome:9} {n}")
    for r in results:
        if r["outcome"] != "clear":
            print(f"  [{r['outcome']}] {r['case']}\n      {r['note']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
