"""Training a (hybrid) neural ODE on trajectory data, posed as a dynamic optimization problem.

The training problem of Langenkamp et al. (eqs. 6 and 21):

    minimize   ∫ Σ_c ((q_c(x, u, t) − q̂_c(t)) / s_c)² dt  +  λ ‖w‖²
    subject to x' = φ(x, u, t, NN_w(...)),   block constraints (e.g. NN(0) = 0, eq. 17),
               x(t0) = x0 (optional)

where q_c are the fitted columns (states or model outputs), q̂_c the data and s_c optional scales
(eq. 16 divides by the data's standard deviation). Two ways to bring the data into the loss:

* ``loss="nodes"``: the data enter at the collocation nodes through an interpolant of the samples,
  a not-a-knot cubic spline by default (exact to O(Δt⁴) for smooth data; for noisy data it passes
  through every noisy sample) or piecewise linear, and the integral is the Radau quadrature.
* ``loss="samples"``: the loss is evaluated where the data are, Σ_s Σ_c w_sc ((q_c(t_s) − q̂_sc) /
  s_c)², with x(t_s) the collocation polynomial of the interval holding t_s. The weights w_sc are
  the lengths of the cells around each observed sample of column c (midpoints between
  neighbouring observations, the horizon's ends outside them): the trapezoid rule on samples that
  include both ends, so the sum approximates the same integral and λ keeps its meaning. Samples
  may be irregular and differ between trajectories; a ``mask`` marks missing values per column.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import casadi as ca
import numpy as np

from . import _validation as v
from .consistency import ConsistencyCheck, ConsistencyReport, check_consistency
from .data import Trajectory
from .models import HybridModel
from .simulate import simulate
from .transcription.problem import (
    Constraint,
    DynamicOptimizationProblem,
    Inputs,
    Samples,
    Segment,
)
from .transcription.solution import Solution


@dataclass(frozen=True)
class BlockConstraint:
    """``lb <= block(at) <= ub`` for one block at one input point (an NLP constraint, not a
    penalty; paper eq. 17 is ``BlockConstraint("friction", at=0.0)``)."""

    block: str
    at: Any
    lb: Any = 0.0
    ub: Any = 0.0

    def __post_init__(self) -> None:
        # what needs no model is checked here; the block's size and domain by TrainingProblem
        if not isinstance(self.block, str):
            raise TypeError(f"BlockConstraint.block must be a block name, got {self.block!r:.60}")
        v.finite_array(f"block constraint '{self.block}'.at", self.at)
        for name in ("lb", "ub"):
            v.real_array(f"block constraint '{self.block}'.{name}", getattr(self, name))


# ---- validators of TrainingProblem's fields (called once, from its __post_init__) ---------------
STATE_GUESSES = ("constant", "data")
LOSSES = ("nodes", "samples")


def _check_data(data: object) -> tuple[Trajectory, ...]:
    """The trajectories: one, or a non-empty sequence, each with a time span to train on."""
    if isinstance(data, Trajectory):
        trajectories: tuple[Any, ...] = (data,)
    elif isinstance(data, Sequence) and not isinstance(data, str):
        trajectories = tuple(data)
    else:
        raise TypeError(f"data must be a Trajectory or a sequence of them, got {data!r:.80}")
    if not trajectories:
        raise ValueError("data must hold at least one trajectory, got none")
    for k, d in enumerate(trajectories):
        if not isinstance(d, Trajectory):
            raise TypeError(f"data[{k}] must be a Trajectory, got {d!r:.80}")
        if d.n_samples < 2:
            raise ValueError(
                f"data[{k}] must hold at least 2 samples (a time span to train on), "
                f"got {d.n_samples}"
            )
    return trajectories


def _check_data_matches_model(
    model: HybridModel, data: tuple[Trajectory, ...], inputs: object
) -> None:
    for k, d in enumerate(data):
        if d.n_states != model.n_states:
            raise ValueError(f"data[{k}] has {d.n_states} states, the model {model.n_states}")
    if not model.n_inputs and inputs is not None:
        raise ValueError(f"inputs are given ({inputs!r:.60}) but the model has no inputs")
    if model.n_inputs and inputs is None:
        for k, d in enumerate(data):
            if d.u.shape[1] != model.n_inputs:
                raise ValueError(
                    f"the model has {model.n_inputs} inputs but data[{k}].u has "
                    f"{d.u.shape[1]} columns"
                )


def _check_inputs(inputs: object, n: int) -> None:
    if inputs is None:
        return
    if callable(inputs):
        fns: list[Any] = [inputs]
    elif isinstance(inputs, Sequence) and not isinstance(inputs, str):
        fns = list(inputs)
    else:
        fns = []
    if len(fns) != n or not all(callable(f) for f in fns):
        raise ValueError(f"inputs must be one callable per trajectory ({n}), got {inputs!r:.80}")


def _check_fit(
    fit: object, model: HybridModel, data: tuple[Trajectory, ...]
) -> tuple[tuple[str, int], ...]:
    """The fitted columns named by ``fit``: ("x", state index) or ("y", output index)."""
    if isinstance(fit, str) and fit == "states":
        return tuple(("x", i) for i in range(model.n_states))
    if isinstance(fit, str) and fit == "outputs":
        if not model.n_outputs:
            raise ValueError("fit='outputs' but the model has no outputs")
        columns = tuple(("y", i) for i in range(model.n_outputs))
    else:
        columns = tuple(_named_column(name, model, data[0]) for name in _fit_names(fit))
    if any(kind == "y" for kind, _ in columns):
        for k, d in enumerate(data):
            if d.y.shape[1] != model.n_outputs:
                raise ValueError(
                    f"fitting outputs needs data[{k}].y with {model.n_outputs} columns, got "
                    f"{d.y.shape[1]}"
                )
    return columns


def _fit_names(fit: object) -> list[str]:
    if isinstance(fit, str):
        return [fit]
    if not (isinstance(fit, Sequence) and all(isinstance(name, str) for name in fit)):
        raise TypeError(
            f"fit must be 'states', 'outputs' or a sequence of column names, got {fit!r:.60}"
        )
    if not fit:
        raise ValueError("fit must name at least one column, got none")
    return list(fit)


def _named_column(name: str, model: HybridModel, first: Trajectory) -> tuple[str, int]:
    """A column by name: the model's labels first, then the data's, then x0.../y0..."""
    states = model.state_names or first.state_names or tuple(f"x{i}" for i in range(model.n_states))
    outputs = (
        model.output_names or first.output_names or tuple(f"y{i}" for i in range(model.n_outputs))
    )
    if name in states:
        return ("x", states.index(name))
    if name in outputs:
        return ("y", outputs.index(name))
    raise ValueError(
        f"unknown fit column {name!r}; states: {', '.join(states)}"
        + (f"; outputs: {', '.join(outputs)}" if outputs else "")
    )


def _check_interpolation(kind: object, data: tuple[Trajectory, ...], used: bool) -> None:
    """The interpolation kind; ``used``: whether anything interpolates the samples (the loss at
    the nodes, inputs from data.u, the "data" state guess)."""
    v.choice("interpolation", kind, ("cubic", "linear"))
    if kind == "cubic" and used:
        for k, d in enumerate(data):
            if d.n_samples < 4:
                raise ValueError(
                    f"interpolation 'cubic' needs >= 4 samples per trajectory, data[{k}] has "
                    f"{d.n_samples}; use interpolation='linear'"
                )


def _check_initial_state(value: object, model: HybridModel, n: int) -> Any:
    """None, "data", or an array (n_states,) or (n, n_states)."""
    if value is None:
        return None
    if isinstance(value, str):
        return v.choice("initial_state", value, ("data",))
    arr = v.finite_array("initial_state", value)
    if arr.shape not in ((model.n_states,), (n, model.n_states)):
        raise ValueError(
            f"initial_state must have shape ({model.n_states},) or ({n}, {model.n_states}), "
            f"got {arr.shape}"
        )
    return arr


def _check_scale(scale: object, n_columns: int) -> None:
    if isinstance(scale, str):
        v.choice("scale", scale, ("none", "std"))
        return
    arr = v.finite_array("scale", scale, shape=(n_columns,))
    if np.any(arr <= 0):
        raise ValueError(f"scale must be positive, got {arr}")


def _check_tspan(tspan: object, data: tuple[Trajectory, ...]) -> tuple[float, float]:
    if len(data) > 1:
        raise ValueError("tspan applies to a single trajectory; window the data instead")
    t0, tf = (float(t) for t in v.finite_array("tspan", tspan, shape=(2,)))
    d = data[0]
    if not (d.t0 - 1e-9 <= t0 < tf <= d.tf + 1e-9):
        raise ValueError(f"tspan {tspan!r:.60} must lie inside the data's span [{d.t0}, {d.tf}]")
    return t0, tf


def _check_block_constraints(constraints: object, model: HybridModel) -> tuple[Any, ...]:
    if not isinstance(constraints, Sequence) or isinstance(constraints, str):
        raise TypeError(
            f"block_constraints must be a sequence of BlockConstraint, got {constraints!r:.80}"
        )
    for k, bc in enumerate(constraints):
        if not isinstance(bc, BlockConstraint):
            raise TypeError(f"block_constraints[{k}] must be a BlockConstraint, got {bc!r:.80}")
        _check_block_constraint(bc, model)
    return tuple(constraints)


def _check_block_constraint(bc: BlockConstraint, model: HybridModel) -> None:
    """A known block, an input point inside its domain, bounds lb <= ub per output."""
    if bc.block not in model.blocks:
        raise ValueError(
            f"block constraint on unknown block {bc.block!r}; blocks: {', '.join(model.blocks)}"
        )
    block = model.blocks[bc.block]
    where = f"block constraint '{bc.block}'"
    at = np.atleast_1d(v.finite_array(f"{where}.at", bc.at))
    if at.shape != (block.n_in,):
        raise ValueError(f"{where}.at must have {block.n_in} entries, got {at}")
    lo, hi = block.domain
    if np.any(at < lo) or np.any(at > hi):
        raise ValueError(f"{where}.at = {at.tolist()} is outside the block's domain [{lo}, {hi}]")
    lb, ub = (v.real_array(f"{where}.{name}", getattr(bc, name)) for name in ("lb", "ub"))
    for name, bound in (("lb", lb), ("ub", ub)):
        if bound.shape not in ((), (1,), (block.n_out,)):
            raise ValueError(
                f"{where}.{name} must be a scalar or have {block.n_out} entries, "
                f"got shape {bound.shape}"
            )
    if np.any(lb > ub):
        raise ValueError(f"{where} needs lb <= ub, got lb = {lb}, ub = {ub}")


def _check_state_guess(guess: object, model: HybridModel, n: int) -> None:
    """One guess (a name, a callable, a Trajectory) for all trajectories, or one per trajectory."""
    if isinstance(guess, str) or callable(guess) or isinstance(guess, Trajectory):
        _check_one_state_guess("state_guess", guess, model)
        return
    if not isinstance(guess, Sequence):
        raise TypeError(
            "state_guess must be 'constant', 'data', a callable t -> (n, n_states), a "
            f"Trajectory, or a sequence of these (one per trajectory), got {guess!r:.60}"
        )
    if len(guess) != n:
        raise ValueError(f"state_guess must give one guess per trajectory ({n}), got {len(guess)}")
    for k, g in enumerate(guess):
        _check_one_state_guess(f"state_guess[{k}]", g, model)


def _mentions_data(guess: object) -> bool:
    """Whether a state guess (or any of one per trajectory) is "data"."""
    if isinstance(guess, str):
        return guess == "data"
    if isinstance(guess, Sequence) and not isinstance(guess, Trajectory):
        return any(isinstance(g, str) and g == "data" for g in guess)
    return False


def _check_one_state_guess(name: str, guess: object, model: HybridModel) -> None:
    if isinstance(guess, str):
        v.choice(name, guess, STATE_GUESSES)
    elif isinstance(guess, Trajectory):
        if guess.n_states != model.n_states:
            raise ValueError(
                f"{name} is a Trajectory with {guess.n_states} states, the model has "
                f"{model.n_states}"
            )
    elif not callable(guess):
        raise TypeError(
            f"{name} must be 'constant', 'data', a callable t -> (n, n_states) or a Trajectory, "
            f"got {guess!r:.60}"
        )


def _column_label(kind: str, i: int, model: HybridModel, first: Trajectory) -> str:
    """The name of a fitted column, as ``fit`` would name it."""
    if kind == "x":
        names = model.state_names or first.state_names
        return names[i] if names else f"x{i}"
    names = model.output_names or first.output_names
    return names[i] if names else f"y{i}"


def _check_mask(
    mask: object, loss: str, data: tuple[Trajectory, ...], n_fit: int
) -> tuple[np.ndarray | None, ...] | None:
    """None, or one boolean array (n_samples, n_fit) per trajectory (None: all observed).

    One trajectory takes an array; several take a sequence of arrays (or None), one each.
    """
    if mask is None:
        return None
    if loss != "samples":
        raise ValueError(
            f"mask needs loss='samples' (the loss at the nodes interpolates every sample), "
            f"got loss={loss!r}"
        )
    n = len(data)
    if n == 1:
        entries: list[tuple[str, Any]] = [("mask", mask)]
    elif isinstance(mask, Sequence) and not isinstance(mask, str) and len(mask) == n:
        entries = [(f"mask[{k}]", m) for k, m in enumerate(mask)]
    else:
        raise ValueError(
            f"mask must give one array (or None) per trajectory ({n}), got {mask!r:.60}"
        )
    out: list[np.ndarray | None] = []
    for (name, entry), d in zip(entries, data, strict=True):
        if entry is None:
            out.append(None)
            continue
        arr = np.asarray(entry)
        if arr.dtype != bool:
            if arr.dtype.kind not in "iuf" or not np.all((arr == 0) | (arr == 1)):
                raise TypeError(
                    f"{name} must be an array of booleans (True: observed), got {entry!r:.60}"
                )
            arr = arr.astype(bool)
        if arr.shape != (d.n_samples, n_fit):
            raise ValueError(
                f"{name} must have shape ({d.n_samples}, {n_fit}) (samples x fitted columns), "
                f"got {arr.shape}"
            )
        arr = arr.copy()
        arr.setflags(write=False)
        out.append(arr)
    return tuple(out)


def cell_weights(t: np.ndarray, observed: np.ndarray, t0: float, tf: float) -> np.ndarray:
    """Quadrature weights of the observed samples over [t0, tf]: each observed sample gets the
    length of its cell, bounded by the midpoints to its observed neighbours and by t0, tf
    outside the first and last (the trapezoid rule when samples sit on both ends).

    Args:
        t: sample times (n,), increasing, inside [t0, tf] [s].
        observed: (n,) booleans.

    Returns:
        (n,) weights [s], zero where not observed; they sum to tf - t0 when any is observed.
    """
    w = np.zeros(t.size)
    obs = np.flatnonzero(observed)
    if obs.size:
        tau = t[obs]
        edges = np.concatenate(([t0], (tau[:-1] + tau[1:]) / 2.0, [tf]))
        w[obs] = np.diff(edges)
    return w


def _check_x_nominal(value: object, n_states: int) -> None:
    if isinstance(value, str):
        v.choice("x_nominal", value, ("auto",))
    elif value is not None:
        nom = v.finite_array("x_nominal", value, shape=(n_states,))
        if np.any(nom <= 0):
            raise ValueError(f"x_nominal must be positive, got {nom}")


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
        loss: "nodes" (the interpolated data at the collocation nodes, Radau quadrature) or
            "samples" (at the measurement times, cell-weighted; see the module docstring). The
            samples of a trajectory must lie inside its horizon (``tspan`` keeps only the samples
            inside it).
        mask: missing values (``loss="samples"`` only): a boolean array (n_samples, n_fit),
            True where fitted column c (in the order of :attr:`columns`) is observed, for one
            trajectory; for several, a sequence with one such array (or None: all observed) per
            trajectory. A missing value contributes nothing (its entry in the data is ignored);
            every fitted column needs an observed value in every trajectory's horizon.
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
    loss: str = "nodes"
    mask: Any = None
    _columns: tuple[tuple[str, int], ...] = field(default=(), init=False, repr=False)

    def __post_init__(self) -> None:
        # the one validation point: each check below owns one field or one concern
        if not isinstance(self.model, HybridModel):
            raise TypeError(f"model must be a HybridModel, got {self.model!r:.80}")
        data = _check_data(self.data)
        object.__setattr__(self, "data", data[0] if len(data) == 1 else data)
        self.model.check_smooth()
        _check_inputs(self.inputs, len(data))
        _check_data_matches_model(self.model, data, self.inputs)
        object.__setattr__(self, "_columns", _check_fit(self.fit, self.model, data))
        v.nonnegative_float("regularization", self.regularization)
        v.choice("loss", self.loss, LOSSES)
        interpolated = (
            self.loss == "nodes"
            or (self.model.n_inputs > 0 and self.inputs is None)
            or _mentions_data(self.state_guess)
        )
        _check_interpolation(self.interpolation, data, interpolated)
        object.__setattr__(
            self, "initial_state", _check_initial_state(self.initial_state, self.model, len(data))
        )
        _check_scale(self.scale, len(self._columns))
        if self.tspan is not None:
            object.__setattr__(self, "tspan", _check_tspan(self.tspan, data))
        object.__setattr__(
            self,
            "block_constraints",
            _check_block_constraints(self.block_constraints, self.model),
        )
        _check_state_guess(self.state_guess, self.model, len(data))
        _check_x_nominal(self.x_nominal, self.model.n_states)
        if self.params_guess is not None:
            guess = v.finite_array("params_guess", self.params_guess, shape=(self.model.n_params,))
            object.__setattr__(self, "params_guess", guess)
        object.__setattr__(
            self, "mask", _check_mask(self.mask, self.loss, data, len(self._columns))
        )
        if self.loss == "samples":
            self._check_observed()

    def _check_observed(self) -> None:
        """Every fitted column observed in every trajectory's horizon; an initial state taken
        from the data observed at the first sample."""
        first = self.trajectories[0]
        for k in range(self.n_trajectories):
            t0, tf = self._horizon(k)
            observed = self.observed(k)[self._inside(k)]
            for c, (kind, i) in enumerate(self.columns):
                if not observed[:, c].any():
                    label = _column_label(kind, i, self.model, first)
                    by = f" (mask{'' if self.n_trajectories == 1 else f'[{k}]'})"
                    raise ValueError(
                        f"fitted column {label!r} of data[{k}] has no observed value in the "
                        f"horizon [{t0!r}, {tf!r}]" + (by if self.mask is not None else "")
                    )
            if isinstance(self.initial_state, str) and self.mask is not None:
                missing = [
                    _column_label(kind, i, self.model, first)
                    for c, (kind, i) in enumerate(self.columns)
                    if kind == "x" and not self.observed(k)[0, c]
                ]
                if missing:
                    raise ValueError(
                        f"initial_state='data' takes the first sample of data[{k}], but the mask "
                        f"marks state {missing[0]!r} missing there"
                    )

    # ---- the data ----------------------------------------------------------------------------
    @property
    def trajectories(self) -> tuple[Trajectory, ...]:
        return (self.data,) if isinstance(self.data, Trajectory) else tuple(self.data)

    @property
    def n_trajectories(self) -> int:
        return len(self.trajectories)

    @property
    def columns(self) -> tuple[tuple[str, int], ...]:
        """The fitted columns, in the order of the loss terms: ``("x", i)`` for state i,
        ``("y", j)`` for model output j (resolved from ``fit``)."""
        return self._columns

    @property
    def horizon(self) -> tuple[float, float]:
        """The training horizon of the first trajectory."""
        d = self.trajectories[0]
        return self.tspan if self.tspan is not None else (d.t0, d.tf)

    def _horizon(self, k: int) -> tuple[float, float]:
        """The training horizon of trajectory k (``tspan`` applies to the first only)."""
        d = self.trajectories[k]
        return self.horizon if k == 0 else (d.t0, d.tf)

    def _inside(self, k: int) -> np.ndarray:
        """Which samples of trajectory k lie in its horizon, (n_samples,) booleans."""
        t0, tf = self._horizon(k)
        t = self.trajectories[k].t
        tol = 1e-9 * max(1.0, tf - t0)
        return (t >= t0 - tol) & (t <= tf + tol)

    def observed(self, k: int = 0) -> np.ndarray:
        """Which fitted values of trajectory k are observed, (n_samples, n_fit) booleans (all
        True without a ``mask``)."""
        masks = self.mask
        if masks is None or masks[k] is None:
            return np.ones((self.trajectories[k].n_samples, len(self.columns)), dtype=bool)
        return masks[k]

    def targets(self, k: int = 0) -> np.ndarray:
        """The fitted data columns of trajectory k, shape (n_samples, n_fit)."""
        d = self.trajectories[k]
        return np.column_stack([d.x[:, i] if c == "x" else d.y[:, i] for c, i in self.columns])

    def scales(self) -> np.ndarray:
        """The divisor s_c of every fitted column (n_fit,); "std" is the standard deviation of
        the column's observed values over all trajectories."""
        if isinstance(self.scale, str):
            if self.scale == "none":
                return np.ones(len(self._columns))
            values = np.vstack([self.targets(k) for k in range(self.n_trajectories)])
            observed = np.vstack([self.observed(k) for k in range(self.n_trajectories)])
            s = np.array([values[observed[:, c], c].std() for c in range(values.shape[1])])
            if np.any(s <= 0):
                raise ValueError("scale='std' needs non-constant fitted data columns")
            return s
        return np.asarray(self.scale, dtype=float)

    def nominal(self) -> np.ndarray | None:
        """The state scaling handed to the NLP (see ``x_nominal``)."""
        if isinstance(self.x_nominal, str):
            x = np.vstack([d.x for d in self.trajectories])
            seen = np.ones(x.shape, dtype=bool)  # a fitted state counts where it is observed
            observed = np.vstack([self.observed(k) for k in range(self.n_trajectories)])
            for c, (kind, i) in enumerate(self.columns):
                if kind == "x":
                    seen[:, i] &= observed[:, c]
            s = np.array([x[seen[:, i], i].std() for i in range(x.shape[1])])
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
        columns = self.columns
        lam = self.regularization
        nw = m.n_weights

        # The DOP's input vector stacks [u (nu), q̂ (n_fit)]. It is split at explicit offsets:
        # a range slice such as w[:0] of a (1, 1) symbol is a 1 x 0 row, not an empty column.
        def split_inputs(w: Any) -> tuple[Any, Any]:
            u, q_hat = ca.vertsplit(w, [0, nu, w.size1()])
            return u, q_hat

        def dynamics(x, p, u, t):
            return m.symbolic(x, p, split_inputs(u)[0], t)[0]

        def lagrange(x, p, u, t):
            u_known, q_hat = split_inputs(u)
            _, y = m.symbolic(x, p, u_known, t) if any(k == "y" for k, _ in columns) else (0, 0)
            q = ca.vertcat(*[x[i] if k == "x" else y[i] for k, i in columns])
            return ca.sumsqr((q - q_hat) / scales)

        n_fit = len(columns)

        def sample_loss(x, p, u, t, d):
            # d = [q̂ (n_fit), w_c / s_c² (n_fit)]: the weights hold the cell lengths, the
            # scales and the mask (0 where missing), so a missing value adds exactly nothing
            q_hat, weight = ca.vertsplit(d, [0, n_fit, 2 * n_fit])
            _, y = m.symbolic(x, p, u, t) if any(k == "y" for k, _ in columns) else (0, 0)
            q = ca.vertcat(*[x[i] if k == "x" else y[i] for k, i in columns])
            return ca.dot(weight, (q - q_hat) ** 2)

        at_samples = self.loss == "samples"

        def weight_penalty(x0, xf, p):
            weights = ca.vertsplit(p, [0, nw, p.size1()])[0]
            return lam * ca.sumsqr(weights)

        mayer = weight_penalty if lam > 0 else None

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
                self._horizon(k),
                self._segment_inputs(k),
                x0,
                self._state_guess(k),
                self.samples(k) if at_samples else None,
            )
            for k, x0 in enumerate(self.initial_states())
        ]
        p_lb, p_ub = m.param_bounds()
        return DynamicOptimizationProblem(
            dynamics=dynamics,
            n_states=m.n_states,
            n_params=m.n_params,
            tspan=segments[0].tspan,
            lagrange=None if at_samples else lagrange,
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
            sample_loss=sample_loss if at_samples else None,
            samples=segments[0].samples,
        )

    def samples(self, k: int = 0) -> Samples:
        """The data terms of trajectory k for ``loss="samples"``: its samples inside the horizon
        with at least one observed fitted value; data ``[q̂ (n_fit), w_c / s_c² (n_fit)]`` with
        w_c the cell weights of :func:`cell_weights` (0 where missing)."""
        t0, tf = self._horizon(k)
        inside = self._inside(k)
        t = np.clip(self.trajectories[k].t[inside], t0, tf)
        observed = self.observed(k)[inside]
        cells = [cell_weights(t, observed[:, c], t0, tf) for c in range(observed.shape[1])]
        weights = np.column_stack(cells) / self.scales() ** 2
        targets = np.where(observed, self.targets(k)[inside], 0.0)
        keep = observed.any(axis=1)
        return Samples(t[keep], np.column_stack([targets, weights])[keep])

    def _segment_inputs(self, k: int) -> Inputs:
        """Known inputs and interpolated fit targets of trajectory k, stacked [u, q̂]; only the
        known inputs for the loss at the samples."""
        d = self.trajectories[k]
        u_fn = self.input_function(k)
        if self.loss == "samples":
            if u_fn is None:
                return Inputs.none()
            n_inputs = self.model.n_inputs
            return u_fn if isinstance(u_fn, Inputs) else Inputs.from_function(u_fn, n_inputs)
        target_in = Inputs.from_samples(d.t, self.targets(k), self.interpolation)

        def all_inputs(t: np.ndarray) -> np.ndarray:
            parts = [u_fn(t)] if u_fn is not None else []
            return np.column_stack([*parts, target_in(t)])

        return Inputs.from_function(all_inputs, self.model.n_inputs + len(self._columns))

    def _observed_states(self, k: int) -> Callable[[np.ndarray], np.ndarray]:
        """The states of trajectory k interpolated linearly through each state's observed
        samples (constant outside them), ``t (n,) -> (n, n_states)``."""
        d = self.trajectories[k]
        seen = np.ones(d.x.shape, dtype=bool)
        observed = self.observed(k)
        for c, (kind, i) in enumerate(self.columns):
            if kind == "x":
                seen[:, i] = observed[:, c]

        def states(t: np.ndarray) -> np.ndarray:
            t = np.asarray(t, dtype=float)
            return np.column_stack(
                [np.interp(t, d.t[seen[:, i]], d.x[seen[:, i], i]) for i in range(d.n_states)]
            )

        return states

    def _state_guess(self, k: int) -> Any:
        sg, d = self.state_guess, self.trajectories[k]
        if not isinstance(sg, str) and not callable(sg) and not isinstance(sg, Trajectory):
            sg = list(sg)[k]
        if isinstance(sg, Trajectory):
            return Inputs.from_samples(sg.t, sg.x, "linear")
        if callable(sg):
            return sg
        if sg == "data" and self.mask is not None and self.mask[k] is not None:
            return self._observed_states(k)
        if sg == "data":
            return Inputs.from_samples(d.t, d.x, self.interpolation)
        x0 = self.initial_states()[k]
        return np.asarray(d.x[0] if x0 is None else x0, dtype=float)


