#!/usr/bin/env python
"""A hostile pass over collocnode: several hundred bad or careless inputs, each classified.

Every public constructor, ``solve``, ``simulate``, ``TrainingSolution.simulate``,
``problems.get``, ``save_model``/``load_model``, the recipes, ``compare.make_trainer`` and both
command lines get NaN, ±inf, zero/negative/huge sizes, wrong types, wrong shapes, empty arrays,
spans that overflow, non-monotone times and unicode. Each case runs in its own process (a fork
of this one for library calls, a fresh interpreter for the scripts) under a wall-clock limit and
an address-space limit (``RLIMIT_AS``), so a crash or a hang cannot take the runner down. Its
outcome is one of:

* ``clear``: a ValueError/TypeError (or exit code 2 with one stderr line) whose message names the
  case's field;
* ``traceback``: any other exception, a message that does not name the field, a script that
  prints a Python traceback without ``--debug``, or a bad input that a script only reports as a
  failed run (exit 1);
* ``silent``: bad input accepted (or a legitimate input accepted with a result that is not sane);
* ``accepted``: a legitimate input accepted with a sane result (e.g. an int where a float is
  expected);
* ``refused``: a legitimate input refused with a clear error;
* ``crash``: the process died (signal, out of memory: ``MemoryError`` under the limit counts);
* ``hang``: the case ran past its time limit.

Cases whose input is arguably either legitimate or not (``3.0`` for an integer) count a clear
error and a sane acceptance as fine.

    python benchmarks/hostile_inputs.py [--out DIR] [--only TEXT] [--list]

Writes ``DIR/hostile_inputs.json`` (default ``runs/hostile_inputs``): every case with its
target, outcome and the first line of its message, and the counts per outcome; prints the counts
and every case that is neither a clear error nor a legitimate acceptance.
"""

from __future__ import annotations

import argparse
import faulthandler
import functools
import json
import math
import multiprocessing
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
import traceback
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = ROOT / "scripts"
OUTCOMES = ("clear", "traceback", "silent", "accepted", "refused", "crash", "hang")
FINE = ("clear", "accepted")
API_TIMEOUT_S = 30.0
SCRIPT_TIMEOUT_S = 90.0
MEMORY_HEADROOM = 4 * 2**30  # bytes of address space a library case may add to the runner's
SCRIPT_MEMORY = 8 * 2**30  # bytes of address space of a script process
ONE_THREAD = {k: "1" for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")}


# ---- cases --------------------------------------------------------------------------------------


@dataclass
class Case:
    """One hostile input.

    Attributes:
        target: what is attacked (a constructor, a function, a script).
        name: the input, short; ``target: name`` is unique.
        field: the name(s) a clear error message must contain (any of them, case-insensitive).
        expect: "error" (bad input: acceptance is silent), "accept" (legitimate input) or
            "either" (a clear error and a sane acceptance are both fine).
        call: the library call (runs in a forked process); its return value goes to ``sane``.
        sane: for accepted inputs, whether the result is sane (None: any result is).
        argv: the command of a script case, instead of ``call``; ``{tmp}`` stands for the case's
            own temporary directory, which is also its working directory.
        setup: prepares a script case's temporary directory (gets its path).
        codes: exit codes of an accepted script run (a run that does not converge exits 1).
        clear_types: exception types that count as a deliberate error (with the field named).
        needs: fixtures (:data:`FIXTURES`) built in the runner before the fork, so the cases
            that need a trained solution do not each train one.
        timeout: wall-clock limit [s].
    """

    target: str
    name: str
    field: str | tuple[str, ...] = ()
    expect: str = "error"
    call: Callable[[], Any] | None = None
    sane: Callable[[Any], bool] | None = None
    argv: Sequence[str] = ()
    setup: Callable[[Path], None] | None = None
    codes: tuple[int, ...] = (0,)
    clear_types: tuple[type[BaseException], ...] = (ValueError, TypeError)
    needs: tuple[str, ...] = ()
    timeout: float | None = None

    @property
    def label(self) -> str:
        return f"{self.target}: {self.name}"

    @property
    def fields(self) -> tuple[str, ...]:
        return (self.field,) if isinstance(self.field, str) else tuple(self.field)


@dataclass
class Result:
    """The outcome of one case (one entry of ``hostile_inputs.json``)."""

    name: str
    target: str
    outcome: str
    message: str
    expect: str
    field: list[str] = field(default_factory=list)
    seconds: float = 0.0


def first_line(text: str) -> str:
    lines = [line for line in str(text).strip().splitlines() if line.strip()]
    return lines[0].strip()[:300] if lines else ""


def names_field(case: Case, message: str) -> bool:
    text = message.lower()
    return any(f.lower() in text for f in case.fields)


# ---- classification (pure: the tests call these with made-up outcomes) ---------------------------


def classify_error(case: Case, deliberate: bool, kind: str, message: str) -> tuple[str, str]:
    """(outcome, message) of a case whose call raised ``kind`` (``deliberate``: one of the
    case's ``clear_types``)."""
    line = f"{kind}: {first_line(message)}"
    if kind in ("MemoryError",):
        return "crash", line + " (out of memory)"
    if deliberate and names_field(case, message):
        return ("refused" if case.expect == "accept" else "clear"), line
    if deliberate:
        return "traceback", line + f"  [names none of {', '.join(case.fields) or '-'}]"
    return "traceback", line


def classify_return(case: Case, sane: bool, summary: str) -> tuple[str, str]:
    """(outcome, message) of a case whose call returned."""
    if case.expect == "error":
        return "silent", f"accepted: {summary}"
    if sane:
        return "accepted", summary
    return "silent", f"accepted, not sane: {summary}"


def classify_script(case: Case, returncode: int, stderr: str) -> tuple[str, str]:
    """(outcome, message) of a script case that exited with ``returncode``."""
    lines = [line for line in stderr.splitlines() if line.strip()]
    last = lines[-1].strip()[:300] if lines else ""
    debug = "--debug" in case.argv
    if returncode < 0:
        return "crash", f"killed by signal {-returncode}: {last}"
    if "MemoryError" in stderr:
        return "crash", f"out of memory: {last}"
    if "Traceback (most recent call last)" in stderr and not debug:
        return "traceback", f"traceback (exit {returncode}): {last}"
    if returncode == 2:
        if len(lines) != 1:
            return "traceback", f"exit 2 with {len(lines)} stderr lines: {last}"
        if not names_field(case, lines[0]):
            return "traceback", f"{last}  [names none of {', '.join(case.fields) or '-'}]"
        return ("refused" if case.expect == "accept" else "clear"), last
    if case.expect != "error" and returncode in case.codes:
        return "accepted", f"exit {returncode}" + (f": {last}" if last else "")
    if returncode == 0:
        return "silent", "accepted: exit 0"
    if returncode == 1 and not any("error" in line for line in lines):
        return "silent", f"accepted: exit 1, the run did not converge{': ' + last if last else ''}"
    return "traceback", f"exit {returncode} instead of 2: {last}"


# ---- running ------------------------------------------------------------------------------------


def _limit_memory(extra: int) -> None:
    """Cap this process's address space at its current size plus ``extra`` bytes."""
    size = 0
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmSize:"):
                size = int(line.split()[1]) * 1024
    limit = size + extra
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def _silence() -> None:
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)


def _child(case: Case, conn: Any) -> None:
    """The forked process of a library case: run the call, send what happened."""
    try:
        faulthandler.disable()  # a crash is an outcome here, not a report on the parent's stderr
        _silence()
        _limit_memory(MEMORY_HEADROOM)
        try:
            value = case.call()
        except BaseException as exc:  # every exception is an outcome here
            message = str(exc) or repr(exc)
            deliberate = isinstance(exc, case.clear_types)
            conn.send(("raised", type(exc).__name__, deliberate, message))
            return
        sane = True
        if case.sane is not None:
            try:
                sane = bool(case.sane(value))
            except Exception as exc:
                sane = False
                value = f"{value!r:.80} (sanity check raised {type(exc).__name__}: {exc})"
        conn.send(("returned", sane, f"{value!r:.160}" if not isinstance(value, str) else value))
    except BaseException:
        try:
            conn.send(("raised", "HarnessError", False, traceback.format_exc(limit=2)))
        except BaseException:
            pass
    finally:
        conn.close()
        os._exit(0)


FIXTURES: dict[str, Callable[[], Any]] = {}


def fixture(fn: Callable[[], Any]) -> Callable[[], Any]:
    cached = functools.cache(fn)
    FIXTURES[fn.__name__] = cached
    return cached


def run_library_case(case: Case) -> tuple[str, str]:
    for name in case.needs:  # built here once, inherited by every fork
        try:
            FIXTURES[name]()
        except Exception as exc:
            return "traceback", f"fixture {name} failed: {type(exc).__name__}: {first_line(exc)}"
    ctx = multiprocessing.get_context("fork")
    receive, send = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(case, send))
    proc.start()
    send.close()
    timeout = case.timeout or API_TIMEOUT_S
    if not receive.poll(timeout):  # neither a result nor the end of the pipe (a death)
        proc.kill()
        proc.join()
        return "hang", f"no result within {timeout:g} s"
    try:
        message = receive.recv()
    except EOFError:  # the child died before sending
        message = None
    proc.join(10)
    if proc.is_alive():
        proc.kill()
        proc.join()
    if message is None:
        return "crash", f"process died with exit code {proc.exitcode}"
    if message[0] == "raised":
        _, kind, deliberate, text = message
        return classify_error(case, deliberate, kind, text)
    _, sane, summary = message
    return classify_return(case, sane, summary)


def run_script_case(case: Case, scratch: Path) -> tuple[str, str]:
    tmp = Path(tempfile.mkdtemp(dir=scratch))
    if case.setup is not None:
        case.setup(tmp)
    argv = [a.replace("{tmp}", str(tmp)) for a in case.argv]
    timeout = case.timeout or SCRIPT_TIMEOUT_S
    try:
        proc = subprocess.run(
            argv,
            cwd=tmp,
            env={**os.environ, **ONE_THREAD, "MPLBACKEND": "Agg"},
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
            preexec_fn=functools.partial(_limit_absolute, SCRIPT_MEMORY),
        )
    except subprocess.TimeoutExpired:
        return "hang", f"no exit within {timeout:g} s"
    return classify_script(case, proc.returncode, proc.stderr)


