"""Two IPOPT backends over the same assembled callbacks: CasADi ``nlpsol`` and cyipopt.

Both receive the structured NLP's CasADi Functions (objective, gradient, constraints, Jacobian
nonzeros, Hessian nonzeros) and the same IPOPT options, so they take the same iterates up to the
round-off of the two IPOPT/MUMPS builds. Both call a user callback after every iteration with the
same `IterationState` (see `collocnode.transcription._ipopt.iteration` for the protocol).

Evaluations (``evaluations``, `EVALUATIONS`): IPOPT asks for f, g, their gradient and
Jacobian at each new iterate in separate calls (the objective and constraints at a trial point of
the line search, the derivatives once the point is accepted, almost always the same point). With
"fused" (the default) the cyipopt backend evaluates all four in one pass over the nodes the first
time it sees an iterate and answers the other calls from that evaluation; "separate" evaluates
one Function per call. CasADi's ``nlpsol`` evaluates f and g with its own Functions of the NLP's
graph (it takes custom Functions only for the derivatives, and keeps nothing between calls); its
``grad_f`` and ``jac_g`` callbacks evaluate one fused map each unless "separate". The Hessian
needs the multipliers: always its own pass. The cyipopt backend evaluates every Function into
preallocated arrays (``Function.buffer``), so that no call allocates CasADi's work memory.
"""

from __future__ import annotations

import contextlib
import io
import re
import signal
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import casadi as ca
import numpy as np

from ..._status import SolverStatus, from_ipopt
from .._nlp.build import EVALUATION_ERROR_HINT
from .._nlp.hessian import Hessian, PartialQuasiNewton, check_hessian, ipopt_approximation
from .._nlp.quasi_newton import HessianCallback, PartialQuasiNewtonHessian
from .._nlp.structured import StructuredNLP
from .iteration import CallbackRunner, IterationState
from .options import (
    BACKENDS,
    MUMPS_ORDERINGS,
    REASON_PRINT_LEVEL,
    IpoptOptions,
    OrderingTrial,
    failure_reason,
)

__all__ = [
    "BACKENDS",
    "EVALUATIONS",
    "MUMPS_ORDERINGS",
    "IpoptOptions",
    "IpoptResult",
    "solve_ipopt",
]

#: how the callbacks evaluate f, g, the gradient and the Jacobian (see the module's docstring)
EVALUATIONS = ("fused", "separate")


@dataclass
class IpoptResult:
    """What one IPOPT run returned (the NLP's scaled variables; see
    [`Solution`][collocnode.Solution] for the physical ones)."""

    z: np.ndarray
    lam_g: np.ndarray
    objective: float
    status: SolverStatus
    ipopt_status: str
    iterations: int
    history: list[tuple[float, int, float, float, float]]  # (wall s, iter, obj, inf_pr, inf_du)
    t_ipopt: float  # IPOPT's own time (linear algebra, line search), callbacks excluded
    t_callbacks: float
    t_total: float
    message: str = ""
    non_finite_evaluations: int = 0  # callback evaluations that returned NaN or Inf
    t_user_callback: float = 0.0  # time spent in the user's iteration callback
    # an ordering trial (OrderingTrial): IPOPT seconds per iteration of each ordering tried
    # (inf where its trial failed) and the trial's wall time; empty / 0 without one
    ordering_trial: dict[str, float] = field(default_factory=dict)
    t_ordering_trial: float = 0.0


class _Interrupt:
    """Turns Ctrl-C during a solve into a polite stop request at the next IPOPT iteration.

    A process that ignores SIGINT (``SIG_IGN``, e.g. a worker of a pool) keeps ignoring it: no
    handler is installed then.
    """

    def __init__(self) -> None:
        self.requested = False
        self._previous: Any = None
        self._installed = False

    def __enter__(self) -> _Interrupt:
        if threading.current_thread() is threading.main_thread():
            previous = signal.getsignal(signal.SIGINT)
            if previous is not signal.SIG_IGN:
                self._previous = previous
                signal.signal(signal.SIGINT, self._handler)
                self._installed = True
        return self

    def _handler(self, signum: int, frame: Any) -> None:
        if self.requested:  # a second Ctrl-C aborts hard
            signal.signal(signal.SIGINT, self._previous or signal.default_int_handler)
            raise KeyboardInterrupt
        self.requested = True

    def __exit__(self, *exc: object) -> None:
        if self._installed:
            # a handler set outside Python (None) is restored as Python's default
            signal.signal(signal.SIGINT, self._previous or signal.default_int_handler)


