"""The observation model of a training problem: which values each trajectory measures.

A trajectory measures a state where its column holds a value: NaN marks a missing value, and a
state that is not measured at all is a column of NaN or, in a trajectory whose ``state_names``
name only some of the model's states, absent (`align_to_model` turns it into a column of
NaN). The fitted columns (``fit``) are the measured quantities that enter the loss: states, or
model outputs y = h(x, u, t, blocks, params) with their own data in ``Trajectory.y``. A state
that is never measured is *hidden*: its trajectory comes from the model alone.

Where a fitted value may be missing is said by a ``mask`` (True: observed) or, with
``mask="finite"``, by the NaN in the data; a NaN in a fitted column that no mask marks missing
is an error naming its index, so that a missing value never enters the loss unnoticed.

`undetermined_states` reads the model's dependency structure (the sparsity of the CasADi
Jacobians ∂f/∂x and ∂h/∂x) to find hidden states that nothing in the problem determines.
"""

from __future__ import annotations

import warnings
from dataclasses import replace
from typing import Any

import casadi as ca
import numpy as np

from .._data import Trajectory
from ..models._hybrid import HybridModel


class UndeterminedStateWarning(UserWarning):
    """A hidden state that nothing in the training problem determines: it is not measured, no
    measured quantity depends on it through the model, and its initial value is free."""


# ---- names and absent columns ------------------------------------------------------------------


def align_to_model(
    model: HybridModel, data: tuple[Trajectory, ...]
) -> tuple[HybridModel, tuple[Trajectory, ...]]:
    """The model with the data's column names where it has none, and every trajectory with one
    state column per model state (absent states as NaN columns, named columns in the model's
    order).

    Raises:
        ValueError: trajectories whose names disagree while the model has none; a trajectory
            with fewer state columns than the model that are not named after its states.
    """
    model = _named_model(model, data)
    return model, tuple(_full_width(model, d, k) for k, d in enumerate(data))


def _named_model(model: HybridModel, data: tuple[Trajectory, ...]) -> HybridModel:
    """``model`` with the names the data give for columns it leaves unnamed."""
    changes: dict[str, tuple[str, ...]] = {}
    for field, width in (
        ("state_names", model.n_states),
        ("input_names", model.n_inputs),
        ("output_names", model.n_outputs),
    ):
        if getattr(model, field) or not width:
            continue
        named = [(k, getattr(d, field)) for k, d in enumerate(data) if getattr(d, field)]
        full = [(k, names) for k, names in named if len(names) == width]
        if not full:
            continue
        first_k, first = full[0]
        for k, names in full[1:]:
            if names != first:
                raise ValueError(
                    f"data[{k}].{field} {names} differ from data[{first_k}].{field} {first}, "
                    f"and the model has none to go by; name the model's columns ({field}=...)"
                )
        changes[field] = first
    if not changes:
        return model
    recipe = model.recipe
    if recipe is not None and "state_names" in changes and "state_names" in recipe[1]:
        # a rebuilt model (model files) keeps the names
        recipe = (recipe[0], {**recipe[1], "state_names": list(changes["state_names"])})
    return replace(model, **changes, recipe=recipe)


def _full_width(model: HybridModel, d: Trajectory, k: int) -> Trajectory:
    """Trajectory ``d`` with one state column per model state, in the model's order."""
    names = model.state_names
    if d.n_states == model.n_states and (not (names and d.state_names) or d.state_names == names):
        return d
    if d.n_states > model.n_states or (d.n_states and not (names and d.state_names)):
        after = (
            f"the model's states ({', '.join(names)})"
            if names
            else ("the model's states (give the model state_names)")
        )
        hint = (
            f"; name its columns (state_names) after {after} so that the others count as "
            "hidden, or give hidden states as columns of NaN"
            if d.n_states < model.n_states
            else ""
        )
        raise ValueError(f"data[{k}] has {d.n_states} states, the model {model.n_states}{hint}")
    unknown = [n for n in d.state_names if n not in names]
    if unknown:
        if d.n_states == model.n_states:
            return d  # other labels for the same columns: taken by position
        raise ValueError(
            f"data[{k}].state_names names {unknown[0]!r}, which is no state of the model "
            f"({', '.join(names)})"
        )
    x = np.full((d.n_samples, model.n_states), np.nan)
    for j, name in enumerate(d.state_names):
        x[:, names.index(name)] = d.x[:, j]
    labels = names or ()
    return replace(d, x=x, state_names=labels)


# ---- which fitted values are observed ----------------------------------------------------------


def column_values(d: Trajectory, columns: tuple[tuple[str, int], ...]) -> np.ndarray:
    """The fitted columns of trajectory ``d``, shape (n_samples, n_fit), NaN where missing."""
    if not columns:
        return np.zeros((d.n_samples, 0))
    return np.column_stack([d.x[:, i] if c == "x" else d.y[:, i] for c, i in columns])


