"""Planar two-body (Kepler) problem, the SNDE conservation-law benchmark (White et al. 2023, §4.1).

Relative motion with unit gravitational parameter: q'' = −q/|q|³ for q = (x, y), state
[x, y, ẋ, ẏ] (second-order form, ``n_coords = 2``). Conserved: the angular momentum
L = x ẏ − y ẋ (the SNDE constraint; the seed text of eq. 14 is garbled, the authors' code uses L)
and the energy H = |q'|²/2 − 1/|q|.

Initial conditions (SNDE): (1 − e, 0, 0, sqrt((1 + e)/(1 − e))) with eccentricity e ~ U(0.5, 0.7):
the periapsis of an ellipse with semi-major axis 1, hence period 2π. (The seed text prints
sqrt(1 − e/1 + e); the code's sqrt((1 + e)/(1 − e)) is the one that gives a = 1.)

Sampling (SNDE): one period for training at dt = 0.1 (t = 0 ... 6.2, 63 samples); the paper's test
trials last 200 s (2001 samples). Ground truth is the exact Kepler solution (Lagrange f and g
functions with Kepler's equation solved by Newton), checked against DOP853 in the tests.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import _validation as v
from ._base import System


class TwoBody(System):
    """Two-body problem; parameters: ``e`` (eccentricity of the default x0), ``e_min``/``e_max``
    (range of `sample_x0`). States ``(..., 4)`` = [x, y, ẋ, ẏ]; one constraint."""

    name = "two_body"
    state_names = ("x", "y", "vx", "vy")
    n_coords = 2
    dt = 0.1
    n_train = 63  # one period 2π: t = 0, 0.1, ..., 6.2
    n_steps = 2001  # the paper's 200 s test trials
    PRESETS = {"default": {"e": 0.6, "e_min": 0.5, "e_max": 0.7}}

    def __init__(self, preset: str | None = None, **overrides: float) -> None:
        super().__init__(preset, **overrides)
        for key in ("e", "e_min", "e_max"):
            e = v.nonnegative_float(key, self.params[key])
            if e >= 1.0:
                raise ValueError(f"{key} must be < 1 for a bound orbit, got {e}")
        if self.params["e_min"] > self.params["e_max"]:
            raise ValueError(
                f"e_min must be <= e_max = {self.params['e_max']}, got {self.params['e_min']}"
            )

    # --- dynamics ---------------------------------------------------------------------------------
    def rhs(self, t: float, x: np.ndarray, u: np.ndarray | None = None) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        q, qd = x[..., :2], x[..., 2:]
        r3 = np.sum(q * q, axis=-1, keepdims=True) ** 1.5
        return np.concatenate([qd, -q / r3], axis=-1)

    def casadi_rhs(self, x: Any, u: Any = None, t: Any = None) -> Any:
        import casadi as ca

        r3 = (x[0] ** 2 + x[1] ** 2) ** 1.5
        return ca.vertcat(x[2], x[3], -x[0] / r3, -x[1] / r3)

    @staticmethod
    def initial_state(e: float) -> np.ndarray:
        """Periapsis state (1 − e, 0, 0, sqrt((1 + e)/(1 − e))) of the a = 1 orbit."""
        return np.array([1.0 - e, 0.0, 0.0, np.sqrt((1.0 + e) / (1.0 - e))])

    @property
    def x0(self) -> np.ndarray:
        return self.initial_state(self.params["e"])

    def sample_x0(self, rng: np.random.Generator | int | None = None) -> np.ndarray:
        """One SNDE initial condition: e ~ U(e_min, e_max), shape ``(4,)``."""
        rng = np.random.default_rng(rng)
        return self.initial_state(rng.uniform(self.params["e_min"], self.params["e_max"]))

    # --- conserved quantities and the SNDE constraint ---------------------------------------------
    def invariants(self, x: np.ndarray) -> dict[str, np.ndarray]:
        """Angular momentum L = x ẏ − y ẋ and energy H = |q'|²/2 − 1/|q|, each shape ``(...)``."""
        x = np.asarray(x, dtype=float)
        r = np.hypot(x[..., 0], x[..., 1])
        return {
            "angular_momentum": x[..., 0] * x[..., 3] - x[..., 1] * x[..., 2],
            "energy": 0.5 * (x[..., 2] ** 2 + x[..., 3] ** 2) - 1.0 / r,
        }

    @property
    def n_constraints(self) -> int:
        return 1

    def constraints(
        self, x: np.ndarray, t: float = 0.0, x0: np.ndarray | None = None
    ) -> np.ndarray:
        """g = L(x) − L(x0) (x0 defaults to `x0`); shape ``(..., 1)``."""
        ref = self.x0 if x0 is None else np.asarray(x0, dtype=float)
        L = self.invariants(x)["angular_momentum"]
        return (L - self.invariants(ref)["angular_momentum"])[..., None]

    def constraint_jacobian(self, x: np.ndarray, t: float = 0.0) -> np.ndarray:
        """dg/dx = [ẏ, −ẋ, −y, x], shape ``(..., 1, 4)``."""
        x = np.asarray(x, dtype=float)
        return np.stack([x[..., 3], -x[..., 2], -x[..., 1], x[..., 0]], axis=-1)[..., None, :]

    # --- exact solution ---------------------------------------------------------------------------
    def exact_solution(self, t: np.ndarray, x0: np.ndarray) -> np.ndarray | None:
        """Kepler motion from x0 at times t (relative to t[0]) via Lagrange's f and g functions.

        With ΔE the eccentric-anomaly increment, a the semi-major axis, n = a^(−3/2),
        σ0 = q0·q0' and r0 = |q0|: n Δt = ΔE + (σ0/√a)(1 − cos ΔE) − (1 − r0/a) sin ΔE
        (Kepler's equation in difference form, solved by Newton), then
        q = f q0 + g q0', q' = ḟ q0 + ġ q0' with f = 1 − (a/r0)(1 − cos ΔE),
        g = Δt − (ΔE − sin ΔE)/n, r = a + (r0 − a) cos ΔE + σ0 √a sin ΔE,
        ḟ = −√a sin ΔE/(r r0), ġ = 1 − (a/r)(1 − cos ΔE). Returns None for unbound orbits.
        """
        t = np.asarray(t, dtype=float)
        q0, p0 = np.asarray(x0[:2], dtype=float), np.asarray(x0[2:], dtype=float)
        r0 = float(np.hypot(*q0))
        energy = 0.5 * float(p0 @ p0) - 1.0 / r0
        if energy >= 0.0:
            return None
        a = -0.5 / energy
        n = a**-1.5
        sigma0 = float(q0 @ p0)
        c1, c2 = sigma0 / np.sqrt(a), 1.0 - r0 / a
        mean = n * (t - t[0])
        # solve within one period for accuracy over long horizons, add whole turns back
        turns = np.floor(mean / (2.0 * np.pi))
        m = mean - 2.0 * np.pi * turns
        dE = m.copy()
        for _ in range(60):
            f_val = dE + c1 * (1.0 - np.cos(dE)) - c2 * np.sin(dE) - m
            # F' >= 1 − e > 0; the clip keeps early Newton steps of eccentric orbits inside a turn
            step = np.clip(f_val / (1.0 + c1 * np.sin(dE) - c2 * np.cos(dE)), -1.0, 1.0)
            dE -= step
            if np.max(np.abs(step), initial=0.0) < 1e-15:
                break
        cos_e, sin_e = np.cos(dE), np.sin(dE)
        r = a + (r0 - a) * cos_e + sigma0 * np.sqrt(a) * sin_e
        f = 1.0 - (a / r0) * (1.0 - cos_e)
        g = (m - dE + sin_e) / n  # = Δt − (ΔE − sin ΔE)/n without the whole turns' cancellation
        fd = -np.sqrt(a) * sin_e / (r * r0)
        gd = 1.0 - (a / r) * (1.0 - cos_e)
        q = f[:, None] * q0 + g[:, None] * p0
        p = fd[:, None] * q0 + gd[:, None] * p0
        return np.concatenate([q, p], axis=1)
