"""Warm starts for collocation training: smoothed data and a derivative regression.

The seed paper names poor initial guesses as a key limit (Langenkamp et al. §2.5.2): every node
state and every weight of the NLP needs a starting value, and the paper starts from the constant
x(t0) and random weights. Its §2.5.2 suggests the *collocation technique* of Roesch et al. as a
pre-training; this module implements it in two stages (the two-stage / smoothed collocation of
DiffEqFlux's ``collocate_data``, and the derivative labels of FNODE §2.3):

1. `smooth` estimates the states x̂(t_i) and their derivatives x̂'(t_i) from the samples.
2. `fit_initial_guess` regresses the model's right-hand side on those estimates,

       min_p  Σ_i w_i Σ_c ((q_c(x̂_i, u_i, t_i; p) − q̂_c,i) / s_c)²  +  λ ‖w_blocks‖²      (*)

   where q_c is the fitted state's derivative f_c (target x̂'_c) or a fitted model output ψ_c
   (target: the measured output), w_i are trapezoid weights (so (*) is a quadrature of the same
   kind as the NLP's loss, eq. 21a, and λ keeps its meaning), s_c the problem's column scales;
   the problem's block constraints (eq. 17) and parameter bounds are kept. It is a small NLP in
   the parameters only, solved by IPOPT with exact derivatives (CasADi's ``map`` over the
   samples, no unrolling).

`warm_start` returns the training problem with ``params_guess`` = the regression's solution
and ``state_guess`` = the smoothed states; the full collocation NLP then polishes both.

Which smoother: ``"spline"`` (the default) is a cubic smoothing spline per state whose smoothing
parameter is chosen by generalized cross-validation (``scipy.interpolate.make_smoothing_spline``,
through `collocnode.tools._smoothing.smoothing_spline`):
it adapts to the noise level without being told σ, handles non-uniform sampling, and on Van der
Pol data with σ = 0.1 gave the lowest derivative error of the three methods (measured in
``docs/collocation_extensions.md``). Its natural end conditions (x̂'' = 0) bias the derivative in
the first and last few samples. ``"kernel"`` is a local-quadratic Epanechnikov smoother (the
kernel regression of ``collocate_data``) with the bandwidth also chosen by GCV; it has no end
bias but is noisier. ``"fft"`` reuses FNODE's hybrid FFT/finite-difference derivative
(`collocnode.tools._derivatives`, uniform sampling only) and keeps the samples as the states.

When some states are not measured (hidden states, or fitted columns that are model outputs such
as the quarter vehicle's accelerations) they cannot be smoothed from data: the regression then
evaluates the model at the problem's own state guess for them (``state_guess="data"`` integrates
them with the measured states held on the data, `collocnode.training._guess`; or a
simulation of a simpler model given as a callable) with the measured states replaced by their
smoothed values, and a "constant" state guess is refused as meaningless there. Per-trajectory
parameters enter at each trajectory's value (a fitted one at its starting value).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, fields, replace
from typing import Any

import casadi as ca
import numpy as np
from scipy.interpolate import CubicSpline

from .. import _validation as v
from .._data import Trajectory
from .._status import SolverStatus, from_ipopt
from ..tools._smoothing import smoothing_spline
from ..transcription._ipopt.backends import IpoptOptions
from ..transcription._nlp.jit import check_jit
from ..transcription._nlp.node_map import NodeMap
from . import TrainingProblem

METHODS = ("spline", "kernel", "fft")
HESSIANS = ("exact", "gauss-newton")
_KERNEL_PATIENCE = 3


# ---- smoothing -----------------------------------------------------------------------------------


def smooth_samples(t: object, y: object, method: str = "spline") -> tuple[np.ndarray, np.ndarray]:
    """Smoothed values and time derivatives of sampled signals.

    Args:
        t: sample times, shape (n,), strictly increasing [s]; ``"fft"`` needs them uniform.
        y: samples, shape (n,) or (n, k).
        method: "spline", "kernel" or "fft" (see the module docstring).

    Returns:
        ``(y_smooth, dy_dt)``, each of the shape of ``y``; ``dy_dt`` in units of y per second.
    """
    t = v.increasing("t", t)
    arr = v.finite_array("y", y)
    flat = arr.ndim == 1
    cols = arr[:, None] if flat else arr
    if cols.ndim != 2 or cols.shape[0] != t.size:
        raise ValueError(f"y must have shape ({t.size},) or ({t.size}, k), got {arr.shape}")
    v.choice("smoothing method", method, METHODS)
    if t.size < 5:
        raise ValueError(f"smoothing needs at least 5 samples, got {t.size}")
    if method == "spline":
        ys, dy = _spline(t, cols)
    elif method == "kernel":
        ys, dy = _kernel(t, cols)
    else:
        from ..tools._derivatives import derivative, uniform_step

        ys, dy = cols.copy(), derivative(cols, uniform_step(t), "hybrid")
    return (ys[:, 0], dy[:, 0]) if flat else (ys, dy)


def smooth(data: Trajectory, method: str = "spline") -> tuple[np.ndarray, np.ndarray]:
    """Smoothed states and derivative estimates of a trajectory at its sample times.

    Returns:
        ``(x_smooth, xdot_estimate)``, each of shape (n_samples, n_states) [state units,
        state units / s].
    """
    if not isinstance(data, Trajectory):
        raise TypeError(f"data must be a Trajectory, got {data!r}")
    return smooth_samples(data.t, data.x, method)


def _spline(t: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    # one GCV smoothing parameter per column: the states may carry different noise levels
    fits = [smoothing_spline(t, y[:, k]) for k in range(y.shape[1])]
    return (
        np.column_stack([f(t) for f in fits]),
        np.column_stack([f.derivative()(t) for f in fits]),
    )


def _quadratic_rows(d: np.ndarray, h: float) -> np.ndarray:
    """The rows (..., 2, K) that map samples at offsets ``d`` (..., K) [s] from t_i to the local
    quadratic's value and first derivative at t_i, with Epanechnikov weights of bandwidth ``h``
    (an offset of ±h or more has weight 0, so its entries are 0: padding)."""
    u = d / h
    weight = np.where(np.abs(u) < 1.0, 0.75 * (1.0 - u * u), 0.0)
    V = np.stack([np.ones_like(d), d, d * d], axis=-1)  # (..., K, 3)
    A = np.einsum("...k,...ka,...kb->...ab", weight, V, V)
    rows = np.linalg.solve(A, np.swapaxes(V * weight[..., None], -1, -2))  # (..., 3, K)
    return rows[..., :2, :]


class _Windows:
    """The local-quadratic smoother of bandwidth ``h`` on any sampling: one row per sample."""

    def __init__(self, t: np.ndarray, h: float) -> None:
        n = t.size
        lo = np.searchsorted(t, t - h, side="right")
        hi = np.searchsorted(t, t + h, side="left")
        width = int(np.max(hi - lo))
        idx = lo[:, None] + np.arange(width)[None, :]
        self.idx = np.minimum(idx, n - 1)
        # padding past a window's end at offset h: zero weight
        self.rows = _quadratic_rows(np.where(idx >= hi[:, None], h, t[self.idx] - t[:, None]), h)
        self.mean_diag = float(np.mean(self.rows[np.arange(n), 0, np.arange(n) - lo]))

    def apply(self, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        win = y[self.idx]  # (n, K)
        return np.einsum("nk,nk->n", self.rows[:, 0], win), np.einsum(
            "nk,nk->n", self.rows[:, 1], win
        )


class _UniformWindows:
    """The same smoother on uniform sampling: every window away from the ends holds the same
    offsets, so one row serves them all (a correlation), and the w rows at each end are
    mirror images of each other. Memory O(w²) instead of O(n w)."""

    def __init__(self, n: int, dt: float, h: float) -> None:
        w = _half_width(h, dt)
        self.n, self.w = n, w
        self.interior = _quadratic_rows(np.arange(-w, w + 1) * dt, h)  # (2, 2w + 1)
        # the left end: sample i < w sees samples 0 .. i + w
        offsets = (np.arange(2 * w)[None, :] - np.arange(w)[:, None]) * dt
        valid = np.arange(2 * w)[None, :] <= np.arange(w)[:, None] + w
        self.left = _quadratic_rows(np.where(valid, offsets, h), h)  # (w, 2, 2w), padded
        diag_left = self.left[np.arange(w), 0, np.arange(w)]
        self.mean_diag = float((2 * diag_left.sum() + (n - 2 * w) * self.interior[0, w]) / n)

    def apply(self, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        n, w = self.n, self.w
        value, rate = np.empty(n), np.empty(n)
        value[w : n - w] = np.correlate(y, self.interior[0], "valid")
        rate[w : n - w] = np.correlate(y, self.interior[1], "valid")
        head, tail = y[: 2 * w], y[n - 2 * w :][::-1]
        value[:w], rate[:w] = self.left[:, 0] @ head, self.left[:, 1] @ head
        # the right end mirrors the left: reversed samples, the derivative's sign flipped
        value[n - w :] = (self.left[:, 0] @ tail)[::-1]
        rate[n - w :] = -(self.left[:, 1] @ tail)[::-1]
        return value, rate


def _half_width(h: float, dt: float) -> int:
    """Samples on each side strictly closer than ``h`` on a uniform grid of step ``dt``."""
    return int(np.ceil(h / dt - 1e-9)) - 1


def _windows(t: np.ndarray, h: float) -> _Windows | _UniformWindows:
    dt = (t[-1] - t[0]) / (t.size - 1)
    uniform = np.max(np.abs(np.diff(t) - dt)) <= 1e-9 * dt
    if uniform and t.size > 4 * _half_width(h, dt):
        return _UniformWindows(t.size, dt, h)
    return _Windows(t, h)


def _kernel(t: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    # Bandwidths grow by 25 % a step from just above the smallest one that keeps every local fit
    # determined (three samples inside the one-sided window at the ends) up to a quarter of the
    # span; GCV picks one per column, as the smoothing spline does. The scan stops once every
    # column's GCV has risen _KERNEL_PATIENCE steps in a row: the score rises steadily past its
    # minimum, and the wide windows are the costly ones.
    span = t[-1] - t[0]
    h_min = 2.05 * float(np.max(np.diff(t)))
    steps = max(2, int(np.ceil(np.log(max(0.25 * span / h_min, 1.01)) / np.log(1.25))) + 1)
    best = [(np.inf, None, None)] * y.shape[1]
    previous = np.full(y.shape[1], np.inf)
    rising = np.zeros(y.shape[1], dtype=int)
    for h in h_min * 1.25 ** np.arange(steps):
        windows = _windows(t, h)
        denom = (1.0 - windows.mean_diag) ** 2
        for k in range(y.shape[1]):
            fit, rate = windows.apply(y[:, k])
            gcv = np.mean((y[:, k] - fit) ** 2) / denom if denom > 0 else np.inf
            rising[k] = rising[k] + 1 if gcv > previous[k] else 0
            previous[k] = gcv
            if gcv < best[k][0]:
                best[k] = (gcv, fit, rate)
        if np.all(rising >= _KERNEL_PATIENCE):
            break
    return np.column_stack([b[1] for b in best]), np.column_stack([b[2] for b in best])


# ---- regression --------------------------------------------------------------------------------


@dataclass
class WarmStart:
    """The result of `fit_initial_guess`.

    Attributes:
        problem: the training problem with ``params_guess`` and ``state_guess`` set.
        p: the regressed parameter vector, shape (n_params,).
        status, ipopt_status, iterations, objective: how the regression NLP ended ((*) in the
            module docstring).
        t: sample times used, shape (n,) [s].
        x: states at which the model was evaluated, shape (n, n_states).
        targets: regression targets, shape (n, n_fit): x̂' for fitted states, data for outputs.
        timings: wall times [s]: ``smooth``, ``regression``, ``total``.
    """

    problem: TrainingProblem
    p: np.ndarray
    status: SolverStatus
    ipopt_status: str
    iterations: int
    objective: float
    t: np.ndarray
    x: np.ndarray
    targets: np.ndarray
    timings: dict[str, float]

    @property
    def success(self) -> bool:
        return self.status == SolverStatus.SUCCESS


def _stagnation_options(rtol: float) -> dict[str, Any]:
    """IPOPT's acceptable-level stop reduced to its objective-change test (see ``stop_rtol``)."""
    return {
        "acceptable_obj_change_tol": v.positive_float("stop_rtol", rtol),
        "acceptable_iter": 5,
        "acceptable_constr_viol_tol": 1e-3,
        "acceptable_tol": 1e20,
        "acceptable_dual_inf_tol": 1e20,
        "acceptable_compl_inf_tol": 1e20,
    }


