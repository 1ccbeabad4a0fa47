"""Simulate a trained (hybrid) model: compiled SUNDIALS CVODES (through CasADi), an adaptive
scipy integrator, or a compiled fixed-step RK4 rollout."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from numbers import Real
from typing import Any

import casadi as ca
import numpy as np

from .. import _validation as v
from .._data import Trajectory
from ..tools._ivp import MAX_STEPS, SimulationError, solve_bounded
from ._hybrid import HybridModel

InputFn = Callable[[np.ndarray], np.ndarray]

#: scipy's ``solve_ivp`` methods by name, plus "cvodes" and "rk4" (see `simulate`)
METHODS = ("cvodes", "DOP853", "RK45", "RK23", "Radau", "BDF", "LSODA", "rk4")
#: known inputs given as a callable are sampled this many times per output interval for the
#: compiled integrator's cubic B-spline of them
INPUT_SAMPLES = 4


def simulate(
    model: HybridModel,
    p: np.ndarray,
    t: np.ndarray,
    x0: np.ndarray,
    inputs: InputFn | None = None,
    method: str = "DOP853",
    rtol: float = 1e-10,
    atol: float = 1e-10,
    max_step: float = np.inf,
    bound: float = 1e6,
    substeps: int = 2,
    max_steps: int = MAX_STEPS,
    trajectory_params: Mapping[str, float] | None = None,
) -> Trajectory:
    """Integrate ``model`` with parameter vector ``p`` from ``x0`` and sample it at ``t``.

    Args:
        model: the model.
        p: parameter vector (model.n_params,).
        t: output times (n,), strictly increasing; integration starts at t[0].
        x0: initial state (n_states,).
        inputs: known inputs, ``inputs(t: (n,)) -> (n, n_inputs)``; required if the model has any.
        method: "cvodes" (SUNDIALS CVODES through CasADi, the whole integration in compiled
            code: Adams-Moulton with Newton iterations on the exact Jacobian, switching to BDF
            where Adams fails or runs out of steps, as on a very stiff model;
            known inputs become a compiled piecewise polynomial: the samples of an
            [`Inputs`][collocnode.Inputs] with its own interpolation, a callable
            sampled `INPUT_SAMPLES` times per output interval under a cubic B-spline), a
            scipy ``solve_ivp`` method ("DOP853", "Radau", "LSODA", ...; implicit methods get
            the exact Jacobian), or "rk4": classical Runge-Kutta with ``substeps`` steps per
            output interval, the whole rollout compiled into one CasADi ``mapaccum`` loop (fast
            for long, densely sampled horizons such as 42 s at 1 kHz).
        rtol, atol, max_step: integrator settings (rtol > 0; atol >= 0, a number or one per
            state; max_step > 0, may be inf).
        bound: states beyond ±bound (a positive finite number) count as a blow-up.
        substeps: "rk4" steps per output interval.
        max_steps: step budget of the integrator (default `MAX_STEPS`); an
            integration that needs more steps stops with a
            [`SimulationError`][collocnode.SimulationError].
        trajectory_params: values of the model's per-trajectory parameters by name (e.g. a
            trajectory's ``params``; other names are ignored); default: their ``value``.

    Returns:
        A [`Trajectory`][collocnode.Trajectory] with the states and, if the model has outputs,
        ``y``. A single output time gives the initial state.

    Raises:
        SimulationError: if the integration fails, leaves ``±bound`` or exceeds ``max_steps``;
            carries the time reached.

    Examples:
        A physics-only model, q'' = -k q with k = 4, against its exact solution cos(2 t):

        ```python
        import numpy as np

        from collocnode import HybridModel, Parameter, simulate

        oscillator = HybridModel(  # q'' = -k q, no network
            n_states=2,
            blocks={},
            rhs=lambda x, u, t, blocks, params: [x[1], -params["k"] * x[0]],
            parameters={"k": Parameter(1.0, fit=True)},
        )
        t = np.linspace(0.0, 10.0, 101)
        out = simulate(oscillator, np.array([4.0]), t, np.array([1.0, 0.0]))  # p = [k]
        error = np.max(np.abs(out.x[:, 0] - np.cos(2.0 * t)))
        print(out.x.shape, f"largest error {error:.1e}")
        assert error < 1e-7
        ```
    """
    if not isinstance(model, HybridModel):
        raise TypeError(f"model must be a HybridModel, got {model!r:.80}")
    t = v.increasing("t", t)
    if t.size == 0:
        raise ValueError("t must hold at least one output time, got an empty array")
    x0 = v.finite_array("x0", x0, shape=(model.n_states,))
    p = v.finite_array("p", p, shape=(model.n_params,))
    if model.n_inputs and inputs is None:
        raise ValueError(f"the model has {model.n_inputs} inputs; pass inputs=callable")
    raw_inputs = inputs
    if inputs is not None:
        inputs = _checked_inputs(v.function("inputs", inputs), model.n_inputs)
    _check_settings(model, method, rtol, atol, max_step)
    bound = v.positive_float("bound", bound)
    substeps = v.positive_int("substeps", substeps)
    max_steps = v.positive_int("max_steps", max_steps)
    fn = _model_function(model, trajectory_params)
    if method == "rk4":
        return _simulate_rk4(model, fn, p, t, x0, inputs, substeps, bound, max_steps)
    settings = {"rtol": rtol, "atol": atol, "max_step": max_step}
    if method == "cvodes":
        try:
            return _simulate_cvodes(
                model, fn, p, t, x0, raw_inputs, inputs, settings, bound, max_steps
            )
        except _CVODESFailed:
            # where and why it failed: the implicit scipy integrator finds the place
            method = "Radau"
    return _simulate_scipy(model, fn, p, t, x0, inputs, method, settings, bound, max_steps)


def _model_function(
    model: HybridModel, trajectory_params: Mapping[str, float] | None
) -> Callable[..., Any]:
    """``(x, p, u, t) -> (xdot, y)``: the model with its per-trajectory parameters set."""
    if not model.per_trajectory:
        if trajectory_params is not None:
            model.per_trajectory_values(trajectory_params)  # the type checked all the same
        return model.function
    c = ca.DM(model.per_trajectory_values(trajectory_params))

    def with_params(x: Any, p: Any, u: Any, t: Any) -> Any:
        return model.per_trajectory_function(x, p, u, t, c)

    return with_params


def _check_settings(
    model: HybridModel, method: object, rtol: object, atol: object, max_step: object
) -> None:
    v.choice("method", method, METHODS)
    v.positive_float("rtol", rtol)
    atol_arr = v.finite_array("atol", atol)
    if atol_arr.shape not in ((), (model.n_states,)) or np.any(atol_arr < 0):
        raise ValueError(
            f"atol must be a number >= 0 or one per state ({model.n_states}), got {atol!r:.60}"
        )
    if isinstance(max_step, bool) or not isinstance(max_step, Real) or not max_step > 0:
        raise ValueError(f"max_step must be a positive number (inf allowed), got {max_step!r}")


def _simulate_scipy(
    model: HybridModel,
    fn: Callable[..., Any],
    p: np.ndarray,
    t: np.ndarray,
    x0: np.ndarray,
    inputs: InputFn | None,
    method: str,
    settings: dict[str, Any],
    bound: float,
    max_steps: int,
) -> Trajectory:
    """``simulate`` with a scipy ``solve_ivp`` method; ``settings``: rtol, atol, max_step."""
    xs, us, ts = ca.SX.sym("x", model.n_states), ca.SX.sym("u", model.n_inputs), ca.SX.sym("t")
    xdot = fn(xs, ca.DM(p), us, ts)[0]
    f = _Buffered(ca.Function("f", [ts, xs, us], [ca.densify(xdot)]))
    jac = _Buffered(ca.Function("J", [ts, xs, us], [ca.densify(ca.jacobian(xdot, xs))]))

    def u_at(tt: float) -> np.ndarray:
        if not model.n_inputs:
            return np.zeros(0)
        return np.asarray(inputs(np.atleast_1d(tt)), dtype=float).reshape(model.n_inputs)

    def rhs(tt: float, xx: np.ndarray) -> np.ndarray:
        xdot = f(tt, xx, u_at(tt))
        if not np.all(np.isfinite(xdot)):
            # scipy's explicit steppers shrink a step with a NaN error estimate forever
            raise SimulationError(
                f"simulation failed at t = {tt:.6g}: the model's right-hand side is not finite "
                f"(x = {np.array2string(xx, precision=4)})",
                float(tt),
            )
        return xdot

    kwargs: dict[str, Any] = dict(settings)
    if method in ("Radau", "BDF", "LSODA"):
        n = model.n_states
        # CasADi stores matrices column by column
        kwargs["jac"] = lambda tt, xx: jac(tt, xx, u_at(tt)).reshape(n, n, order="F")
    x = (
        x0[None, :]
        if t.size == 1
        else solve_bounded(rhs, t, x0, method, bound=bound, max_steps=max_steps, **kwargs)
    )
    if not np.all(np.isfinite(x)):
        bad = int(np.argmax(~np.all(np.isfinite(x), axis=1)))
        raise SimulationError(
            f"simulation produced non-finite states at t = {t[bad]:.6g}", float(t[bad])
        )
    return _trajectory(model, fn, p, t, x, inputs)


class _Buffered:
    """``fn(t, x, u)`` called through CasADi's ``FunctionBuffer``: the arguments are copied
    into fixed numpy buffers and the result out of one, about 1.5 µs per call instead of
    about 40 µs for converting the arguments to DM each time (integrators call the right-hand
    side ~10⁵ times). A call returns a copy of the (dense, column-major) first output."""

    def __init__(self, fn: ca.Function) -> None:
        self._args = [np.zeros(fn.nnz_in(i)) for i in range(fn.n_in())]
        self._res = np.zeros(fn.nnz_out(0))
        # ``_evaluate`` is a raw pointer into ``_buffer``, which points into ``_fn``: the
        # object keeps all three alive together
        self._fn = fn
        self._buffer, self._evaluate = fn.buffer()
        for i, a in enumerate(self._args):
            self._buffer.set_arg(i, memoryview(a))
        self._buffer.set_res(0, memoryview(self._res))

    def __call__(self, *values: Any) -> np.ndarray:
        for a, value in zip(self._args, values, strict=True):
            a[:] = value
        self._evaluate()
        return self._res.copy()


def _checked_inputs(inputs: InputFn, n_inputs: int) -> InputFn:
    """``inputs`` wrapped so that a result of the wrong size is one clear error."""

    def checked(t: np.ndarray) -> np.ndarray:
        u = v.finite_array("inputs(t)", inputs(t))
        if u.size != t.size * n_inputs:
            raise ValueError(
                f"inputs(t) must return shape ({t.size}, {n_inputs}) for {t.size} times, "
                f"got shape {u.shape}"
            )
        return u

    return checked


def _simulate_rk4(
    model: HybridModel,
    fn: Callable[..., Any],
    p: np.ndarray,
    t: np.ndarray,
    x0: np.ndarray,
    inputs: InputFn | None,
    substeps: int,
    bound: float,
    max_steps: int,
) -> Trajectory:
    if (t.size - 1) * substeps > max_steps:
        t_stop = float(t[max_steps // substeps])
        raise SimulationError(
            f"simulation failed at t = {t_stop:.6g}: the step budget max_steps={max_steps} is "
            f"exhausted ({t.size - 1} output intervals x {substeps} substeps)",
            t_stop,
        )
    nx, nu = model.n_states, model.n_inputs
    x, h, t0 = ca.SX.sym("x", nx), ca.SX.sym("h"), ca.SX.sym("t0")
    U = ca.SX.sym("U", nu, 2 * substeps + 1)  # inputs at the substep points and midpoints
    P = ca.DM(p)

    def f(xx, k, tt):
        return fn(xx, P, U[:, k], tt)[0]

    hs = h / substeps
    xk = x
    for s in range(substeps):
        tk = t0 + s * hs
        k1 = f(xk, 2 * s, tk)
        k2 = f(xk + hs / 2 * k1, 2 * s + 1, tk + hs / 2)
        k3 = f(xk + hs / 2 * k2, 2 * s + 1, tk + hs / 2)
        k4 = f(xk + hs * k3, 2 * s + 2, tk + hs)
        xk = xk + hs / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    step = ca.Function("rk4_step", [x, ca.vec(U), t0, h], [xk])
    n = t.size - 1
    if n == 0:
        X = x0[None, :]
    else:
        frac = np.arange(2 * substeps + 1) / (2 * substeps)
        tt = t[:-1, None] + np.diff(t)[:, None] * frac[None, :]  # (n, 2 substeps + 1)
        if nu:
            uu = np.asarray(inputs(tt.ravel()), dtype=float).reshape(n, 2 * substeps + 1, nu)
            Ucols = uu.transpose(0, 2, 1).reshape(n, -1, order="F").T  # vec(U) per step
        else:
            Ucols = np.zeros((0, n))
        with np.errstate(all="ignore"):
            traj = step.mapaccum("rollout", n)(x0, Ucols, t[None, :-1], np.diff(t)[None, :])
        X = np.vstack([x0, np.asarray(traj).T])
    _check_bound(t, X, bound)
    return _trajectory(model, fn, p, t, X, inputs)


class _CVODESFailed(Exception):
    """CVODES stopped before the last output time with both of its methods."""


def _simulate_cvodes(
    model: HybridModel,
    fn: Callable[..., Any],
    p: np.ndarray,
    t: np.ndarray,
    x0: np.ndarray,
    raw_inputs: Any,
    inputs: InputFn | None,
    settings: dict[str, Any],
    bound: float,
    max_steps: int,
) -> Trajectory:
    """``simulate`` with CVODES: Adams-Moulton first, then BDF (both with Newton iterations on
    the exact Jacobian); the states are integrated divided by ``atol / rtol`` so
    that CVODES's one absolute tolerance is each state's own. Raises `_CVODESFailed`
    where neither reaches the last output time."""
    if t.size == 1:
        return _trajectory(model, fn, p, t, x0[None, :], inputs)
    nx = model.n_states
    rtol = float(settings["rtol"])
    atol = np.broadcast_to(np.asarray(settings["atol"], dtype=float), (nx,))
    scale = np.where(atol > 0, atol / rtol, 1.0)
    z, ts = ca.SX.sym("z", nx), ca.SX.sym("t")
    u = _input_expression(model, raw_inputs, inputs, t, ts)
    xdot = fn(z * scale, ca.DM(p), u, ts)[0]
    dae = {"x": z, "t": ts, "ode": ca.densify(xdot) / scale}
    max_step = float(settings["max_step"])
    common = {"abstol": rtol, "reltol": rtol, "max_num_steps": max_steps}
    if np.isfinite(max_step):
        common["max_step_size"] = max_step
    X = None
    # Adams-Moulton with Newton iterations on the exact Jacobian copes with moderately stiff
    # models (Robertson's kinetics in milliseconds); BDF takes over where it fails
    for method in ("adams", "bdf"):
        opts = {
            **common,
            "linear_multistep_method": method,
            "nonlinear_solver_iteration": "newton",
            # a failure is handled here (BDF, then scipy); CVODES need not print it
            "disable_internal_warnings": True,
        }
        F = ca.integrator("F", "cvodes", dae, float(t[0]), t[1:], opts)
        try:
            with np.errstate(all="ignore"):
                Z = np.asarray(F(x0=x0 / scale)["xf"]).T
        except RuntimeError:
            continue
        X = np.vstack([x0, Z * scale])
        break
    if X is None:
        raise _CVODESFailed
    _check_bound(t, X, bound)
    return _trajectory(model, fn, p, t, X, inputs)


def _check_bound(t: np.ndarray, X: np.ndarray, bound: float) -> None:
    """A [`SimulationError`][collocnode.SimulationError] at the first time the states ``X`` (n,
    n_states) at ``t`` leave ±``bound`` or are not finite."""
    bad = ~np.all(np.isfinite(X) & (np.abs(X) <= bound), axis=1)
    if bad.any():
        k = int(np.argmax(bad))
        raise SimulationError(
            f"simulation failed at t = {t[k]:.6g}: the state left ±{bound:g} or became non-finite",
            float(t[k]),
        )


def _input_expression(
    model: HybridModel, raw: Any, inputs: InputFn | None, t: np.ndarray, ts: ca.SX
) -> ca.SX:
    """The known inputs at the symbolic time ``ts`` as a compiled piecewise polynomial (see
    [`simulate`][collocnode.simulate], method "cvodes"); an empty vector for a model without
    inputs."""
    nu = model.n_inputs
    if not nu:
        return ca.SX(0, 1)
    samples_t, samples_u = getattr(raw, "t", None), getattr(raw, "values", None)
    if samples_t is not None and samples_u is not None and getattr(raw, "fn", None) is None:
        kind = "linear" if raw.kind == "linear" else "bspline"
        knots, values = np.asarray(samples_t, dtype=float), np.asarray(samples_u, dtype=float)
    else:
        kind = "bspline"
        frac = np.arange(INPUT_SAMPLES) / INPUT_SAMPLES
        knots = np.r_[(t[:-1, None] + np.diff(t)[:, None] * frac[None, :]).ravel(), t[-1]]
        values = np.asarray(inputs(knots), dtype=float).reshape(knots.size, nu)
    if knots.size < 4:
        kind = "linear"
    # beyond its knots a CasADi interpolant extrapolates its end pieces
    # CasADi wants the outputs of one knot together (row-major)
    table = ca.interpolant("u", kind, [knots], values.ravel(order="C"))
    return table(ts)


def _trajectory(
    model: HybridModel,
    fn: Callable[..., Any],
    p: np.ndarray,
    t: np.ndarray,
    X: np.ndarray,
    inputs: InputFn | None,
) -> Trajectory:
    """The states ``X`` (n, n_states) at ``t`` as a [`Trajectory`][collocnode.Trajectory] with the
    inputs and the model's outputs there."""
    nu = model.n_inputs
    u = np.asarray(inputs(t), dtype=float).reshape(t.size, nu) if nu else None
    yv = None
    if model.n_outputs:
        xs, us, ts = ca.SX.sym("x", model.n_states), ca.SX.sym("u", nu), ca.SX.sym("t")
        out = ca.Function("y", [ts, xs, us], [fn(xs, ca.DM(p), us, ts)[1]])
        yv = np.asarray(out.map(t.size)(t[None, :], X.T, u.T if nu else np.zeros((0, t.size)))).T
    return Trajectory(
        t=t,
        x=X,
        u=u,
        y=yv,
        state_names=model.state_names,
        input_names=model.input_names,
        output_names=model.output_names,
    )
