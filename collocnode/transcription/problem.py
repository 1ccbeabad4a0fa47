"""The general dynamic optimization problem (Langenkamp et al. eq. 3).

    minimize    M(x(t0), x(tf), p) + ∫ L(x, p, u, t) dt                      (3a)
    subject to  x' = f(x, p, u, t)                                             (3b)
                g_lb <= g(x, p, u, t) <= g_ub   for all t                      (3c)
                r_lb <= r(x(t0), x(tf), p) <= r_ub                             (3d)
                x_lb <= x <= x_ub,  p_lb <= p <= p_ub

with states x (n_states), time-invariant parameters p (n_params) and inputs u(t): known inputs
(n_inputs) followed by free controls (:class:`.variables.Controls`, n_controls). Optionally
algebraic states z (:class:`.variables.AlgebraicStates`, 0 = g(x, p, u, t, z) at every node) and a
free final time tf in given bounds (time scaling: the mesh lives on the guessed horizon and
stretches with tf).
The model functions are Python callables written with CasADi operations; they are called once, with
symbols, when the problem is transcribed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

import numpy as np

from .. import _validation as v
from ..algorithm import Lowered
from .variables import AlgebraicStates, Controls, guess_at, per_component

SymbolicFn = Callable[..., Any]


@dataclass(frozen=True)
class Inputs:
    """Known inputs u(t), shape (n_inputs,) at each time.

    Either a vectorised callable ``fn(t: (n,)) -> (n, n_inputs)`` (exact, e.g. a road profile) or
    samples ``(t, values)`` interpolated by a cubic spline (``kind="cubic"``, not-a-knot) or
    piecewise linearly (``kind="linear"``). Values at the collocation nodes are computed once.
    """

    n: int
    fn: Callable[[np.ndarray], np.ndarray] | None = None
    t: np.ndarray | None = None
    values: np.ndarray | None = None
    kind: str = "cubic"
    names: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        v.nonnegative_int("inputs.n", self.n)
        if self.fn is not None:
            v.function("inputs.fn", self.fn)
        v.choice("inputs.kind", self.kind, ("cubic", "linear"))

    @classmethod
    def from_samples(
        cls, t: np.ndarray, values: np.ndarray, kind: str = "cubic", names: tuple[str, ...] = ()
    ) -> Inputs:
        t = v.increasing("inputs.t", t)
        values = v.finite_array("inputs.values", values)
        if values.ndim == 1:
            values = values[:, None]
        if values.ndim != 2 or values.shape[0] != t.size:
            raise ValueError(
                f"inputs.values must have shape ({t.size}, n_inputs) to match inputs.t, "
                f"got {values.shape}"
            )
        v.choice("inputs.kind", kind, ("cubic", "linear"))
        if kind == "cubic" and t.size < 4:
            raise ValueError(f"cubic input interpolation needs >= 4 samples, got {t.size}")
        return cls(n=values.shape[1], t=t, values=values, kind=kind, names=tuple(names))

    @classmethod
    def from_function(
        cls, fn: Callable[[np.ndarray], np.ndarray], n: int, names: tuple[str, ...] = ()
    ) -> Inputs:
        if not callable(fn):
            raise TypeError(f"inputs function must be callable, got {fn!r}")
        return cls(n=v.positive_int("n_inputs", n), fn=fn, names=tuple(names))

    @classmethod
    def none(cls) -> Inputs:
        return cls(n=0)

    def span(self) -> tuple[float, float] | None:
        return None if self.t is None else (float(self.t[0]), float(self.t[-1]))

    def __call__(self, t: np.ndarray) -> np.ndarray:
        """Inputs at times ``t`` (n,), shape (n, n_inputs)."""
        t = np.asarray(t, dtype=float)
        if self.n == 0:
            return np.zeros((t.size, 0))
        if self.fn is not None:
            out = v.finite_array("inputs(t)", self.fn(t))
            if out.size != t.size * self.n:
                raise ValueError(
                    f"inputs(t) must return shape ({t.size}, {self.n}) for {t.size} times, "
                    f"got shape {out.shape}"
                )
            out = out.reshape(t.size, self.n)
        else:
            lo, hi = self.span()  # type: ignore[misc]
            tol = 1e-9 * max(1.0, abs(hi - lo))
            if t.size and (t.min() < lo - tol or t.max() > hi + tol):
                raise ValueError(
                    f"input samples cover [{lo}, {hi}] but values are needed on "
                    f"[{t.min()}, {t.max()}]"
                )
            if self.kind == "linear":
                out = np.column_stack(
                    [np.interp(t, self.t, self.values[:, k]) for k in range(self.n)]
                )
            else:
                from scipy.interpolate import CubicSpline

                out = CubicSpline(self.t, self.values, axis=0)(np.clip(t, lo, hi))
        if not np.all(np.isfinite(out)):
            raise ValueError("inputs produced non-finite values")
        return out


@dataclass(frozen=True)
class Constraint:
    """``lb <= fn(...) <= ub`` with ``n`` components; equality where lb == ub."""

    fn: SymbolicFn
    n: int
    lb: np.ndarray
    ub: np.ndarray

    def __post_init__(self) -> None:
        v.function("constraint.fn", self.fn)
        n = v.positive_int("constraint.n", self.n)
        object.__setattr__(self, "lb", v.real_array("constraint.lb", self.lb, shape=(n,)))
        object.__setattr__(self, "ub", v.real_array("constraint.ub", self.ub, shape=(n,)))

    @classmethod
    def make(cls, name: str, fn: SymbolicFn, n: int, lb: Any = 0.0, ub: Any = 0.0) -> Constraint:
        if not callable(fn):
            raise TypeError(f"{name} must be callable, got {fn!r}")
        n = v.positive_int(f"{name}.n", n)
        lo = np.broadcast_to(np.asarray(lb, dtype=float), (n,)).copy()
        hi = np.broadcast_to(np.asarray(ub, dtype=float), (n,)).copy()
        if np.any(np.isnan(lo)) or np.any(np.isnan(hi)) or np.any(lo > hi):
            raise ValueError(f"{name} bounds must satisfy lb <= ub, got lb={lo}, ub={hi}")
        return cls(fn=fn, n=n, lb=lo, ub=hi)


@dataclass(frozen=True)
class Samples:
    """Data terms at given times of one trajectory: ``Σ_s w_s ℓ(x(t_s), p, u(t_s), t_s, d_s)``
    with the problem's ``sample_loss`` ℓ.

    x(t_s) is the state polynomial of the collocation interval that holds t_s (barycentric
    Lagrange interpolation over its m + 1 points), so each term depends only on that interval's
    node states and on p.

    Attributes:
        t: sample times, shape ``(n,)`` [s], inside the trajectory's horizon, in any order
            (repeated times are allowed).
        data: the constants d_s handed to ℓ, shape ``(n, n_data)`` (e.g. the measured values and
            per-column weights).
        weights: w_s >= 0, shape ``(n,)``; default ones.
    """

    t: np.ndarray
    data: np.ndarray
    weights: np.ndarray | None = None

    def __post_init__(self) -> None:
        t = v.finite_array("samples.t", self.t, ndim=1)
        if t.size == 0:
            raise ValueError("samples.t must hold at least one time, got an empty array")
        data = v.finite_array("samples.data", self.data)
        if data.ndim == 1:
            data = data[:, None]
        if data.ndim != 2 or data.shape[0] != t.size:
            raise ValueError(
                f"samples.data must have shape ({t.size}, n_data) to match samples.t, "
                f"got {data.shape}"
            )
        w = (
            np.ones(t.size)
            if self.weights is None
            else v.finite_array("samples.weights", self.weights, shape=(t.size,))
        )
        if np.any(w < 0):
            i = int(np.flatnonzero(w < 0)[0])
            raise ValueError(f"samples.weights must be >= 0, got samples.weights[{i}] = {w[i]!r}")
        object.__setattr__(self, "t", t)
        object.__setattr__(self, "data", data)
        object.__setattr__(self, "weights", w)

    @property
    def n(self) -> int:
        return int(self.t.size)

    @property
    def n_data(self) -> int:
        return int(self.data.shape[1])

    def inside(self, name: str, t0: float, tf: float) -> Samples:
        """These samples checked to lie in ``[t0, tf]`` (times within 1e-9 of the span outside
        it are moved onto the end); a ValueError naming ``name`` and the first time outside."""
        tol = 1e-9 * max(1.0, tf - t0)
        bad = np.flatnonzero((self.t < t0 - tol) | (self.t > tf + tol))
        if bad.size:
            i = int(bad[0])
            raise ValueError(
                f"{name}.t[{i}] = {float(self.t[i])!r} lies outside the horizon [{t0!r}, {tf!r}]"
            )
        return Samples(np.clip(self.t, t0, tf), self.data, self.weights)


@dataclass(frozen=True)
class Segment:
    """One trajectory of a multi-trajectory problem: its horizon, known inputs, optional fixed
    initial state and state guess, and its data terms (:class:`Samples`, or None). All
    segments share the parameters p."""

    tspan: tuple[float, float]
    inputs: Inputs = field(default_factory=Inputs.none)
    x0: Any = None
    x_guess: Any = None
    samples: Samples | None = None


@dataclass(frozen=True)
class DynamicOptimizationProblem:
    """A dynamic optimization problem on a fixed horizon ``tspan`` (paper eq. 3).

    Args:
        dynamics: ``f(x, p, u, t) -> (n_states,)`` CasADi expression.
        n_states, n_params: dimensions.
        tspan: ``(t0, tf)`` [s].
        lagrange: ``L(x, p, u, t) -> scalar`` integrated over the horizon, or None.
        mayer: ``M(x0, xf, p) -> scalar``, or None.
        path: path constraints g(x, p, u, t) with bounds (:class:`Constraint`), or None.
        boundary: boundary constraints r(x0, xf, p) with bounds, or None.
        inputs: known inputs u(t) (:class:`Inputs`).
        x_lb, x_ub, p_lb, p_ub: variable bounds (scalars or per component; default ±inf).
        x_guess: initial guess for the states: a constant vector (n_states,), a callable
            ``t (n,) -> (n, n_states)``, or None for zeros.
        p_guess: initial guess for the parameters (n_params,).
        x0: a fixed initial state (n_states,) (imposed through the variable bounds of x_00;
            NaN entries stay free), or None for a free initial state.
        sample_loss: ``ℓ(x, p, u, t, d) -> scalar``, the data term of one sample (d: the
            sample's row of ``Samples.data``), or None.
        samples: the data terms of the (single) trajectory (:class:`Samples`), or None; every
            time must lie in ``tspan``. Needs ``sample_loss``.
        x_nominal: typical magnitude of each state (n_states,), default 1. The NLP works with
            x / x_nominal and divides each state's collocation equations by its nominal value, so
            states of very different sizes (millimetres next to metres per second) give IPOPT a
            well-scaled problem. Results are always reported in physical units.
        segments: several trajectories sharing the parameters (each with its own horizon, inputs,
            initial state, guess and samples). When given, they replace ``tspan``/``inputs``/
            ``x0``/``x_guess``/``samples`` (``tspan`` is then only checked to be the first
            segment's); the boundary
            constraints and the Mayer term see the end points of the first segment.
        state_names, param_names: labels.
        controls: free control inputs (:class:`Controls`), decision variables at every
            collocation node; the model functions see ``u = [known inputs, controls]``. None for
            none.
        algebraic: algebraic states and their equations (:class:`AlgebraicStates`); the
            dynamics, path constraints and Lagrange term are then called as
            ``fn(x, p, u, t, z)``. None for an ODE.
        tf_bounds: ``(lb, ub)`` makes the final time a decision variable in these finite bounds,
            with ``tspan[1]`` as its guess (t0 stays fixed); ``mayer`` and ``boundary.fn`` are
            then called with tf as a fourth argument, ``M(x0, xf, p, tf)``. Not with known
            inputs, samples or several segments (their times would move with tf).
        proximal: a :class:`Proximal` term pulling the parameters (and, for one trajectory,
            the first and last node's states) toward a centre, or None.

    ``problem_kind`` is "dop" (the trait the algorithms of :mod:`collocnode.algorithm` read).
    """

    problem_kind: ClassVar[str] = "dop"

    dynamics: SymbolicFn
    n_states: int
    n_params: int
    tspan: tuple[float, float]
    lagrange: SymbolicFn | None = None
    mayer: SymbolicFn | None = None
    path: Constraint | None = None
    boundary: Constraint | None = None
    inputs: Inputs = field(default_factory=Inputs.none)
    x_lb: Any = None
    x_ub: Any = None
    p_lb: Any = None
    p_ub: Any = None
    x_guess: Any = None
    p_guess: Any = None
    x0: Any = None
    x_nominal: Any = None
    segments: tuple[Segment, ...] = ()
    state_names: tuple[str, ...] = ()
    param_names: tuple[str, ...] = ()
    sample_loss: SymbolicFn | None = None
    samples: Samples | None = None
    controls: Controls | None = None
    algebraic: AlgebraicStates | None = None
    tf_bounds: tuple[float, float] | None = None
    proximal: Proximal | None = None

    def __post_init__(self) -> None:
        if not callable(self.dynamics):
            raise TypeError(f"dynamics must be callable, got {self.dynamics!r}")
        if self.proximal is not None and not isinstance(self.proximal, Proximal):
            raise TypeError(f"proximal must be a Proximal or None, got {self.proximal!r:.80}")
        nx = v.positive_int("n_states", self.n_states)
        npar = v.nonnegative_int("n_params", self.n_params)
        t0, tf = v.time_span("tspan", self.tspan)
        object.__setattr__(self, "tspan", (t0, tf))
        for name in ("lagrange", "mayer", "sample_loss"):
            fn = getattr(self, name)
            if fn is not None and not callable(fn):
                raise TypeError(f"{name} must be callable or None, got {fn!r}")
        for name in ("path", "boundary"):
            constraint = getattr(self, name)
            if constraint is not None and not isinstance(constraint, Constraint):
                raise TypeError(f"{name} must be a Constraint or None, got {constraint!r:.80}")
        if not isinstance(self.inputs, Inputs):
            raise TypeError(f"inputs must be an Inputs object, got {self.inputs!r}")
        span = self.inputs.span()
        if span is not None:
            tol = 1e-9 * max(1.0, tf - t0)
            if span[0] > t0 + tol or span[1] < tf - tol:
                raise ValueError(
                    f"input samples cover [{span[0]}, {span[1]}], which does not cover the "
                    f"horizon tspan = ({t0}, {tf})"
                )
        for name, n, default in (
            ("x_lb", nx, -np.inf),
            ("x_ub", nx, np.inf),
            ("p_lb", npar, -np.inf),
            ("p_ub", npar, np.inf),
        ):
            object.__setattr__(self, name, per_component(name, getattr(self, name), n, default))
        if np.any(self.x_lb > self.x_ub):
            raise ValueError(f"x_lb must be <= x_ub, got {self.x_lb} and {self.x_ub}")
        if np.any(self.p_lb > self.p_ub):
            raise ValueError("p_lb must be <= p_ub")
        pg = (
            np.zeros(npar)
            if self.p_guess is None
            else v.finite_array("p_guess", self.p_guess, shape=(npar,))
        )
        object.__setattr__(self, "p_guess", pg)
        if self.x_guess is not None and not callable(self.x_guess):
            object.__setattr__(
                self, "x_guess", v.finite_array("x_guess", self.x_guess, shape=(nx,))
            )
        if self.x0 is not None:
            object.__setattr__(
                self, "x0", v.measured_array("x0", self.x0, shape=(nx,), nan="it is free")
            )
        nominal = (
            np.ones(nx)
            if self.x_nominal is None
            else np.broadcast_to(v.finite_array("x_nominal", self.x_nominal), (nx,)).copy()
        )
        if np.any(nominal <= 0):
            raise ValueError(f"x_nominal must be positive, got {nominal}")
        object.__setattr__(self, "x_nominal", nominal)
        checked = []
        for k, seg in enumerate(self.segments):
            if not isinstance(seg, Segment):
                raise TypeError(f"segments[{k}] must be a Segment, got {seg!r}")
            a, b = v.time_span(f"segments[{k}].tspan", seg.tspan)
            if seg.inputs.n != self.inputs.n:
                raise ValueError(
                    f"segments[{k}] has {seg.inputs.n} inputs, the problem {self.inputs.n}"
                )
            span = seg.inputs.span()
            if span is not None and (
                span[0] > a + 1e-9 * max(1.0, b - a) or span[1] < b - 1e-9 * max(1.0, b - a)
            ):
                raise ValueError(
                    f"segments[{k}] input samples cover [{span[0]}, {span[1]}], which does not "
                    f"cover its horizon ({a}, {b})"
                )
            x0k = (
                None
                if seg.x0 is None
                else v.measured_array(f"segments[{k}].x0", seg.x0, shape=(nx,), nan="it is free")
            )
            guess = seg.x_guess
            if guess is not None and not callable(guess):
                guess = v.finite_array(f"segments[{k}].x_guess", guess, shape=(nx,))
            samples = seg.samples
            if samples is not None:
                samples = self._check_samples(f"segments[{k}].samples", samples, a, b)
            checked.append(Segment((a, b), seg.inputs, x0k, guess, samples))
        object.__setattr__(self, "segments", tuple(checked))
        if self.samples is not None:
            object.__setattr__(
                self, "samples", self._check_samples("samples", self.samples, t0, tf)
            )
        widths = {seg.samples.n_data for seg in self.all_segments() if seg.samples is not None}
        if len(widths) > 1:
            raise ValueError(
                f"every segment's samples must have the same number of data columns, got "
                f"{sorted(widths)}"
            )
        for name, n in (("state_names", nx), ("param_names", npar)):
            labels = tuple(getattr(self, name))
            if labels and len(labels) != n:
                raise ValueError(f"{name} has {len(labels)} labels for {n} entries")
            object.__setattr__(self, name, labels)
        self._check_node_variables()

    def _check_node_variables(self) -> None:
        for name, kind in (("controls", Controls), ("algebraic", AlgebraicStates)):
            value = getattr(self, name)
            if value is not None and not isinstance(value, kind):
                raise TypeError(f"{name} must be a {kind.__name__} or None, got {value!r:.80}")
        if self.tf_bounds is None:
            return
        t0, tf = self.tspan
        try:
            lb, ub = (float(b) for b in self.tf_bounds)
        except (TypeError, ValueError):
            raise ValueError(
                f"tf_bounds must be a pair (lb, ub) of numbers, got {self.tf_bounds!r:.80}"
            ) from None
        if not (np.isfinite(lb) and np.isfinite(ub)):
            raise ValueError(
                f"tf_bounds must be finite (a free final time needs both bounds), got "
                f"({lb!r}, {ub!r})"
            )
        if not t0 < lb <= ub:
            raise ValueError(f"tf_bounds must satisfy t0 = {t0!r} < lb <= ub, got ({lb!r}, {ub!r})")
        if not lb <= tf <= ub:
            raise ValueError(
                f"tspan[1] = {tf!r} is the guess of the free final time and must lie in "
                f"tf_bounds = ({lb!r}, {ub!r})"
            )
        for what, present in (
            (
                "a control rate penalty",
                self.controls is not None and self.controls.rate_penalty > 0,
            ),
            ("known inputs", self.inputs.n > 0),
            ("samples", any(seg.samples is not None for seg in self.all_segments())),
            ("several segments", len(self.segments) > 1),
        ):
            if present:
                raise ValueError(f"a free final time (tf_bounds) cannot be combined with {what}")
        object.__setattr__(self, "tf_bounds", (lb, ub))

    @property
    def n_controls(self) -> int:
        return 0 if self.controls is None else self.controls.n

    @property
    def n_algebraic(self) -> int:
        return 0 if self.algebraic is None else self.algebraic.n

    @property
    def free_final_time(self) -> bool:
        return self.tf_bounds is not None

    @property
    def n_nlp_params(self) -> int:
        """Parameters of the NLP: p, then tf when the final time is free."""
        return self.n_params + int(self.free_final_time)

    @property
    def n_node_constraints(self) -> int:
        """Rows per collocation node besides the dynamics: algebraic equations, then path
        constraints."""
        return self.n_algebraic + (self.path.n if self.path else 0)

    @property
    def node_width(self) -> int:
        """Unknowns per mesh node: states, then algebraic states, then controls."""
        return self.n_states + self.n_algebraic + self.n_controls

    def node_vector(self, field: str) -> np.ndarray:
        """``field`` ("lb", "ub", "nominal") over the node unknowns [x, z, u_c], (node_width,)."""
        states = {"lb": self.x_lb, "ub": self.x_ub, "nominal": self.x_nominal}[field]
        parts = [states] + [
            getattr(var, field) for var in (self.algebraic, self.controls) if var is not None
        ]
        return np.concatenate(parts)

    def node_guess(self, t: np.ndarray) -> np.ndarray:
        """Initial guess of the algebraic states and controls at times ``t`` (n,), shape
        (n, n_algebraic + n_controls)."""
        parts = [var.initial(t) for var in (self.algebraic, self.controls) if var is not None]
        return np.hstack(parts) if parts else np.zeros((np.size(t), 0))

    def call_node(self, fn: SymbolicFn, x: Any, p: Any, u: Any, t: Any, z: Any) -> Any:
        """A node-level model function (dynamics, path, Lagrange) called with the problem's
        convention: ``fn(x, p, u, t)``, with the algebraic states as a fifth argument if any."""
        return fn(x, p, u, t) if self.algebraic is None else fn(x, p, u, t, z)

    def call_boundary(self, fn: SymbolicFn, x0: Any, xf: Any, p: Any, tf: Any) -> Any:
        """A boundary-level function (Mayer, boundary constraints): ``fn(x0, xf, p)``, with the
        final time as a fourth argument when it is free."""
        return fn(x0, xf, p) if self.tf_bounds is None else fn(x0, xf, p, tf)

    def _check_samples(self, name: str, samples: object, t0: float, tf: float) -> Samples:
        if not isinstance(samples, Samples):
            raise TypeError(f"{name} must be a Samples object or None, got {samples!r:.80}")
        if self.sample_loss is None:
            raise ValueError(f"{name} are given but sample_loss is None")
        return samples.inside(name, t0, tf)

    @property
    def n_inputs(self) -> int:
        return self.inputs.n

    @property
    def n_sample_data(self) -> int:
        """Columns of the samples' data (0 without samples)."""
        return next(
            (seg.samples.n_data for seg in self.all_segments() if seg.samples is not None), 0
        )

    def all_segments(self) -> tuple[Segment, ...]:
        """The trajectories of the problem (one unless ``segments`` was given)."""
        if self.segments:
            return tuple(self.segments)
        return (Segment(self.tspan, self.inputs, self.x0, self.x_guess, self.samples),)

    def state_guess(self, t: np.ndarray, segment: int = 0) -> np.ndarray:
        """Initial guess of the states of a segment at times ``t`` (n,), shape (n, n_states)."""
        t = np.asarray(t, dtype=float)
        guess = self.all_segments()[segment].x_guess
        if guess is None:
            return np.zeros((t.size, self.n_states))
        return guess_at("x_guess", guess, t, self.n_states)

    def remake(self, **changes: Any) -> DynamicOptimizationProblem:
        """A copy with some fields changed (SciML's ``remake``)."""
        return replace(self, **changes)

    # ---- the algorithm protocol (collocnode.algorithm) ---------------------------------------
    def lower(self, context: Any) -> Lowered:
        """Itself: a dynamic optimization problem is what the collocation algorithm solves."""
        return Lowered(self, context.callback, _same)

    def horizons(self) -> list[tuple[float, float]]:
        """The horizon of every trajectory (segment), in order."""
        return [tuple(seg.tspan) for seg in self.all_segments()]


def _same(solution: Any) -> Any:
    return solution


@dataclass(frozen=True)
class Proximal:
    """A proximal term ½ ρ Σ_i (z_i − c_i)² on some unknowns of the NLP: the pull of consensus
    ADMM toward the consensus value (Boyd et al. 2011, §7.2).

    Args:
        rho: the penalty ρ > 0, per squared unknown (NLP units).
        params: the centre of the parameters, (n_params,), or None for no pull on them.
        initial, final: the centre of the first and of the last node's states in the NLP's
            scaled units (x / x_nominal), (n_states,), or None; only on a problem with one
            trajectory.
    """

    rho: float
    params: np.ndarray | None = None
    initial: np.ndarray | None = None
    final: np.ndarray | None = None

    def __post_init__(self) -> None:
        v.positive_float("rho", self.rho)
        for name in ("params", "initial", "final"):
            value = getattr(self, name)
            if value is not None:
                object.__setattr__(self, name, v.finite_array(f"proximal.{name}", value))

    def indices(self, n_nodes: int, width: int) -> np.ndarray:
        """The NLP indices of the pulled unknowns for a problem with ``n_nodes`` nodes of
        ``width`` unknowns each, parameters after them (:mod:`.nlp.structured`)."""
        parts = []
        if self.params is not None:
            parts.append(n_nodes * width + np.arange(self.params.size))
        if self.initial is not None:
            parts.append(np.arange(self.initial.size))
        if self.final is not None:
            parts.append((n_nodes - 1) * width + np.arange(self.final.size))
        return np.concatenate(parts) if parts else np.zeros(0, dtype=int)

    def center(self) -> np.ndarray:
        """The centre of the pulled unknowns, in the order of :meth:`indices`."""
        parts = [c for c in (self.params, self.initial, self.final) if c is not None]
        return np.concatenate(parts) if parts else np.zeros(0)
