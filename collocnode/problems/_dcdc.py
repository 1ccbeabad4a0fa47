"""Switched DC-to-DC converter, the SNDE non-autonomous energy benchmark (White et al. §4.3).

States (v1, v2, i3): two capacitor voltages and one inductor current; a switch u(t) ∈ {0, 1}:

    C1 v1' = (1 − u) i3,    C2 v2' = u i3,    L3 i3' = −(1 − u) v1 − u v2

with C1 = 0.1, C2 = 0.2, L3 = 0.5. The switch has period 3 s and toggles every 1.5 s; as in the
authors' code u = 0 in the first half of every period (right-continuous: u(1.5) = 1). The energy
E = (C1 v1² + C2 v2² + L3 i3²)/2 is conserved for either switch position (the SNDE constraint).

Ground truth is exact: between switches the system is linear with constant coefficients, a
harmonic oscillator of (v1, i3) at ω = 1/sqrt(L3 C1) (u = 0, v2 frozen) or of (v2, i3) at
ω = 1/sqrt(L3 C2) (u = 1, v1 frozen), solved in closed form and chained from switch to switch.
`integrate_piecewise` does the same with DOP853 restarted at every switch (the check).

Initial conditions (SNDE): each component ~ U(0, 1); the default trajectory starts at
(0.5, 0.5, 0.5) (our choice, the middle of that box). Sampling: 10 s at dt = 0.1 for training
(101 samples); the paper's test trials last 160 s (1601 samples).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import numpy as np
from scipy.integrate import solve_ivp

from .. import _validation as v
from .._data import Trajectory
from ._base import System


class DCDCConverter(System):
    """DC-to-DC converter; parameters ``C1, C2, L3, period`` (> 0), ``duty`` (fraction of the
    period with u = 0, in (0, 1)) and the default initial state ``v1_0, v2_0, i3_0``.
    States ``(..., 3)``; input u ``(..., 1)``; one constraint."""

    name = "dcdc"
    state_names = ("v1", "v2", "i3")
    input_names = ("u",)
    dt = 0.1
    n_train = 101  # 10 s
    n_steps = 1601  # the paper's 160 s test trials
    PRESETS = {
        "default": {
            "C1": 0.1,
            "C2": 0.2,
            "L3": 0.5,
            "period": 3.0,
            "duty": 0.5,
            "v1_0": 0.5,
            "v2_0": 0.5,
            "i3_0": 0.5,
        }
    }
    POSITIVE = ("C1", "C2", "L3", "period", "duty")

    def __init__(self, preset: str | None = None, **overrides: float) -> None:
        super().__init__(preset, **overrides)
        if self.params["duty"] >= 1.0:
            raise ValueError(f"duty must be in (0, 1), got {self.params['duty']}")

    # --- the switch ----------------------------------------------------------------------------
    def switch(self, t: np.ndarray | float) -> np.ndarray:
        """u(t) ∈ {0, 1}: 0 for the first ``duty`` fraction of every period; same shape as t."""
        t = np.asarray(t, dtype=float)
        period = self.params["period"]
        phase = t / period - np.floor(t / period)
        return (phase >= self.params["duty"]).astype(float)

    def inputs(self, t: np.ndarray | float) -> np.ndarray:
        """u(t) with shape ``(1,)`` for scalar t, ``(len(t), 1)`` for arrays."""
        return self.switch(t)[..., None]

    def switch_times(self, t0: float, tf: float) -> np.ndarray:
        """The times in (t0, tf) where u changes."""
        period, duty = self.params["period"], self.params["duty"]
        k = np.arange(np.floor(t0 / period), np.ceil(tf / period) + 1)
        times = np.sort(np.concatenate([k * period, (k + duty) * period]))
        return times[(times > t0) & (times < tf)]

    # --- dynamics ------------------------------------------------------------------------------
    def rhs(self, t: float, x: np.ndarray, u: np.ndarray | float | None = None) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        u = self.switch(t) if u is None else np.asarray(u, dtype=float)
        if u.ndim and u.shape[-1] == 1 and u.ndim == x.ndim:
            u = u[..., 0]
        p = self.params
        v1, v2, i3 = x[..., 0], x[..., 1], x[..., 2]
        return np.stack(
            np.broadcast_arrays(
                (1 - u) * i3 / p["C1"], u * i3 / p["C2"], -((1 - u) * v1 + u * v2) / p["L3"]
            ),
            axis=-1,
        )

    def casadi_rhs(self, x: Any, u: Any, t: Any = None) -> Any:
        import casadi as ca

        p = self.params
        return ca.vertcat(
            (1 - u) * x[2] / p["C1"],
            u * x[2] / p["C2"],
            -((1 - u) * x[0] + u * x[1]) / p["L3"],
        )

    @property
    def x0(self) -> np.ndarray:
        return np.array([self.params["v1_0"], self.params["v2_0"], self.params["i3_0"]])

    def sample_x0(self, rng: np.random.Generator | int | None = None) -> np.ndarray:
        """One SNDE initial condition: every component ~ U(0, 1), shape ``(3,)``."""
        return np.random.default_rng(rng).uniform(0.0, 1.0, 3)

    # --- energy --------------------------------------------------------------------------------
    def invariants(self, x: np.ndarray) -> dict[str, np.ndarray]:
        """Stored energy E = (C1 v1² + C2 v2² + L3 i3²)/2, shape ``(...)``."""
        x = np.asarray(x, dtype=float)
        p = self.params
        c = np.array([p["C1"], p["C2"], p["L3"]])
        return {"energy": 0.5 * np.sum(c * x * x, axis=-1)}

    @property
    def n_constraints(self) -> int:
        return 1

    def constraints(
        self, x: np.ndarray, t: float = 0.0, x0: np.ndarray | None = None
    ) -> np.ndarray:
        """g = E(x) − E(x0) (x0 defaults to `x0`), shape ``(..., 1)``."""
        ref = self.x0 if x0 is None else np.asarray(x0, dtype=float)
        return (self.invariants(x)["energy"] - self.invariants(ref)["energy"])[..., None]

    def constraint_jacobian(self, x: np.ndarray, t: float = 0.0) -> np.ndarray:
        """dE/dx = [C1 v1, C2 v2, L3 i3], shape ``(..., 1, 3)``."""
        x = np.asarray(x, dtype=float)
        p = self.params
        return (np.array([p["C1"], p["C2"], p["L3"]]) * x)[..., None, :]

    # --- ground truth --------------------------------------------------------------------------
    def _segments(self, t0: float, tf: float) -> np.ndarray:
        return np.concatenate([[t0], self.switch_times(t0, tf), [tf]])

    def _flow(self, x: np.ndarray, tau: np.ndarray, u: float) -> np.ndarray:
        """Closed-form flow of the u-subsystem from state x at times tau >= 0: ``(len(tau), 3)``."""
        p = self.params
        cap, k = (p["C1"], 0) if u == 0.0 else (p["C2"], 1)
        omega = 1.0 / np.sqrt(p["L3"] * cap)
        c, s = np.cos(omega * tau), np.sin(omega * tau)
        out = np.repeat(x[None, :], tau.size, axis=0)
        vk, i3 = x[k], x[2]
        out[:, k] = vk * c + i3 / (cap * omega) * s
        out[:, 2] = i3 * c - vk / (p["L3"] * omega) * s
        return out

    def exact_solution(self, t: np.ndarray, x0: np.ndarray) -> np.ndarray:
        """Piecewise closed-form solution at t (from x0 at t[0]), switch by switch."""
        t = np.asarray(t, dtype=float)
        out = np.empty((t.size, 3))
        x = np.asarray(x0, dtype=float)
        edges = self._segments(t[0], t[-1])
        for a, b in itertools.pairwise(edges):
            u = float(self.switch(0.5 * (a + b)))  # constant on [a, b)
            last = b == edges[-1]
            mask = (t >= a) & ((t <= b) if last else (t < b))
            out[mask] = self._flow(x, t[mask] - a, u)
            x = self._flow(x, np.array([b - a]), u)[0]
        return out

    def simulate(
        self,
        t: np.ndarray,
        x0: np.ndarray | None = None,
        rtol: float = 1e-12,
        atol: float = 1e-12,
        method: str = "DOP853",
        inputs: Callable[[float], np.ndarray] | None = None,
        use_exact: bool = True,
    ) -> Trajectory:
        """Ground truth on ``t``: the closed form, or with ``use_exact=False`` the integrator
        restarted at every switch (`integrate_piecewise`). A custom ``inputs`` signal is
        integrated by `System.simulate` (no restarts: its switches are unknown)."""
        if inputs is None and not use_exact:
            return self.integrate_piecewise(t, x0, rtol, atol, method)
        return super().simulate(t, x0, rtol, atol, method, inputs, use_exact)

    def integrate_piecewise(
        self,
        t: np.ndarray,
        x0: np.ndarray | None = None,
        rtol: float = 1e-12,
        atol: float = 1e-12,
        method: str = "DOP853",
    ) -> Trajectory:
        """scipy integration restarted at every switch (no step across a discontinuity)."""
        t = v.increasing("t", t)
        x = self.x0 if x0 is None else v.finite_array("x0", x0, shape=(3,))
        out = np.empty((t.size, 3))
        edges = self._segments(t[0], t[-1])
        for a, b in itertools.pairwise(edges):
            u = float(self.switch(0.5 * (a + b)))
            last = b == edges[-1]
            mask = (t >= a) & ((t <= b) if last else (t < b))
            t_eval = t[mask]
            ends_on_b = t_eval.size > 0 and t_eval[-1] == b
            sol = solve_ivp(
                lambda tt, xx, u=u: self.rhs(tt, xx, u),
                (a, b),
                x,
                method=method,
                t_eval=t_eval if ends_on_b else np.append(t_eval, b),
                rtol=rtol,
                atol=atol,
            )
            if not sol.success:
                raise RuntimeError(f"integration of {self.name} failed: {sol.message}")
            out[mask] = sol.y.T if ends_on_b else sol.y.T[:-1]
            x = sol.y[:, -1]
        return Trajectory(
            t=t,
            x=out,
            u=self.inputs(t),
            state_names=self.state_names,
            input_names=self.input_names,
            params=dict(self.params),
        )
