"""Ctrl-C during a long IPOPT run stops it cleanly: the iterate so far is returned with status
INTERRUPTED, and the script still writes result.json and the plots."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from collocnode import (
    DynamicOptimizationProblem,
    IpoptOptions,
    NeuralODE,
    RadauIIA,
    SolverStatus,
    TrainingProblem,
    problems,
    solve,
)
from collocnode._cli.run_folder import MARKER
from collocnode._status import SolveInterrupted
from collocnode.nn import MLP
from collocnode.transcription._ipopt.backends import BACKENDS

pytestmark = pytest.mark.skipif(
    sys.platform == "win32" or not hasattr(signal, "pthread_kill"),
    reason="needs POSIX signals",
)

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "train_collocation.py"


class CtrlC:
    """Presses Ctrl-C (SIGINT to the main thread) ``delay`` seconds after a solve has installed
    its SIGINT handler and, when ``ready`` is given, after that event is set (e.g. by an
    iteration callback once IPOPT has finished an iteration), so the signal lands inside IPOPT
    whatever the machine's speed and load."""

    def __init__(
        self, delay: float, timeout: float = 60.0, ready: threading.Event | None = None
    ) -> None:
        self.delay, self.timeout, self.ready = delay, timeout, ready
        self.original = signal.getsignal(signal.SIGINT)
        self.main = threading.main_thread().ident
        self.sent = False
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _installed(self) -> bool:
        return signal.getsignal(signal.SIGINT) is not self.original

    def _run(self) -> None:
        end = time.monotonic() + self.timeout
        while not self._installed() or (self.ready is not None and not self.ready.is_set()):
            if self.done.is_set() or time.monotonic() > end:
                return
            time.sleep(0.001)
        if self.done.wait(self.delay) or not self._installed():
            return  # the solve ended by itself: do not interrupt whatever runs next
        signal.pthread_kill(self.main, signal.SIGINT)
        self.sent = True

    def __enter__(self) -> CtrlC:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.done.set()
        self.thread.join()


def long_problem() -> TrainingProblem:
    system = problems.get("vdp")
    data = system.generate(noise=0.05, seed=0).train
    model = NeuralODE([MLP((2, 5, 5, 1), "sigmoid") for _ in range(2)])
    return TrainingProblem(model, data, regularization=1e-4, initial_state=system.x0)