def _limit_absolute(limit: int) -> None:
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def run_case(case: Case, scratch: Path) -> Result:
    start = time.perf_counter()
    if case.argv:
        outcome, message = run_script_case(case, scratch)
    else:
        outcome, message = run_library_case(case)
    if case.expect == "either" and outcome == "refused":
        outcome = "clear"
    return Result(
        name=case.label,
        target=case.target,
        outcome=outcome,
        message=message,
        expect=case.expect,
        field=list(case.fields),
        seconds=round(time.perf_counter() - start, 3),
    )


# ---- the cases ----------------------------------------------------------------------------------


class Opaque:
    """An object that is no number, string, array or callable."""

    def __repr__(self) -> str:
        return "<Opaque>"


NAN, INF = math.nan, math.inf
NUMBER_JUNK = (NAN, INF, -INF, "1", None, True, [1.0], Opaque(), 1 + 1j)
POS_FLOAT_BAD = (0.0, -1.0, *NUMBER_JUNK)
NONNEG_FLOAT_BAD = (-1.0, -1e-300, *NUMBER_JUNK)
POS_INT_BAD = (0, -1, 2.5, "3", None, True, NAN, [3], Opaque())
NONNEG_INT_BAD = (-1, 2.5, "3", None, True, NAN, Opaque())
BOOL_BAD = ("yes", "no", "False", None, 2)
CHOICE_BAD = ("bogus", "", None, 5, "tänh✓", " exact")


def short(value: Any) -> str:
    """A case name's text for ``value``: short, and the same in every run."""
    if isinstance(value, np.ndarray):
        first = f" of {value.flat[0]!r}" if value.size else ""
        return f"array{value.shape}:{value.dtype}{first}"
    if callable(value) and not isinstance(value, type):
        return f"<{getattr(value, '__name__', 'callable')}>"
    if hasattr(value, "n_samples") and hasattr(value, "n_states"):  # a Trajectory
        return f"<Trajectory {value.n_samples}x{value.n_states}>"
    if isinstance(value, (list, tuple)) and value and not isinstance(value[0], (int, float)):
        inner = ", ".join(short(v) for v in value)
        return f"[{inner}]" if isinstance(value, list) else f"({inner})"
    text = repr(value)
    return text if len(text) <= 70 else text[:67] + "..."