def _default_ipopt() -> IpoptOptions:
    return IpoptOptions(tol=1e-8, max_iter=500, print_level=0)


def fit_initial_guess(
    problem: TrainingProblem,
    method: str = "spline",
    *,
    seed: int | None = None,
    ipopt: IpoptOptions | None = None,
    jit: bool | str = False,
    stride: int = 1,
    hessian: str = "exact",
    stop_rtol: float | None = None,
) -> WarmStart:
    """Smooth the data, regress the model on the derivative estimates, and build the
    warm-started training problem.

    Args:
        problem: the training problem (its model, data, fit columns, scales, regularization,
            block constraints and parameter bounds all carry over to the regression).
        method: the smoother, "spline", "kernel" or "fft" (`smooth_samples`).
        seed: seeds the random starting weights of the regression when the problem has no
            ``params_guess`` (the same draw [`collocnode.solve`][collocnode.solve] would
            make).
        ipopt: IPOPT settings of the regression (default: tol 1e-8, 500 iterations, silent).
        jit: compile the per-sample gradient and Hessian to C (cached on disk like the NLP's
            node functions, `collocnode.transcription._nlp.jit`; needs gcc): True, False, or
            "auto" (the cached library; else compiled now for many samples, else compiled in
            the background for later runs).
        stride: regress on every ``stride``-th sample (the smoothing still sees all of them,
            and the trapezoid weights of the kept samples span the same horizon).
        hessian: "exact" (the Hessian of (*)) or "gauss-newton" (2 Σ w_i J_iᵀ J_i of the
            scaled residuals: positive semidefinite, no second derivatives of the model).
        stop_rtol: stop once the objective's relative change per iteration stays below this
            for 5 iterations at a constraint violation of at most 1e-3 (IPOPT's
            ``acceptable_obj_change_tol`` with the other acceptable-level tests off); the
            status is then "acceptable". Over-parametrized networks leave the regression with
            flat directions along which IPOPT creeps for hundreds of iterations (on the
            quarter vehicle the objective moved 0.3 % between iterations 100 and 500), and
            there the block constraints' violation, not the objective, decides when it stops
            (42 s of quarter vehicle: 357 iterations at 1e-4, 173 at 1e-3, 109 at 1e-2; the
            full NLP then enforces the constraints to its own tolerance). None: run to
            ``ipopt.tol``.

    Returns:
        A `WarmStart`; its ``problem`` is ready for [`collocnode.solve`][collocnode.solve]. A
        regression that does not converge still hands on its last finite iterate (its status
        says so); a non-finite one falls back to the starting weights.
    """
    stride, ipopt = _check_arguments(problem, method, stride, ipopt, hessian, stop_rtol)
    check_jit(jit)
    t_start = time.perf_counter()
    # the fitted columns as TrainingProblem resolved them: ("x", state) or ("y", output)
    observed = sorted({i for kind, i in problem.columns if kind == "x"})
    _check_unobserved_guessed(problem, observed)
    # every trajectory's samples enter the regression, each with its own quadrature weights
    samples = [
        _samples(problem, k, observed, method, stride) for k in range(problem.n_trajectories)
    ]
    t_smooth = time.perf_counter() - t_start

    p0 = _starting_params(problem, seed)
    stacked = _Samples.stack(samples)
    p, res = _regress(problem, stacked, p0, ipopt, jit, hessian)

    guesses = [CubicSpline(s.t, s.x, axis=0) for s in samples]
    warm = replace(
        problem, params_guess=p, state_guess=guesses[0] if len(guesses) == 1 else guesses
    )
    t_total = time.perf_counter() - t_start
    return WarmStart(
        problem=warm,
        p=p,
        t=stacked.t,
        x=stacked.x,
        targets=stacked.targets,
        timings={"smooth": t_smooth, "regression": t_total - t_smooth, "total": t_total},
        **res,
    )