class _Recorder:
    """Logs every iteration, stops on Ctrl-C, and runs the user's callback (if any)."""

    def __init__(
        self,
        interrupt: _Interrupt,
        stop_after: float | None,
        nlp: StructuredNLP,
        runner: CallbackRunner | None = None,
    ) -> None:
        self.t0 = time.perf_counter()
        self.history: list[tuple[float, int, float, float, float]] = []
        self.interrupt = interrupt
        self.stop_after = stop_after
        self.nlp = nlp
        self.runner = runner

    def record(
        self,
        it: int,
        obj: float,
        inf_pr: float,
        inf_du: float,
        read_iterate: Any = None,
        read_infeasibility: Any = None,
    ) -> bool:
        """Log one iteration and run the user's callback; False asks IPOPT to stop.

        ``read_iterate()`` returns the current z, ``read_infeasibility()`` (inf_pr, inf_du);
        both are called only if the callback asks for them."""
        now = time.perf_counter() - self.t0
        self.history.append((now, it, obj, inf_pr, inf_du))
        if self.interrupt.requested:
            return False
        if self.runner is None:
            return True
        state = IterationState(
            it,
            obj,
            now - self.runner.time_s,
            read_iterate,
            read_infeasibility or (lambda: (inf_pr, inf_du)),
            self.nlp,
        )
        return self.runner(state)


def solve_ipopt(
    nlp: StructuredNLP,
    z0: np.ndarray,
    options: IpoptOptions,
    hessian: Hessian = "exact",
    callback: CallbackRunner | None = None,
    evaluations: str = "fused",
) -> IpoptResult:
    """Solve the NLP from ``z0`` with the backend chosen in ``options``.

    ``hessian``: a choice of `collocnode.transcription._nlp.hessian`: "exact" (the NLP's exact
    Hessian), "limited-memory" (IPOPT's own L-BFGS of the whole Hessian) or a
    [`PartialQuasiNewton`][collocnode.PartialQuasiNewton] (exact cheap blocks, learned dense ones).

    ``callback``: the user's iteration callback, run after every iteration
    (`collocnode.transcription._ipopt.iteration`); a stop it asks for gives status ``STOPPED``, an
    exception it raises ``CALLBACK_ERROR``, both with the iterate of that iteration and the reason
    in ``message``.

    ``evaluations``: one of `EVALUATIONS`, how the callbacks evaluate f, g and their
    derivatives (the module's docstring); the iterates are the same with each.

    When IPOPT fails without a message of collocnode's own, ``message`` gives IPOPT's reason
    (its errors, read from a temporary ``output_file`` unless ``extra`` names one).
    """
    check_hessian(hessian)
    if evaluations not in _PLANS:
        raise ValueError(f"evaluations must be one of {EVALUATIONS}, got {evaluations!r}")
    if isinstance(options.mumps_ordering, OrderingTrial):
        return _solve_with_ordering_trial(nlp, z0, options, hessian, callback, evaluations)
    evaluate: Any = None
    if isinstance(hessian, PartialQuasiNewton):
        evaluate = PartialQuasiNewtonHessian(nlp, hessian)
    elif hessian == "exact" and nlp.hessian_mode != "exact":
        raise ValueError(
            f"an exact Hessian needs an NLP built with hessian='exact', not {nlp.hessian_mode!r}"
        )
    ipopt = options.ipopt_dict()
    ipopt["hessian_approximation"] = ipopt_approximation(hessian)
    with contextlib.ExitStack() as stack:
        log = None
        if "output_file" not in ipopt:
            tmp = stack.enter_context(tempfile.TemporaryDirectory(prefix="collocnode_ipopt_"))
            log = Path(tmp) / "ipopt.out"
            ipopt["output_file"], ipopt["file_print_level"] = str(log), REASON_PRINT_LEVEL
        interrupt = stack.enter_context(_Interrupt())
        recorder = _Recorder(interrupt, options.max_wall_time, nlp, callback)
        if options.backend == "casadi":
            result = _solve_casadi(nlp, z0, ipopt, recorder, evaluate, evaluations)
        else:
            result = _solve_cyipopt(nlp, z0, ipopt, recorder, evaluate, evaluations)
        if callback is not None:
            _apply_callback_stop(result, callback)
        if not result.status.ok and result.status not in _OWN_MESSAGE:
            reason = failure_reason(log.read_text()) if log is not None and log.exists() else ""
            result.message = f"IPOPT: {reason}" if reason else ""
            if result.status == SolverStatus.EVALUATION_ERROR:
                # IPOPT names no function and no point: say what usually causes it
                result.message = "; ".join(filter(None, [result.message, EVALUATION_ERROR_HINT]))
    return result


