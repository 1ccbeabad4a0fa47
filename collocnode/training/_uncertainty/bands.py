"""A prediction band: a fitted curve with its lower and upper bound at a given probability."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Band:
    """A band around a fitted curve (or one column of one: a state, an output, a block's
    output).

    Attributes:
        x: where the curve is evaluated: times [s], or a block's inputs, (m,) or (m, d).
        value: the fitted curve (at θ̂, not the mean of draws), (m,) or (m, k) for several
            columns.
        lower, upper: the band, same shape as ``value``; ±inf where it is not bounded.
        std: the standard deviation (delta method) or the draws' spread (sampling), same shape.
        level: its probability, e.g. 0.95.
        method: "delta" (linearised: value ± z σ) or "sampling" (quantiles of re-evaluations at
            draws from the posterior).
        bounded: False where the quantity moves along a direction the data do not determine
            (its band is then ±inf), same shape.
        samples: the draws that went into a sampled band (0 for the delta method).
        failed: draws whose re-simulation failed (left out of the quantiles).
        extrapolated: for a block's band, True where its input lies outside the range the block
            was trained on (the collocation nodes' inputs): there the band is the network's
            extrapolation, which no data checked, however narrow it is; None otherwise.
    """

    x: np.ndarray
    value: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    std: np.ndarray
    level: float
    method: str
    bounded: np.ndarray
    samples: int = 0
    failed: int = 0
    extrapolated: np.ndarray | None = None

    def column(self, k: int) -> Band:
        """The band of column k of a band over several columns."""
        if self.value.ndim != 2:
            raise ValueError("the band has one column")
        pick = lambda a: a[:, k]  # noqa: E731
        return Band(
            self.x,
            pick(self.value),
            pick(self.lower),
            pick(self.upper),
            pick(self.std),
            self.level,
            self.method,
            pick(self.bounded),
            self.samples,
            self.failed,
        )

    @property
    def width(self) -> np.ndarray:
        """upper − lower."""
        return self.upper - self.lower

    def contains(self, values: np.ndarray) -> np.ndarray:
        """Whether each of ``values`` (shape of ``value``) lies inside the band."""
        values = np.asarray(values, dtype=float)
        return (values >= self.lower) & (values <= self.upper)

    def to_dict(self) -> dict[str, Any]:
        """JSON-friendly arrays (lists); ±inf stay ±inf (the JSON writer of
        `collocnode.tools._io` encodes them)."""
        return {
            "level": self.level,
            "method": self.method,
            "samples": self.samples,
            "failed": self.failed,
            "x": self.x.tolist(),
            "value": self.value.tolist(),
            "lower": self.lower.tolist(),
            "upper": self.upper.tolist(),
            "std": self.std.tolist(),
            "bounded": self.bounded.tolist(),
            "extrapolated": None if self.extrapolated is None else self.extrapolated.tolist(),
        }
