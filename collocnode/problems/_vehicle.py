"""Parameterized 4-DOF kinematic vehicle with a motor model (FNODE §3.7, eqs. 37-40)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import _validation as v
from ._base import System

# Table 9 of FNODE, in the parameter order of eq. 40
PARAM_RANGES: dict[str, tuple[float, float]] = {
    "l": (2.7, 2.9),  # wheelbase [m]
    "beta": (0.60, 0.75),  # steering ratio: wheel angle = beta * delta
    "gamma": (0.15, 0.25),  # gear ratio
    "I_wheel": (0.9, 1.3),  # wheel inertia [kg m²]
    "R_wheel": (0.32, 0.35),  # wheel radius [m]
    "c0": (0.015, 0.025),  # motor resistance torque [N m]
    "c1": (0.025, 0.045),  # motor resistance torque per motor speed [N m s]
    "tau0": (250.0, 350.0),  # stalling torque [N m]
    "omega0": (1200.0, 1500.0),  # no-load motor speed [rad/s]
}
GRID_POINTS = 4  # values per parameter in the training grid (4⁹ = 262,144 instances)


def _table10(
    l: float,
    r: float,
    i: float,
    tau0: float,
    omega0: float,
    c0: float,
    c1: float,
    b: float,
    g: float,
) -> dict[str, float]:
    """A test set in the column order of FNODE Table 10, keyed like eq. 40."""
    return {
        "l": l,
        "beta": b,
        "gamma": g,
        "I_wheel": i,
        "R_wheel": r,
        "c0": c0,
        "c1": c1,
        "tau0": tau0,
        "omega0": omega0,
    }


class Vehicle4DOF(System):
    """``q = [x, y, θ, v]``, ``u = [α, δ]`` (FNODE eqs. 37-39)::

        x' = v cos θ,  y' = v sin θ,  θ' = v tan(β δ) / l,  v' = 2 T(α, v) γ R_wheel / I_wheel,
        T = α f1(ω_m) − c1 ω_m − c0,  f1 = τ0 (1 − ω_m / ω0),  ω_m = v / (R_wheel γ).

    α is the normalized throttle and δ the normalized steering command. This is a first-order
    system (FNODE learns ``(q, u, Θ_p) -> q'``), so ``n_coords = 0``.

    The paper shares one pre-defined control signal between all parameter instances but does not
    give it; the default here is the smooth
    ``α(t) = 0.2 + 0.1 sin(2π t / 10 s)``, ``δ(t) = 0.1 sin(2π t / 7 s)``, from rest at the origin.
    Pass ``inputs=`` to `simulate` / `generate` for another signal.

    Sampling (FNODE §3.7): Δt = 0.01 s, 20 s (2000 samples), the first 1500 train.

    Presets: ``"nominal"`` (default) is the centre of the Table 9 box (the paper gives only the
    ranges and the test sets); ``"test1"`` … ``"test4"`` are Table 10 (1-2 grid corners, 3-4
    interior). `parameter_grid` gives the 4-value-per-parameter training grid and
    `grid_point` one of its 4⁹ instances by index.
    """

    name = "vehicle4dof"
    state_names = ("x", "y", "theta", "v")
    input_names = ("alpha", "delta")
    PRESETS = {
        "nominal": {k: 0.5 * (lo + hi) for k, (lo, hi) in PARAM_RANGES.items()},
        "test1": _table10(2.7, 0.32, 0.9, 250, 1200, 0.015, 0.025, 0.6, 0.15),
        "test2": _table10(2.9, 0.35, 1.3, 350, 1500, 0.025, 0.045, 0.75, 0.25),
        "test3": _table10(2.726, 0.3281, 0.952, 277, 1239, 0.0177, 0.0276, 0.6405, 0.163),
        "test4": _table10(2.846, 0.3461, 1.192, 337, 1419, 0.0237, 0.0396, 0.7305, 0.223),
    }
    POSITIVE = tuple(PARAM_RANGES)
    dt = 0.01
    n_steps = 2000
    n_train = 1500

    THROTTLE = (0.2, 0.1, 10.0)  # mean, amplitude, period [s] of the default α(t)
    STEER = (0.1, 7.0)  # amplitude, period [s] of the default δ(t)

    @property
    def x0(self) -> np.ndarray:
        return np.zeros(4)

    def inputs(self, t: np.ndarray | float) -> np.ndarray:
        t = np.asarray(t, dtype=float)
        mean, amp, period = self.THROTTLE
        s_amp, s_period = self.STEER
        alpha = mean + amp * np.sin(2 * np.pi * t / period)
        delta = s_amp * np.sin(2 * np.pi * t / s_period)
        return np.stack([alpha, delta], axis=-1)

    def parameter_vector(self) -> np.ndarray:
        """``Θ_p`` in the order of eq. 40 (``l, β, γ, I_wheel, R_wheel, c0, c1, τ0, ω0``)."""
        return np.array([self.params[k] for k in PARAM_RANGES])

    @staticmethod
    def parameter_grid() -> dict[str, np.ndarray]:
        """The training grid: ``GRID_POINTS`` equally spaced values over each Table 9 range."""
        return {k: np.linspace(lo, hi, GRID_POINTS) for k, (lo, hi) in PARAM_RANGES.items()}

    @staticmethod
    def grid_size() -> int:
        return GRID_POINTS ** len(PARAM_RANGES)

    @classmethod
    def grid_point(cls, index: int) -> dict[str, float]:
        """Parameters of grid instance ``index`` in ``[0, 4⁹)`` (mixed radix, the first
        parameter varying slowest); pass them to the constructor as overrides."""
        index = v.nonnegative_int("index", index)
        if index >= cls.grid_size():
            raise ValueError(f"index must be < {cls.grid_size()}, got {index}")
        digits = np.unravel_index(index, (GRID_POINTS,) * len(PARAM_RANGES))
        grid = cls.parameter_grid()
        return {k: float(grid[k][int(d)]) for k, d in zip(PARAM_RANGES, digits, strict=True)}

    def _derivative(self, th: Any, vel: Any, alpha: Any, delta: Any, lib: Any) -> tuple[Any, ...]:
        p = self.params
        omega_m = vel / (p["R_wheel"] * p["gamma"])  # eq. 39
        f1 = -p["tau0"] / p["omega0"] * omega_m + p["tau0"]
        torque = alpha * f1 - p["c1"] * omega_m - p["c0"]
        return (
            vel * lib.cos(th),
            vel * lib.sin(th),
            vel * lib.tan(p["beta"] * delta) / p["l"],
            2 * torque * p["gamma"] * p["R_wheel"] / p["I_wheel"],  # eq. 38
        )

    def rhs(self, t: float, x: np.ndarray, u: np.ndarray | None = None) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        u = self.inputs(t) if u is None else np.asarray(u, dtype=float)
        parts = self._derivative(x[..., 2], x[..., 3], u[..., 0], u[..., 1], np)
        return np.stack(np.broadcast_arrays(*parts), axis=-1)

    def casadi_rhs(self, x: Any, u: Any, t: Any) -> Any:
        import casadi as ca

        return ca.vertcat(*self._derivative(x[2], x[3], u[0], u[1], ca))
