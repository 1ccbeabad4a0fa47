"""Lorenz system, the equation-discovery benchmark of Mechanistic Neural Networks (Pervez et al.).

MNN paper §5.1:

    x' = σ (y − x),    y' = x (ρ − z) − y,    z' = x y − β z

with σ = 10, ρ = 28, β = 8/3, x0 = (1, 1, 1), sampled at dt = 0.01. The MNN experiment uses one
trajectory of 10 000 samples (t = 0 ... 99.99 s; the paper integrates with scipy's odeint) and fits
a degree-2 polynomial library; `library_coefficients` gives the true coefficients in that
library. The paper has no extrapolation window; ours appends 2 000 samples (t = 100 ... 119.99 s)
after the 10 000 training samples.

Ground truth: DOP853 at rtol = atol = 1e-12. The system is chaotic (largest Lyapunov exponent
≈ 0.9 s⁻¹), so any numerical trajectory separates from the exact one after a few tens of seconds;
it remains a faithful sample of the attractor, which is what discovery needs.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._base import System

# the MNN discovery library: a constant plus all monomials of degree 1 and 2
LIBRARY_TERMS = ("1", "x", "y", "z", "x^2", "x y", "x z", "y^2", "y z", "z^2")


class Lorenz(System):
    """Lorenz-63; parameters ``sigma, rho, beta`` (> 0) and the initial state ``x0, y0, z0``.
    States ``(..., 3)``."""

    name = "lorenz"
    state_names = ("x", "y", "z")
    dt = 0.01
    n_train = 10_000  # the MNN data set
    n_steps = 12_000  # + 20 s extrapolation (ours)
    PRESETS = {
        "default": {"sigma": 10.0, "rho": 28.0, "beta": 8.0 / 3.0, "x0": 1.0, "y0": 1.0, "z0": 1.0}
    }
    POSITIVE = ("sigma", "rho", "beta")

    def rhs(self, t: float, x: np.ndarray, u: np.ndarray | None = None) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        p = self.params
        a, b, c = x[..., 0], x[..., 1], x[..., 2]
        return np.stack(
            [p["sigma"] * (b - a), a * (p["rho"] - c) - b, a * b - p["beta"] * c], axis=-1
        )

    def casadi_rhs(self, x: Any, u: Any = None, t: Any = None) -> Any:
        import casadi as ca

        p = self.params
        return ca.vertcat(
            p["sigma"] * (x[1] - x[0]),
            x[0] * (p["rho"] - x[2]) - x[1],
            x[0] * x[1] - p["beta"] * x[2],
        )

    @property
    def x0(self) -> np.ndarray:
        return np.array([self.params["x0"], self.params["y0"], self.params["z0"]])

    def sample_x0(self, rng: np.random.Generator | int | None = None) -> np.ndarray:
        """A random start near the attractor: x0 ~ N((0, 0, 25), 8² I), shape ``(3,)``.

        (Not from the paper, which uses the single start (1, 1, 1); for multi-trajectory runs.)
        """
        return np.random.default_rng(rng).normal([0.0, 0.0, 25.0], 8.0)

    @staticmethod
    def library(x: np.ndarray) -> np.ndarray:
        """The terms of `LIBRARY_TERMS` at states ``(..., 3)``; shape ``(..., 10)``."""
        x = np.asarray(x, dtype=float)
        a, b, c = x[..., 0], x[..., 1], x[..., 2]
        return np.stack(
            [np.ones_like(a), a, b, c, a * a, a * b, a * c, b * b, b * c, c * c], axis=-1
        )

    def library_coefficients(self) -> np.ndarray:
        """Ξ with rhs(x) = library(x) @ Ξ exactly; shape ``(10, 3)``, rows `LIBRARY_TERMS`."""
        p = self.params
        xi = np.zeros((len(LIBRARY_TERMS), 3))
        idx = {term: i for i, term in enumerate(LIBRARY_TERMS)}
        xi[idx["x"], 0], xi[idx["y"], 0] = -p["sigma"], p["sigma"]
        xi[idx["x"], 1], xi[idx["y"], 1], xi[idx["x z"], 1] = p["rho"], -1.0, -1.0
        xi[idx["x y"], 2], xi[idx["z"], 2] = 1.0, -p["beta"]
        return xi