# options of a trial run that ``extra`` may not override
_TRIAL_LIMITS = ("max_iter", "print_level", "max_wall_time")


def _solve_with_ordering_trial(
    nlp: StructuredNLP,
    z0: np.ndarray,
    options: IpoptOptions,
    hessian: Hessian,
    callback: CallbackRunner | None,
    evaluations: str,
) -> IpoptResult:
    """[`OrderingTrial`][collocnode.OrderingTrial]: a few silent iterations with each ordering, then
    the solve with the fastest per iteration; Ctrl-C during the trial ends it with that trial's
    result."""
    trial = options.mumps_ordering
    assert isinstance(trial, OrderingTrial)
    start = time.perf_counter()

    def remaining() -> float | None:
        if options.max_wall_time is None:
            return None
        return max(options.max_wall_time - (time.perf_counter() - start), 1e-3)

    per_iteration: dict[str, float] = {}
    for name in trial.orderings:
        short = replace(
            options,
            mumps_ordering=name,
            max_iter=min(trial.iterations, options.max_iter),
            print_level=0,
            max_wall_time=remaining(),
            # ``extra`` comes last in IPOPT's options: it must not lift the trial's limits
            extra={k: v for k, v in options.extra.items() if k not in _TRIAL_LIMITS},
        )
        res = solve_ipopt(nlp, z0, short, hessian, evaluations=evaluations)
        if res.status == SolverStatus.INTERRUPTED:
            res.ordering_trial, res.t_ordering_trial = per_iteration, time.perf_counter() - start
            return res
        failed = res.status in (SolverStatus.EVALUATION_ERROR, SolverStatus.FAILED)
        per_iteration[name] = np.inf if failed else res.t_ipopt / max(res.iterations, 1)
    chosen = min(per_iteration, key=per_iteration.__getitem__)
    t_trial = time.perf_counter() - start
    res = solve_ipopt(
        nlp,
        z0,
        replace(options, mumps_ordering=chosen, max_wall_time=remaining()),
        hessian,
        callback,
        evaluations,
    )
    res.ordering_trial, res.t_ordering_trial = per_iteration, t_trial
    res.t_total += t_trial
    return res


# statuses whose message is collocnode's own (IPOPT's log has no reason to add)
_OWN_MESSAGE = (
    SolverStatus.INTERRUPTED,
    SolverStatus.STOPPED,
    SolverStatus.SETTLED,
    SolverStatus.CALLBACK_ERROR,
)
_STOP_STATUS = {
    "error": SolverStatus.CALLBACK_ERROR,
    "settled": SolverStatus.SETTLED,
    "callback": SolverStatus.STOPPED,
}


def _apply_callback_stop(result: IpoptResult, runner: CallbackRunner) -> None:
    """Status and message of a solve the user's callback ended (IPOPT reports a user stop)."""
    result.t_user_callback = runner.time_s
    result.t_ipopt = max(result.t_ipopt - runner.time_s, 0.0)
    if runner.stopped is None or result.ipopt_status != "User_Requested_Stop":
        return
    result.status = _STOP_STATUS[runner.stopped]
    result.message = runner.message


