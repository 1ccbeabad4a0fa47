"""Planar 3-link robot arm whose end effector follows a prescribed path (White et al. §4.4).

Absolute link angles θ = (θ1, θ2, θ3), link lengths l_j (1 in the paper). The end effector is at

    e(θ) = (Σ_j l_j cos θ_j, Σ_j l_j sin θ_j)

and must follow p(t) = e0 − (sin(2πt)/(2π), 0) with e0 = e(θ(0)), i.e. ṗ(t) = (−cos 2πt, 0). The
ground-truth controller is the minimum-norm joint velocity

    θ' = J⁺ ṗ,   J = ∂e/∂θ (2×3),   J⁺ = Jᵀ (J Jᵀ)⁻¹,

so that d/dt e(θ) = J θ' = ṗ. The time-dependent constraint (the SNDE one) is g = e(θ) − p(t), with
Jacobian J with respect to θ only. The input u = ṗ(t) is known (the SNDE network also sees it).

Initial conditions (SNDE): (θ0, −θ0, θ0) with θ0 ~ U(π/4, 3π/8); the default trajectory uses the
middle, θ0 = 5π/16. Sampling: 5 s at dt = 0.1 for training (51 samples); test trials of 100 s
(1001 samples; the paper's Fig. 4 discusses drift after 100 s, its code runs up to 500 s).
Ground truth: DOP853 at rtol 1e-12.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._base import System


class RobotArm(System):
    """3-link arm; parameters ``l1, l2, l3`` (> 0), ``theta0`` (default x0) and
    ``theta0_min``/``theta0_max`` (range of `sample_x0`). States ``(..., 3)``, input
    ṗ ``(..., 2)``, two constraints."""

    name = "robot_arm"
    state_names = ("theta1", "theta2", "theta3")
    input_names = ("pdot_x", "pdot_y")
    dt = 0.1
    n_train = 51  # 5 s
    n_steps = 1001  # 100 s
    PRESETS = {
        "default": {
            "l1": 1.0,
            "l2": 1.0,
            "l3": 1.0,
            "theta0": 5.0 * np.pi / 16.0,
            "theta0_min": np.pi / 4.0,
            "theta0_max": 3.0 * np.pi / 8.0,
        }
    }
    POSITIVE = ("l1", "l2", "l3")

    def __init__(self, preset: str | None = None, **overrides: float) -> None:
        super().__init__(preset, **overrides)
        if self.params["theta0_min"] > self.params["theta0_max"]:
            raise ValueError(
                f"theta0_min must be <= theta0_max = {self.params['theta0_max']}, "
                f"got {self.params['theta0_min']}"
            )

    @property
    def lengths(self) -> np.ndarray:
        return np.array([self.params["l1"], self.params["l2"], self.params["l3"]])

    # --- kinematics ----------------------------------------------------------------------------
    def end_effector(self, x: np.ndarray) -> np.ndarray:
        """e(θ), shape ``(..., 2)``."""
        x = np.asarray(x, dtype=float)
        ell = self.lengths
        return np.stack([np.cos(x) @ ell, np.sin(x) @ ell], axis=-1)

    def jacobian(self, x: np.ndarray) -> np.ndarray:
        """J = ∂e/∂θ = [[−l_j sin θ_j], [l_j cos θ_j]], shape ``(..., 2, 3)``."""
        x = np.asarray(x, dtype=float)
        ell = self.lengths
        return np.stack([-ell * np.sin(x), ell * np.cos(x)], axis=-2)

    def path(self, t: np.ndarray | float, x0: np.ndarray | None = None) -> np.ndarray:
        """p(t) = e(θ(0)) − (sin 2πt / 2π, 0), shape ``(..., 2)`` (x0 defaults to `x0`)."""
        t = np.asarray(t, dtype=float)
        e0 = self.end_effector(self.x0 if x0 is None else x0)
        shift = np.stack([np.sin(2 * np.pi * t) / (2 * np.pi), np.zeros(t.shape)], axis=-1)
        return e0 - shift

    def inputs(self, t: np.ndarray | float) -> np.ndarray:
        """ṗ(t) = (−cos 2πt, 0): shape ``(2,)`` for scalar t, ``(len(t), 2)`` for arrays."""
        t = np.asarray(t, dtype=float)
        return np.stack([-np.cos(2 * np.pi * t), np.zeros(t.shape)], axis=-1)

    # --- dynamics ------------------------------------------------------------------------------
    def rhs(self, t: float, x: np.ndarray, u: np.ndarray | None = None) -> np.ndarray:
        """θ' = Jᵀ (J Jᵀ)⁻¹ ṗ; u = ṗ defaults to `inputs` at t."""
        x = np.asarray(x, dtype=float)
        pdot = self.inputs(t) if u is None else np.asarray(u, dtype=float)
        J = self.jacobian(x)
        JJt = J @ np.swapaxes(J, -1, -2)
        lam = np.linalg.solve(JJt, np.broadcast_to(pdot, (*x.shape[:-1], 2))[..., None])
        return (np.swapaxes(J, -1, -2) @ lam)[..., 0]

    def casadi_rhs(self, x: Any, u: Any, t: Any = None) -> Any:
        import casadi as ca

        ell = self.lengths
        J = ca.vertcat(
            ca.horzcat(*[-ell[j] * ca.sin(x[j]) for j in range(3)]),
            ca.horzcat(*[ell[j] * ca.cos(x[j]) for j in range(3)]),
        )
        JJt = ca.mtimes(J, J.T)
        det = JJt[0, 0] * JJt[1, 1] - JJt[0, 1] * JJt[1, 0]
        inv = ca.vertcat(ca.horzcat(JJt[1, 1], -JJt[0, 1]), ca.horzcat(-JJt[1, 0], JJt[0, 0])) / det
        return ca.mtimes(J.T, ca.mtimes(inv, u))

    @staticmethod
    def initial_state(theta0: float) -> np.ndarray:
        """(θ0, −θ0, θ0)."""
        return np.array([theta0, -theta0, theta0])

    @property
    def x0(self) -> np.ndarray:
        return self.initial_state(self.params["theta0"])

    def sample_x0(self, rng: np.random.Generator | int | None = None) -> np.ndarray:
        """One SNDE initial condition: θ0 ~ U(theta0_min, theta0_max), shape ``(3,)``."""
        rng = np.random.default_rng(rng)
        return self.initial_state(rng.uniform(self.params["theta0_min"], self.params["theta0_max"]))

    # --- the path constraint -------------------------------------------------------------------
    @property
    def n_constraints(self) -> int:
        return 2

    def constraints(
        self, x: np.ndarray, t: float = 0.0, x0: np.ndarray | None = None
    ) -> np.ndarray:
        """g = e(θ) − p(t), shape ``(..., 2)``; p starts at e(x0) (x0 defaults to `x0`).

        ``t`` is a scalar or broadcasts against the leading axes of ``x``.
        """
        return self.end_effector(x) - self.path(t, x0)

    def constraint_jacobian(self, x: np.ndarray, t: float = 0.0) -> np.ndarray:
        """dg/dθ = J, shape ``(..., 2, 3)`` (the time derivative −ṗ is not part of it)."""
        return self.jacobian(x)