def _check_unobserved_guessed(problem: TrainingProblem, observed: list[int]) -> None:
    """Refuse a fit that leaves a state unobserved when the problem's state guess cannot guess
    it (``"constant"``): the regression needs its values at the samples."""
    model = problem.model
    if len(observed) < model.n_states and _is_constant(problem.state_guess):
        unobserved = [i for i in range(model.n_states) if i not in observed]
        names = model.state_names or tuple(f"x{i}" for i in range(model.n_states))
        raise ValueError(
            f"warm_start: the fit leaves state {names[unobserved[0]]!r} unobserved, and the "
            "problem's state_guess is 'constant'; give a state guess for it (state_guess="
            "'data' integrates it with the measured states held on the data, or a callable, "
            "e.g. a simulation of a simpler model)"
        )


def _check_arguments(
    problem: object,
    method: str,
    stride: int,
    ipopt: IpoptOptions | None,
    hessian: str,
    stop_rtol: float | None,
) -> tuple[int, IpoptOptions]:
    """The arguments of `fit_initial_guess` checked; returns the stride and the IPOPT
    settings of the regression (the default's, and with ``stop_rtol`` its stagnation test)."""
    if not isinstance(problem, TrainingProblem):
        raise TypeError(f"problem must be a TrainingProblem, got {problem!r}")
    v.choice("smoothing method", method, METHODS)
    v.choice("hessian", hessian, HESSIANS)
    stride = v.positive_int("stride", stride)
    ipopt = _default_ipopt() if ipopt is None else ipopt
    if not isinstance(ipopt, IpoptOptions):
        raise TypeError(f"ipopt must be an IpoptOptions, got {ipopt!r}")
    if not isinstance(ipopt.mumps_ordering, str):
        raise ValueError(
            f"ipopt.mumps_ordering of the regression must name one ordering, got "
            f"{ipopt.mumps_ordering!r} (an ordering trial is for the collocation solve)"
        )
    if stop_rtol is not None:
        ipopt = replace(ipopt, extra={**ipopt.extra, **_stagnation_options(stop_rtol)})
    if problem.mask is not None:
        raise ValueError(
            "warm_start smooths every sample of the fitted columns; a problem with a mask "
            "(missing values) is not supported"
        )
    return stride, ipopt