def named(label: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` under the name ``label`` (case names show a callable by its name)."""
    fn.__name__ = label
    return fn


def quiet(**kw: Any) -> Any:
    from collocnode import IpoptOptions

    return IpoptOptions(**{"max_iter": 3, "print_level": 0, **kw})


def tiny_alg(**kw: Any) -> Any:
    from collocnode import RadauIIA

    return RadauIIA(**{"intervals": 4, "stages": 2, "ipopt": quiet(), **kw})


def traj(n: int = 11, nx: int = 2, **kw: Any) -> Any:
    from collocnode import Trajectory

    t = np.linspace(0.0, 1.0, n)
    x = np.column_stack([np.cos(t), -np.sin(t), np.cos(2 * t)])[:, :nx]
    return Trajectory(t, x, **kw)


def net(n_in: int = 2, n_out: int = 2) -> Any:
    from collocnode.nn import MLP

    return MLP((n_in, 3, n_out))


def node(n: int = 2) -> Any:
    from collocnode import NeuralODE

    return NeuralODE(net(n, n))


def training_problem(**kw: Any) -> Any:
    from collocnode import TrainingProblem

    return TrainingProblem(kw.pop("model", None) or node(), kw.pop("data", None) or traj(), **kw)


def hybrid(**kw: Any) -> Any:
    from collocnode import HybridModel

    def rhs(x, u, t, nets, params):
        return nets["f"](x)

    return HybridModel(**{"n_states": 2, "blocks": {"f": net()}, "rhs": rhs, **kw})


def p0(model: Any) -> np.ndarray:
    return model.init_params(0)


def dop(**kw: Any) -> Any:
    from collocnode import DynamicOptimizationProblem

    base = {
        "dynamics": lambda x, p, u, t: -x + p[0],
        "n_states": 1,
        "n_params": 1,
        "tspan": (0.0, 1.0),
        "lagrange": lambda x, p, u, t: (x[0] - 0.5) ** 2,
        "x0": [1.0],
    }
    return DynamicOptimizationProblem(**{**base, **kw})


@fixture
def trained() -> Any:
    """A tiny trained neural ODE (3 IPOPT iterations), for TrainingSolution's methods."""
    from collocnode import solve

    return solve(training_problem(), tiny_alg(), seed=0)


@fixture
def smsd_data() -> Any:
    from collocnode import problems

    return problems.get("smsd").generate(n_steps=41, n_train=21).train


class Suite:
    """Collects cases; ``bad``/``ok``/``either`` add library cases, ``script`` command lines."""

    def __init__(self) -> None:
        self.cases: list[Case] = []

    def add(self, case: Case) -> None:
        self.cases.append(case)

    def bad(self, target: str, name: str, call: Callable[[], Any], field: Any, **kw: Any) -> None:
        self.add(Case(target, name, field, "error", call, **kw))

    def ok(self, target: str, name: str, call: Callable[[], Any], sane: Any = None, **kw) -> None:
        self.add(Case(target, name, kw.pop("field", ()), "accept", call, sane, **kw))

    def either(self, target: str, name: str, call: Callable[[], Any], field: Any, **kw) -> None:
        self.add(Case(target, name, field, "either", call, kw.pop("sane", None), **kw))

    def sweep(
        self,
        target: str,
        fld: str,
        build: Callable[[Any], Any],
        values: Sequence[Any],
        expect: str = "error",
        msg_field: Any = None,
        **kw: Any,
    ) -> None:
        """One case per value of field ``fld`` (``build(value)`` makes the call)."""
        for value in values:
            self.add(
                Case(
                    target,
                    f"{fld}={short(value)}",
                    msg_field or fld,
                    expect,
                    functools.partial(build, value),
                    **kw,
                )
            )

    def script(
        self, script: str, name: str, args: Sequence[str], field: Any = (), **kw: Any
    ) -> None:
        argv = [sys.executable, str(SCRIPTS / script), *args]
        if not any(a == "--out" or a.startswith("--out=") for a in args):
            argv += ["--out", "{tmp}/out"]
        self.add(Case(script, name, field, kw.pop("expect", "error"), argv=argv, **kw))


def trajectory_cases(s: Suite) -> None:
    from collocnode import Trajectory

    t5, x5 = np.linspace(0, 1, 5), np.ones((5, 2))

    def build(**kw: Any) -> Any:
        args = {"t": t5, "x": x5, **kw}
        return Trajectory(**args)

    T = "Trajectory"
    s.sweep(
        T,
        "t",
        lambda v: build(t=v, x=np.ones((np.size(v) if np.ndim(v) == 1 else 5, 2))),
        [
            None,
            [],
            [0.0, 0.0, 1.0],
            [1.0, 0.5, 0.0],
            [0.0, NAN, 1.0],
            [0.0, 1.0, INF],
            [-1e308, 1e308],
            ["a", "b"],
            np.array(["0", "1"], dtype=object),
            [[0.0, 1.0], [2.0, 3.0]],
            [0j, 1j],
            5.0,
            "0123",
            [Opaque(), Opaque()],
        ],
    )
    s.ok(T, "t=[0.0] (one sample)", lambda: Trajectory([0.0], [[1.0, 2.0]]))
    s.ok(T, "t=range(5) (ints)", lambda: build(t=range(5)), lambda r: r.t.dtype == float)
    s.sweep(
        T,
        "x",
        lambda v: build(x=v),
        [
            None,
            [],
            np.ones((4, 2)),
            np.ones((5, 2, 1)),
            np.full((5, 2), NAN),
            np.full((5, 2), -INF),
            np.full((5, 2), "a"),
            np.array([["1", "2"]] * 5, dtype=object),
            np.zeros((5, 0)),
            np.ones((5, 2), dtype=complex),
            "x",
        ],
    )
    s.ok(T, "x 1-D (one state)", lambda: build(x=np.ones(5)), lambda r: r.x.shape == (5, 1))
    s.sweep(T, "u", lambda v: build(u=v), [np.ones((4, 1)), np.full(5, NAN), np.full(5, "u")])
    s.sweep(T, "y", lambda v: build(y=v), [np.ones((6, 1)), np.full((5, 1), INF), {"y": 1}])
    s.sweep(T, "state_names", lambda v: build(state_names=v), ["ab", [1, 2], ["a"], None])
    s.ok(T, "state_names unicode", lambda: build(state_names=("θ", "ω")))
    s.sweep(T, "input_names", lambda v: build(input_names=v), [["u"]])
    s.sweep(
        T,
        "params",
        lambda v: build(params=v),
        [{"m": NAN}, {"m": "1"}, {1: 2.0}, [("m", 1.0)], None, {"m": 1e400}, {"m": [1.0]}],
    )
    s.ok(T, "params int value", lambda: build(params={"m": 2}), lambda r: r.params == {"m": 2.0})
    W = "Trajectory.with_noise"
    s.sweep(
        W,
        "sigma_x",
        lambda v: traj().with_noise(v),
        [-1.0, NAN, INF, [0.1, 0.1, 0.1], "a", None, np.ones((2, 2))],
    )
    s.sweep(W, "seed", lambda v: traj().with_noise(0.1, seed=v), [-1, 1.5, True, "0", NAN])
    s.ok(W, "sigma_x per column", lambda: traj().with_noise([0.1, 0.0], seed=1))
    s.bad("Trajectory.window", "t_start=nan", lambda: traj().window(NAN, 1.0), "t_start")
    s.bad("Trajectory.window", "window outside data", lambda: traj().window(5.0, 6.0), "window")
    s.bad("Trajectory.window", "reversed window", lambda: traj().window(1.0, 0.0), "window")
    s.sweep("Trajectory.head", "n", lambda v: traj().head(v), [0, 100, -1, 2.5])
    s.sweep("Trajectory.tail", "start", lambda v: traj().tail(v), [-1, 11, "1"])


def network_cases(s: Suite) -> None:
    from collocnode.nn import MLP, RationalChebyshev

    M = "MLP"
    s.sweep(
        M,
        "sizes",
        MLP,
        [
            (),
            (2,),
            (2, 0, 1),
            (2, -1, 1),
            (2, 2.5, 1),
            ("2", 3, 1),
            None,
            "23",
            (2, True, 1),
            (2, NAN, 1),
            (2, 10**10, 1),
            (2, 2 * 10**9, 1),
            (1, 10**5, 10**5, 1),
            (2, 10**100, 1),
            {2: 3},
        ],
    )
    s.ok(M, "sizes=[2, 3, 2] (list)", lambda: MLP([2, 3, 2]), lambda r: r.sizes == (2, 3, 2))
    s.ok(M, "sizes=np.array", lambda: MLP(np.array([2, 3, 2])), lambda r: r.n_params == 17)
    s.either(M, "sizes=(2.0, 3, 2)", lambda: MLP((2.0, 3, 2)), "sizes")
    s.bad(M, "sizes=5 (one int)", lambda: MLP(5), "sizes")
    s.sweep(M, "activation", lambda v: MLP((2, 3, 2), v), (*CHOICE_BAD, "TANH"))
    s.either(M, "activation=relu", lambda: MLP((2, 3, 2), "relu"), "relu")
    s.sweep(M, "init", lambda v: MLP((2, 3, 2), init=v), ("bogus", None, 0))
    s.sweep(
        M,
        "input_shift",
        lambda v: MLP((2, 3, 2), input_shift=v),
        ([NAN, 0.0], [1.0, 2.0, 3.0], "a", [INF, 0.0], np.ones((2, 2))),
    )
    s.sweep(
        M, "input_scale", lambda v: MLP((2, 3, 2), input_scale=v), (0.0, [1.0, 0.0], [NAN, 1.0])
    )
    s.sweep(M, "output_scale", lambda v: MLP((2, 3, 2), output_scale=v), (INF, 0.0, "s", [1.0] * 3))
    s.ok(M, "input_scale=2 (scalar)", lambda: MLP((2, 3, 2), input_scale=2))
    R = "RationalChebyshev"
    s.sweep(
        R,
        "num_degree",
        lambda v: RationalChebyshev(num_degree=v),
        (*NONNEG_INT_BAD, 10**12),
        msg_field=("num_degree", "degrees"),
    )
    s.sweep(R, "den_degree", lambda v: RationalChebyshev(den_degree=v), (-3, 1.5, "7"))
    s.sweep(R, "input_scale", lambda v: RationalChebyshev(input_scale=v), POS_FLOAT_BAD)
    s.sweep(R, "input_shift", lambda v: RationalChebyshev(input_shift=v), (INF, NAN, "0"))
    s.sweep(R, "output_scale", lambda v: RationalChebyshev(output_scale=v), (0.0, NAN, None))
    s.sweep(R, "init_scale", lambda v: RationalChebyshev(init_scale=v), (-1.0, NAN, "0.1"))
    s.sweep(
        R,
        "positive_denominator",
        lambda v: RationalChebyshev(positive_denominator=v),
        (*BOOL_BAD, 1),
    )
    s.sweep(R, "fixed_theta0", lambda v: RationalChebyshev(fixed_theta0=v), (*BOOL_BAD, 1))
    s.ok(
        R,
        "eq. 19 as written",
        lambda: RationalChebyshev(fixed_theta0=False),
        lambda r: r.n_params == 16,
    )
    s.ok(R, "degrees 0, 0", lambda: RationalChebyshev(0, 0), lambda r: r.n_params == 1)
    s.ok(R, "input_scale=2 (int)", lambda: RationalChebyshev(input_scale=2))


def model_cases(s: Suite) -> None:
    from collocnode import NeuralODE, Parameter, SimulationError, simulate
    from collocnode.nn import MLP

    P = "Parameter"
    s.sweep(P, "value", Parameter, (NAN, INF, "1", None, [1.0], Opaque()))
    s.sweep(P, "fit", lambda v: Parameter(1.0, fit=v), (*BOOL_BAD, 1))
    s.sweep(
        P, "lb", lambda v: Parameter(1.0, lb=v), (NAN, "0", None, 2.0), msg_field=("lb", "bounds")
    )
    s.sweep(P, "ub", lambda v: Parameter(1.0, ub=v), (NAN, [2.0], 0.0), msg_field=("ub", "bounds"))
    s.ok(P, "value=1 (int), lb=-inf", lambda: Parameter(1, lb=-INF), lambda r: r.value == 1.0)

    H = "HybridModel"
    s.sweep(H, "n_states", lambda v: hybrid(n_states=v), (*POS_INT_BAD, 10**30))
    s.sweep(
        H,
        "blocks",
        lambda v: hybrid(blocks=v),
        ([net()], {1: net()}, {"f": 5}, {"f": None}, None, "f"),
    )
    s.sweep(H, "rhs", lambda v: hybrid(rhs=v), (None, 5, "x"))
    s.bad(H, "outputs without n_outputs", lambda: hybrid(outputs=lambda *a: a[0]), "outputs")
    s.bad(H, "n_outputs without outputs", lambda: hybrid(n_outputs=1), "outputs")
    s.sweep(H, "n_inputs", lambda v: hybrid(n_inputs=v), (-1, 1.5, None))
    s.sweep(
        H, "parameters", lambda v: hybrid(parameters=v), ({"k": 1.0}, [Parameter(1.0)], {"k": None})
    )
    s.sweep(H, "state_names", lambda v: hybrid(state_names=v), ("xy", ["x"], [1, 2]))

    def rhs_returning(value: Any) -> Callable[..., Any]:
        return lambda x, u, t, nets, params: value

    def simulate_rhs(value: Any) -> Any:
        model = hybrid(rhs=rhs_returning(value))
        return simulate(model, p0(model), [0.0, 0.1], [1.0, 0.0])

    s.sweep(
        "HybridModel rhs (simulate)",
        "rhs returns",
        simulate_rhs,
        (None, [1.0], [1.0, 2.0, 3.0], "xdot", [[1.0, 2.0], [3.0, 4.0]], Opaque()),
        msg_field="rhs",
    )

    def nan_rhs() -> Any:
        import casadi as ca

        model = hybrid(rhs=lambda x, u, t, nets, params: ca.sqrt(x - 10.0))
        return simulate(model, p0(model), [0.0, 0.1], [1.0, 0.0], max_steps=1000)

    s.bad(
        "HybridModel rhs (simulate)",
        "rhs gives NaN (sqrt of a negative)",
        nan_rhs,
        ("nan", "non-finite", "finite"),
        clear_types=(ValueError, SimulationError),
    )

    def unknown_block() -> Any:
        model = hybrid(rhs=lambda x, u, t, nets, params: nets["g"](x))
        return simulate(model, p0(model), [0.0, 0.1], [1.0, 0.0])

    s.bad(
        "HybridModel rhs (simulate)",
        "rhs calls an unknown block",
        unknown_block,
        ("g",),
        clear_types=(ValueError, TypeError, KeyError),  # blocks is a Mapping: KeyError is its API
    )

    def block_wrong_input() -> Any:
        model = hybrid(rhs=lambda x, u, t, nets, params: nets["f"](x[0]))
        return simulate(model, p0(model), [0.0, 0.1], [1.0, 0.0])

    s.bad(
        "HybridModel rhs (simulate)", "block fed 1 of 2 inputs", block_wrong_input, ("f", "input")
    )

    N = "NeuralODE"
    s.sweep(
        N,
        "blocks",
        NeuralODE,
        ([], {}, None, 5, [net(), "x"], [MLP((3, 3, 2))], "f"),
        msg_field=("blocks", "block"),
    )
    s.sweep(N, "n_inputs", lambda v: NeuralODE(net(), n_inputs=v), (-1, 2.5, "1", True))
    s.bad(N, "n_inputs=1 for a 2-input net", lambda: NeuralODE(net(), n_inputs=1), "block")
    s.sweep(N, "time_input", lambda v: NeuralODE(net(), time_input=v), ("yes", 1, None))
    s.sweep(N, "second_order", lambda v: NeuralODE(net(), second_order=v), ("no", 0))
    s.sweep(N, "state_names", lambda v: NeuralODE(net(), state_names=v), ("xy", ["x"], [1, 2]))
    s.ok(N, "one network per state", lambda: NeuralODE([MLP((2, 3, 1)), MLP((2, 3, 1))]))
    s.ok(N, "second_order 2-1 net", lambda: NeuralODE(MLP((2, 3, 1)), second_order=True))
    s.ok(N, "time_input", lambda: NeuralODE(MLP((3, 3, 2)), time_input=True))


def training_cases(s: Suite) -> None:
    from collocnode import BlockConstraint, TrainingProblem, solve
    from collocnode.nn import MLP

    T = "TrainingProblem"
    s.sweep(T, "model", lambda v: TrainingProblem(v, traj()), (None, net(), "vdp", Opaque()))
    s.sweep(
        T,
        "data",
        lambda v: TrainingProblem(node(), v),
        (None, [], [traj(), "x"], traj(nx=3), (traj(),) * 0, "data", np.ones((5, 2))),
    )
    s.either(T, "data with one sample", lambda: training_problem(data=traj(n=1)), ("data", "t"))
    s.sweep(
        T,
        "fit",
        lambda v: training_problem(fit=v),
        ("bogus", [], 5, "outputs", ["x0", "zz"], [None], "x9"),
    )
    s.sweep(T, "scale", lambda v: training_problem(scale=v), ("bogus", [1.0, 0.0], [1.0], [NAN, 1]))
    s.sweep(T, "regularization", lambda v: training_problem(regularization=v), NONNEG_FLOAT_BAD)
    s.sweep(
        T,
        "initial_state",
        lambda v: training_problem(initial_state=v),
        ([1.0], [NAN, 0.0], "bogus", 5.0, ["a", "b"]),
    )
    s.either(
        T,
        "initial_state=[[1, 2]] (1x2)",
        lambda: training_problem(initial_state=[[1.0, 2.0]]),
        "initial_state",
    )
    s.ok(T, "initial_state='data'", lambda: training_problem(initial_state="data"))
    s.sweep(
        T,
        "block_constraints",
        lambda v: training_problem(block_constraints=v),
        (5, [5], "f", [BlockConstraint("nope", at=0.0)]),
        msg_field=("block_constraints", "block constraint"),
    )
    # each BlockConstraint is built inside its case: a bad one is refused when built
    for name, args, kw in (
        ("BlockConstraint('f', at=[0.0])", ("f",), {"at": [0.0]}),
        ("BlockConstraint('f', at=[nan, 0.0])", ("f",), {"at": [NAN, 0.0]}),
        (
            "BlockConstraint('f', at=[0.0, 0.0], lb=1.0, ub=0.0)",
            ("f",),
            {"at": [0.0, 0.0], "lb": 1.0, "ub": 0.0},
        ),
        (
            "BlockConstraint('f', at=[0.0, 0.0], lb=[nan, 0.0])",
            ("f",),
            {"at": [0.0, 0.0], "lb": [NAN, 0.0]},
        ),
        ("BlockConstraint('f', at='origin')", ("f",), {"at": "origin"}),
        ("BlockConstraint(5, at=[0.0, 0.0])", (5,), {"at": [0.0, 0.0]}),
    ):
        s.bad(
            T,
            f"BlockConstraint={name}",
            functools.partial(
                lambda a, k: training_problem(block_constraints=[BlockConstraint(*a, **k)]),
                args,
                kw,
            ),
            ("block_constraints", "BlockConstraint", "block"),
        )
    s.bad(T, "BlockConstraint(5, ...) alone", lambda: BlockConstraint(5, at=None), "block")
    s.sweep(
        T,
        "tspan",
        lambda v: training_problem(tspan=v),
        ((1.0, 0.0), (0.0, 5.0), (NAN, 1.0), "ab", 5, (0.0,), (0.5, 0.5), (0.0, INF)),
    )
    s.ok(T, "tspan inside the data", lambda: training_problem(tspan=(0.2, 0.8)))
    s.sweep(T, "interpolation", lambda v: training_problem(interpolation=v), ("quadratic", None))
    s.sweep(
        T,
        "inputs",
        lambda v: training_problem(inputs=v),
        (5, "u", [1.0, 2.0], named("one input column", lambda t: np.ones((np.size(t), 1)))),
    )
    s.sweep(
        T,
        "state_guess",
        lambda v: training_problem(state_guess=v),
        (5, "bogus", np.ones((3, 3)), None, [NAN, 0.0], ["constant", "data"]),
    )
    s.sweep(
        T,
        "params_guess",
        lambda v: training_problem(params_guess=v),
        (np.zeros(3), np.full(17, NAN), "p", np.zeros((17, 1))),
    )
    s.sweep(
        T,
        "x_nominal",
        lambda v: training_problem(x_nominal=v),
        ([0.0, 1.0], [-1.0, 1.0], "bogus", [1.0], [INF, 1.0]),
    )
    s.sweep(T, "loss", lambda v: training_problem(loss=v), ("bogus", None, "NODES"))
    s.sweep(
        T,
        "mask",
        lambda v: training_problem(mask=v),
        (np.ones((3, 3), bool), np.full((11, 2), NAN), np.full((11, 2), "y"), np.zeros((11, 2))),
    )
    s.ok(
        T,
        "one-state model, one column",
        lambda: solve(training_problem(model=node(1), data=traj(nx=1)), tiny_alg(), seed=0),
        lambda r: np.all(np.isfinite(r.p)),
    )
    s.ok(
        T,
        "fit=['x0'] of two states",
        lambda: solve(training_problem(fit=["x0"]), tiny_alg(), seed=0),
        lambda r: np.all(np.isfinite(r.p)),
    )
    s.either(
        "solve",
        "relu network (not C²)",
        lambda: solve(training_problem(model=node_from(MLP((2, 3, 2), "relu"))), tiny_alg()),
        ("relu", "C2", "C²", "smooth"),
    )


def node_from(block: Any) -> Any:
    from collocnode import NeuralODE

    return NeuralODE(block)


def transcription_cases(s: Suite) -> None:
    from collocnode import (
        AdaptiveRefinement,
        Constraint,
        Inputs,
        IpoptOptions,
        Mesh,
        OrderingTrial,
        PartialQuasiNewton,
        RadauIIA,
        solve,
    )

    D = "DynamicOptimizationProblem"
    s.sweep(D, "dynamics", lambda v: dop(dynamics=v), (None, 5, "x' = -x"))
    s.sweep(D, "n_states", lambda v: dop(n_states=v), POS_INT_BAD)
    s.sweep(D, "n_params", lambda v: dop(n_params=v), NONNEG_INT_BAD)
    s.sweep(
        D,
        "tspan",
        lambda v: dop(tspan=v),
        ((1.0, 0.0), (0.0, NAN), None, "ab", 5, (0.0,), (0.0, INF), (-1e308, 1e308), (0.0, 0.0)),
    )
    s.sweep(D, "lagrange", lambda v: dop(lagrange=v), (5, "L"))
    s.sweep(D, "mayer", lambda v: dop(mayer=v), (5,))
    s.sweep(D, "inputs", lambda v: dop(inputs=v), ("u", None, 5))
    s.sweep(D, "x_lb", lambda v: dop(x_lb=v), ([NAN], [2.0, 3.0], "lb", [[1.0]]))
    s.bad(D, "x_lb > x_ub", lambda: dop(x_lb=[1.0], x_ub=[0.0]), "x_lb")
    s.sweep(D, "p_ub", lambda v: dop(p_ub=v), ([NAN], [1.0, 2.0]))
    s.sweep(D, "p_guess", lambda v: dop(p_guess=v), ([NAN], [1.0, 2.0], "p"))
    s.sweep(D, "x0", lambda v: dop(x0=v), ([NAN], [1.0, 2.0], "x0", [INF]))
    s.sweep(D, "x_guess", lambda v: dop(x_guess=v), ([NAN], [1.0, 2.0]))
    s.sweep(D, "x_nominal", lambda v: dop(x_nominal=v), ([0.0], [-1.0], [NAN]))
    s.sweep(D, "path", lambda v: dop(path=v), (5, "g"))
    s.sweep(D, "segments", lambda v: dop(segments=v), ([5], "seg"))
    s.ok(D, "solve a scalar DOP", lambda: solve(dop(), tiny_alg()), lambda r: r.iterations >= 0)
    s.bad(
        "solve DOP",
        "dynamics returns 2 values for 1 state",
        lambda: solve(dop(dynamics=lambda x, p, u, t: [x[0], x[0]]), tiny_alg()),
        "dynamics",
    )
    s.bad(
        "solve DOP",
        "dynamics returns None",
        lambda: solve(dop(dynamics=lambda x, p, u, t: None), tiny_alg()),
        "dynamics",
    )
    s.bad(
        "solve DOP",
        "lagrange returns a vector",
        lambda: solve(dop(lagrange=lambda x, p, u, t: [x[0], x[0]]), tiny_alg()),
        "lagrange",
    )

    C = "Constraint"
    s.bad(C, "Constraint(fn=5, n=-1) direct", lambda: Constraint(5, -1, [0.0], [0.0]), ("fn", "n"))
    s.sweep(
        "Constraint.make",
        "n",
        lambda v: Constraint.make("path", lambda x, p, u, t: x, v),
        (0, -1, 2.5),
        msg_field="path.n",
    )
    s.bad(
        "Constraint.make",
        "lb > ub",
        lambda: Constraint.make("path", lambda x, p, u, t: x, 1, lb=1.0, ub=0.0),
        ("path", "lb"),
    )
    s.bad(
        "Constraint.make",
        "lb=nan",
        lambda: Constraint.make("path", lambda x, p, u, t: x, 1, lb=NAN),
        ("path", "lb"),
    )
    s.bad("Constraint.make", "fn=5", lambda: Constraint.make("path", 5, 1), "path")
    s.bad(
        "solve DOP",
        "path constraint of wrong size",
        lambda: solve(
            dop(path=Constraint.make("path", lambda x, p, u, t: [x[0], x[0]], 1)), tiny_alg()
        ),
        "path",
    )

    I = "Inputs"
    s.bad(I, "Inputs(n=-1) direct", lambda: Inputs(n=-1), "n")
    s.bad(I, "Inputs(n='2') direct", lambda: Inputs(n="2"), "n")
    s.bad(I, "Inputs(n=1) with neither fn nor samples", lambda: Inputs(n=1)(np.zeros(3)), "n")
    s.sweep(
        "Inputs.from_samples",
        "t",
        lambda v: Inputs.from_samples(v, np.ones((4, 1))),
        ([3.0, 2.0, 1.0, 0.0], [0.0, NAN, 1.0, 2.0], "t"),
        msg_field="inputs.t",
    )
    s.bad(
        "Inputs.from_samples",
        "values of 3 rows for 4 times",
        lambda: Inputs.from_samples(np.arange(4.0), np.ones((3, 1))),
        "inputs.values",
    )
    s.bad(
        "Inputs.from_samples",
        "kind=bogus",
        lambda: Inputs.from_samples(np.arange(4.0), np.ones((4, 1)), kind="bogus"),
        "inputs.kind",
    )
    s.bad("Inputs.from_function", "fn=5", lambda: Inputs.from_function(5, 1), "inputs")
    s.bad(
        "Inputs.from_function",
        "n=0",
        lambda: Inputs.from_function(lambda t: t, 0),
        "n_inputs",
    )
    s.bad(
        "Inputs.__call__",
        "fn returns NaN",
        lambda: Inputs.from_function(lambda t: np.full(np.size(t), NAN), 1)(np.zeros(3)),
        "inputs",
    )
    s.bad(
        "Inputs.__call__",
        "fn returns the wrong shape",
        lambda: Inputs.from_function(lambda t: np.ones((np.size(t), 3)), 1)(np.zeros(3)),
        "inputs",
    )

    Me = "Mesh"
    s.sweep(
        Me,
        "grid",
        lambda v: Mesh(v, [3] * max(np.size(v) - 1, 1)),
        ([0.0], [1.0, 0.0], [0.0, NAN], [0.0, INF], ["0", "1"], [], [-1e308, 1e308]),
    )
    s.sweep(
        Me,
        "stages",
        lambda v: Mesh([0.0, 0.5, 1.0], v),
        ([0, 3], [201, 3], [2.5, 3], ["3", "3"], [3], [3, 3, 3], [-1, 3], [True, 3]),
    )
    s.sweep("Mesh.equidistant", "intervals", lambda v: Mesh.equidistant(0, 1, v, 3), (0, -2, 2.5))
    s.bad("Mesh.equidistant", "t0 > tf", lambda: Mesh.equidistant(1.0, 0.0, 3, 3), ("grid", "t0"))
    s.bad("Mesh.equidistant", "tf=inf", lambda: Mesh.equidistant(0.0, INF, 3, 3), ("tf", "grid"))
    s.sweep("Mesh.spectral", "nodes", lambda v: Mesh.spectral(0.0, 1.0, v), (0, 1000, 2.5))

    R = "RadauIIA"
    s.sweep(R, "intervals", lambda v: RadauIIA(intervals=v), POS_INT_BAD)
    s.sweep(R, "stages", lambda v: RadauIIA(stages=v), (*POS_INT_BAD, 201, 10**6))
    s.sweep(R, "jit", lambda v: RadauIIA(jit=v), (*BOOL_BAD, 1, 0))
    s.sweep(R, "threads", lambda v: RadauIIA(threads=v), (0, -1, 2.5, "4", True))
    s.sweep(R, "mesh", lambda v: RadauIIA(mesh=v), ("m", 5, [0.0, 1.0]))
    s.sweep(R, "ipopt", lambda v: RadauIIA(ipopt=v), ({"tol": 1e-6}, None, "ipopt"))
    s.sweep(R, "hessian", lambda v: RadauIIA(hessian=v), ("bogus", None, 5, "EXACT"))
    s.either(R, "hessian='sr1' (a CLI name)", lambda: RadauIIA(hessian="sr1"), "hessian")
    s.ok(R, "intervals=np.int64(5)", lambda: RadauIIA(np.int64(5)))
    s.sweep("RadauIIA.spectral", "nodes", RadauIIA.spectral, (0, 1000, -1))
    s.bad(
        "solve",
        "RadauIIA(10**12 intervals)",
        lambda: solve(training_problem(), RadauIIA(10**12, 2, ipopt=quiet())),
        ("intervals", "nodes", "mesh", "memory"),
    )
    s.bad(
        "solve",
        "RadauIIA(10**7 intervals, 5 stages)",
        lambda: solve(training_problem(), RadauIIA(10**7, 5, ipopt=quiet())),
        ("intervals", "nodes", "mesh", "memory"),
        timeout=60,
    )
    s.bad(
        "solve",
        "mesh that does not span the data",
        lambda: solve(training_problem(), tiny_alg(mesh=Mesh.equidistant(0.0, 2.0, 4, 2))),
        "mesh",
    )

    O = "IpoptOptions"
    s.sweep(O, "tol", lambda v: IpoptOptions(tol=v), POS_FLOAT_BAD)
    s.sweep(O, "max_iter", lambda v: IpoptOptions(max_iter=v), POS_INT_BAD)
    s.sweep(O, "mu_strategy", lambda v: IpoptOptions(mu_strategy=v), CHOICE_BAD)
    s.sweep(O, "linear_solver", lambda v: IpoptOptions(linear_solver=v), ("ma57", "bogus", 5, None))
    s.sweep(O, "mumps_ordering", lambda v: IpoptOptions(mumps_ordering=v), CHOICE_BAD)
    T = "OrderingTrial"
    s.sweep(
        T,
        "orderings",
        lambda v: OrderingTrial(orderings=v),
        (("metis",), ("metis", "metis"), ("metis", "nd"), "metis", None, ()),
    )
    s.sweep(T, "iterations", lambda v: OrderingTrial(iterations=v), POS_INT_BAD)
    s.ok(T, "three orderings", lambda: OrderingTrial(("auto", "metis", "amd"), 1))
    s.sweep(O, "mumps_scaling", lambda v: IpoptOptions(mumps_scaling=v), (*BOOL_BAD, 1, 0))
    s.sweep(O, "print_level", lambda v: IpoptOptions(print_level=v), (-1, 13, 2.5, "5", True))
    s.sweep(O, "max_wall_time", lambda v: IpoptOptions(max_wall_time=v), (0.0, -1.0, NAN, "10"))
    s.either(O, "max_wall_time=inf", lambda: IpoptOptions(max_wall_time=INF), "max_wall_time")
    s.sweep(O, "backend", lambda v: IpoptOptions(backend=v), ("ipopt", None, "CasADi"))
    s.sweep(
        O,
        "extra",
        lambda v: IpoptOptions(extra=v),
        (
            {"bogus_option": 1},
            {"tol": "x"},
            {"max_iter": -5},
            {"linear_solver": "ma27"},
            "x",
            {"print_level": 99},
            {"hessian_approximation": "bogus"},
            {5: 1},
            {"tol": NAN},
            {"max_iter": 2.5},
        ),
        msg_field=("extra", "tol", "max_iter", "linear_solver", "print_level", "hessian", "5"),
    )
    s.sweep(
        O,
        "extra (cyipopt)",
        lambda v: IpoptOptions(backend="cyipopt", extra=v),
        ({"bogus_option": 1}, {"tol": -1.0}),
        msg_field="extra",
    )
    s.ok(O, "extra acceptable_tol", lambda: IpoptOptions(extra={"acceptable_tol": 1e-4}))
    s.ok(O, "tol=1 (int)", lambda: IpoptOptions(tol=1), lambda r: r.tol == 1)
    s.ok(
        "solve",
        "cyipopt backend, 2 iterations",
        lambda: solve(training_problem(), tiny_alg(ipopt=quiet(backend="cyipopt", max_iter=2))),
        lambda r: r.iterations <= 2 and not r.status.ok,
    )
    s.ok(
        "solve",
        "max_iter=2 is not reported as success",
        lambda: solve(training_problem(), tiny_alg(ipopt=quiet(max_iter=2)), seed=1),
        lambda r: r.iterations <= 2 and not r.status.ok,
    )

    Q = "PartialQuasiNewton"
    s.sweep(Q, "update", lambda v: PartialQuasiNewton(update=v), ("dfp", None, "SR1"))
    s.sweep(Q, "blocks", lambda v: PartialQuasiNewton(blocks=v), ("xx", 5))
    s.sweep(Q, "initial_scale", lambda v: PartialQuasiNewton(initial_scale=v), (0.0, -1.0, NAN))
    s.sweep(Q, "skip_tol", lambda v: PartialQuasiNewton(skip_tol=v), (0.0, NAN, "1e-8"))
    s.ok(
        "solve",
        "PartialQuasiNewton bfgs, 3 iterations",
        lambda: solve(training_problem(), tiny_alg(hessian=PartialQuasiNewton("bfgs"))),
        lambda r: np.all(np.isfinite(r.p)),
    )

    A = "AdaptiveRefinement"
    s.sweep(A, "alg", lambda v: AdaptiveRefinement(alg=v), ("radau", None, IpoptOptions()))
    s.sweep(A, "tol", lambda v: AdaptiveRefinement(tol=v), (0.0, -1.0, NAN, INF))
    s.sweep(A, "max_rounds", lambda v: AdaptiveRefinement(max_rounds=v), (-1, 2.5, None))
    s.sweep(A, "coarse", lambda v: AdaptiveRefinement(coarse=v), (0, -3, "5", 2.5))
    s.sweep(A, "rule", lambda v: AdaptiveRefinement(rule=v), ("h", None))
    s.ok(
        "solve",
        "AdaptiveRefinement max_rounds=1",
        lambda: solve(dop(), AdaptiveRefinement(tiny_alg(), max_rounds=1, coarse=3)),
        lambda r: len(r.record(AdaptiveRefinement).rounds) >= 1,
    )
    s.bad(
        "solve",
        "AdaptiveRefinement coarse mesh not spanning",
        lambda: solve(dop(), AdaptiveRefinement(tiny_alg(), coarse=Mesh.equidistant(0, 3, 3, 2))),
        "mesh",
    )


def solve_cases(s: Suite) -> None:
    from collocnode import IpoptOptions, solve

    S = "solve"
    s.sweep(S, "problem", lambda v: solve(v, tiny_alg()), (None, "vdp", node(), Opaque()))
    s.sweep(
        S,
        "alg",
        lambda v: solve(training_problem(), v),
        ("radau", 5, IpoptOptions(), {"intervals": 4}),
    )
    s.sweep(
        S,
        "seed",
        lambda v: solve(training_problem(), tiny_alg(), seed=v),
        (-1, 1.5, True, "0", NAN, [0]),
    )
    s.ok(S, "seed=np.int64(3)", lambda: solve(training_problem(), tiny_alg(), seed=np.int64(3)))
    s.either(S, "seed=2**70", lambda: solve(training_problem(), tiny_alg(), seed=2**70), "seed")


def simulate_cases(s: Suite) -> None:
    from collocnode import HybridModel, SimulationError, simulate

    def sim(**kw: Any) -> Any:
        model = kw.pop("model", None) or node()
        args = {"p": p0(model), "t": np.linspace(0.0, 1.0, 5), "x0": [1.0, 0.0], **kw}
        return simulate(model, **args)

    S = "simulate"
    s.sweep(
        S,
        "t",
        lambda v: sim(t=v),
        ([], [1.0, 0.0], [0.0, NAN], 5.0, [[0.0, 1.0]], ["0", "1"], [0.0, 0.0], [-1e308, 1e308]),
    )
    s.ok(S, "t=[0.0] (one time)", lambda: sim(t=[0.0]), lambda r: r.x.shape == (1, 2))
    s.either(
        S,
        "t=[0, 1e300]",
        lambda: sim(t=[0.0, 1e300]),
        ("max_steps", "steps", "t"),
        clear_types=(ValueError, TypeError, SimulationError),
        timeout=60,
    )
    s.either(
        S,
        "t=[0, 1e300], rk4",
        lambda: sim(t=[0.0, 1e300], method="rk4"),
        ("max_steps", "steps", "t", "bound", "step"),
        clear_types=(ValueError, TypeError, SimulationError),
        timeout=60,
    )
    s.sweep(S, "x0", lambda v: sim(x0=v), ([1.0], [NAN, 0.0], None, ["a", "b"], [INF, 0.0]))
    s.sweep(S, "p", lambda v: sim(p=v), (np.zeros(3), np.full(17, NAN), None, "p"))
    s.sweep(S, "model", lambda v: simulate(v, [0.0], [0.0, 1.0], [1.0]), (None, net(), "vdp"))
    s.sweep(S, "inputs", lambda v: sim(inputs=v), (5, "u"))

    def input_model() -> Any:
        from collocnode import NeuralODE
        from collocnode.nn import MLP

        return NeuralODE(MLP((3, 3, 2)), n_inputs=1)

    s.bad(S, "inputs missing for an input model", lambda: sim(model=input_model()), "inputs")
    s.sweep(
        S,
        "inputs returns",
        lambda v: sim(model=input_model(), inputs=v),
        (
            named("3 columns for 1 input", lambda t: np.ones((np.size(t), 3))),
            named("NaN", lambda t: np.full(np.size(t), NAN)),
            named("None", lambda t: None),
            named("a string", lambda t: "u"),
        ),
        msg_field="inputs",
    )
    s.sweep(S, "method", lambda v: sim(method=v), ("bogus", None, "dop853", 5))
    for method in ("rk4", "RK45", "Radau", "LSODA"):
        s.ok(S, f"method={method}", functools.partial(sim, method=method))
    s.sweep(S, "rtol", lambda v: sim(rtol=v), POS_FLOAT_BAD)
    s.sweep(S, "atol", lambda v: sim(atol=v), (-1.0, NAN, [1e-8] * 3, "x", None))
    s.ok(S, "atol per state", lambda: sim(atol=[1e-8, 1e-9]))
    s.sweep(S, "max_step", lambda v: sim(max_step=v), (0.0, -1.0, NAN, "1", None))
    s.sweep(S, "bound", lambda v: sim(bound=v), POS_FLOAT_BAD)
    s.sweep(S, "substeps", lambda v: sim(substeps=v, method="rk4"), (0, 2.5, -1))
    s.sweep(S, "max_steps", lambda v: sim(max_steps=v), (0, -1, True, 2.5, "100"))
    s.either(
        S,
        "max_steps=1",
        lambda: sim(max_steps=1, t=np.linspace(0, 50, 3)),
        "max_steps",
        clear_types=(ValueError, TypeError, SimulationError),
    )

    def blow_up() -> Any:
        model = HybridModel(
            n_states=1, blocks={"f": net(1, 1)}, rhs=lambda x, u, t, nets, params: x**2
        )
        return simulate(model, p0(model), [0.0, 2.0], [1.0])

    s.bad(
        S,
        "x' = x² blows up at t = 1",
        blow_up,
        ("bound", "blow", "non-finite", "step", "left ±"),
        clear_types=(SimulationError, ValueError),
    )

    TS = "TrainingSolution.simulate"
    need = ("trained",)
    s.sweep(
        TS,
        "t",
        lambda v: trained().simulate(v),
        (5.0, [], [1.0, 0.5], [0.0, NAN], "t", None),
        needs=need,
    )
    s.ok(
        TS, "t=[0.0]", lambda: trained().simulate([0.0]), lambda r: r.x.shape == (1, 2), needs=need
    )
    s.ok(TS, "t beyond the horizon", lambda: trained().simulate([0.0, 2.0]), needs=need)
    s.sweep(
        TS, "x0", lambda v: trained().simulate([0.0, 0.5], x0=v), ([1.0], [NAN, 0.0]), needs=need
    )
    s.sweep(
        TS, "segment", lambda v: trained().simulate([0.0, 0.5], segment=v), (1, -1, "0"), needs=need
    )
    s.bad(
        TS,
        "unknown keyword bogus=1",
        lambda: trained().simulate([0.0, 0.5], bogus=1),
        "bogus",
        needs=need,
    )
    s.bad(
        TS, "method=bogus", lambda: trained().simulate([0.0, 0.5], method="x"), "method", needs=need
    )
    C = "TrainingSolution.__call__"
    s.sweep(C, "t", lambda v: trained()(v), (NAN, "a", None, [0.0, INF]), needs=need)
    s.either(C, "t=1e300 (outside)", lambda: trained()(1e300), "t", needs=need)
    s.ok(C, "t=0.5", lambda: trained()(0.5), lambda r: np.all(np.isfinite(r)), needs=need)
    s.bad(
        "TrainingSolution",
        "attribute typo",
        lambda: trained().statuss,
        "statuss",
        needs=need,
        clear_types=(AttributeError,),
    )


def problems_cases(s: Suite) -> None:
    from collocnode import SimulationError, problems

    G = "problems.get"
    s.sweep(
        G,
        "name",
        problems.get,
        ("nope", "", None, 5, "VDP", "vdp ", "vdp✓", "../vdp", ["vdp"]),
        msg_field=("name", "problem"),
    )
    s.sweep(G, "preset", lambda v: problems.get("vdp", preset=v), ("bogus", 5, ""))
    s.sweep(
        G,
        "override mu",
        lambda v: problems.get("vdp", mu=v),
        (NAN, "1", INF, [1.0, 2.0], None, True),
        msg_field="mu",
    )
    s.bad(G, "unknown override bogus=1", lambda: problems.get("vdp", bogus=1.0), "bogus")
    s.either(G, "mu=-1", lambda: problems.get("vdp", mu=-1.0), "mu")
    s.ok(G, "mu=2 (int)", lambda: problems.get("vdp", mu=2), lambda r: r.params["mu"] == 2.0)
    s.ok(G, "qvm preset efmi2025", lambda: problems.get("qvm", preset="efmi2025"))
    s.bad(G, "smsd negative mass m=-1", lambda: problems.get("smsd", m=-1.0), "m")
    s.bad(G, "pendulum L=0", lambda: problems.get("pendulum", L=0.0), "L")
    s.bad(G, "qvm bogus road preset", lambda: problems.get("qvm", preset="road"), "preset")

    Gen = "System.generate"

    def gen(**kw: Any) -> Any:
        return problems.get("vdp").generate(**kw)

    s.sweep(Gen, "noise", lambda v: gen(noise=v), NONNEG_FLOAT_BAD)
    s.sweep(Gen, "n_steps", lambda v: gen(n_steps=v), (0, -1, 2.5, 10**12, "100"))
    s.sweep(Gen, "n_train", lambda v: gen(n_train=v, n_steps=11), (0, 12, -1))
    s.sweep(Gen, "dt", lambda v: gen(dt=v), (0.0, -0.1, NAN, INF))
    s.either(Gen, "dt=1e-300", lambda: gen(dt=1e-300), "dt")
    s.sweep(Gen, "seed", lambda v: gen(noise=0.1, seed=v), (-1, 1.5, "0"))
    s.sweep(
        Gen,
        "x0",
        lambda v: gen(x0=v, n_steps=11, n_train=6),
        ([1.0], [NAN, 0.0], "x0", [1e300, 1e300]),
        clear_types=(ValueError, TypeError, SimulationError),
    )
    s.ok(Gen, "n_steps=11", lambda: gen(n_steps=11, n_train=6), lambda r: r.train.n_samples == 6)
    Sim = "System.simulate"
    s.sweep(
        Sim,
        "t",
        lambda v: problems.get("vdp").simulate(v),
        ([], [1.0, 0.0], [0.0, NAN], [0.0, 1e300]),
        clear_types=(ValueError, TypeError, RuntimeError),
        timeout=120,  # [0, 1e300] spends the ground truth's whole step budget (about 40 s)
    )


def serialize_cases(s: Suite) -> None:
    from collocnode.serialize import load_model, save_model

    def in_tmp(fn: Callable[[Path], Any]) -> Callable[[], Any]:
        def run() -> Any:
            with tempfile.TemporaryDirectory() as tmp:
                return fn(Path(tmp))

        return run

    def save(path: Path, **kw: Any) -> Any:
        model = node()
        return save_model(path, **{"model": model, "p": p0(model), **kw})

    S = "save_model"
    s.bad(S, "path is a directory", in_tmp(lambda d: save(d)), "path")
    s.either(S, "parent does not exist", in_tmp(lambda d: save(d / "no" / "m.json")), "path")
    # a file that cannot be opened is an OSError naming it, as from open()
    file_errors = (ValueError, TypeError, OSError)
    s.bad(
        S,
        "path under /proc",
        lambda: save(Path("/proc/m.json")),
        ("path", "m.json"),
        clear_types=file_errors,
    )
    s.sweep(S, "model", lambda v: in_tmp(lambda d: save(d / "m.json", model=v))(), (5, None, net()))
    s.sweep(
        S,
        "p",
        lambda v: in_tmp(lambda d: save(d / "m.json", p=v))(),
        (np.zeros(3), np.full(17, NAN), "p", np.full(17, INF)),
    )
    s.sweep(
        S,
        "metadata",
        lambda v: in_tmp(lambda d: save(d / "m.json", metadata=v))(),
        ({"x": Opaque()}, "meta", {1: 2}),
    )
    s.either(
        S,
        "metadata={'x': nan}",
        in_tmp(lambda d: load_model(save(d / "m.json", metadata={"x": NAN}))),
        "metadata",
        sane=lambda r: math.isnan(r.metadata["x"]),
    )
    s.ok(
        S,
        "unicode file name and metadata",
        in_tmp(lambda d: save(d / "modèle✓.json", metadata={"note": "θ ω ✓"})),
    )

    def write_then_load(text: str | bytes, **kw: Any) -> Callable[[], Any]:
        def run(d: Path) -> Any:
            path = d / "m.json"
            path.write_bytes(text if isinstance(text, bytes) else text.encode())
            return load_model(path, **kw)

        return in_tmp(run)

    L = "load_model"
    s.bad(
        L,
        "missing file",
        in_tmp(lambda d: load_model(d / "none.json")),
        ("none.json", "path"),
        clear_types=file_errors,
    )
    s.bad(
        L,
        "a directory",
        in_tmp(lambda d: load_model(d)),
        ("path", "directory"),
        clear_types=file_errors,
    )
    s.bad(L, "empty file", write_then_load(""), "m.json")
    s.bad(L, "not JSON", write_then_load("{not json"), "m.json")
    s.bad(L, "JSON list", write_then_load("[1, 2]"), "m.json")
    s.bad(L, "binary junk", write_then_load(b"\x00\xff\xfe" * 100), "m.json")
    s.bad(L, "NaN literal", write_then_load('{"format": NaN}'), "m.json")
    s.sweep(
        L,
        "max_bytes",
        lambda v: write_then_load("{}", max_bytes=v)(),
        (0, -1, "x", NAN),
        msg_field=("max_bytes", "m.json"),
    )
    s.bad(L, "removed keyword trusted=True", write_then_load("{}", trusted=True), "trusted")
    s.bad(L, "builders not a mapping", write_then_load("{}", builders=5), "builders")

    def roundtrip(d: Path) -> Any:
        save(d / "m.json")
        return load_model(d / "m.json")

    s.ok(L, "round trip", in_tmp(roundtrip), lambda r: r.model.n_states == 2)


def recipe_cases(s: Suite) -> None:
    from collocnode import problems
    from collocnode.recipes import CollocationSettings, SystemRecipe, for_problem, widths
    from collocnode.recipes.qvm import QVMRecipe

    R = "SystemRecipe"
    s.sweep(R, "hidden", lambda v: SystemRecipe(hidden=v), (0, -1, "16", [16, 0], 2.5, None))
    s.either(R, "hidden=() (no hidden layer)", lambda: SystemRecipe(hidden=()), "hidden")
    s.sweep(R, "activation", lambda v: SystemRecipe(activation=v), ("relu", "bogus", None))
    s.sweep(R, "init", lambda v: SystemRecipe(init=v), ("bogus",))
    for flag in ("normalize", "per_state_nets", "warm_start"):
        s.sweep(R, flag, lambda v, f=flag: SystemRecipe(**{f: v}), ("yes", 1, None))
    s.sweep(R, "initial_state", lambda v: SystemRecipe(initial_state=v), ("bogus", 5))
    s.sweep(R, "state_guess", lambda v: SystemRecipe(state_guess=v), ("bogus", None))
    s.sweep(R, "collocation", lambda v: SystemRecipe(collocation=v), ({}, None, "c"))

    C = "CollocationSettings"
    s.sweep(C, "intervals", lambda v: CollocationSettings(intervals=v), (0, -1, 2.5, "5"))
    s.sweep(C, "stages", lambda v: CollocationSettings(stages=v), (0, 500, None))
    s.sweep(C, "spectral", lambda v: CollocationSettings(spectral=v), (-1, 1000, 2.5))
    s.sweep(C, "regularization", lambda v: CollocationSettings(regularization=v), (-1.0, NAN, INF))
    s.sweep(C, "tol", lambda v: CollocationSettings(tol=v), (0.0, NAN))
    s.sweep(C, "max_iter", lambda v: CollocationSettings(max_iter=v), (0, -1))
    s.sweep(C, "jit", lambda v: CollocationSettings(jit=v), ("yes",))
    s.sweep(C, "hessian", lambda v: CollocationSettings(hessian=v), ("bogus",))
    s.sweep(C, "backend", lambda v: CollocationSettings(backend=v), ("bogus",))
    s.sweep(C, "mumps_ordering", lambda v: CollocationSettings(mumps_ordering=v), ("x",))
    s.sweep(C, "print_level", lambda v: CollocationSettings(print_level=v), (99,))
    s.sweep(C, "max_wall_time", lambda v: CollocationSettings(max_wall_time=v), (0.0, NAN))

    Q = "QVMRecipe"
    s.sweep(Q, "strategy", lambda v: QVMRecipe(strategy=v), ("IV", "ii", None))
    s.sweep(Q, "pretrain_fraction", lambda v: QVMRecipe(pretrain_fraction=v), (0.0, 1.0, 1.5, NAN))
    s.sweep(Q, "hidden", lambda v: QVMRecipe(hidden=v), (0, "5"))
    s.sweep(Q, "rational_degree", lambda v: QVMRecipe(rational_degree=v), (-1, 2.5))
    s.sweep(Q, "rational_form", lambda v: QVMRecipe(rational_form=v), ("eq19", None))
    s.bad(
        Q,
        "collocation without intervals",
        lambda: QVMRecipe(collocation=CollocationSettings()),
        "intervals",
    )
    s.bad("recipes.for_problem", "name='nope'", lambda: for_problem("nope"), "nope")
    s.bad("recipes.for_problem", "name=None", lambda: for_problem(None), "name")
    s.sweep("recipes.widths", "hidden", lambda v: widths("hidden", v), (0, "16", [1, -1], None))

    def tiny_recipe(**kw: Any) -> Any:
        settings = CollocationSettings(intervals=4, stages=2, max_iter=2)
        return SystemRecipe(**{"hidden": 3, "collocation": settings, **kw})

    Tr = "SystemRecipe.train"
    need = ("smsd_data",)
    s.sweep(
        Tr,
        "seed",
        lambda v: tiny_recipe().train(problems.get("smsd"), smsd_data(), seed=v),
        (-1, "0", True, 1.5),
        needs=need,
    )
    s.sweep(
        Tr,
        "data",
        lambda v: tiny_recipe().train(problems.get("smsd"), v),
        (None, [], "data", traj(nx=3)),
        needs=need,
    )
    s.sweep(
        Tr,
        "max_wall_time",
        lambda v: tiny_recipe().train(problems.get("smsd"), smsd_data(), max_wall_time=v),
        (-1.0, NAN, 0.0),
        needs=need,
    )
    s.bad(
        Tr,
        "system=None",
        lambda: tiny_recipe().train(None, smsd_data()),
        "system",
        needs=need,
    )
    s.ok(
        Tr,
        "smsd, 4 intervals, 2 iterations",
        lambda: tiny_recipe().train(problems.get("smsd"), smsd_data(), seed=0),
        lambda r: r.solution.iterations <= 2,
        needs=need,
    )


def compare_cases(s: Suite) -> None:
    from collocnode.compare import make_trainer

    M = "compare.make_trainer"
    s.sweep(
        M,
        "name",
        lambda v: make_trainer(v, "smsd"),
        ("bogus", "", None, "FNODE", 5),
        msg_field=("name", "method"),
    )
    s.sweep(M, "problem", lambda v: make_trainer("fnode", v), ("nope", 5, ""))
    s.sweep(M, "quick", lambda v: make_trainer("fnode", "smsd", quick=v), ("yes", None, 2))

    def opt(method: str, name: str, values: Sequence[Any], **kw: Any) -> None:
        s.sweep(
            M,
            f"{method}.{name}",
            lambda v: make_trainer(method, "smsd", quick=True, **{name: v}),
            values,
            msg_field=name,
            **kw,
        )

    opt("fnode", "epochs", (0, -1, NAN, "10", True, 2.5))
    opt("fnode", "hidden", (0, -1, "x", [16, 0], None))
    opt("fnode", "lr", (0.0, -1.0, NAN, INF, "1e-3"))
    opt("fnode", "activation", ("bogus", None))
    opt("fnode", "device", ("bogus", "cuda:99", 5))
    opt("fnode", "dtype", ("float16", "bogus"))
    opt("fnode", "batch_size", (0, -1, 2.5))
    opt("fnode", "seed", (-1, "0"))
    opt("fnode", "optimizer", ("bogus",))
    opt("fnode", "integrator", ("bogus",))
    opt("fnode", "targets", ("bogus",))
    opt("fnode", "weight_decay", (-1.0, NAN))
    opt("fnode", "lr_decay", (-1.0, 2.0, NAN))
    opt("fnode", "grad_clip", (-1.0, NAN))
    opt("fnode", "sigma", (-1.0, NAN))
    opt("mbdnode", "substeps", (0, -1))
    opt("node", "solver", ("bogus",))
    opt("node", "rtol", (-1.0, 0.0, NAN))
    opt("snde", "gamma", (-1.0, NAN))
    opt("mnn", "horizon", (0, -1))
    opt("lstm", "window", (0, -1))
    opt("lstm", "layers", (0, -1))
    s.bad(M, "unknown option bogus=1", lambda: make_trainer("fnode", "smsd", bogus=1), "bogus")
    s.bad(
        M,
        "collocation recipe='x'",
        lambda: make_trainer("collocation", "smsd", recipe="x"),
        "recipe",
    )
    s.ok(M, "fnode quick epochs=2", lambda: make_trainer("fnode", "smsd", quick=True, epochs=2))
    s.ok(M, "node_adjoint", lambda: make_trainer("node_adjoint", "smsd", quick=True))


def flag_names(flag: str) -> tuple[str, ...]:
    """How a message may name option ``--max-iter``: as the flag or as its field ``max_iter``."""
    return (flag, flag[2:], flag[2:].replace("-", "_"))


def with_defaults(args: Sequence[str], defaults: dict[str, str | None]) -> list[str]:
    """``args`` plus each default option that ``args`` does not set (cheap runs: an accepted bad
    input then ends in seconds and shows as silent rather than as a hang)."""
    out = list(args)
    for flag, value in defaults.items():
        if flag not in args:
            out += [flag] if value is None else [flag, value]
    return out


TINY_TRAINING = {
    "--intervals": "5",
    "--stages": "2",
    "--max-iter": "2",
    "--no-jit": None,
    "--quiet": None,
}
TINY_COMPARE = {"--methods": "fnode", "--quick": None, "--epochs": "1", "--no-progress": None}


def script_cases(s: Suite) -> None:
    tc, cp = "train_collocation.py", "compare.py"
    s.add(Case(tc, "no arguments", "PROBLEM", argv=[sys.executable, str(SCRIPTS / tc)]))
    s.script(tc, "unknown problem", ["nope"], "nope")
    s.script(tc, "unicode problem", ["vdp✓"], "vdp✓")
    s.script(tc, "unknown flag", ["vdp", "--frobnicate"], "--frobnicate")
    s.script(tc, "flag without value", ["vdp", "--intervals"], "--intervals")
    s.add(
        Case(
            tc, "--help", expect="accept", argv=[sys.executable, str(SCRIPTS / tc), "vdp", "--help"]
        )
    )
    bad_values = {
        "--intervals": ("0", "-5", "abc", "1e9", "2.5", ""),
        "--stages": ("0", "1000"),
        "--noise": ("-1", "nan", "inf"),
        "--seed": ("-1", "1.5"),
        "--seeds": ("0", "-3"),
        "--workers": ("-1",),
        "--tol": ("0", "nan", "-1"),
        "--max-iter": ("0",),
        "--hidden": ("0", "a", "5,0", "-5"),
        "--activation": ("relu", "tänh"),
        "--init": ("bogus",),
        "--hessian": ("bogus",),
        "--backend": ("bogus",),
        "--mumps-ordering": ("bogus",),
        "--print-level": ("99", "-1"),
        "--max-wall-time": ("0", "nan", "-5"),
        "--regularization": ("-1", "nan", "inf"),
        "--spectral": ("-1", "1000"),
        "--initial-state": ("bogus",),
        "--state-guess": ("bogus",),
        "--success-tol": ("-1", "nan"),
    }
    for flag, values in bad_values.items():
        # --quiet sets the print level itself, so the print-level cases run without it
        defaults = {
            k: v for k, v in TINY_TRAINING.items() if flag != "--print-level" or k != "--quiet"
        }
        for value in values:
            args = with_defaults(["vdp", flag, value], defaults)
            s.script(tc, f"vdp {flag} {value!r}", args, flag_names(flag))
    s.script(
        tc,
        "vdp --quiet --print-level 99",
        with_defaults(["vdp", "--print-level", "99"], TINY_TRAINING),
        flag_names("--print-level"),
        expect="either",
        codes=(0, 1),
    )
    for value in ("", "5,,5"):  # no hidden layer, or a doubled comma: lenient or refused
        args = with_defaults(["vdp", "--hidden", value], TINY_TRAINING)
        s.script(tc, f"vdp --hidden {value!r}", args, "hidden", expect="either", codes=(0, 1))
    s.script(
        tc,
        "vdp --intervals 10**12",
        with_defaults(["vdp", "--intervals", str(10**12)], TINY_TRAINING),
        ("intervals", "memory", "nodes"),
    )
    for problem, flag, value in (
        ("qvm", "--strategy", "IV"),
        ("qvm", "--pretrain-fraction", "1.5"),
        ("qvm", "--rational-degree", "-1"),
        ("lorenz", "--hidden", "0"),
        ("lorenz", "--noise", "nan"),
        ("smsd", "--intervals", "0"),
        ("smsd", "--seeds", "0"),
    ):
        args = [problem, flag, value, "--max-iter", "2", "--no-jit", "--quiet"]
        s.script(tc, f"{problem} {flag} {value}", args, flag_names(flag))

    def write_file(name: str) -> Callable[[Path], None]:
        return lambda tmp: (tmp / name).write_text("not a directory")

    def full_dir(tmp: Path) -> None:
        (tmp / "full").mkdir()
        (tmp / "full" / "result.json").write_text("{}")

    def earlier_run(tmp: Path) -> None:  # a run folder: it carries collocnode's marker
        full_dir(tmp)
        (tmp / "full" / ".collocnode-run.json").write_text("{}")

    out_cases = [
        ("--out is a file", "{tmp}/file", write_file("file")),
        ("--out below a file", "{tmp}/file/sub", write_file("file")),
        ("--out non-empty", "{tmp}/full", full_dir),
        ("--out ''", "", None),
        ("--out .", ".", None),
        ("--out under /proc", "/proc/collocnode-out", None),
        ("--out under /dev/null", "/dev/null/out", None),
    ]
    for script, problem, defaults in ((tc, "vdp", TINY_TRAINING), (cp, "smsd", TINY_COMPARE)):
        for name, out, setup in out_cases:
            args = with_defaults([problem, "--out", out], defaults)
            s.script(script, name, args, "--out", setup=setup)
    for name, out, setup in (
        ("tiny run into a new nested --out", "{tmp}/a/b/c", None),
        ("tiny run --overwrite an earlier run's --out", "{tmp}/full", earlier_run),
        ("tiny run, unicode --out", "{tmp}/ausgabe-✓", None),
    ):
        args = with_defaults(["vdp", "--out", out, "--overwrite"], TINY_TRAINING)
        s.script(tc, f"vdp {name}", args, expect="accept", setup=setup, codes=(0, 1))
    # a non-empty folder without the marker is not collocnode's to delete
    args = with_defaults(["vdp", "--out", "{tmp}/full", "--overwrite"], TINY_TRAINING)
    s.script(tc, "--overwrite a folder it did not write", args, "--overwrite", setup=full_dir)

    s.add(Case(cp, "no arguments", "problem", argv=[sys.executable, str(SCRIPTS / cp)]))
    s.script(cp, "unknown problem", with_defaults(["nope"], TINY_COMPARE), "nope")
    s.script(cp, "unicode problem", with_defaults(["smsd✓"], TINY_COMPARE), "smsd✓")
    s.script(cp, "unknown flag", ["smsd", "--frobnicate"], "--frobnicate")
    compare_bad = [
        ("--methods bogus", ["--methods", "bogus"], "bogus"),
        ("--methods ''", ["--methods", ""], "methods"),
        ("--methods ','", ["--methods", ","], "methods"),
        ("--methods fnode,fnode", ["--methods", "fnode,fnode"], "fnode"),
        ("--methods unicode", ["--methods", "fnöde"], "fnöde"),
        ("--set no =", ["--set", "fnode.epochs"], "--set"),
        ("--set no method", ["--set", "epochs=3"], "--set"),
        ("--set unknown option", ["--set", "fnode.bogus=1"], "bogus"),
        ("--set epochs=-1", ["--set", "fnode.epochs=-1"], "epochs"),
        ("--set epochs=nan", ["--set", "fnode.epochs=nan"], "epochs"),
        ("--set a method not run", ["--set", "lstm.hidden=3"], "lstm"),
        ("--set lr='x'", ["--set", "fnode.lr='x'"], "lr"),
        ("--budget 0", ["--budget", "0"], flag_names("--budget")),
        ("--budget -1", ["--budget", "-1"], flag_names("--budget")),
        ("--budget nan", ["--budget", "nan"], flag_names("--budget")),
        ("--budget inf", ["--budget", "inf"], flag_names("--budget")),
        ("--epochs 0", ["--epochs", "0"], "--epochs"),
        ("--epochs -1", ["--epochs", "-1"], "--epochs"),
        ("--epochs 1.5", ["--epochs", "1.5"], "--epochs"),
        ("--noise -1", ["--noise", "-1"], "noise"),
        ("--noise nan", ["--noise", "nan"], "noise"),
        ("--eval-every 0", ["--eval-every", "0"], flag_names("--eval-every")),
        ("--eval-every nan", ["--eval-every", "nan"], flag_names("--eval-every")),
        ("--threads 0", ["--threads", "0"], "threads"),
        ("--threads -1", ["--threads", "-1"], "threads"),
        ("--device bogus", ["--device", "bogus"], "device"),
        ("--device cuda:99", ["--device", "cuda:99"], ("device", "cuda")),
        ("--seed -1", ["--seed", "-1"], "seed"),
        ("--preset bogus", ["--preset", "bogus"], ("preset", "bogus")),
    ]
    for name, args, fld in compare_bad:
        s.script(cp, f"smsd {name}", with_defaults(["smsd", *args], TINY_COMPARE), fld)
    s.add(Case(cp, "--help", expect="accept", argv=[sys.executable, str(SCRIPTS / cp), "--help"]))
    s.script(
        cp,
        "smsd fnode --quick --epochs 1",
        with_defaults(["smsd"], TINY_COMPARE),
        expect="accept",
    )


SECTIONS: tuple[Callable[[Suite], None], ...] = (
    trajectory_cases,
    network_cases,
    model_cases,
    training_cases,
    transcription_cases,
    solve_cases,
    simulate_cases,
    problems_cases,
    serialize_cases,
    recipe_cases,
    compare_cases,
    script_cases,
)


def all_cases() -> list[Case]:
    suite = Suite()
    for section in SECTIONS:
        section(suite)
    labels = Counter(c.label for c in suite.cases)
    dup = [k for k, n in labels.items() if n > 1]
    if dup:
        raise RuntimeError(f"duplicate case names: {dup}")
    return suite.cases


# ---- report -------------------------------------------------------------------------------------


def summarize(results: Sequence[Result]) -> dict[str, int]:
    counts = Counter(r.outcome for r in results)
    return {k: counts.get(k, 0) for k in OUTCOMES}


def report(results: Sequence[Result], wall_s: float) -> dict[str, Any]:
    import collocnode

    return {
        "collocnode": collocnode.__version__,
        "python": platform.python_version(),
        "cases": len(results),
        "counts": summarize(results),
        "wall_s": round(wall_s, 1),
        "results": [vars(r) for r in results],
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path("runs/hostile_inputs"))
    parser.add_argument("--only", default=None, help="run the cases whose name contains this")
    parser.add_argument("--list", action="store_true", help="list the cases and exit")
    args = parser.parse_args(argv)
    os.environ.update(ONE_THREAD)
    cases = all_cases()
    if args.only:
        cases = [c for c in cases if args.only in c.label]
    if args.list:
        for c in cases:
            print(f"{c.expect:6}  {c.label}")
        print(f"{len(cases)} cases")
        return 0
    from collocnode.compare.methods.registry import available, method_class

    for method in available():  # torch and the trainers imported once here, not in every fork
        method_class(method)

    args.out.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    results = []
    with tempfile.TemporaryDirectory(prefix="hostile-") as scratch:
        for k, case in enumerate(cases, 1):
            result = run_case(case, Path(scratch))
            results.append(result)
            print(f"[{k:3}/{len(cases)}] {result.outcome:9} {case.label}", flush=True)
    doc = report(results, time.perf_counter() - start)
    path = args.out / "hostile_inputs.json"
    path.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
    print(f"\n{doc['cases']} cases in {doc['wall_s']} s; written to {path}")
    for outcome, n in doc["counts"].items():
        print(f"  {outcome:9} {n}")
    odd = [r for r in results if r.outcome not in FINE]
    if odd:
        print(f"\n{len(odd)} outcomes that are neither a clear error nor a legitimate acceptance:")
        for r in odd:
            print(f"  [{r.outcome}] {r.name}\n      {r.message}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
