"""Free rigid body (Euler equations), the SNDE holonomic-constraint benchmark (White et al. §4.2).

Angular momentum y = (y1, y2, y3) in body axes with principal moments I = (I1, I2, I3):

    y' = y × (y / I) = skew(y) (y1/I1, y2/I2, y3/I3)

Conserved: the Casimir C = |y|²/2 (the SNDE constraint: the motion stays on a sphere; the paper's
eq. 16 writes |y|² − C0) and the kinetic energy H = Σ y_i²/(2 I_i). The moments of inertia are not
in the paper; the authors' code uses I = (1.6, 1, 2/3).

Initial conditions (SNDE): (cos φ, 0, sin φ) with φ ~ U(0.5, 1.5); the default trajectory uses
φ = 1. Sampling: 15 s at dt = 0.1 for training (151 samples); the paper's test trials last 1600 s
(16 001 samples). Ground truth: DOP853 at rtol 1e-12.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._base import System


class RigidBody(System):
    """Euler's rigid body; parameters ``I1, I2, I3`` (> 0), ``phi`` (default x0) and
    ``phi_min``/``phi_max`` (range of `sample_x0`). States ``(..., 3)``; one constraint."""

    name = "rigid_body"
    state_names = ("y1", "y2", "y3")
    dt = 0.1
    n_train = 151  # 15 s
    n_steps = 16_001  # the paper's 1600 s test trials
    PRESETS = {
        "default": {
            "I1": 1.6,
            "I2": 1.0,
            "I3": 2.0 / 3.0,
            "phi": 1.0,
            "phi_min": 0.5,
            "phi_max": 1.5,
        }
    }
    POSITIVE = ("I1", "I2", "I3")

    def __init__(self, preset: str | None = None, **overrides: float) -> None:
        super().__init__(preset, **overrides)
        if self.params["phi_min"] > self.params["phi_max"]:
            raise ValueError(
                f"phi_min must be <= phi_max = {self.params['phi_max']}, "
                f"got {self.params['phi_min']}"
            )

    @property
    def inertia(self) -> np.ndarray:
        return np.array([self.params["I1"], self.params["I2"], self.params["I3"]])

    def rhs(self, t: float, x: np.ndarray, u: np.ndarray | None = None) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        return np.cross(x, x / self.inertia)

    def casadi_rhs(self, x: Any, u: Any = None, t: Any = None) -> Any:
        import casadi as ca

        w = ca.vertcat(x[0] / self.params["I1"], x[1] / self.params["I2"], x[2] / self.params["I3"])
        return ca.cross(x, w)

    @staticmethod
    def initial_state(phi: float) -> np.ndarray:
        """(cos φ, 0, sin φ): a point of the unit sphere."""
        return np.array([np.cos(phi), 0.0, np.sin(phi)])

    @property
    def x0(self) -> np.ndarray:
        return self.initial_state(self.params["phi"])

    def sample_x0(self, rng: np.random.Generator | int | None = None) -> np.ndarray:
        """One SNDE initial condition: φ ~ U(phi_min, phi_max), shape ``(3,)``."""
        rng = np.random.default_rng(rng)
        return self.initial_state(rng.uniform(self.params["phi_min"], self.params["phi_max"]))

    def invariants(self, x: np.ndarray) -> dict[str, np.ndarray]:
        """Casimir |y|²/2 and kinetic energy Σ y_i²/(2 I_i), each shape ``(...)``."""
        x = np.asarray(x, dtype=float)
        return {
            "casimir": 0.5 * np.sum(x * x, axis=-1),
            "energy": 0.5 * np.sum(x * x / self.inertia, axis=-1),
        }

    @property
    def n_constraints(self) -> int:
        return 1

    def constraints(
        self, x: np.ndarray, t: float = 0.0, x0: np.ndarray | None = None
    ) -> np.ndarray:
        """g = C(y) − C(y0), Casimir C = |y|²/2 (y0 defaults to `x0`); shape ``(..., 1)``."""
        ref = self.x0 if x0 is None else np.asarray(x0, dtype=float)
        c = self.invariants(x)["casimir"] - self.invariants(ref)["casimir"]
        return c[..., None]

    def constraint_jacobian(self, x: np.ndarray, t: float = 0.0) -> np.ndarray:
        """dg/dy = yᵀ, shape ``(..., 1, 3)``."""
        return np.asarray(x, dtype=float)[..., None, :].copy()