def _starting_params(problem: TrainingProblem, seed: int | None) -> np.ndarray:
    """The regression's start (n_params,): the problem's ``params_guess``, or the model's
    random initial weights drawn with ``seed`` (the draw
    [`collocnode.solve`][collocnode.solve] makes)."""
    model = problem.model
    p0 = problem.params_guess
    if p0 is None:
        p0 = model.init_params(np.random.default_rng(seed))
    return v.finite_array("params_guess", p0, shape=(model.n_params,))


@dataclass
class _Samples:
    """The regression's data of one trajectory (or of all, stacked): times (n,), states at
    which the model is evaluated (n, n_states), known inputs (n, n_inputs), per-trajectory
    parameters (n, n_per_trajectory), targets (n, n_fit) and trapezoid weights (n,)."""

    t: np.ndarray
    x: np.ndarray
    u: np.ndarray
    c: np.ndarray
    targets: np.ndarray
    w: np.ndarray

    @classmethod
    def stack(cls, samples: list[_Samples]) -> _Samples:
        """Every trajectory's samples, one after another."""
        return cls(
            **{f.name: np.concatenate([getattr(s, f.name) for s in samples]) for f in fields(cls)}
        )


def _samples(
    problem: TrainingProblem, k: int, observed: list[int], method: str, stride: int
) -> _Samples:
    """Smoothed states, derivative targets, inputs and weights of trajectory ``k`` over its
    training horizon, at every ``stride``-th sample (the last one always kept)."""
    model = problem.model
    data = problem.trajectories[k]
    if k == 0:
        data = data.window(*problem.horizon)
    t = data.t
    x_est = np.empty((t.size, model.n_states))
    xdot = np.full((t.size, model.n_states), np.nan)
    # states taken from the data are smoothed (the regression's inputs carry no noise then);
    # the others come from the problem's own state guess
    complete = np.flatnonzero(np.isfinite(data.x).all(axis=0)).tolist()
    smoothed = complete if _is_data(problem.state_guess_of(k)) else observed
    if len(smoothed) < model.n_states:
        x_est[:] = problem.to_dop().state_guess(t, segment=k)
    if smoothed:
        x_est[:, smoothed], xdot[:, smoothed] = smooth_samples(t, data.x[:, smoothed], method)
    targets = np.column_stack(
        [xdot[:, i] if kind == "x" else data.y[:, i] for kind, i in problem.columns]
    )
    keep = np.unique(np.r_[np.arange(0, t.size, stride), t.size - 1])
    t, x_est, targets = t[keep], x_est[keep], targets[keep]
    u_fn = problem.input_function(k)
    u = u_fn(t) if u_fn is not None else np.zeros((t.size, 0))
    # trapezoid weights: (*) approximates an integral over the horizon like the NLP's loss
    w = np.zeros(t.size)
    w[:-1] += 0.5 * np.diff(t)
    w[1:] += 0.5 * np.diff(t)
    c = model.per_trajectory_values(problem.trajectory_params_of(k))
    return _Samples(
        t,
        x_est,
        np.asarray(u, dtype=float).reshape(t.size, -1),
        np.tile(c, (t.size, 1)),
        targets,
        w,
    )


