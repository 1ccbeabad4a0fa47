"""Where a trained model's blocks were trained, and a warning when a prediction leaves it.

A network is fitted on the inputs it saw at the collocation nodes; outside their range its
output is an extrapolation the data never checked.
[`TrainingSolution.simulate`][collocnode.TrainingSolution.simulate] evaluates every block's
inputs along the simulated trajectory and warns (`ExtrapolationWarning`) where one leaves its
training range by more than `RANGE_MARGIN` of the range's width.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ._discovery.samples import DiscoveryError, evaluate_traced, node_points, trace_block

#: how far past its training range (a share of the range's width) a block input may go unwarned
RANGE_MARGIN = 0.05


class ExtrapolationWarning(UserWarning):
    """A prediction fed a block inputs outside the range it was trained on."""


def warn_outside(trained: Any, t: np.ndarray, x: np.ndarray, u: np.ndarray) -> None:
    """Warn once (`ExtrapolationWarning`) for the first block input that leaves its training
    range (its least and largest value over the collocation nodes of every trajectory) along a
    prediction: times ``t`` (n,), states ``x`` (n, n_states), inputs ``u`` (n, n_inputs)."""
    model, p = trained.model, trained.p
    nodes = list(node_points(trained))
    for block in model.blocks:
        try:
            io, calls, names = trace_block(model, block)
        except DiscoveryError:  # a block the physics never calls has no range
            continue
        lo, hi = _range(io, calls, p, nodes)
        z = evaluate_traced(io, calls, p, t, x, u)[0]  # (n · calls, n_in)
        tol = RANGE_MARGIN * np.maximum(hi - lo, 1e-12)
        outside = (z < lo - tol) | (z > hi + tol)
        if not outside.any():
            continue
        row, j = (int(i) for i in np.argwhere(outside)[0])
        warnings.warn(
            f"the prediction feeds block {block!r} input {names[j]!r} = {z[row, j]:.4g} at "
            f"t = {t[row // calls]:.6g}, outside the range it was trained on [{lo[j]:.4g}, "
            f"{hi[j]:.4g}]: from there on the block extrapolates where no data checked it",
            ExtrapolationWarning,
            stacklevel=3,
        )
        return


def _range(io: Any, calls: int, p: np.ndarray, nodes: list) -> tuple[np.ndarray, np.ndarray]:
    seen = np.vstack([evaluate_traced(io, calls, p, tn, xn, un)[0] for _, tn, xn, un in nodes])
    return seen.min(axis=0), seen.max(axis=0)


def training_range(trained: Any, block: str) -> tuple[np.ndarray, np.ndarray] | None:
    """The least and largest value of each input of ``block`` over the collocation nodes of
    every trajectory, (n_in,) each; None for a block the physics never calls."""
    try:
        io, calls, _ = trace_block(trained.model, block)
    except DiscoveryError:
        return None
    return _range(io, calls, trained.p, list(node_points(trained)))


def outside_range(
    trained: Any, block: str, inputs: np.ndarray
) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray] | None]:
    """Which rows of ``inputs`` (m, n_in) leave the block's training range by more than
    `RANGE_MARGIN` of its width, (m,) bool, and the range."""
    bounds = training_range(trained, block)
    if bounds is None:
        return np.zeros(inputs.shape[0], dtype=bool), None
    lo, hi = bounds
    tol = RANGE_MARGIN * np.maximum(hi - lo, 1e-12)
    return ((inputs < lo - tol) | (inputs > hi + tol)).any(axis=1), bounds