@pytest.mark.parametrize("backend", BACKENDS)
def test_ctrl_c_returns_the_iterate_as_interrupted(backend):
    problem = long_problem()
    # a tight tolerance: uninterrupted this takes hundreds of iterations (many seconds)
    ipopt = IpoptOptions(tol=1e-14, max_iter=3000, print_level=0, backend=backend)
    handler_before = signal.getsignal(signal.SIGINT)
    iterated = threading.Event()  # on a loaded machine the first iteration may take seconds
    start = time.perf_counter()
    with CtrlC(delay=0.3, ready=iterated) as ctrl:
        sol = solve(
            problem, RadauIIA(150, 3, ipopt=ipopt), seed=0, callback=lambda state: iterated.set()
        )
    elapsed = time.perf_counter() - start
    assert ctrl.sent, "the solve ended before Ctrl-C could be pressed"
    assert sol.status == SolverStatus.INTERRUPTED
    assert not sol.status.ok and not sol.solution.success
    assert sol.ipopt_status == "User_Requested_Stop"
    assert 0 < sol.iterations < 3000
    assert np.all(np.isfinite(sol.p)) and np.all(np.isfinite(sol.solution.x_nodes))
    assert sol.history and sol.history[-1][2] == pytest.approx(sol.objective, rel=1e-12)
    assert elapsed < 30
    assert signal.getsignal(signal.SIGINT) is handler_before, "SIGINT handler not restored"
    # the kept iterate is a usable solution: its dense output is defined on the whole horizon
    assert np.all(np.isfinite(sol(problem.data.t)))


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_ctrl_c_in_the_script_still_writes_results(tmp_path, stop):
    """Ctrl-C, and SIGTERM (a scheduler's stop) the same way, inside IPOPT."""
    out = tmp_path / "run"
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    args = ["vdp", "--intervals", "300", "--stages", "5", "--no-jit", "--max-iter", "3000", "-v"]
    proc = subprocess.Popen(
        [sys.executable, str(SCRIPT), *args, "--tol", "1e-14", "--out", str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    try:
        # IPOPT prints one line per iteration (-v); press Ctrl-C once iteration 1 is on screen
        seen = []
        for line in proc.stdout:
            seen.append(line)
            if re.match(r"^\s*1\s+[-+]?\d\.\d+e[-+]\d+", line):
                proc.send_signal(stop)
                break
        else:
            pytest.fail("no IPOPT iteration seen:\n" + "".join(seen[-20:]))
        stdout, stderr = proc.communicate(timeout=180)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 1, stderr  # not a success, and not a crash
    assert "Traceback" not in stderr
    assert "interrupted" in stdout
    result = json.loads((out / "result.json").read_text())
    assert result["status"] == "interrupted"
    assert result["ipopt_status"] == "User_Requested_Stop"
    assert result["iterations"] >= 1
    for png in ("trajectories.png", "vector_field_error.png", "objective.png"):
        assert (out / png).stat().st_size > 1000, png
    hidden = [p.name for p in out.iterdir() if p.name.startswith(".")]
    assert hidden == [MARKER], f"temporary files left: {hidden}"


def test_an_ignored_sigint_stays_ignored_during_a_solve():
    """A process that ignores SIGINT (a pool worker, ``nohup``) must not get a handler back."""
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    seen, stop = set(), threading.Event()
    main = threading.main_thread().ident

    def watch() -> None:
        start = time.monotonic()
        while not stop.is_set():
            seen.add(signal.getsignal(signal.SIGINT))
            if time.monotonic() - start > 0.3 and "sent" not in seen:
                signal.pthread_kill(main, signal.SIGINT)  # ignored by the OS
                seen.add("sent")
            time.sleep(0.001)

    watcher = threading.Thread(target=watch, daemon=True)
    try:
        watcher.start()
        ipopt = IpoptOptions(tol=1e-14, max_iter=80, print_level=0)
        sol = solve(long_problem(), RadauIIA(100, 3, ipopt=ipopt), seed=0)
    finally:
        stop.set()
        watcher.join()
        signal.signal(signal.SIGINT, previous)
    assert "sent" in seen, "the solve ended before Ctrl-C could be pressed"
    assert seen == {signal.SIG_IGN, "sent"}
    assert sol.status != SolverStatus.INTERRUPTED


def _problem_with_dynamics(dynamics) -> DynamicOptimizationProblem:
    return DynamicOptimizationProblem(
        dynamics=dynamics,
        n_states=1,
        n_params=0,
        tspan=(0.0, 1.0),
        lagrange=lambda x, p, u, t: x[0] ** 2,
        x0=[1.0],
    )


def test_ctrl_c_during_the_build_is_solve_interrupted_with_its_phase():
    def interrupted(x, p, u, t):
        raise KeyboardInterrupt

    with pytest.raises(SolveInterrupted) as err:
        solve(_problem_with_dynamics(interrupted), RadauIIA(4, 2))
    assert err.value.phase == "build"
    assert isinstance(err.value, KeyboardInterrupt)  # code that stops on Ctrl-C still does
    assert "build phase" in str(err.value)


def test_ctrl_c_during_the_jit_compile_is_solve_interrupted_with_its_phase(monkeypatch):
    from collocnode.transcription._nlp import jit

    def interrupted(functions, name="collocnode_nodes"):
        raise KeyboardInterrupt

    monkeypatch.setattr(jit, "compile_functions", interrupted)
    with pytest.raises(SolveInterrupted) as err:
        solve(_problem_with_dynamics(lambda x, p, u, t: -x), RadauIIA(4, 2, jit=True))
    assert err.value.phase == "compile"


def test_ctrl_c_takes_effect_at_once_inside_a_long_casadi_call():
    """CasADi calls cannot be interrupted; the build runs in a worker thread so that the main
    thread, waiting for it, reacts to Ctrl-C at once (it waited for the call to return)."""
    import casadi as ca

    entered = threading.Event()

    def slow_dynamics(x, p, u, t):
        # one CasADi call of a few seconds, as the symbolic Hessian of a large model
        n = 16
        v, w = ca.SX.sym("v", n), ca.SX.sym("w", n, n)
        e = ca.sumsqr(ca.tanh(ca.mtimes(w, ca.tanh(ca.mtimes(w, v)))))
        entered.set()
        ca.hessian(e, ca.vec(w))
        return -x

    main = threading.main_thread().ident
    pressed: list[float] = []

    def press() -> None:
        if entered.wait(60):
            time.sleep(0.2)
            pressed.append(time.perf_counter())
            signal.pthread_kill(main, signal.SIGINT)

    presser = threading.Thread(target=press, daemon=True)
    presser.start()
    with pytest.raises(SolveInterrupted) as err:
        solve(_problem_with_dynamics(slow_dynamics), RadauIIA(4, 2))
    latency = time.perf_counter() - pressed[0]
    presser.join()
    assert err.value.phase == "build"
    assert latency < 0.5, f"Ctrl-C took effect {latency:.2f} s late"


def test_sigterm_keeps_its_default_action_where_sigint_is_ignored():
    """A background job of a non-interactive shell ignores SIGINT: SIGTERM must still end it."""
    code = (
        "import os, signal, time\n"
        "from collocnode._cli.signals import sigterm_as_interrupt\n"
        "signal.signal(signal.SIGINT, signal.SIG_IGN)\n"
        "with sigterm_as_interrupt():\n"
        "    os.kill(os.getpid(), signal.SIGTERM)\n"
        "    time.sleep(30)\n"
        "print('survived')\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == -signal.SIGTERM and "survived" not in proc.stdout