def warm_start(
    problem: TrainingProblem,
    method: str = "spline",
    *,
    seed: int | None = None,
    ipopt: IpoptOptions | None = None,
    jit: bool | str = False,
    stride: int = 1,
    hessian: str = "exact",
    stop_rtol: float | None = None,
) -> TrainingProblem:
    """``problem`` with ``params_guess`` from the derivative regression and ``state_guess`` from
    the smoothed data (see `fit_initial_guess` for the arguments and the details)."""
    return fit_initial_guess(
        problem,
        method,
        seed=seed,
        ipopt=ipopt,
        jit=jit,
        stride=stride,
        hessian=hessian,
        stop_rtol=stop_rtol,
    ).problem


def _regress(
    problem: TrainingProblem,
    samples: _Samples,
    p0: np.ndarray,
    ipopt: IpoptOptions,
    jit: bool | str,
    hessian: str,
) -> tuple[np.ndarray, dict[str, Any]]:
    """Solve (*) of the module docstring from p0; returns p and the solver record.

    Exact derivatives without a global graph: one SX function gives a sample's loss term with its
    gradient and Hessian in p; ``map`` with a reduction sums them over the samples inside CasADi
    (the same pattern as the collocation NLP's p-p block), and IPOPT gets them as custom
    callbacks. Expanding the whole sum instead and letting CasADi find the Hessian took seconds
    per solve on Van der Pol.
    """
    fns = _sample_loss_functions(
        problem, samples.targets.shape[1], hessian, jit, int(samples.t.size)
    )
    p = ca.MX.sym("p", problem.model.n_params)
    objective = _summed_objective(problem, fns, samples, p)
    # bounds and block constraints exactly as the collocation NLP has them (eq. 17)
    dop = problem.to_dop(params_guess=p0)
    solver = _regression_solver(dop, problem.model.n_states, p, objective, ipopt)
    lbg, ubg = (dop.boundary.lb, dop.boundary.ub) if dop.boundary is not None else ((), ())
    # the DOP's parameters hold the fitted per-trajectory parameters after the model's
    npar = problem.model.n_params
    out = solver(x0=p0, lbx=dop.p_lb[:npar], ubx=dop.p_ub[:npar], lbg=lbg, ubg=ubg)
    stats = solver.stats()
    status, name = from_ipopt(stats.get("return_status", "Unknown"))
    p_fit = np.asarray(out["x"]).ravel()
    objective_value = float(out["f"])
    if not (np.all(np.isfinite(p_fit)) and np.isfinite(objective_value)):
        p_fit, objective_value = p0.copy(), float("nan")
    return p_fit, {
        "status": status,
        "ipopt_status": name,
        "iterations": int(stats.get("iter_count", 0)),
        "objective": objective_value,
    }


