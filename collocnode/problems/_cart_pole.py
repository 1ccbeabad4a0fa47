"""Cart-pole with a horizontal force input (FNODE §3.6 and App. D, MBD-NODE §3.6)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ._base import System


class CartPole(System):
    """A cart (mass M) on a frictionless track carrying a pole with a point mass m at distance l,
    driven by a known horizontal force u(t) on the cart (FNODE eq. 35, MBD-NODE eq. 44)::

        m l² θ'' + m l cos θ x'' − m g l sin θ = 0
        m l cos θ θ'' + (M + m) x'' − m l θ'² sin θ = u

    θ is measured from the upright position. State ``[θ, x, θ', x']`` (the papers' z ordering),
    input ``[u]`` [N], u = 0 by default as in both papers' free-evolution runs. With u ≡ 0 the
    energy and the horizontal momentum ``(M + m) x' + m l cos θ θ'`` are conserved.

    Presets (x(0) = 1 m, θ(0) = π/6, at rest; l = 0.5 m, g = 9.81 m/s²):
        * ``"fnode"`` (default) — FNODE §3.6: Δt = 0.01 s, 200 training + 50 extrapolation
          samples. The paper gives no masses; the FNODE code's M = m = 10 kg are used.
        * ``"fnode_code"`` — the system the FNODE authors' code simulates (``force_cp`` of their
          ``Model/force_fun.py``, same masses, initial state and sampling): the θ'² terms of
          eq. 35 have the opposite sign (``velocity_sign = -1``). It is not a mechanical
          system (its energy is not conserved), but it is what their published numbers were
          computed on; the two truths differ by a test MSE of about 0.2.
        * ``"mbdnode"`` — MBD-NODE §3.6: M = m = 1 kg, Δt = 0.005 s, 400 + 100 samples.

    With u = 0 only M/m enters the motion, so both presets give the same free trajectory; they
    differ in the response to u. The papers state that θ stays in [−π/2, π/2], but released
    at rest from π/6 off upright the pole falls through the bottom and swings to −π/6 on the
    other side (θ ∈ [π/6, 11π/6]); nothing here restricts it.
    """

    name = "cart_pole"
    state_names = ("theta", "x", "theta_dot", "x_dot")
    input_names = ("u",)
    n_coords = 2
    _IC = {"theta0": np.pi / 6, "x0": 1.0, "omega0": 0.0, "v0": 0.0, "velocity_sign": 1.0}
    PRESETS = {
        "fnode": {"M": 10.0, "m": 10.0, "l": 0.5, "g": 9.81, **_IC},
        "fnode_code": {"M": 10.0, "m": 10.0, "l": 0.5, "g": 9.81, **_IC, "velocity_sign": -1.0},
        "mbdnode": {"M": 1.0, "m": 1.0, "l": 0.5, "g": 9.81, **_IC},
    }
    SAMPLING = {"mbdnode": {"dt": 0.005, "n_steps": 500, "n_train": 400}}
    POSITIVE = ("M", "m", "l")
    NONNEGATIVE = ("g",)
    dt = 0.01
    n_steps = 250
    n_train = 200

    @property
    def x0(self) -> np.ndarray:
        p = self.params
        return np.array([p["theta0"], p["x0"], p["omega0"], p["v0"]])

    def _accelerations(self, th: Any, w: Any, u: Any, lib: Any) -> tuple[Any, Any]:
        """``(θ'', x'')`` by Cramer's rule on eq. 35 (numpy or casadi ``lib``); the θ'² term
        carries ``velocity_sign`` (+1 in the papers, -1 in the FNODE code)."""
        p = self.params
        big_m, m, l, g = p["M"], p["m"], p["l"], p["g"]
        c, s = lib.cos(th), lib.sin(th)
        b1 = m * g * l * s
        b2 = u + p["velocity_sign"] * m * l * w**2 * s
        det = m * l**2 * (big_m + m * s**2)  # = m l² (M + m) − (m l cos θ)²
        return ((big_m + m) * b1 - m * l * c * b2) / det, (m * l**2 * b2 - m * l * c * b1) / det

    def rhs(self, t: float, x: np.ndarray, u: np.ndarray | None = None) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        force = 0.0 if u is None else np.asarray(u, dtype=float)[..., 0]
        ath, ax = self._accelerations(x[..., 0], x[..., 2], force, np)
        ath, ax = np.broadcast_arrays(ath, ax)
        return np.stack([x[..., 2], x[..., 3], ath, ax], axis=-1)

    def casadi_rhs(self, x: Any, u: Any, t: Any) -> Any:
        import casadi as ca

        ath, ax = self._accelerations(x[0], x[2], 0.0 if u is None else u[0], ca)
        return ca.vertcat(x[2], x[3], ath, ax)

    def linearization(self) -> tuple[np.ndarray, np.ndarray]:
        """``(A, B)`` of ``z' = A z + B u`` at the upright equilibrium in the state order
        ``[θ, x, θ', x']`` (FNODE eqs. 63-66; MBD-NODE eq. 49 is the same with l = 1)."""
        p = self.params
        big_m, m, l, g = p["M"], p["m"], p["l"], p["g"]
        a = np.zeros((4, 4))
        a[0, 2] = a[1, 3] = 1.0
        a[2, 0] = (big_m + m) * g / (big_m * l)
        a[3, 0] = -m * g / big_m
        b = np.array([[0.0], [0.0], [-1.0 / (big_m * l)], [1.0 / big_m]])
        return a, b

    def energy(self, x: np.ndarray) -> np.ndarray:
        """Kinetic plus potential energy [J]; shape ``(...)``."""
        x = np.asarray(x, dtype=float)
        p = self.params
        big_m, m, l, g = p["M"], p["m"], p["l"], p["g"]
        th, w, vx = x[..., 0], x[..., 2], x[..., 3]
        kin = 0.5 * (big_m + m) * vx**2 + m * l * np.cos(th) * vx * w + 0.5 * m * l**2 * w**2
        return kin + m * g * l * np.cos(th)

    def momentum(self, x: np.ndarray) -> np.ndarray:
        """Horizontal momentum ``(M + m) x' + m l cos θ θ'`` [kg m/s]; shape ``(...)``."""
        x = np.asarray(x, dtype=float)
        p = self.params
        return (p["M"] + p["m"]) * x[..., 3] + p["m"] * p["l"] * np.cos(x[..., 0]) * x[..., 2]

    def invariants(self, x: np.ndarray) -> dict[str, np.ndarray]:
        """Energy and momentum; conserved only for u ≡ 0 (the default input) and the papers'
        equations (none for the FNODE code's sign)."""
        if self.params["velocity_sign"] != 1.0:
            return {}
        return {"energy": self.energy(x), "momentum": self.momentum(x)}

    def invariant_scales(self) -> dict[str, float]:
        p = self.params
        # the momentum of a free release is zero: compare it with the total mass moving at
        # the pole's free-fall speed sqrt(g l)
        return {
            "energy": p["m"] * p["g"] * p["l"],
            "momentum": (p["M"] + p["m"]) * np.sqrt(p["g"] * p["l"]),
        }