class _IterationCallback(ca.Callback):
    """CasADi iteration callback: timestamps each iteration, requests a stop on Ctrl-C, runs the
    user's callback with the iterate CasADi passes (``x``) and the infeasibilities of the
    solver's running statistics (``solver`` is set once the solver exists)."""

    def __init__(self, nx: int, ng: int, recorder: _Recorder) -> None:
        ca.Callback.__init__(self)
        self.nx, self.ng, self.recorder = nx, ng, recorder
        self.iteration = 0
        self.solver: Any = None
        self.construct("iteration_callback", {})

    def get_n_in(self) -> int:
        return ca.nlpsol_n_out()

    def get_n_out(self) -> int:
        return 1

    def get_name_in(self, i: int) -> str:
        return ca.nlpsol_out(i)

    def get_name_out(self, i: int) -> str:
        return "ret"

    def get_sparsity_in(self, i: int) -> ca.Sparsity:
        n = ca.nlpsol_out(i)
        size = {"f": 1, "lam_p": 0, "x": self.nx, "lam_x": self.nx}.get(n, self.ng)
        return ca.Sparsity.dense(size, 1)

    def _infeasibility(self) -> tuple[float, float]:
        """IPOPT's inf_pr and inf_du of the current iteration: the last entries of the running
        statistics (CasADi appends them before it calls this callback)."""
        its = self.solver.stats().get("iterations", {}) if self.solver is not None else {}
        pr, du = its.get("inf_pr", []), its.get("inf_du", [])
        return (float(pr[-1]) if pr else np.nan, float(du[-1]) if du else np.nan)

    def eval(self, arg: list[Any]) -> list[Any]:
        # IPOPT's inf_pr/inf_du are not passed to CasADi callbacks; the history takes them from
        # stats() after the solve, a user callback reads them from the running stats on request.
        x = arg[0]
        keep_going = self.recorder.record(
            self.iteration, float(arg[1]), np.nan, np.nan, x.full, self._infeasibility
        )
        self.iteration += 1
        return [0 if keep_going else 1]


class _EvaluationWarnings(io.TextIOBase):
    """Stands in for ``sys.stderr`` during a CasADi solve: counts CasADi's "NaN detected" /
    "Inf detected" warnings (one per callback evaluation that returned a non-finite value,
    which IPOPT answers by cutting its step) instead of printing them; other text passes."""

    _WARNING = re.compile(r"(NaN|Inf) detected for output")

    def __init__(self, target: Any) -> None:
        self.target = target
        self.count = 0
        self._partial = ""

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        *lines, self._partial = (self._partial + text).split("\n")
        for line in lines:
            if self._WARNING.search(line):
                self.count += 1
            else:
                self.target.write(line + "\n")
        return len(text)

    def flush(self) -> None:
        self.target.flush()

    def release(self) -> None:
        """Pass on a last unterminated line."""
        if self._partial and not self._WARNING.search(self._partial):
            self.target.write(self._partial)
        self._partial = ""


def _iteration_count(reported: object, history: list) -> int:
    """IPOPT's iteration count, or the recorded one when IPOPT stopped before iterating (CasADi
    then reports an uninitialised number)."""
    recorded = history[-1][1] if history else 0
    if not history or not isinstance(reported, (int, np.integer)):
        return recorded
    return int(reported) if 0 <= reported <= len(history) else recorded


def _solve_casadi(
    nlp: StructuredNLP,
    z0: np.ndarray,
    ipopt: dict[str, Any],
    recorder: _Recorder,
    evaluate: Any,
    evaluations: str = "fused",
) -> IpoptResult:
    callback = _IterationCallback(nlp.layout.n_z, nlp.layout.n_c, recorder)
    # the Python callbacks must outlive the solve: CasADi holds no reference to them
    solver, _keep_alive = _casadi_solver(nlp, ipopt, callback, evaluate, evaluations)
    callback.solver = solver
    t_start = time.perf_counter()
    recorder.t0 = t_start
    warnings_ = _EvaluationWarnings(sys.stderr)
    try:
        with contextlib.redirect_stderr(warnings_):
            out = solver(
                x0=z0, p=nlp.prm_values, lbx=nlp.lbz, ubx=nlp.ubz, lbg=nlp.lbg, ubg=nlp.ubg
            )
    finally:
        warnings_.release()
    t_total = time.perf_counter() - t_start
    stats = solver.stats()
    status, name = from_ipopt(stats.get("return_status", "Unknown"))
    t_cb = sum(
        float(stats.get(f"t_wall_{k}", 0.0))
        for k in ("nlp_f", "nlp_g", "nlp_grad_f", "nlp_jac_g", "nlp_hess_l")
    )
    hist = _casadi_history(recorder.history, stats.get("iterations", {}))
    return IpoptResult(
        z=np.asarray(out["x"]).ravel(),
        lam_g=np.asarray(out["lam_g"]).ravel(),
        objective=float(out["f"]),
        status=status,
        ipopt_status=name,
        iterations=_iteration_count(stats.get("iter_count"), hist),
        history=hist,
        t_ipopt=max(t_total - t_cb, 0.0),
        t_callbacks=t_cb,
        t_total=t_total,
        non_finite_evaluations=warnings_.count,
    )