#: the regression's estimate of what compiling costs and saves (``jit="auto"``), measured on the
#: Van der Pol default (201 samples, one core): compiled derivatives saved 6e-3 s per sample
#: over the whole regression, the compilation took 2.2 s
SAMPLE_SECONDS_SAVED = 6e-3
SAMPLE_COMPILE_SECONDS = 2.2


def _sample_loss_functions(
    problem: TrainingProblem, n_fit: int, hessian: str, jit: bool | str, n_samples: int = 0
) -> list[ca.Function]:
    """One sample's term of (*), ``w Σ_c ((q_c - q̂_c) / s_c)²``, and its gradient and Hessian
    (upper triangle; "gauss-newton": 2 w JᵀJ of the scaled residuals) in p, as Functions of
    (x, p, u, t, q̂, w, c), c the per-trajectory parameters. One Function per derivative order: the
    objective alone is evaluated often in the line search and must not drag the Hessian along."""
    model = problem.model
    xs, ps = ca.SX.sym("x", model.n_states), ca.SX.sym("p", model.n_params)
    us, ts = ca.SX.sym("u", model.n_inputs), ca.SX.sym("t")
    qs, ws = ca.SX.sym("q", n_fit), ca.SX.sym("w")
    cs = ca.SX.sym("c", len(model.per_trajectory))
    xdot, y = model.symbolic(xs, ps, us, ts, cs)
    q = ca.vertcat(*[xdot[i] if kind == "x" else y[i] for kind, i in problem.columns])
    residual = (q - qs) / problem.scales()
    loss = ws * ca.sumsqr(residual)
    if hessian == "gauss-newton":
        jac = ca.jacobian(residual, ps)
        grad, hess = 2 * ws * ca.mtimes(jac.T, residual), 2 * ws * ca.mtimes(jac.T, jac)
    else:
        hess, grad = ca.hessian(loss, ps)
    args = [xs, ps, us, ts, qs, ws, cs]
    fns = [
        ca.Function(name, args, [expr])
        for name, expr in (("loss", loss), ("loss_grad", grad), ("loss_hess", ca.triu(hess)))
    ]
    if jit:
        from ..transcription._nlp.jit import jit_functions, pays

        worth = pays(n_samples, SAMPLE_SECONDS_SAVED, SAMPLE_COMPILE_SECONDS, iterations=1)
        fns[1:] = jit_functions(fns[1:], "collocnode_warmstart", jit, worth)
    return fns


