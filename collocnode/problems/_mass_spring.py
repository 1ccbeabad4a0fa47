"""Mass-spring(-damper) chains of FNODE §3.1-3.3 and MBD-NODE §3.1-3.3.

All three are ``M x'' + D x' + K x + k_cubic x³ = 0`` (the cubic term only in the SMSD preset of
the MBD-NODE code); the linear ones have the exact solution ``expm(A (t − t0)) x0`` with
``A = [[0, I], [−M⁻¹K, −M⁻¹D]]``, used as ground truth.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.linalg import expm

from ._base import System


class _MassSpringChain(System):
    """Shared linear(ised) mechanics; subclasses give the matrices and the initial state."""

    def matrices(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(M, D, K)``, each ``(n_coords, n_coords)`` [kg, N s/m, N/m]."""
        raise NotImplementedError

    @property
    def k_cubic(self) -> np.ndarray:
        """Cubic spring coefficients per mass [N/m³] (force ``−k_cubic x³``)."""
        return np.zeros(self.n_coords)

    @property
    def linear(self) -> bool:
        return not np.any(self.k_cubic)

    def system_matrix(self) -> np.ndarray:
        """``A`` of the linear part, ``x' = A x``; shape ``(2n, 2n)``."""
        m, d, k = self.matrices()
        n = self.n_coords
        minv = np.linalg.inv(m)
        a = np.zeros((2 * n, 2 * n))
        a[:n, n:] = np.eye(n)
        a[n:, :n] = -minv @ k
        a[n:, n:] = -minv @ d
        return a

    def rhs(self, t: float, x: np.ndarray, u: np.ndarray | None = None) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        n = self.n_coords
        dx = x @ self.system_matrix().T
        if not self.linear:
            m = np.diag(self.matrices()[0])
            dx[..., n:] -= self.k_cubic / m * x[..., :n] ** 3
        return dx

    def casadi_rhs(self, x: Any, u: Any, t: Any) -> Any:
        import casadi as ca

        n = self.n_coords
        dx = ca.mtimes(ca.DM(self.system_matrix()), x)
        if not self.linear:
            m = np.diag(self.matrices()[0])
            cubic = ca.DM(self.k_cubic / m) * x[:n] ** 3
            dx = ca.vertcat(dx[:n], dx[n:] - cubic)
        return dx

    def exact_solution(self, t: np.ndarray, x0: np.ndarray) -> np.ndarray | None:
        if not self.linear:
            return None
        tau = np.asarray(t, dtype=float) - float(t[0])
        a = self.system_matrix()
        lam, vec = np.linalg.eig(a)
        if np.linalg.cond(vec) < 1e6:
            # modal form V exp(Λ τ) V⁻¹ x0: exact per sample (no error accumulation along t)
            # and much cheaper than one expm per sample
            coef = np.linalg.solve(vec, x0.astype(complex))
            return ((np.exp(np.outer(tau, lam)) * coef) @ vec.T).real
        # (nearly) defective A, e.g. critical damping: one matrix exponential per sample
        return np.einsum("tij,j->ti", expm(tau[:, None, None] * a), x0)

    def energy(self, x: np.ndarray) -> np.ndarray:
        """Kinetic plus potential energy [J]; shape ``(...)``."""
        x = np.asarray(x, dtype=float)
        m, _, k = self.matrices()
        q, qd = x[..., : self.n_coords], x[..., self.n_coords :]
        pot = 0.5 * np.einsum("...i,ij,...j->...", q, k, q)
        pot = pot + 0.25 * np.sum(self.k_cubic * q**4, axis=-1)
        return 0.5 * np.einsum("...i,ij,...j->...", qd, m, qd) + pot

    def invariants(self, x: np.ndarray) -> dict[str, np.ndarray]:
        _, d, k = self.matrices()
        if np.any(d) or not np.allclose(k, k.T):
            return {}
        return {"energy": self.energy(x)}


