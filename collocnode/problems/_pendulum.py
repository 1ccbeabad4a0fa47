"""Damped single pendulum (MBD-NODE §3.4) and the chaotic double pendulum (FNODE §3.4 and
App. B, MBD-NODE §3.5, SNDE §4.5). Angles are measured from the downward vertical [rad]."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import _validation as v
from ._base import CasadiColumns, System


class Pendulum(System):
    """``θ'' + (g/L) sin θ + c/(m L) θ' = 0`` (MBD-NODE eq. 31).

    L = 1 m, m = 1 kg, c = 0.1 N s/m; g is not stated in the paper, 9.81 m/s² is used. The
    pendulum starts at the lowest point with θ'(0) = π rad/s; Δt = 0.01 s, the first 3 s train
    (300 samples) and the next 1 s extrapolates (100 samples). The energy
    ``m L² θ'²/2 + m g L (1 − cos θ)`` is an invariant only when c = 0.
    """

    name = "pendulum"
    state_names = ("theta", "theta_dot")
    n_coords = 1
    PRESETS = {"default": {"m": 1.0, "L": 1.0, "c": 0.1, "g": 9.81, "theta0": 0.0, "omega0": np.pi}}
    POSITIVE = ("m", "L")
    NONNEGATIVE = ("c", "g")
    dt = 0.01
    n_steps = 400
    n_train = 300

    @property
    def x0(self) -> np.ndarray:
        return np.array([self.params["theta0"], self.params["omega0"]])

    def rhs(self, t: float, x: np.ndarray, u: np.ndarray | None = None) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        p = self.params
        th, om = x[..., 0], x[..., 1]
        acc = -(p["g"] / p["L"]) * np.sin(th) - p["c"] / (p["m"] * p["L"]) * om
        return np.stack([om, acc], axis=-1)

    def casadi_rhs(self, x: Any, u: Any, t: Any) -> Any:
        import casadi as ca

        p = self.params
        acc = -(p["g"] / p["L"]) * ca.sin(x[0]) - p["c"] / (p["m"] * p["L"]) * x[1]
        return ca.vertcat(x[1], acc)

    def energy(self, x: np.ndarray) -> np.ndarray:
        """``m L² θ'²/2 + m g L (1 − cos θ)`` [J]; shape ``(...)``."""
        x = np.asarray(x, dtype=float)
        p = self.params
        return p["m"] * p["L"] * (0.5 * p["L"] * x[..., 1] ** 2 + p["g"] * (1 - np.cos(x[..., 0])))

    def invariants(self, x: np.ndarray) -> dict[str, np.ndarray]:
        return {"energy": self.energy(x)} if self.params["c"] == 0 else {}

    def invariant_scales(self) -> dict[str, float]:
        p = self.params
        return {"energy": 2 * p["m"] * p["g"] * p["L"]}  # potential energy at the top


def _double_pendulum_preset(g: float, theta1: float, theta2: float) -> dict[str, float]:
    """Unit masses and lengths, release from rest at (θ1, θ2)."""
    return {
        "m1": 1.0,
        "m2": 1.0,
        "l1": 1.0,
        "l2": 1.0,
        "g": g,
        "theta1_0": theta1,
        "theta2_0": theta2,
        "omega1_0": 0.0,
        "omega2_0": 0.0,
    }