def _summed_objective(
    problem: TrainingProblem, fns: list[ca.Function], samples: _Samples, p: ca.MX
) -> tuple[ca.MX, ca.MX, ca.MX]:
    """(f, gradient, Hessian upper triangle) of (*) at the symbol ``p``: the sample terms
    summed by a reducing map over the samples, plus the weights' regularization λ ‖w‖²."""
    npar, nw = problem.model.n_params, problem.model.n_weights
    n = samples.t.size
    # nested maps (NodeMap): one flat summing map of a compiled Hessian over 4,201 samples took
    # 3.7 s to construct on the quarter vehicle
    sums = NodeMap(n, threads=1, reduced_nnz=max(fn.nnz_out(0) for fn in fns))
    data = sums.pad_columns(
        [
            ca.DM(samples.x.T),
            p,
            ca.DM(samples.u.T),
            ca.DM(samples.t[None, :]),
            ca.DM(samples.targets.T),
            ca.DM(np.reshape(samples.w, (1, n))),
            ca.DM(samples.c.T),
        ],
        shared=(1,),
        zero=(5,),
    )
    f, g_f, h_f = (sums.wrap(fn, [1], [0])(*data)[0] for fn in fns)
    lam = problem.lam
    if lam > 0:
        mask = np.r_[np.ones(nw), np.zeros(npar - nw)]
        f = f + lam * ca.sumsqr(p[:nw])
        g_f = g_f + 2.0 * lam * ca.DM(mask) * p
        h_f = h_f + ca.DM(ca.Sparsity.diag(npar), 2.0 * lam * mask)
    return f, g_f, h_f


