"""Where a trained model's blocks were trained, and a warning when a prediction leaves it.

A network is fitted on the inputs it saw at the collocation nodes; outside their range its
output is an extrapolation the data never checked.
[`TrainingSolution.simulate`][collocnode.TrainingSolution.simulate] evaluates every block's
inputs along the simulated trajectory and warns (`ExtrapolationWarning`) where one leaves its
training range by more than `RANGE_MARGIN` of the range's width.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from .discovery.samples import DiscoveryError, _traced, block_samples

#: how far past its training range (a share of the range's width) a block input may go unwarned
RANGE_MARGIN = 0.05


class ExtrapolationWarning(UserWarning):
    """A prediction fed a block inputs outside the range it was trained on."""


@dataclass(frozen=True)
class InputRange:
    """The range of one block's inputs over the collocation nodes of every trajectory.

    Attributes:
        block: the block's name.
        names: the inputs' labels (a state's name where an input is that state).
        lo, hi: the least and largest value of each input, shape (n_in,) (units of the input).
    """

    block: str
    names: tuple[str, ...]
    lo: np.ndarray
    hi: np.ndarray


def training_ranges(trained: Any) -> list[InputRange]:
    """The input range of every block the physics calls, over the collocation nodes of a
    [`TrainingSolution`][collocnode.TrainingSolution]."""
    out = []
    for name in trained.model.blocks:
        try:
            samples = block_samples(trained, name)
        except DiscoveryError:  # a block the physics never calls has no range
            continue
        z = samples.inputs
        out.append(InputRange(name, samples.input_names, z.min(axis=0), z.max(axis=0)))
    return out


def warn_outside(trained: Any, t: np.ndarray, x: np.ndarray, u: np.ndarray) -> None:
    """Warn once (`ExtrapolationWarning`) for the first block input that leaves its training
    range along a prediction: times ``t`` (n,), states ``x`` (n, n_states), inputs ``u``
    (n, n_inputs)."""
    model, p = trained.model, np.asarray(trained.p, dtype=float)
    for r in training_ranges(trained):
        io, calls, _ = _traced(model, r.block)
        z, _ = io.map(t.size)(x.T, np.repeat(p[:, None], t.size, axis=1), u.T, t[None, :])
        n_in = r.lo.size
        z = np.asarray(z).reshape(n_in, t.size, calls).transpose(1, 2, 0)  # (n, calls, n_in)
        tol = RANGE_MARGIN * np.maximum(r.hi - r.lo, 1e-12)
        outside = (z < r.lo - tol) | (z > r.hi + tol)
        if not outside.any():
            continue
        k, _, j = (int(i) for i in np.argwhere(outside)[0])
        value = float(z[k, :, j][outside[k, :, j]][0])
        warnings.warn(
            f"the prediction feeds block {r.block!r} input {r.names[j]!r} = {value:.4g} at "
            f"t = {t[k]:.6g}, outside the range it was trained on [{r.lo[j]:.4g}, "
            f"{r.hi[j]:.4g}]: from there on the block extrapolates where no data checked it",
            ExtrapolationWarning,
            stacklevel=3,
        )
        return
