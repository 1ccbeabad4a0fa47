"""Validators of [`TrainingProblem`][collocnode.TrainingProblem]'s fields, called once from its
``__post_init__``: one clear error naming the field and the value."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import casadi as ca
import numpy as np

from .. import _validation as v
from .._data import Trajectory
from ..models._hybrid import HybridModel
from ._constraints import BlockConstraint, PathConstraint

# ---- validators of TrainingProblem's fields (called once, from its __post_init__) ---------------
STATE_GUESSES = ("constant", "data", "simulate")
LOSSES = ("nodes", "samples")
#: how ``loss="samples"`` weighs its samples: equally (least squares), or by their cells
SAMPLE_WEIGHTS = ("least_squares", "cells")


def check_data(data: object) -> tuple[Trajectory, ...]:
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


def check_data_matches_model(
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
    if model.n_inputs and inputs is not None:
        fns = [inputs] * len(data) if callable(inputs) else list(inputs)  # type: ignore[arg-type]
        for k, (d, fn) in enumerate(zip(data, fns, strict=True)):
            _check_inputs_agree(k, d, fn)


#: how far given inputs may differ from a trajectory's recorded u, relative to u's magnitude
INPUT_AGREEMENT = 1e-6


def _check_inputs_agree(k: int, d: Trajectory, fn: Any) -> None:
    """One clear error where a trajectory records u and the given inputs function says
    otherwise at its sample times (the inputs replace u: a silent mismatch would train on
    inputs the data never saw)."""
    if d.u.shape[1] == 0:
        return
    given = np.asarray(fn(np.asarray(d.t, dtype=float)), dtype=float).reshape(d.t.size, -1)
    if given.shape != d.u.shape:
        raise ValueError(
            f"inputs[{k}] gives {given.shape[1]} columns at data[{k}]'s sample times, its u has "
            f"{d.u.shape[1]}"
        )
    gap = np.abs(given - d.u)
    worst = np.unravel_index(int(np.argmax(gap)), gap.shape)
    if gap[worst] > INPUT_AGREEMENT * max(1.0, float(np.max(np.abs(d.u)))):
        i, c = (int(j) for j in worst)
        raise ValueError(
            f"inputs[{k}] and data[{k}].u disagree: at t = {d.t[i]:.6g} input {c} is "
            f"{given[i, c]:.6g} from inputs but {d.u[i, c]:.6g} in the data; the inputs function "
            f"replaces u in training, so give one of them (or make them agree)"
        )


def check_inputs(inputs: object, n: int) -> None:
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


def check_fit(
    fit: object, model: HybridModel, data: tuple[Trajectory, ...]
) -> tuple[tuple[str, int], ...]:
    """The fitted columns named by ``fit``: ("x", state index) or ("y", output index).

    "states" are the states that some trajectory measures (a column of NaN in every
    trajectory is a hidden state, not fitted); none is an error."""
    if isinstance(fit, str) and fit == "states":
        has_values = np.any([np.isfinite(d.x).any(axis=0) for d in data], axis=0)
        if not has_values.any():
            raise ValueError(
                "the observation model observes nothing: fit='states', but no trajectory "
                "measures any state (every state column is NaN or absent)"
                + ("; fit='outputs' fits the model's outputs to data.y" if model.n_outputs else "")
            )
        return tuple(("x", i) for i in range(model.n_states) if has_values[i])
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


def check_interpolation(kind: object, data: tuple[Trajectory, ...], used: bool) -> None:
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


def check_initial_state(value: object, model: HybridModel, n: int) -> Any:
    """None, "data", or an array (n_states,) or (n, n_states) whose NaN entries are free."""
    if value is None:
        return None
    if isinstance(value, str):
        return v.choice("initial_state", value, ("data",))
    arr = v.measured_array("initial_state", value, nan="it is free")
    if arr.shape not in ((model.n_states,), (n, model.n_states)):
        raise ValueError(
            f"initial_state must have shape ({model.n_states},) or ({n}, {model.n_states}), "
            f"got {arr.shape}"
        )
    return arr


def check_scale(scale: object, n_columns: int) -> None:
    if isinstance(scale, str):
        v.choice("scale", scale, ("none", "std"))
        return
    arr = v.finite_array("scale", scale, shape=(n_columns,))
    if np.any(arr <= 0):
        raise ValueError(f"scale must be positive, got {arr}")


def check_tspan(tspan: object, data: tuple[Trajectory, ...]) -> tuple[float, float]:
    if len(data) > 1:
        raise ValueError("tspan applies to a single trajectory; window the data instead")
    t0, tf = (float(t) for t in v.finite_array("tspan", tspan, shape=(2,)))
    d = data[0]
    if not (d.t0 - 1e-9 <= t0 < tf <= d.tf + 1e-9):
        raise ValueError(f"tspan {tspan!r:.60} must lie inside the data's span [{d.t0}, {d.tf}]")
    return t0, tf


def check_block_constraints(constraints: object, model: HybridModel) -> tuple[Any, ...]:
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


def check_state_guess(guess: object, model: HybridModel, n: int) -> None:
    """One guess (a name, a callable, a Trajectory) for all trajectories, or one per trajectory."""
    if isinstance(guess, str) or callable(guess) or isinstance(guess, Trajectory):
        _check_one_state_guess("state_guess", guess, model)
        return
    if not isinstance(guess, Sequence):
        raise TypeError(
            "state_guess must be 'constant', 'data', 'simulate', a callable t -> (n, n_states), "
            f"a Trajectory, or a sequence of these (one per trajectory), got {guess!r:.60}"
        )
    if len(guess) != n:
        raise ValueError(f"state_guess must give one guess per trajectory ({n}), got {len(guess)}")
    for k, g in enumerate(guess):
        _check_one_state_guess(f"state_guess[{k}]", g, model)


def mentions_data(guess: object) -> bool:
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
            f"{name} must be 'constant', 'data', 'simulate', a callable t -> (n, n_states) or a "
            f"Trajectory, got {guess!r:.60}"
        )


def column_label(kind: str, i: int, model: HybridModel, first: Trajectory) -> str:
    """The name of a fitted column, as ``fit`` would name it."""
    if kind == "x":
        names = model.state_names or first.state_names
        return names[i] if names else f"x{i}"
    names = model.output_names or first.output_names
    return names[i] if names else f"y{i}"


def check_x_nominal(value: object, n_states: int) -> None:
    if isinstance(value, str):
        v.choice("x_nominal", value, ("auto",))
    elif value is not None:
        nom = v.finite_array("x_nominal", value, shape=(n_states,))
        if np.any(nom <= 0):
            raise ValueError(f"x_nominal must be positive, got {nom}")


def check_state_bounds(name: str, value: object, model: HybridModel, default: float) -> np.ndarray:
    """A state bound: None (``default``, ±inf), a number for every state, one per state
    (n_states,), or a mapping of state names to numbers (the others ``default``); shape
    (n_states,), ±inf allowed."""
    n = model.n_states
    if value is None:
        return np.full(n, default)
    if isinstance(value, Mapping):
        names = model.state_names
        out = np.full(n, default)
        for key, bound in value.items():
            if not names or key not in names:
                known = ", ".join(names) if names else "the model's states are unnamed"
                raise ValueError(f"{name} names {key!r}, which is no state ({known})")
            out[names.index(key)] = v.real_array(f"{name}[{key!r}]", bound, shape=())
        return out
    arr = v.real_array(name, value)
    if arr.shape not in ((), (n,)):
        raise ValueError(
            f"{name} must be a number, one per state ({n}) or a mapping of state names to "
            f"numbers, got shape {arr.shape}"
        )
    return np.broadcast_to(arr, (n,)).copy()


def check_within_bounds(
    lb: np.ndarray,
    ub: np.ndarray,
    data: tuple[Trajectory, ...],
    initial: list[np.ndarray | None],
    model: HybridModel,
) -> None:
    """lb <= ub, and every measured state value and every fixed initial value inside
    [lb, ub]; one ValueError naming the bound, the trajectory, the index and the value."""
    names = model.state_names
    label = (lambda i: f" ({names[i]!r})") if names else (lambda i: "")
    bad = np.flatnonzero(lb > ub)
    if bad.size:
        i = int(bad[0])
        raise ValueError(
            f"x_lb[{i}] = {float(lb[i])!r} is above x_ub[{i}] = {float(ub[i])!r}{label(i)}"
        )
    for k, d in enumerate(data):
        for where, values in ((f"data[{k}].x", d.x), (f"initial state of data[{k}]", initial[k])):
            if values is None:
                continue
            values = np.atleast_2d(values)
            for bound, side, outside in (
                (lb, "x_lb", values < lb),  # NaN compares False: missing values pass
                (ub, "x_ub", values > ub),
            ):
                if outside.any():
                    r, i = (int(a) for a in np.argwhere(outside)[0])
                    at = f"{where}[{r}, {i}]" if where.startswith("data") else f"{where}[{i}]"
                    word = "below" if side == "x_lb" else "above"
                    raise ValueError(
                        f"{at} = {float(values[r, i])!r}{label(i)} is {word} the bound "
                        f"{side}[{i}] = {float(bound[i])!r}: measured and fixed values must "
                        "satisfy the state bounds"
                    )


def check_path_constraints(path: object, model: HybridModel) -> tuple[PathConstraint, ...]:
    """None, one [`PathConstraint`][collocnode.PathConstraint] or a sequence of them, each returning
    its ``n`` values for the model's states (checked by evaluating it once on symbols)."""
    if path is None:
        return ()
    constraints = (path,) if isinstance(path, PathConstraint) else path
    if not isinstance(constraints, Sequence) or isinstance(constraints, str):
        raise TypeError(
            f"path must be a PathConstraint, a sequence of them or None, got {path!r:.80}"
        )
    x = ca.SX.sym("x", model.n_states)
    p = ca.SX.sym("p", model.n_params)
    u = ca.SX.sym("u", model.n_inputs)
    c = ca.SX.sym("c", len(model.per_trajectory))
    for k, pc in enumerate(constraints):
        if not isinstance(pc, PathConstraint):
            raise TypeError(f"path[{k}] must be a PathConstraint, got {pc!r:.80}")
        model.evaluate(f"path[{k}].fn", pc.fn, pc.n, x, p, u, ca.SX.sym("t"), c)
    return tuple(constraints)
