"""Which fitted quantities, and which combinations of them, the data determine.

Read from the eigen-structure of the data-only information in its unit-free scaled form
(`collocnode.training._uncertainty.spectrum`): small eigenvalues are sloppy directions (combinations
the data constrain weakly), eigenvalues at round-off level non-identifiable ones; each direction is
reported by the named quantities that make it up.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .posterior import ParameterPosterior

#: how many of the sloppiest directions are reported, and how many names each
SLOPPIEST = 5
COMPONENTS = 5
#: a component below this share of its (unit) direction is not named
SMALLEST_COMPONENT = 0.05


@dataclass(frozen=True)
class Direction:
    """One eigen-direction of the scaled information: its eigenvalue (relative to the largest)
    and its largest components by name (coefficients of the unit eigenvector in scaled
    coordinates)."""

    eigenvalue: float
    components: tuple[tuple[str, float], ...]
    identifiable: bool

    def describe(self) -> str:
        parts = " ".join(f"{c:+.2f}·{name}" for name, c in self.components)
        return f"{self.eigenvalue:.2e}: {parts}"


@dataclass(frozen=True)
class Identifiability:
    """The identifiability report.

    Attributes:
        eigenvalues: of the scaled data information, relative to the largest, ascending.
        n_null: the number of directions the data do not determine.
        sloppiest: the `SLOPPIEST` directions with the smallest eigenvalues.
        non_identifiable: fitted quantities the data alone do not determine (more than a tenth
            of their scaled unit vector in non-identifiable directions).
        non_identifiable_posterior: those that stay undetermined with the λ prior (their
            intervals are infinite).
        wide: physical parameters whose (finite) interval at ``level`` is wider than their
            value (half-width > |value|).
        level: the level of those intervals.
    """

    eigenvalues: np.ndarray
    n_null: int
    sloppiest: tuple[Direction, ...]
    non_identifiable: tuple[str, ...]
    non_identifiable_posterior: tuple[str, ...]
    wide: tuple[str, ...]
    level: float

    @property
    def condition(self) -> float:
        """Largest over smallest identifiable eigenvalue of the scaled information."""
        kept = self.eigenvalues[self.eigenvalues > 0]
        return float(kept.max() / kept.min()) if kept.size else float("inf")

    def to_dict(self) -> dict[str, Any]:
        return {
            "n_directions": int(self.eigenvalues.size),
            "n_non_identifiable_directions": self.n_null,
            "condition": self.condition,
            "smallest_eigenvalues": self.eigenvalues[: 2 * SLOPPIEST].tolist(),
            "sloppiest": [
                {
                    "eigenvalue": d.eigenvalue,
                    "identifiable": d.identifiable,
                    "components": {name: c for name, c in d.components},
                }
                for d in self.sloppiest
            ],
            "non_identifiable": list(self.non_identifiable),
            "non_identifiable_with_prior": list(self.non_identifiable_posterior),
            "wide_intervals": list(self.wide),
            "level": self.level,
        }


def analyse(
    data: ParameterPosterior,
    posterior: ParameterPosterior,
    independent: np.ndarray,
    level: float,
    half_width: np.ndarray,
) -> Identifiability:
    """The report from the data-only and the posterior distributions (same θ, same basis).

    Args:
        independent: the entries of θ that the basis coordinates φ are.
        half_width: the posterior interval's half-width of every entry of θ, (n_θ,).
    """
    spec = data.spectrum
    top = float(spec.values.max()) if spec.n else 1.0
    top = top if top > 0 else 1.0
    names = [data.names[i] for i in independent]
    directions = []
    for k in range(min(SLOPPIEST, spec.n)):
        vec = spec.vectors[:, k]
        order = np.argsort(-np.abs(vec))[:COMPONENTS]
        comps = tuple((names[j], float(vec[j])) for j in order if abs(vec[j]) >= SMALLEST_COMPONENT)
        directions.append(Direction(float(spec.values[k] / top), comps, bool(spec.kept[k])))
    eye = np.eye(data.n)
    free_data = data.bounded(eye)
    free_post = posterior.bounded(eye)
    physical = [i for i, k in enumerate(data.kinds) if k == "parameter"]
    wide = tuple(
        data.names[i]
        for i in physical
        if np.isfinite(half_width[i]) and half_width[i] > abs(data.values[i])
    )
    return Identifiability(
        eigenvalues=spec.values / top,
        n_null=spec.n_null,
        sloppiest=tuple(directions),
        non_identifiable=tuple(n for n, ok in zip(data.names, free_data, strict=True) if not ok),
        non_identifiable_posterior=tuple(
            n for n, ok in zip(data.names, free_post, strict=True) if not ok
        ),
        wide=wide,
        level=level,
    )
