"""Two IPOPT backends over the same assembled callbacks: CasADi ``nlpsol`` and cyipopt.

Both receive the structured NLP's CasADi Functions (objective, gradient, constraints, Jacobian
nonzeros, Hessian nonzeros) and the same IPOPT options, so they take the same iterates up to the
round-off of the two IPOPT/MUMPS builds.
"""

from __future__ import annotations

import contextlib
import signal
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import casadi as ca
import numpy as np

from .. import _validation as v
from ..status import SolverStatus, from_ipopt
from .nlp import StructuredNLP
from .quasi_newton import HessianCallback, PartialQuasiNewton, PartialQuasiNewtonHessian

# what ``RadauIIA(hessian=...)`` accepts besides a PartialQuasiNewton
HESSIANS = ("exact", "limited-memory")


def check_hessian(hessian: object) -> None:
    """Raise unless ``hessian`` is one of :data:`HESSIANS` or a :class:`PartialQuasiNewton`."""
    if not isinstance(hessian, PartialQuasiNewton) and hessian not in HESSIANS:
        raise ValueError(
            f"hessian must be one of {HESSIANS} or a PartialQuasiNewton, got {hessian!r}"
        )


BACKENDS = ("casadi", "cyipopt")
# MUMPS fill-reducing orderings (IPOPT option mumps_pivot_order)
MUMPS_ORDERINGS = {"amd": 0, "amf": 2, "scotch": 3, "pord": 4, "metis": 5, "qamd": 6, "auto": 7}


@dataclass(frozen=True)
class IpoptOptions:
    """IPOPT settings (see the IPOPT options reference); ``extra`` passes any other option.

    Args:
        tol: convergence tolerance (IPOPT ``tol``).
        max_iter: iteration limit.
        mu_strategy: barrier update, "adaptive" (default; ~10 % fewer iterations on the Van der
            Pol benchmark) or "monotone".
        linear_solver: IPOPT's sparse symmetric solver ("mumps" ships with both backends).
        mumps_ordering: MUMPS's fill-reducing ordering ("auto", "metis", "amd", "amf", "scotch",
            "pord", "qamd"); it decides the cost of every KKT factorization on these arrowhead
            systems, and no choice wins everywhere: METIS was 2x faster than "auto" on the
            global Van der Pol variant but slower on the quarter-vehicle strategy II problems
            (docs/performance.md).
        mumps_scaling: let MUMPS scale the KKT matrix (its default). Off here: the NLP is
            already scaled by nominal state values, and on the quarter-vehicle problem MUMPS's
            scaling led to exploding delayed pivots (workspace reallocation, a first iteration
            taking minutes); on Van der Pol turning it off saved 25 % of IPOPT's time.
        print_level: 0 (silent) .. 12; 5 prints one line per iteration.
        max_wall_time: wall-clock limit in seconds, or None.
        backend: "casadi" (``nlpsol`` with custom derivative Functions) or "cyipopt".
        extra: further IPOPT options by name.
    """

    tol: float = 1e-8
    max_iter: int = 3000
    mu_strategy: str = "adaptive"
    linear_solver: str = "mumps"
    mumps_ordering: str = "auto"
    mumps_scaling: bool = False
    print_level: int = 5
    max_wall_time: float | None = None
    backend: str = "casadi"
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        v.positive_float("tol", self.tol)
        v.positive_int("max_iter", self.max_iter)
        v.choice("mu_strategy", self.mu_strategy, ("adaptive", "monotone"))
        v.choice("backend", self.backend, BACKENDS)
        v.choice("mumps_ordering", self.mumps_ordering, MUMPS_ORDERINGS)
        if v.nonnegative_int("print_level", self.print_level) > 12:
            raise ValueError(f"print_level must be in 0..12, got {self.print_level}")
        if self.max_wall_time is not None:
            v.positive_float("max_wall_time", self.max_wall_time)
        if not isinstance(self.extra, dict):
            raise TypeError(f"extra must be a dict of IPOPT options, got {self.extra!r}")

    def ipopt_dict(self) -> dict[str, Any]:
        opts: dict[str, Any] = {
            "tol": self.tol,
            "max_iter": self.max_iter,
            "mu_strategy": self.mu_strategy,
            "linear_solver": self.linear_solver,
            "print_level": self.print_level,
            "hessian_approximation": "exact",
            "mumps_pivot_order": MUMPS_ORDERINGS[self.mumps_ordering],
            **({} if self.mumps_scaling else {"mumps_scaling": 0, "mumps_permuting_scaling": 0}),
            "sb": "yes",  # no IPOPT banner
        }
        if self.max_wall_time is not None:
            opts["max_wall_time"] = self.max_wall_time
        opts.update(self.extra)
        return opts