def observed_masks(
    mask: Any,
    data: tuple[Trajectory, ...],
    columns: tuple[tuple[str, int], ...],
    label: Any,
) -> tuple[np.ndarray | None, ...] | None:
    """The checked masks (one per trajectory, None: all observed), with ``mask="finite"``
    resolved from the data; a NaN that no mask marks missing is a ValueError naming it.

    Args:
        mask: the masks as `check_mask` returned them, or
            "finite".
        label: ``label(kind, i) -> str``, the name of a fitted column.
    """
    if isinstance(mask, str):
        return tuple(np.isfinite(column_values(d, columns)) for d in data)
    for k, d in enumerate(data):
        values = column_values(d, columns)
        given = None if mask is None else mask[k]
        bad = np.isnan(values) if given is None else np.isnan(values) & given
        if not bad.any():
            continue
        i, c = (int(a) for a in np.argwhere(bad)[0])
        kind, j = columns[c]
        where = f"data[{k}].{kind}[{i}, {j}]"
        name = label(kind, j)
        if given is None:
            raise ValueError(
                f"{where} is NaN (a missing value) in the fitted column {name!r}; mark missing "
                f"values with mask='finite' (loss='samples': each value where the data hold "
                f"one) or with a mask, or leave {name!r} out of fit (a hidden state)"
            )
        which = "mask" if len(data) == 1 else f"mask[{k}]"
        raise ValueError(
            f"{where} is NaN, but {which}[{i}, {c}] marks the fitted column {name!r} observed there"
        )
    return mask


def measured(
    d: Trajectory, columns: tuple[tuple[str, int], ...], observed: np.ndarray
) -> np.ndarray:
    """Where trajectory ``d`` measures each state, (n_samples, n_states) booleans: the value is
    finite and, for a fitted state, observed (``observed``: the fitted columns' mask)."""
    seen = np.isfinite(d.x)
    for c, (kind, i) in enumerate(columns):
        if kind == "x":
            seen[:, i] &= observed[:, c]
    return seen


# ---- hidden states that nothing determines -----------------------------------------------------


def dependencies(model: HybridModel) -> tuple[np.ndarray, np.ndarray]:
    """The structural dependencies of the model on its states: ``(F, H)`` with F[i, j] True
    where x_i' depends on x_j (n_states, n_states) and H[c, j] True where output c depends on
    x_j (n_outputs, n_states), from the sparsity of the CasADi Jacobians (a network depends on
    every input it is fed)."""
    fn = model.per_trajectory_function
    x = ca.SX.sym("x", model.n_states)
    args = [ca.SX.sym(fn.name_in(i), fn.size1_in(i)) for i in range(1, fn.n_in())]
    xdot, y = fn(x, *args)
    return (
        np.array(ca.DM(ca.jacobian(xdot, x).sparsity(), 1)) != 0,
        np.array(ca.DM(ca.jacobian(y, x).sparsity(), 1)) != 0,
    )


def undetermined_states(
    model: HybridModel,
    columns: tuple[tuple[str, int], ...],
    observed_columns: np.ndarray,
    fixed_initial: np.ndarray,
) -> list[int]:
    """The states that nothing in the problem determines.

    A state is determined when a measured quantity depends on it (it is a fitted state with an
    observed value, or a state that a determined state's equation or an observed output
    depends on: the loss then constrains it), or when its initial value is fixed in every
    trajectory and its own equation depends on determined states only (it is a simulation).

    Args:
        columns: the fitted columns.
        observed_columns: (n_fit,) booleans, whether each fitted column has an observed value
            in some trajectory.
        fixed_initial: (n_states,) booleans, whether each state's initial value is fixed in
            every trajectory.
    """
    F, H = dependencies(model)
    seen = np.zeros(model.n_states, dtype=bool)
    for (kind, i), observed in zip(columns, observed_columns, strict=True):
        if observed and kind == "x":
            seen[i] = True
        elif observed:
            seen |= H[i]
    changed = True
    while changed:  # whatever a determined state's equation reads is determined too
        grown = seen | F[seen].any(axis=0)
        changed = bool((grown != seen).any())
        seen = grown
    # the rest are simulations from their initial values: undetermined where that value is
    # free, or where the equation reads (through any chain) a state whose value is free
    free = ~seen & ~fixed_initial
    changed = True
    while changed:
        grown = free | (~seen & F[:, free].any(axis=1))
        changed = bool((grown != free).any())
        free = grown
    return [int(i) for i in np.flatnonzero(free)]


def warn_undetermined(names: list[str], stacklevel: int = 3) -> None:
    """One [`UndeterminedStateWarning`][collocnode.UndeterminedStateWarning] naming the states and
    the reason."""
    if not names:
        return
    listed = ", ".join(repr(n) for n in names)
    warnings.warn(
        f"state{'s' if len(names) > 1 else ''} {listed} {'are' if len(names) > 1 else 'is'} "
        "not measured, no measured quantity depends on "
        f"{'them' if len(names) > 1 else 'it'} through the model's equations or outputs, and "
        f"{'their initial values are' if len(names) > 1 else 'its initial value is'} free: "
        "nothing in the training problem determines "
        f"{'them' if len(names) > 1 else 'it'} (the solution keeps whatever the initial guess "
        "and the regularization leave). Measure it, fix its initial value (initial_state) or "
        "drop it from the model.",
        UndeterminedStateWarning,
        stacklevel=stacklevel,
    )
