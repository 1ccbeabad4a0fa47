"""The general dynamic optimization problem (Langenkamp et al. eq. 3).

    minimize    M(x(t0), x(tf), p) + ∫ L(x, p, u, t) dt                      (3a)
    subject to  x' = f(x, p, u, t)                                             (3b)
                g_lb <= g(x, p, u, t) <= g_ub   for all t                      (3c)
                r_lb <= r(x(t0), x(tf), p) <= r_ub                             (3d)
                x_lb <= x <= x_ub,  p_lb <= p <= p_ub

with states x (n_states), time-invariant parameters p (n_params) and inputs u(t): known inputs
(n_inputs) followed by free controls ([`Controls`][collocnode.Controls], n_controls). Optionally
algebraic states z ([`AlgebraicStates`][collocnode.AlgebraicStates], 0 = g(x, p, u, t, z) at every
node) and a free final time tf in given bounds (time scaling: the mesh lives on the guessed horizon
and stretches with tf).
The model functions are Python callables written with CasADi operations; they are called once, with
symbols, when the problem is transcribed. The parts a problem is assembled from
([`Inputs`][collocnode.Inputs], [`Constraint`][collocnode.Constraint], `Samples`, `Segment`,
[`Proximal`][collocnode.Proximal]) live in `collocnode.transcription._problem_parts`, the checks of
its fields in `collocnode.transcription._checks`.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

import numpy as np

from .. import _validation as v
from ..algorithm import Lowered
from ._checks import (
    check_bounds,
    check_callable,
    check_inputs,
    check_labels,
    check_node_variables,
    check_optional_instance,
    check_p_guess,
    check_sample_widths,
    check_samples,
    check_segment,
    check_tf_bounds,
    check_x0,
    check_x_guess,
    check_x_nominal,
)
from ._problem_parts import Constraint, Inputs, Proximal, Samples, Segment, SymbolicFn
from ._variables import AlgebraicStates, Controls, guess_at

__all__ = [
    "Constraint",
    "DynamicOptimizationProblem",
    "Inputs",
    "Proximal",
    "Samples",
    "Segment",
    "SymbolicFn",
]


@dataclass(frozen=True)
class DynamicOptimizationProblem:
    """A dynamic optimization problem on a fixed horizon ``tspan`` (paper eq. 3).

    Args:
        dynamics: ``f(x, p, u, t) -> (n_states,)`` CasADi expression.
        n_states, n_params: dimensions.
        tspan: ``(t0, tf)`` [s].
        lagrange: ``L(x, p, u, t) -> scalar`` integrated over the horizon, or None.
        mayer: ``M(x0, xf, p) -> scalar``, or None.
        path: path constraints g(x, p, u, t) with bounds ([`Constraint`][collocnode.Constraint]), or
            None.
        boundary: boundary constraints r(x0, xf, p) with bounds, or None.
        inputs: known inputs u(t) ([`Inputs`][collocnode.Inputs]).
        x_lb, x_ub, p_lb, p_ub: variable bounds (scalars or per component; default ±inf).
        x_guess: initial guess for the states: a constant vector (n_states,), a callable
            ``t (n,) -> (n, n_states)``, or None for zeros.
        p_guess: initial guess for the parameters (n_params,).
        x0: a fixed initial state (n_states,) (imposed through the variable bounds of x_00;
            NaN entries stay free), or None for a free initial state.
        sample_loss: ``ℓ(x, p, u, t, d) -> scalar``, the data term of one sample (d: the
            sample's row of ``Samples.data``), or None.
        samples: the data terms of the (single) trajectory (`Samples`), or None; every
            time must lie in ``tspan``. Needs ``sample_loss``.
        sample_groups: columns of ``Samples.data`` that take few distinct values (which
            observable a sample measures, as a one-hot block): the samples are grouped by
            their values, and each group's data term is built with them as constants, so its
            derivatives hold only what that group's term touches (a sample of one observable
            does not depend on the states and parameters of the others). Empty: one group.
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
        controls: free control inputs ([`Controls`][collocnode.Controls]), decision variables at
            every collocation node; the model functions see ``u = [known inputs, controls]``. None
            for none.
        algebraic: algebraic states and their equations
            ([`AlgebraicStates`][collocnode.AlgebraicStates]); the dynamics, path constraints and
            Lagrange term are then called as ``fn(x, p, u, t, z)``. None for an ODE.
        tf_bounds: ``(lb, ub)`` makes the final time a decision variable in these finite bounds,
            with ``tspan[1]`` as its guess (t0 stays fixed); ``mayer`` and ``boundary.fn`` are
            then called with tf as a fourth argument, ``M(x0, xf, p, tf)``. Not with known
            inputs, samples or several segments (their times would move with tf).
        proximal: a [`Proximal`][collocnode.Proximal] term pulling the parameters (and, for one
            trajectory, the first and last node's states) toward a centre, or None.

    ``problem_kind`` is "dop" (the trait the algorithms of `collocnode.algorithm` read).

    Examples:
        Move a unit mass from rest at 0 to rest at 1 in 1 s with the least effort; the optimum is
        u(t) = 6 - 12 t, of effort 12:

        ```python
        from collocnode import (
            Constraint,
            Controls,
            DynamicOptimizationProblem,
            IpoptOptions,
            RadauIIA,
            solve,
        )

        dop = DynamicOptimizationProblem(
            dynamics=lambda x, p, u, t: [x[1], u[0]],
            n_states=2,
            n_params=0,
            tspan=(0.0, 1.0),
            x0=[0.0, 0.0],
            controls=Controls(1),
            lagrange=lambda x, p, u, t: u[0] ** 2,
            boundary=Constraint(lambda x0, xf, p: xf, 2, [1.0, 0.0], [1.0, 0.0]),
        )
        sol = solve(dop, RadauIIA(intervals=10, stages=3, ipopt=IpoptOptions(print_level=0)))
        print(sol.status, f"effort {sol.objective:.6f}, u(0) = {sol.controls(0.0)[0]:.6f}")
        assert abs(sol.objective - 12.0) < 1e-6 and abs(sol.controls(0.0)[0] - 6.0) < 1e-6
        ```
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
    sample_groups: tuple[int, ...] = ()
    controls: Controls | None = None
    algebraic: AlgebraicStates | None = None
    tf_bounds: tuple[float, float] | None = None
    proximal: Proximal | None = None

    def __post_init__(self) -> None:
        # the one validation point: each check (.checks) owns one field or one concern, in the
        # order of the fields they depend on; normalised values are stored back
        def store(name: str, value: Any) -> None:
            object.__setattr__(self, name, value)

        check_callable("dynamics", self.dynamics, optional=False)
        check_optional_instance("proximal", self.proximal, Proximal)
        nx = v.positive_int("n_states", self.n_states)
        npar = v.nonnegative_int("n_params", self.n_params)
        t0, tf = v.time_span("tspan", self.tspan)
        store("tspan", (t0, tf))
        for name in ("lagrange", "mayer", "sample_loss"):
            check_callable(name, getattr(self, name))
        for name in ("path", "boundary"):
            check_optional_instance(name, getattr(self, name), Constraint)
        check_inputs(self.inputs, t0, tf)
        bounds = check_bounds(self.x_lb, self.x_ub, self.p_lb, self.p_ub, nx, npar)
        for name, value in bounds.items():
            store(name, value)
        store("p_guess", check_p_guess(self.p_guess, npar))
        store("x_guess", check_x_guess("x_guess", self.x_guess, nx))
        store("x0", check_x0("x0", self.x0, nx))
        store("x_nominal", check_x_nominal(self.x_nominal, nx))
        segments = tuple(
            check_segment(k, seg, nx, self.inputs.n, self.sample_loss)
            for k, seg in enumerate(self.segments)
        )
        store("segments", segments)
        if self.samples is not None:
            store("samples", check_samples("samples", self.samples, self.sample_loss, t0, tf))
        check_sample_widths(self.all_segments())
        groups = tuple(self.sample_groups)
        width = self.n_sample_data
        if any(not isinstance(k, (int, np.integer)) or not 0 <= k < width for k in groups):
            raise ValueError(
                f"sample_groups must be column indices of the samples' data (0..{width - 1}), "
                f"got {groups!r}"
            )
        store("sample_groups", tuple(int(k) for k in groups))
        store("state_names", check_labels("state_names", self.state_names, nx))
        store("param_names", check_labels("param_names", self.param_names, npar))
        check_node_variables(self.controls, self.algebraic)
        if self.tf_bounds is not None:
            tf_bounds = check_tf_bounds(
                self.tf_bounds,
                self.tspan,
                self.controls,
                self.inputs,
                self.all_segments(),
                len(self.segments),
            )
            store("tf_bounds", tf_bounds)

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