def _casadi_solver(
    nlp: StructuredNLP,
    ipopt: dict[str, Any],
    callback: _IterationCallback,
    evaluate: Any,
    evaluations: str = "fused",
) -> tuple[ca.Function, dict[str, Any]]:
    """CasADi's ``nlpsol`` on the NLP's graph with its structured derivatives as custom
    callbacks (returned with it: the caller keeps them alive): the exact Hessian, a partial
    quasi-Newton one (``evaluate``), or none when IPOPT approximates it; ``grad_f`` and
    ``jac_g`` from the fused node maps unless ``evaluations`` is "separate"."""
    callbacks: dict[str, Any] = nlp.casadi_callbacks(fused=evaluations != "separate")
    if evaluate is not None:
        callbacks["hess_lag"] = HessianCallback(nlp, evaluate)
    elif ipopt["hessian_approximation"] != "exact":
        del callbacks["hess_lag"]
    graph = nlp.graph
    solver = ca.nlpsol(
        "collocation",
        "ipopt",
        {"x": graph.z, "p": graph.prm, "f": graph.f, "g": graph.g},
        {
            **callbacks,
            "ipopt": ipopt,
            "print_time": False,
            "error_on_fail": False,
            # lam_x/lam_p need derivatives of the expression graph, which compiled (external)
            # node functions lack; IPOPT's own bound multipliers are not needed here
            "calc_lam_p": False,
            "calc_lam_x": False,
            "bound_consistency": False,
            "iteration_callback": callback,
            "iteration_callback_ignore_errors": False,
        },
    )
    return solver, callbacks


def _casadi_history(recorded: list[tuple], iterations: dict[str, Any]) -> list[tuple]:
    """The recorded iterations with IPOPT's primal and dual infeasibility of each (NaN where
    CasADi's statistics lack it)."""

    def at(key: str, k: int) -> float:
        values = iterations.get(key)
        return float(values[k]) if values is not None and k < len(values) else np.nan

    return [(h[0], h[1], h[2], at("inf_pr", h[1]), at("inf_du", h[1])) for h in recorded]


class _Evaluation:
    """A CasADi Function evaluated into preallocated arrays (``Function.buffer``: CasADi's work
    memory is allocated once, not at every call), its outputs kept for the last inputs.

    ``evaluate(*args)`` returns the outputs, flat (nnz_out(i),) arrays that the next evaluation
    with other inputs overwrites; inputs equal to the last ones (exactly) return them again.
    ``evaluations`` counts the evaluations actually run."""

    def __init__(self, fn: ca.Function) -> None:
        self.buffer, self._trigger = fn.buffer()
        self.args = [np.zeros(fn.nnz_in(i)) for i in range(fn.n_in())]
        self.outs = [np.zeros(fn.nnz_out(i)) for i in range(fn.n_out())]
        for i, a in enumerate(self.args):
            self.buffer.set_arg(i, memoryview(a))
        for i, o in enumerate(self.outs):
            self.buffer.set_res(i, memoryview(o))
        self.valid = False
        self.evaluations = 0

    def evaluate(self, *args: Any) -> list[np.ndarray]:
        if self.valid and all(
            np.array_equal(np.ravel(a), b) for a, b in zip(args, self.args, strict=True)
        ):
            return self.outs
        for a, b in zip(args, self.args, strict=True):
            np.copyto(b, np.ravel(a))
        self.valid = False  # until the evaluation has succeeded
        self._trigger()
        self.valid = True
        self.evaluations += 1
        return self.outs


#: which Function and output answer each of IPOPT's first-order callbacks, per ``evaluations``
_PLANS = {
    "fused": {"f": ("fn_fused", 0), "g": ("fn_fused", 1), "grad": ("fn_fused", 2),
              "jac": ("fn_fused", 3)},
    "separate": {"f": ("fn_f", 0), "g": ("fn_g", 0), "grad": ("fn_grad", 0),
                 "jac": ("fn_jac", 0)},
}  # fmt: skip