@dataclass
class TrainingSolution:
    """A trained model: the collocation :class:`Solution` plus the model and its parameters.

    Calling it at ``t`` gives the collocation states (dense output); :meth:`simulate` integrates
    the trained model from any initial state.

    Attributes:
        solution: the collocation :class:`Solution`.
        problem: the training problem.
        consistency: the consistency check of the trained model (``solve`` runs it unless
            ``check=False``; :meth:`check_consistency` runs it again), or None if it did not run.
    """

    solution: Solution
    problem: TrainingProblem
    consistency: ConsistencyReport | None = None

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
        # status, iterations, timings, history, ... come from the collocation solution. Only
        # called for names not found on the TrainingSolution itself; private names and the two
        # fields (absent while copy/pickle rebuild the object) are never forwarded.
        if name.startswith("_") or name in ("solution", "problem"):
            raise AttributeError(f"'TrainingSolution' object has no attribute {name!r}")
        try:
            return getattr(self.solution, name)
        except AttributeError:
            raise AttributeError(
                f"'TrainingSolution' object has no attribute {name!r} (nor has its collocation "
                f"Solution)"
            ) from None

    def simulate(
        self,
        t: np.ndarray,
        x0: np.ndarray | None = None,
        inputs: Callable[[np.ndarray], np.ndarray] | None = None,
        segment: int = 0,
        **kwargs: Any,
    ) -> Trajectory:
        """Integrate the trained model on ``t`` (n,) from ``x0`` (n_states,) (default: the
        collocation state of trajectory ``segment`` at t[0]) with that trajectory's inputs unless
        ``inputs`` is given; ``kwargs`` go to :func:`collocnode.simulate`."""
        t = v.increasing("t", t)
        if t.size == 0:
            raise ValueError("t must hold at least one output time, got an empty array")
        segment = v.nonnegative_int("segment", segment)
        if segment >= self.problem.n_trajectories:
            raise ValueError(
                f"segment must be < {self.problem.n_trajectories} (the number of trajectories), "
                f"got {segment}"
            )
        x0 = self.solution.states(t[0], segment) if x0 is None else x0
        if inputs is None and self.model.n_inputs:
            inputs = self.problem.input_function(segment)
        return simulate(self.model, self.p, t, x0, inputs=inputs, **kwargs)

    def state_spread(self) -> np.ndarray:
        """The data's spread of every state, shape (n_states,) (units of the state): the
        standard deviation of each state column over the observed samples of all trajectories,
        1 where a column is constant (the ``x_nominal="auto"`` of :class:`TrainingProblem`)."""
        if isinstance(self.problem.x_nominal, str):
            return self.problem.nominal()
        return replace(self.problem, x_nominal="auto").nominal()

    def check_consistency(self, settings: ConsistencyCheck | None = None) -> ConsistencyReport:
        """Re-simulate the trained model from each trajectory's collocated initial state and
        compare with the collocation trajectory (:mod:`collocnode.consistency`); the result is
        returned, not stored (``solve`` stores its own run in :attr:`consistency`)."""
        inputs = [
            self.problem.input_function(k) if self.model.n_inputs else None
            for k in range(self.problem.n_trajectories)
        ]
        return check_consistency(self.model, self.solution, self.state_spread(), inputs, settings)

    def to_dict(self) -> dict[str, Any]:
        """The collocation solution's summary (:meth:`Solution.to_dict`) with the consistency
        check under ``"consistency"`` (None if it did not run)."""
        out = self.solution.to_dict()
        out["consistency"] = None if self.consistency is None else self.consistency.to_dict()
        return out

    def summary(self) -> str:
        """The collocation solution's summary table with a consistency row."""
        text = self.solution.summary()
        if self.consistency is None:
            return text
        # the table's label column: as wide as its longest label, labels holding single spaces
        width = max(len(line.split("  ")[0]) for line in text.splitlines())
        return text + f"\n{'consistency':<{width}}  {self.consistency.summary()}"