@dataclass
class IpoptResult:
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


class _Interrupt:
    """Turns Ctrl-C during a solve into a polite stop request at the next IPOPT iteration."""

    def __init__(self) -> None:
        self.requested = False
        self._previous: Any = None

    def __enter__(self) -> _Interrupt:
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGINT, self._handler)
        return self

    def _handler(self, signum: int, frame: Any) -> None:
        if self.requested:  # a second Ctrl-C aborts hard
            signal.signal(signal.SIGINT, self._previous or signal.default_int_handler)
            raise KeyboardInterrupt
        self.requested = True

    def __exit__(self, *exc: object) -> None:
        if self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)


class _Recorder:
    def __init__(self, interrupt: _Interrupt, stop_after: float | None) -> None:
        self.t0 = time.perf_counter()
        self.history: list[tuple[float, int, float, float, float]] = []
        self.interrupt = interrupt
        self.stop_after = stop_after

    def record(self, it: int, obj: float, inf_pr: float, inf_du: float) -> bool:
        """Log one iteration; False asks IPOPT to stop."""
        self.history.append((time.perf_counter() - self.t0, it, obj, inf_pr, inf_du))
        return not self.interrupt.requested


def solve_ipopt(
    nlp: StructuredNLP,
    z0: np.ndarray,
    options: IpoptOptions,
    hessian: str | PartialQuasiNewton = "exact",
) -> IpoptResult:
    """Solve the NLP from ``z0`` with the backend chosen in ``options``.

    ``hessian``: "exact" (the NLP's exact Hessian), "limited-memory" (IPOPT's own L-BFGS of
    the whole Hessian) or a :class:`PartialQuasiNewton` (exact cheap blocks, learned dense ones).
    """
    check_hessian(hessian)
    evaluate: Any = None
    if isinstance(hessian, PartialQuasiNewton):
        evaluate = PartialQuasiNewtonHessian(nlp, hessian)
    elif hessian == "exact" and nlp.hessian_mode != "exact":
        raise ValueError(
            f"an exact Hessian needs an NLP built with hessian='exact', not {nlp.hessian_mode!r}"
        )
    ipopt = options.ipopt_dict()
    if hessian == "limited-memory":
        ipopt["hessian_approximation"] = "limited-memory"
    with _Interrupt() as interrupt:
        recorder = _Recorder(interrupt, options.max_wall_time)
        if options.backend == "casadi":
            return _solve_casadi(nlp, z0, ipopt, recorder, evaluate)
        return _solve_cyipopt(nlp, z0, ipopt, recorder, evaluate)


class _IterationCallback(ca.Callback):
    """CasADi iteration callback: timestamps each iteration, requests a stop on Ctrl-C."""

    def __init__(self, nx: int, ng: int, recorder: _Recorder) -> None:
        ca.Callback.__init__(self)
        self.nx, self.ng, self.recorder = nx, ng, recorder
        self.iteration = 0
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

    def eval(self, arg: list[Any]) -> list[Any]:
        # IPOPT's inf_pr/inf_du are not passed to CasADi callbacks; they come from stats() later.
        keep_going = self.recorder.record(self.iteration, float(arg[1]), np.nan, np.nan)
        self.iteration += 1
        return [0 if keep_going else 1]