def _regression_solver(
    dop: Any, n_states: int, p: ca.MX, objective: tuple[ca.MX, ca.MX, ca.MX], ipopt: IpoptOptions
) -> ca.Function:
    """IPOPT on (*) with the objective's derivatives as custom callbacks and the problem's
    block constraints (its boundary constraints, which see only p) with their exact Hessian."""
    f, g_f, h_f = objective
    zero = ca.DM.zeros(n_states)
    g = dop.boundary.fn(zero, zero, p) if dop.boundary is not None else ca.MX(0, 1)
    empty, sigma = ca.MX.sym("empty", 0), ca.MX.sym("sigma")
    lam_g = ca.MX.sym("lam_g", g.shape[0])
    h_g = ca.hessian(ca.dot(lam_g, g), p)[0] if g.shape[0] else ca.MX(p.shape[0], p.shape[0])
    callbacks = {
        "grad_f": ca.Function("nlp_grad_f", [p, empty], [f, g_f], ["x", "p"], ["f", "grad_f_x"]),
        "jac_g": ca.Function(
            "nlp_jac_g", [p, empty], [g, ca.jacobian(g, p)], ["x", "p"], ["g", "jac_g_x"]
        ),
        "hess_lag": ca.Function(
            "nlp_hess_l",
            [p, empty, sigma, lam_g],
            [ca.triu(sigma * h_f + h_g)],
            ["x", "p", "lam_f", "lam_g"],
            ["triu_hess_gamma_x_x"],
        ),
    }
    return ca.nlpsol(
        "warm_start",
        "ipopt",
        {"x": p, "f": f, "g": g},
        {**callbacks, "ipopt": ipopt.ipopt_dict(), "print_time": False, "error_on_fail": False},
    )


def _is_data(state_guess: Any) -> bool:
    return isinstance(state_guess, str) and state_guess == "data"


def _is_constant(state_guess: Any) -> bool:
    return isinstance(state_guess, str) and state_guess == "constant"