class DoublePendulum(System):
    """Planar double pendulum with point masses, state ``[θ1, θ2, θ1', θ2']``.

    The right-hand side is the Lagrangian form ``M(θ) θ'' = f(θ, θ')`` of the energies in FNODE
    eqs. 42-43 (MBD-NODE eqs. 33-34); `hamiltonian_rhs` gives the papers' Hamiltonian form
    (FNODE eqs. 46-51 = MBD-NODE eqs. 38-43) in ``[θ, p]`` and `momenta` the map of FNODE
    eqs. 44-45. (MBD-NODE's closed-form H, eq. 35, is not the standard one and is not used.)
    The energy ``H = T + V`` is conserved.

    Presets (m1 = m2 = 1 kg, l1 = l2 = 1 m throughout):
        * ``"fnode"`` (default) — paper text of FNODE §3.4 and, identically, MBD-NODE §3.5:
          θ(0) = (3π/7, 3π/4), θ'(0) = 0, g = 9.81; Δt = 0.01 s, 300 + 100 samples.
        * ``"mbdnode"`` — the MBD-NODE released code: θ(0) = (π/2, π/4), g = 9.8. (Their code
          samples ``linspace(0, N Δt, N)``, a spacing of N Δt/(N − 1); here Δt is exact.) The
          FNODE authors' first code release (2025) generates the same data (FNODE Table 13).
        * ``"fnode_code"`` — the FNODE authors' later code (2026): θ(0) = (π/2, π/2), g = 9.8.
        * ``"snde"`` — SNDE §4.5: g = 9.81, Δt = 0.05 s, 10 s trajectories (201 samples, all
          used for training: SNDE tests on fresh initial states). Its initial states are random,
          θ1 = θ2 = φ ~ U[π/4, 3π/4] (`sample_x0`); the preset's own x0 is φ = π/2.
    """

    name = "double_pendulum"
    state_names = ("theta1", "theta2", "theta1_dot", "theta2_dot")
    n_coords = 2
    PRESETS = {
        "fnode": _double_pendulum_preset(9.81, 3 * np.pi / 7, 3 * np.pi / 4),
        "mbdnode": _double_pendulum_preset(9.8, np.pi / 2, np.pi / 4),
        "fnode_code": _double_pendulum_preset(9.8, np.pi / 2, np.pi / 2),
        "snde": _double_pendulum_preset(9.81, np.pi / 2, np.pi / 2),
    }
    SAMPLING = {"snde": {"dt": 0.05, "n_steps": 201, "n_train": 201}}
    POSITIVE = ("m1", "m2", "l1", "l2")
    NONNEGATIVE = ("g",)
    dt = 0.01
    n_steps = 400
    n_train = 300

    @property
    def x0(self) -> np.ndarray:
        p = self.params
        return np.array([p["theta1_0"], p["theta2_0"], p["omega1_0"], p["omega2_0"]])

    def sample_x0(self, rng: np.random.Generator | int | None = None) -> np.ndarray:
        """SNDE's initial states (φ, φ, 0, 0) with φ ~ U[π/4, 3π/4]."""
        phi = np.random.default_rng(rng).uniform(np.pi / 4, 3 * np.pi / 4)
        return np.array([phi, phi, 0.0, 0.0])

    def _lagrange_terms(self, x: Any, lib: Any) -> tuple[Any, ...]:
        """Entries of ``M θ'' = f``: (M11, M12, M22, f1, f2) for numpy or casadi ``lib``."""
        p = self.params
        m1, m2, l1, l2, g = p["m1"], p["m2"], p["l1"], p["l2"], p["g"]
        th1, th2, w1, w2 = x[..., 0], x[..., 1], x[..., 2], x[..., 3]
        delta = th1 - th2
        c, s = lib.cos(delta), lib.sin(delta)
        m11 = (m1 + m2) * l1**2
        m12 = m2 * l1 * l2 * c
        m22 = m2 * l2**2
        f1 = -m2 * l1 * l2 * w2**2 * s - (m1 + m2) * g * l1 * lib.sin(th1)
        f2 = m2 * l1 * l2 * w1**2 * s - m2 * g * l2 * lib.sin(th2)
        return m11, m12, m22, f1, f2

    def rhs(self, t: float, x: np.ndarray, u: np.ndarray | None = None) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        m11, m12, m22, f1, f2 = self._lagrange_terms(x, np)
        det = m11 * m22 - m12**2
        a1 = (m22 * f1 - m12 * f2) / det
        a2 = (m11 * f2 - m12 * f1) / det
        return np.stack([x[..., 2], x[..., 3], a1, a2], axis=-1)

    def casadi_rhs(self, x: Any, u: Any, t: Any) -> Any:
        import casadi as ca

        m11, m12, m22, f1, f2 = self._lagrange_terms(CasadiColumns(x), ca)
        det = m11 * m22 - m12**2
        return ca.vertcat(x[2], x[3], (m22 * f1 - m12 * f2) / det, (m11 * f2 - m12 * f1) / det)

    def momenta(self, x: np.ndarray) -> np.ndarray:
        """Canonical momenta ``(p1, p2)`` (FNODE eqs. 44-45); shape ``(..., 2)``."""
        x = np.asarray(x, dtype=float)
        m11, m12, m22, _, _ = self._lagrange_terms(x, np)
        w1, w2 = x[..., 2], x[..., 3]
        return np.stack([m11 * w1 + m12 * w2, m12 * w1 + m22 * w2], axis=-1)

    def hamiltonian_rhs(self, z: np.ndarray) -> np.ndarray:
        """Hamilton's equations in ``z = [θ1, θ2, p1, p2]`` (FNODE eqs. 46-51); ``(..., 4)``."""
        z = v.finite_array("z", z)
        p = self.params
        m1, m2, l1, l2, g = p["m1"], p["m2"], p["l1"], p["l2"], p["g"]
        th1, th2, p1, p2 = z[..., 0], z[..., 1], z[..., 2], z[..., 3]
        d = th1 - th2
        den = m1 + m2 * np.sin(d) ** 2
        dth1 = (l2 * p1 - l1 * p2 * np.cos(d)) / (l1**2 * l2 * den)  # eq. 46
        dth2 = (-m2 * l2 * p1 * np.cos(d) + (m1 + m2) * l1 * p2) / (m2 * l1 * l2**2 * den)  # 47
        h1 = p1 * p2 * np.sin(d) / (l1 * l2 * den)  # eq. 51
        h2 = (
            m2 * l2**2 * p1**2 + (m1 + m2) * l1**2 * p2**2 - 2 * m2 * l1 * l2 * p1 * p2 * np.cos(d)
        ) / (2 * l1**2 * l2**2 * den**2)  # eq. 50
        dp1 = -(m1 + m2) * g * l1 * np.sin(th1) - h1 + h2 * np.sin(2 * d)  # eq. 48
        dp2 = -m2 * g * l2 * np.sin(th2) + h1 - h2 * np.sin(2 * d)  # eq. 49
        return np.stack([dth1, dth2, dp1, dp2], axis=-1)

    def energy(self, x: np.ndarray) -> np.ndarray:
        """``H = T + V`` (FNODE eqs. 41-43) [J]; shape ``(...)``."""
        x = np.asarray(x, dtype=float)
        p = self.params
        m1, m2, l1, l2, g = p["m1"], p["m2"], p["l1"], p["l2"], p["g"]
        th1, th2, w1, w2 = x[..., 0], x[..., 1], x[..., 2], x[..., 3]
        kin = 0.5 * m1 * l1**2 * w1**2 + 0.5 * m2 * (
            l1**2 * w1**2 + l2**2 * w2**2 + 2 * l1 * l2 * w1 * w2 * np.cos(th1 - th2)
        )
        pot = -m1 * g * l1 * np.cos(th1) - m2 * g * (l1 * np.cos(th1) + l2 * np.cos(th2))
        return kin + pot

    def invariants(self, x: np.ndarray) -> dict[str, np.ndarray]:
        return {"energy": self.energy(x)}

    def invariant_scales(self) -> dict[str, float]:
        # the energy is zero for a release from rest at horizontal arms; the depth of the
        # potential well is the natural yardstick then
        p = self.params
        return {"energy": p["g"] * ((p["m1"] + p["m2"]) * p["l1"] + p["m2"] * p["l2"])}
