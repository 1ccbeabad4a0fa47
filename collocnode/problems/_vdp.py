"""Van der Pol oscillator, the NODE benchmark of Langenkamp et al. §4.2 (from Roesch et al.)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ._base import System


class VanDerPol(System):
    """x' = y, y' = μ y (1 − x²) − x  (Langenkamp et al. eq. 20), x(0) = (2, 0).

    Sampling follows the seed paper: t ∈ [0, 7] on 200 equidistant intervals (201 samples) for
    training; the extrapolation window is (7, 20].
    """

    name = "vdp"
    state_names = ("x", "y")
    PRESETS = {"default": {"mu": 1.0, "x0": 2.0, "y0": 0.0}}
    POSITIVE = ("mu",)
    dt = 7.0 / 200
    n_train = 201
    n_steps = 201 + 371  # (7, 20] at the same spacing: 7 + 371 * 0.035 = 19.985

    @property
    def x0(self) -> np.ndarray:
        return np.array([self.params["x0"], self.params["y0"]])

    def rhs(self, t: float, x: np.ndarray, u: np.ndarray | None = None) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        mu = self.params["mu"]
        p, q = x[..., 0], x[..., 1]
        return np.stack([q, mu * q * (1.0 - p * p) - p], axis=-1)

    def casadi_rhs(self, x: Any, u: Any, t: Any) -> Any:
        import casadi as ca

        mu = self.params["mu"]
        return ca.vertcat(x[1], mu * x[1] * (1 - x[0] ** 2) - x[0])