class _CyipoptProblem:
    """cyipopt's problem interface over the NLP's CasADi Functions, evaluated as ``evaluations``
    says (`EVALUATIONS`): the callbacks at one iterate share the evaluations of the
    Functions of `_PLANS`."""

    def __init__(
        self,
        nlp: StructuredNLP,
        recorder: _Recorder,
        evaluate: Any = None,
        evaluations: str = "fused",
    ) -> None:
        self.nlp, self.recorder = nlp, recorder
        self.problem: Any = None  # the cyipopt.Problem, to read the current iterate
        self.functions = {
            name: _Evaluation(getattr(nlp, name)) for name, _ in _PLANS[evaluations].values()
        }
        self._plan = {
            key: (self.functions[name], k) for key, (name, k) in _PLANS[evaluations].items()
        }
        if evaluate is None:
            self.functions["fn_hess"] = _Evaluation(nlp.fn_hess)
            evaluate = lambda z, s, lam: self.functions["fn_hess"].evaluate(z, s, lam)[0]  # noqa: E731
        self._hess = evaluate
        self.t_cb = 0.0
        self.non_finite = 0  # evaluations that returned NaN or Inf
        hr, hc = nlp.hessian_structure()
        jr, jc = nlp.jacobian_structure()
        self._jac_structure = (jr, jc)
        self._hess_structure = (hc, hr)  # lower triangle = transposed upper triangle

    def _count(self, out: np.ndarray) -> np.ndarray:
        if not np.all(np.isfinite(out)):
            self.non_finite += 1
        return out

    def _timed(self, key: str, z: np.ndarray) -> np.ndarray:
        """Output ``key`` ("f", "g", "grad" or "jac") at z, from the evaluation that the plan
        names (run now unless it was run at this z)."""
        t = time.perf_counter()
        evaluation, k = self._plan[key]
        out = evaluation.evaluate(z)[k]
        self.t_cb += time.perf_counter() - t
        return self._count(out)

    def objective(self, z: np.ndarray) -> float:
        return float(self._timed("f", z)[0])

    def gradient(self, z: np.ndarray) -> np.ndarray:
        return self._timed("grad", z)

    def constraints(self, z: np.ndarray) -> np.ndarray:
        return self._timed("g", z)

    def jacobian(self, z: np.ndarray) -> np.ndarray:
        return self._timed("jac", z)

    def jacobianstructure(self) -> tuple[np.ndarray, np.ndarray]:
        return self._jac_structure

    def hessian(self, z: np.ndarray, lam: np.ndarray, obj_factor: float) -> np.ndarray:
        t = time.perf_counter()
        out = self._hess(z, obj_factor, lam)
        self.t_cb += time.perf_counter() - t
        return self._count(np.asarray(out))

    def hessianstructure(self) -> tuple[np.ndarray, np.ndarray]:
        return self._hess_structure

    def intermediate(
        self,
        alg_mod: int,
        iter_count: int,
        obj_value: float,
        inf_pr: float,
        inf_du: float,
        *rest: Any,
    ) -> bool:
        return self.recorder.record(iter_count, obj_value, inf_pr, inf_du, self._current_iterate)

    def _current_iterate(self) -> np.ndarray:
        """IPOPT's current iterate (valid inside ``intermediate`` only)."""
        current = self.problem.get_current_iterate() if self.problem is not None else None
        if current is None:
            raise RuntimeError("IPOPT did not give its current iterate (needs Ipopt >= 3.14)")
        return np.asarray(current["x"], dtype=float)


def _solve_cyipopt(
    nlp: StructuredNLP,
    z0: np.ndarray,
    ipopt: dict[str, Any],
    recorder: _Recorder,
    evaluate: Any,
    evaluations: str = "fused",
) -> IpoptResult:
    import cyipopt

    prob_obj = _CyipoptProblem(nlp, recorder, evaluate, evaluations)
    problem = cyipopt.Problem(
        n=nlp.layout.n_z,
        m=nlp.layout.n_c,
        problem_obj=prob_obj,
        lb=nlp.lbz,
        ub=nlp.ubz,
        cl=nlp.lbg,
        cu=nlp.ubg,
    )
    prob_obj.problem = problem
    for key, value in ipopt.items():
        problem.add_option(key, value)
    t_start = time.perf_counter()
    recorder.t0 = t_start
    quiet = ipopt["print_level"] == 0
    with contextlib.redirect_stdout(None) if quiet else contextlib.nullcontext():
        z, info = problem.solve(np.asarray(z0, dtype=float))
    t_total = time.perf_counter() - t_start
    status, name = from_ipopt(int(info["status"]))
    hist = recorder.history
    return IpoptResult(
        z=np.asarray(z).ravel(),
        lam_g=np.asarray(info["mult_g"]).ravel(),
        objective=float(info["obj_val"]),
        status=status,
        ipopt_status=name,
        iterations=hist[-1][1] if hist else 0,
        history=hist,
        t_ipopt=max(t_total - prob_obj.t_cb, 0.0),
        t_callbacks=prob_obj.t_cb,
        t_total=t_total,
        non_finite_evaluations=prob_obj.non_finite,
    )
