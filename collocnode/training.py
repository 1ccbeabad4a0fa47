"""Training a (hybrid) neural ODE on trajectory data, posed as a dynamic optimization problem.

The training problem of Langenkamp et al. (eqs. 6 and 21):

    minimize   ∫ Σ_c ((q_c(x, u, t) − q̂_c(t)) / s_c)² dt  +  λ ‖w‖²
    subject to x' = φ(x, u, t, NN_w(...)),   block constraints (e.g. NN(0) = 0, eq. 17),
               x(t0) = x0 (optional)

where q_c are the fitted columns (states or model outputs), q̂_c the data and s_c optional scales
(eq. 16 divides by the data's standard deviation). The data enter at the collocation nodes through
an interpolant of the samples: a not-a-knot cubic spline by default (exact to O(Δt⁴) for smooth
data; for noisy data it passes through every noisy sample, like the sum-of-squares loss would),
or piecewise linear.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import casadi as ca
import numpy as np

from . import _validation as v
from .data import Trajectory
from .models import HybridModel
from .simulate import simulate
from .transcription.problem import Constraint, DynamicOptimizationProblem, Inputs, Segment
from .transcription.solution import Solution


@dataclass(frozen=True)
class BlockConstraint:
    """``lb <= block(at) <= ub`` for one block at one input point (an NLP constraint, not a
    penalty; paper eq. 17 is ``BlockConstraint("friction", at=0.0)``)."""

    block: str
    at: Any
    lb: Any = 0.0
    ub: Any = 0.0


@dataclass(frozen=True)
class TrainingProblem:
    """Fit a model's parameters to one trajectory or to several (sharing the parameters).

    Args:
        model: the (hybrid) neural ODE.
        data: the training trajectory (states, inputs, outputs at the sample times), or a
            sequence of trajectories (different initial conditions, inputs, ...): each becomes its
            own set of node states in the NLP, all sharing the weights, so the cost grows
            linearly with the number of trajectories.
        fit: which columns enter the loss: "states", "outputs", or a sequence of state/output
            names.
        scale: per fitted column divisor s_c: "none", "std" (the data's standard deviation,
            paper eq. 16) or an array.
        regularization: λ of the weight penalty λ‖w‖² on the block weights (paper eq. 21a).
        initial_state: fixed x(t0) (paper eqs. 21d-e): an array (n_states,) for every
            trajectory, one row per trajectory (n_trajectories, n_states), "data" (each
            trajectory's first sample), or None for free initial states.
        block_constraints: constraints on blocks at given inputs.
        tspan: training horizon of a single trajectory; default: the data's time span.
        interpolation: "cubic" or "linear" interpolation of the data at the collocation nodes.
        inputs: exact known inputs ``u(t: (n,)) -> (n, n_inputs)`` (one callable per trajectory
            for several); default: interpolate data.u.
        state_guess: initial guess of the node states: "constant" (x(t0) everywhere, as in the
            paper), "data" (the interpolated data), a callable ``t -> (n, n_states)``, or a
            :class:`Trajectory` to interpolate (one per trajectory for several).
        params_guess: initial parameter vector; default: the blocks' random initialisation
            (seeded by ``solve(..., seed=...)``).
        x_nominal: typical state magnitudes for the NLP's scaling: "auto" (the standard deviation
            of each state column of the data; 1 where a column is constant), None (no scaling)
            or an array (n_states,).
    """

    model: HybridModel
    data: Trajectory | Sequence[Trajectory]
    fit: str | Sequence[str] = "states"
    scale: str | Sequence[float] = "none"
    regularization: float = 0.0
    initial_state: Any = None
    block_constraints: Sequence[BlockConstraint] = ()
    tspan: tuple[float, float] | None = None
    interpolation: str = "cubic"
    inputs: Any = None
    state_guess: Any = "constant"
    params_guess: Any = None
    x_nominal: Any = "auto"
    _columns: tuple[tuple[str, int], ...] = field(default=(), init=False, repr=False)

    def __post_init__(self) -> None:
        if not isinstance(self.model, HybridModel):
            raise TypeError(f"model must be a HybridModel, got {self.model!r}")
        data = (self.data,) if isinstance(self.data, Trajectory) else tuple(self.data)
        if not data:
            raise ValueError("data must hold at least one trajectory, got none")
        for k, d in enumerate(data):
            if not isinstance(d, Trajectory):
                raise TypeError(f"data[{k}] must be a Trajectory, got {d!r}")
        object.__setattr__(self, "data", data[0] if len(data) == 1 else data)
        self.model.check_smooth()
        m = self.model
        n = len(data)
        for k, d in enumerate(data):
            if d.n_states != m.n_states:
                raise ValueError(f"data[{k}] has {d.n_states} states, the model {m.n_states}")
        if m.n_inputs and self.inputs is None:
            for k, d in enumerate(data):
                if d.u.shape[1] != m.n_inputs:
                    raise ValueError(
                        f"the model has {m.n_inputs} inputs but data[{k}].u has "
                        f"{d.u.shape[1]} columns"
                    )
        if self.inputs is not None:
            fns = [self.inputs] if callable(self.inputs) else list(self.inputs)
            if len(fns) != n or not all(callable(f) for f in fns):
                raise ValueError(f"inputs must be one callable per trajectory ({n})")
        object.__setattr__(self, "_columns", tuple(self._resolve_fit()))
        v.nonnegative_float("regularization", self.regularization)
        v.choice("interpolation", self.interpolation, ("cubic", "linear"))
        ist = self.initial_state
        if isinstance(ist, str):
            v.choice("initial_state", ist, ("data",))
        elif ist is not None:
            arr = v.finite_array("initial_state", ist)
            if arr.shape not in ((m.n_states,), (n, m.n_states)):
                raise ValueError(
                    f"initial_state must have shape ({m.n_states},) or ({n}, {m.n_states}), "
                    f"got {arr.shape}"
                )
            object.__setattr__(self, "initial_state", arr)
        if isinstance(self.scale, str):
            v.choice("scale", self.scale, ("none", "std"))
        else:
            sc = v.finite_array("scale", self.scale, shape=(len(self._columns),))
            if np.any(sc <= 0):
                raise ValueError(f"scale must be positive, got {sc}")
        if self.tspan is not None:
            if n > 1:
                raise ValueError("tspan applies to a single trajectory; window the data instead")
            d = data[0]
            t0, tf = self.tspan
            if not (d.t0 - 1e-9 <= t0 < tf <= d.tf + 1e-9):
                raise ValueError(
                    f"tspan {self.tspan} must lie inside the data's span [{d.t0}, {d.tf}]"
                )
        for bc in self.block_constraints:
            if bc.block not in m.blocks:
                raise ValueError(
                    f"block constraint on unknown block {bc.block!r}; blocks: {', '.join(m.blocks)}"
                )
            block = m.blocks[bc.block]
            at = np.atleast_1d(v.finite_array(f"block constraint '{bc.block}'.at", bc.at))
            if at.shape != (block.n_in,):
                raise ValueError(
                    f"block constraint '{bc.block}'.at must have {block.n_in} entries, got {at}"
                )
            lo, hi = block.domain
            if np.any(at < lo) or np.any(at > hi):
                raise ValueError(
                    f"block constraint '{bc.block}'.at = {at.tolist()} is outside the block's "
                    f"domain [{lo}, {hi}]"
                )
        sg = self.state_guess
        if isinstance(sg, str):
            v.choice("state_guess", sg, ("constant", "data"))
        elif not (callable(sg) or isinstance(sg, Trajectory)):
            guesses = list(sg)
            if len(guesses) != n:
                raise ValueError(f"state_guess must give one guess per trajectory ({n})")
        if isinstance(self.x_nominal, str):
            v.choice("x_nominal", self.x_nominal, ("auto",))
        elif self.x_nominal is not None:
            nom = v.finite_array("x_nominal", self.x_nominal, shape=(m.n_states,))
            if np.any(nom <= 0):
                raise ValueError(f"x_nominal must be positive, got {nom}")

    # ---- the data ----------------------------------------------------------------------------
    @property
    def trajectories(self) -> tuple[Trajectory, ...]:
        return (self.data,) if isinstance(self.data, Trajectory) else tuple(self.data)

    @property
    def n_trajectories(self) -> int:
        return len(self.trajectories)

    def _resolve_fit(self) -> list[tuple[str, int]]:
        m, d = self.model, self.trajectories[0]
        snames = m.state_names or d.state_names or tuple(f"x{i}" for i in range(m.n_states))
        onames = m.output_names or d.output_names or tuple(f"y{i}" for i in range(m.n_outputs))
        if self.fit == "states":
            return [("x", i) for i in range(m.n_states)]
        if self.fit == "outputs":
            if not m.n_outputs:
                raise ValueError("fit='outputs' but the model has no outputs")
            cols = [("y", i) for i in range(m.n_outputs)]
        else:
            names = [self.fit] if isinstance(self.fit, str) else list(self.fit)
            cols = []
            for name in names:
                if name in snames:
                    cols.append(("x", snames.index(name)))
                elif name in onames:
                    cols.append(("y", onames.index(name)))
                else:
                    raise ValueError(
                        f"unknown fit column {name!r}; states: {', '.join(snames)}"
                        + (f"; outputs: {', '.join(onames)}" if onames else "")
                    )
        if any(kind == "y" for kind, _ in cols):
            for k, dk in enumerate(self.trajectories):
                if dk.y.shape[1] != m.n_outputs:
                    raise ValueError(
                        f"fitting outputs needs data[{k}].y with {m.n_outputs} columns, got "
                        f"{dk.y.shape[1]}"
                    )
        return cols

    @property
    def horizon(self) -> tuple[float, float]:
        """The training horizon of the first trajectory."""
        d = self.trajectories[0]
        return self.tspan if self.tspan is not None else (d.t0, d.tf)

    def targets(self, k: int = 0) -> np.ndarray:
        """The fitted data columns of trajectory k, shape (n_samples, n_fit)."""
        d = self.trajectories[k]
        return np.column_stack([d.x[:, i] if c == "x" else d.y[:, i] for c, i in self._columns])

    def scales(self) -> np.ndarray:
        if isinstance(self.scale, str):
            if self.scale == "none":
                return np.ones(len(self._columns))
            s = np.vstack([self.targets(k) for k in range(self.n_trajectories)]).std(axis=0)
            if np.any(s <= 0):
                raise ValueError("scale='std' needs non-constant fitted data columns")
            return s
        return np.asarray(self.scale, dtype=float)

    def nominal(self) -> np.ndarray | None:
        """The state scaling handed to the NLP (see ``x_nominal``)."""
        if isinstance(self.x_nominal, str):
            s = np.vstack([d.x for d in self.trajectories]).std(axis=0)
            return np.where(s > 0, s, 1.0)
        return None if self.x_nominal is None else np.asarray(self.x_nominal, dtype=float)

    def input_function(self, k: int = 0) -> Callable[[np.ndarray], np.ndarray] | None:
        """Known inputs of trajectory k (exact if given, else interpolated data.u)."""
        m = self.model
        if not m.n_inputs:
            return None
        if self.inputs is not None:
            return self.inputs if callable(self.inputs) else list(self.inputs)[k]
        d = self.trajectories[k]
        return Inputs.from_samples(d.t, d.u, self.interpolation)

    def initial_states(self) -> list[np.ndarray | None]:
        n, ist = self.n_trajectories, self.initial_state
        if ist is None:
            return [None] * n
        if isinstance(ist, str):
            return [d.x[0].copy() for d in self.trajectories]
        arr = np.asarray(ist, dtype=float)
        return [arr] * n if arr.ndim == 1 else list(arr)

    # ---- the dynamic optimization problem ------------------------------------------------------
    def to_dop(self, params_guess: np.ndarray | None = None) -> DynamicOptimizationProblem:
        """The dynamic optimization problem (paper eq. 6/21) of this training problem."""
        m = self.model
        nu = m.n_inputs
        scales = self.scales()
        columns = self._columns
        lam = self.regularization
        nw = m.n_weights

        def dynamics(x, p, u, t):
            return m.symbolic(x, p, u[:nu], t)[0]

        def lagrange(x, p, u, t):
            _, y = m.symbolic(x, p, u[:nu], t) if any(k == "y" for k, _ in columns) else (0, 0)
            q = ca.vertcat(*[x[i] if k == "x" else y[i] for k, i in columns])
            return ca.sumsqr((q - u[nu:]) / scales)

        mayer = (lambda x0, xf, p: lam * ca.sumsqr(p[:nw])) if lam > 0 else None

        boundary = None
        if self.block_constraints:
            cons = list(self.block_constraints)

            def block_values(x0, xf, p):
                return ca.vertcat(
                    *[
                        m.blocks[c.block].casadi(ca.DM(np.atleast_1d(c.at)), p[m.slices[c.block]])
                        for c in cons
                    ]
                )

            n_out = [m.blocks[c.block].n_out for c in cons]
            lb = np.concatenate(
                [np.broadcast_to(c.lb, (n,)) for c, n in zip(cons, n_out, strict=True)]
            )
            ub = np.concatenate(
                [np.broadcast_to(c.ub, (n,)) for c, n in zip(cons, n_out, strict=True)]
            )
            boundary = Constraint.make("block_constraints", block_values, sum(n_out), lb, ub)

        segments = [
            Segment(
                self.horizon if k == 0 else (d.t0, d.tf),
                self._segment_inputs(k),
                x0,
                self._state_guess(k),
            )
            for k, (d, x0) in enumerate(zip(self.trajectories, self.initial_states(), strict=True))
        ]
        p_lb, p_ub = m.param_bounds()
        return DynamicOptimizationProblem(
            dynamics=dynamics,
            n_states=m.n_states,
            n_params=m.n_params,
            tspan=segments[0].tspan,
            lagrange=lagrange,
            mayer=mayer,
            boundary=boundary,
            inputs=segments[0].inputs,
            p_lb=p_lb,
            p_ub=p_ub,
            x_guess=segments[0].x_guess,
            p_guess=params_guess,
            x0=segments[0].x0,
            x_nominal=self.nominal(),
            segments=tuple(segments) if len(segments) > 1 else (),
            state_names=m.state_names,
        )

    def _segment_inputs(self, k: int) -> Inputs:
        """Known inputs and interpolated fit targets of trajectory k, stacked [u, q̂]."""
        d = self.trajectories[k]
        target_in = Inputs.from_samples(d.t, self.targets(k), self.interpolation)
        u_fn = self.input_function(k)

        def all_inputs(t: np.ndarray) -> np.ndarray:
            parts = [u_fn(t)] if u_fn is not None else []
            return np.column_stack([*parts, target_in(t)])

        return Inputs.from_function(all_inputs, self.model.n_inputs + len(self._columns))

    def _state_guess(self, k: int) -> Any:
        sg, d = self.state_guess, self.trajectories[k]
        if not isinstance(sg, str) and not callable(sg) and not isinstance(sg, Trajectory):
            sg = list(sg)[k]
        if isinstance(sg, Trajectory):
            return Inputs.from_samples(sg.t, sg.x, "linear")
        if callable(sg):
            return sg
        if sg == "data":
            return Inputs.from_samples(d.t, d.x, self.interpolation)
        x0 = self.initial_states()[k]
        return np.asarray(d.x[0] if x0 is None else x0, dtype=float)


@dataclass
class TrainingSolution:
    """A trained model: the collocation :class:`Solution` plus the model and its parameters.

    Calling it at ``t`` gives the collocation states (dense output); :meth:`simulate` integrates
    the trained model from any initial state.
    """

    solution: Solution
    problem: TrainingProblem

    @property
    def model(self) -> HybridModel:
        return self.problem.model

    @property
    def p(self) -> np.ndarray:
        return self.solution.p

    @property
    def params(self) -> dict[str, np.ndarray | float]:
        """Block weights and fitted physical parameters by name."""
        return self.model.split_params(self.solution.p)

    @property
    def status(self):
        return self.solution.status

    def __call__(self, t: np.ndarray | float) -> np.ndarray:
        return self.solution(t)

    def __getattr__(self, name: str) -> Any:
        # status, iterations, timings, history, ... come from the collocation solution
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.solution, name)

    def simulate(
        self,
        t: np.ndarray,
        x0: np.ndarray | None = None,
        inputs: Callable[[np.ndarray], np.ndarray] | None = None,
        segment: int = 0,
        **kwargs: Any,
    ) -> Trajectory:
        """Integrate the trained model on ``t`` from ``x0`` (default: the collocation state of
        trajectory ``segment`` at t[0]) with that trajectory's inputs unless ``inputs`` is given."""
        t = np.asarray(t, dtype=float)
        x0 = self.solution.states(t[0], segment) if x0 is None else x0
        if inputs is None and self.model.n_inputs:
            inputs = self.problem.input_function(segment)
        return simulate(self.model, self.p, t, x0, inputs=inputs, **kwargs)
