"""The loss at the measurement times: masks of missing values and the samples' cell weights."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import _validation as v
from .._data import Trajectory

#: masks by name: "finite" marks a fitted value observed where the data hold one (not NaN)
MASK_NAMES = ("finite",)


def check_mask(
    mask: object, loss: str, data: tuple[Trajectory, ...], n_fit: int
) -> tuple[np.ndarray | None, ...] | None:
    """None, "finite" (observed where the fitted value is not NaN; resolved by
    `observed_masks`), or one boolean array
    (n_samples, n_fit) per trajectory (None: all observed).

    One trajectory takes an array; several take a sequence of arrays (or None), one each.
    """
    if mask is None:
        return None
    if isinstance(mask, str):
        v.choice("mask", mask, MASK_NAMES)
    if loss != "samples":
        raise ValueError(
            f"mask needs loss='samples' (the loss at the nodes interpolates every sample), "
            f"got loss={loss!r}"
        )
    if isinstance(mask, str):
        return mask  # type: ignore[return-value]
    n = len(data)
    if n == 1 and not _per_trajectory(mask):
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


def _per_trajectory(mask: object) -> bool:
    """Whether a one-trajectory mask is the per-trajectory tuple a problem stores (one 2-D array
    or None), so that ``dataclasses.replace`` of a problem re-validates its own mask."""
    return isinstance(mask, tuple) and len(mask) == 1 and (mask[0] is None or np.ndim(mask[0]) == 2)


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