def _solve_casadi(
    nlp: StructuredNLP,
    z0: np.ndarray,
    ipopt: dict[str, Any],
    recorder: _Recorder,
    evaluate: Any,
) -> IpoptResult:
    callback = _IterationCallback(nlp.n_z, nlp.n_c, recorder)
    callbacks: dict[str, Any] = nlp.casadi_callbacks()
    if evaluate is not None:
        callbacks["hess_lag"] = HessianCallback(nlp, evaluate)
    elif ipopt["hessian_approximation"] != "exact":
        del callbacks["hess_lag"]
    solver = ca.nlpsol(
        "collocation",
        "ipopt",
        {"x": nlp.z_sym, "f": nlp.f_expr, "g": nlp.g_expr},
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
    t_start = time.perf_counter()
    recorder.t0 = t_start
    out = solver(x0=z0, lbx=nlp.lbz, ubx=nlp.ubz, lbg=nlp.lbg, ubg=nlp.ubg)
    t_total = time.perf_counter() - t_start
    stats = solver.stats()
    status, name = from_ipopt(stats.get("return_status", "Unknown"))
    t_cb = sum(
        float(stats.get(f"t_wall_{k}", 0.0))
        for k in ("nlp_f", "nlp_g", "nlp_grad_f", "nlp_jac_g", "nlp_hess_l")
    )
    its = stats.get("iterations", {})
    hist = [
        (
            h[0],
            h[1],
            h[2],
            float(its["inf_pr"][h[1]]) if "inf_pr" in its and h[1] < len(its["inf_pr"]) else np.nan,
            float(its["inf_du"][h[1]]) if "inf_du" in its and h[1] < len(its["inf_du"]) else np.nan,
        )
        for h in recorder.history
    ]
    return IpoptResult(
        z=np.asarray(out["x"]).ravel(),
        lam_g=np.asarray(out["lam_g"]).ravel(),
        objective=float(out["f"]),
        status=status,
        ipopt_status=name,
        iterations=int(stats.get("iter_count", max(len(hist) - 1, 0))),
        history=hist,
        t_ipopt=max(t_total - t_cb, 0.0),
        t_callbacks=t_cb,
        t_total=t_total,
    )


class _CyipoptProblem:
    """cyipopt's problem interface over the NLP's CasADi Functions."""

    def __init__(self, nlp: StructuredNLP, recorder: _Recorder, evaluate: Any = None) -> None:
        self.nlp, self.recorder = nlp, recorder
        self._hess = evaluate or (lambda z, s, lam: self.nlp.fn_hess(z, s, lam).full().ravel())
        self.t_cb = 0.0
        hr, hc = nlp.hessian_structure()
        jr, jc = nlp.jacobian_structure()
        self._jac_structure = (jr, jc)
        self._hess_structure = (hc, hr)  # lower triangle = transposed upper triangle

    def _timed(self, fn: ca.Function, *args: Any) -> np.ndarray:
        t = time.perf_counter()
        out = fn(*args).full().ravel()
        self.t_cb += time.perf_counter() - t
        return out

    def objective(self, z: np.ndarray) -> float:
        return float(self._timed(self.nlp.fn_f, z)[0])

    def gradient(self, z: np.ndarray) -> np.ndarray:
        return self._timed(self.nlp.fn_grad, z)

    def constraints(self, z: np.ndarray) -> np.ndarray:
        return self._timed(self.nlp.fn_g, z)

    def jacobian(self, z: np.ndarray) -> np.ndarray:
        return self._timed(self.nlp.fn_jac, z)

    def jacobianstructure(self) -> tuple[np.ndarray, np.ndarray]:
        return self._jac_structure

    def hessian(self, z: np.ndarray, lam: np.ndarray, obj_factor: float) -> np.ndarray:
        t = time.perf_counter()
        out = self._hess(z, obj_factor, lam)
        self.t_cb += time.perf_counter() - t
        return out

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
        return self.recorder.record(iter_count, obj_value, inf_pr, inf_du)


def _solve_cyipopt(
    nlp: StructuredNLP,
    z0: np.ndarray,
    ipopt: dict[str, Any],
    recorder: _Recorder,
    evaluate: Any,
) -> IpoptResult:
    import cyipopt

    prob_obj = _CyipoptProblem(nlp, recorder, evaluate)
    problem = cyipopt.Problem(
        n=nlp.n_z,
        m=nlp.n_c,
        problem_obj=prob_obj,
        lb=nlp.lbz,
        ub=nlp.ubz,
        cl=nlp.lbg,
        cu=nlp.ubg,
    )
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
    )