class SingleMassSpring(_MassSpringChain):
    """Undamped single mass-spring ``m x'' = −k x`` (FNODE §3.1; MBD-NODE eq. 25).

    m = 10 kg, k = 50 N/m, x(0) = 1 m, x'(0) = 0; Δt = 0.01 s; both papers train on the first
    300 samples (t ∈ [0, 3)) and extrapolate to 30 s (3000 samples). Energy
    ``H = m x'²/2 + k x²/2`` is conserved. Ground truth: the exact solution.
    """

    name = "sms"
    state_names = ("x", "x_dot")
    n_coords = 1
    PRESETS = {"default": {"m": 10.0, "k": 50.0, "x0": 1.0, "v0": 0.0}}
    POSITIVE = ("m", "k")
    dt = 0.01
    n_steps = 3000
    n_train = 300

    def matrices(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        p = self.params
        return np.array([[p["m"]]]), np.zeros((1, 1)), np.array([[p["k"]]])

    @property
    def x0(self) -> np.ndarray:
        return np.array([self.params["x0"], self.params["v0"]])


class SingleMassSpringDamper(_MassSpringChain):
    """Single mass-spring-damper ``m x'' = −k x − d x' − k_cubic x³``.

    Presets:
        * ``"default"`` — the paper text (FNODE eq. 33, MBD-NODE eq. 29): linear, m = 10 kg,
          k = 50 N/m, d = 2 N s/m; exact ground truth.
        * ``"mbdnode_cubic"`` — the MBD-NODE released code, which adds a cubic spring force
          −0.1 x³ [N] (not in either paper); ground truth by DOP853. The FNODE authors' first
          code release (2025) generates this system (FNODE Table 13).
        * ``"mbdnode_arrays"`` — the data behind MBD-NODE Table 4: the authors' committed
          ground-truth arrays were integrated from that system by their code's first-order
          "RK4" (`collocnode.tools._fixed_step.RK4_MBDNODE_CODE`) at Δt = 0.01 s, which this
          preset's ground truth reproduces to 8e-7 (float32 rounding); the exact solution of
          the ODE differs from those arrays by up to 1.1e-2.

        * ``"fnode_code"`` — the linear system sampled as the FNODE authors' later script
          (2026) runs FNODE itself: Δt = 0.005 s, 8000 samples, the first 5 % (400) train;
          its runs of MBD-NODE, LSTM and FCNN use the default sampling.

    x(0) = 1 m, x'(0) = 0; Δt = 0.01 s, 300 training + 100 extrapolation samples (both papers).
    """

    name = "smsd"
    state_names = ("x", "x_dot")
    n_coords = 1
    PRESETS = {
        "default": {"m": 10.0, "k": 50.0, "d": 2.0, "k_cubic": 0.0, "x0": 1.0, "v0": 0.0},
        "mbdnode_cubic": {"m": 10.0, "k": 50.0, "d": 2.0, "k_cubic": 0.1, "x0": 1.0, "v0": 0.0},
        "mbdnode_arrays": {"m": 10.0, "k": 50.0, "d": 2.0, "k_cubic": 0.1, "x0": 1.0, "v0": 0.0},
        "fnode_code": {"m": 10.0, "k": 50.0, "d": 2.0, "k_cubic": 0.0, "x0": 1.0, "v0": 0.0},
    }
    SAMPLING = {"fnode_code": {"dt": 0.005, "n_steps": 8000, "n_train": 400}}
    GENERATORS = {"mbdnode_arrays": "rk4_mbdnode_code"}
    POSITIVE = ("m", "k")
    NONNEGATIVE = ("d",)
    dt = 0.01
    n_steps = 400
    n_train = 300

    def matrices(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        p = self.params
        return np.array([[p["m"]]]), np.array([[p["d"]]]), np.array([[p["k"]]])

    @property
    def k_cubic(self) -> np.ndarray:
        return np.array([self.params["k_cubic"]])

    @property
    def x0(self) -> np.ndarray:
        return np.array([self.params["x0"], self.params["v0"]])


class TripleMassSpringDamper(_MassSpringChain):
    """Multiscale chain wall–m1–m2–m3 with springs k_i and dampers d_i (FNODE eq. 34).

    ``m1 x1'' = −k1 x1 − d1 x1' + k2 (x2 − x1) + d2 (x2' − x1')`` and so on; the wall damper acts
    on ``x1'`` alone. MBD-NODE eq. 30 prints ``d1 (v1 − v2)``, which would couple the *wall*
    damper to mass 2 and make the damping matrix non-symmetric; FNODE eq. 34, written by the same
    group for the same system, has ``d1 x1'``, so the printed form is taken as a typo.

    Presets:
        * ``"default"`` — paper text: m = (100, 10, 1) kg, k_i = 50 N/m, d_i = 2 N s/m.
        * ``"mbdnode_code"`` — the MBD-NODE/FNODE released code, whose force on m1 carries an
          extra ``−[k3 (x3 − x2) + d3 (x3' − x2')]`` (``code_coupling = 1``); only for
          reproducing their data.
        * ``"mbdnode_arrays"`` — the data behind MBD-NODE Table 4: that system integrated by the
          code's first-order "RK4" at Δt = 0.01 s, as the authors' committed ground-truth arrays
          were (reproduced to 2e-6; the exact solution differs from them by up to 5e-2).

    x(0) = (1, 2, 3) m, x'(0) = 0; Δt = 0.01 s, 300 training + 100 extrapolation samples.
    Ground truth: the exact solution (matrix exponential).
    """

    name = "tmsd"
    state_names = ("x1", "x2", "x3", "x1_dot", "x2_dot", "x3_dot")
    n_coords = 3
    _BASE = {
        "m1": 100.0,
        "m2": 10.0,
        "m3": 1.0,
        "k1": 50.0,
        "k2": 50.0,
        "k3": 50.0,
        "d1": 2.0,
        "d2": 2.0,
        "d3": 2.0,
        "code_coupling": 0.0,
        "x1_0": 1.0,
        "x2_0": 2.0,
        "x3_0": 3.0,
        "v1_0": 0.0,
        "v2_0": 0.0,
        "v3_0": 0.0,
    }
    PRESETS = {
        "default": _BASE,
        "mbdnode_code": {**_BASE, "code_coupling": 1.0},
        "mbdnode_arrays": {**_BASE, "code_coupling": 1.0},
    }
    GENERATORS = {"mbdnode_arrays": "rk4_mbdnode_code"}
    POSITIVE = ("m1", "m2", "m3", "k1", "k2", "k3")
    NONNEGATIVE = ("d1", "d2", "d3")
    dt = 0.01
    n_steps = 400
    n_train = 300

    def matrices(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        p = self.params
        m = np.diag([p["m1"], p["m2"], p["m3"]])
        mats = []
        for c1, c2, c3 in ((p["d1"], p["d2"], p["d3"]), (p["k1"], p["k2"], p["k3"])):
            a = np.array([[c1 + c2, -c2, 0.0], [-c2, c2 + c3, -c3], [0.0, -c3, c3]])
            # the released code's extra −c3 (x3 − x2) force on mass 1
            a[0, 1] -= p["code_coupling"] * c3
            a[0, 2] += p["code_coupling"] * c3
            mats.append(a)
        return m, mats[0], mats[1]

    @property
    def x0(self) -> np.ndarray:
        p = self.params
        return np.array([p[k] for k in ("x1_0", "x2_0", "x3_0", "v1_0", "v2_0", "v3_0")])
