"""Slider-crank as a true 3-body planar mechanism (FNODE §3.5 and App. C, MBD-NODE §3.7/App. A).

Coordinates ``q = (x1, y1, θ1, x2, y2, θ2, x3, y3, θ3)`` of the centres of mass and the angles of
crank (1), connecting rod (2) and slider (3); 8 holonomic constraints (FNODE eq. 53), one degree
of freedom. The crank angle θ1 is the independent coordinate.

The ``"fnode_bb"`` preset is the system behind FNODE's published slider-crank numbers (Table 13,
Fig. 14): the authors' 3-body generator in the public repository ``uwsbel/sbel-reproducibility``,
folder ``2025/FNODE`` (see `SliderCrank`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._base import CasadiColumns, HolonomicSystem

_COORDS = ("x1", "y1", "theta1", "x2", "y2", "theta2", "x3", "y3", "theta3")
_THETA1, _THETA2, _X3, _Y3_ROW = 2, 5, 6, 6  # coordinate indices; row of y3 = 0 in Φ
_Y_COORDS = {1: "m1", 4: "m2", 7: "m3"}  # index of each body's y coordinate -> its mass


def _preset(**changes: float) -> dict[str, float]:
    base = {
        "m1": 1.0,
        "m2": 1.0,
        "m3": 1.0,
        "I1": 0.1,
        "I2": 0.1,
        "I3": 0.1,
        "r": 1.0,
        "l": 2.0,
        "k": 1.0,
        "x3_rest": 4.0,
        "c01": 0.0,
        "c12": 0.05,
        "c_slide": 0.2,
        "mu": 0.0,
        "eps": 0.01,
        "tau_amp": 0.0,
        "tau_freq": 0.0,
        "F_amp": 0.0,
        "F_freq": 0.0,
        "theta1_0": np.pi / 4,
        "omega1_0": 0.0,
        "g": 0.0,
        "damper_reaction": 1.0,
        "k_wall": 0.0,
        "x3_max": 6.5,
    }
    base.update(changes)
    return base


# the FNODE authors' 3-body generator (their code of 2026-02-11; see the "fnode_bb" preset)
_FNODE_BB = {
    "k": 0.0,
    "c_slide": 0.0,
    "tau_amp": -0.002,
    "tau_freq": 1.0,
    "theta1_0": 0.0,
    "g": 9.81,
    "damper_reaction": -1.0,
    "k_wall": 1.0,
    "x3_max": 6.5,
}


class SliderCrank(HolonomicSystem):
    """Crank pinned to the ground at the origin, rod pinned to the crank tip, slider pinned to the
    rod and sliding on ``y = 0``, with ``M = diag(m1, m1, I1, m2, m2, I2, m3, m3, I3)``.

    Geometry: ``r`` is the crank *half*-length and ``l`` the rod *half*-length, as in FNODE
    eq. 53 (``x1 = r cos θ1``, ``x3 = x2 + l cos θ2``). FNODE's text calls the crank length
    l = 2 m and the rod length r = 1 m, which contradicts eq. 53 and would not let the crank turn
    fully; its code and MBD-NODE use crank length 2 m and rod length 4 m, i.e. r = 1, l = 2 here.
    The slider therefore stays within ``x3 ≤ 2 (r + l)``. The acceleration right-hand side γ is
    derived from eq. 53 (FNODE eqs. 57c-f and 58 carry a spurious factor 2 on the l terms).

    Applied forces (FNODE eq. 56, corrected, plus the terms of the FNODE code's generator):
        * crank: torque ``τ(t) − c01 θ1' − c12 (θ1' − θ2')``; rod: ``+s c12 (θ1' − θ2')`` with
          ``s = damper_reaction`` (the crank-rod rotational damper acts on both bodies; eq. 56b
          puts it in a y-force slot). ``s = +1`` is action and reaction; the FNODE code applies
          the same ``−c12 (θ1' − θ2')`` to both bodies, ``s = −1``;
        * slider: ``−k (x3 − x3_rest) − k_wall (x3_max − x3) − c_slide x3' + F(t)
          − μ |λ7| tanh(x3'/ε)``, with λ7 the reaction of ``y3 = 0`` (Coulomb friction smoothed
          over the velocity scale ε so that the ground truth is an ODE an explicit integrator can
          follow; eq. 56c's undefined "f" is dropped and its missing sign(x3') restored). The
          ``k_wall`` term is the FNODE code's one-sided wall spring ``−K (x3_max − x3)`` for
          ``x3 < x3_max``, else 0: with ``x3_max ≥ 2 (r + l)`` (checked) its switch is never
          reached, so the linear term is exact and smooth. Note its sign: it pushes the slider
          away from ``x3_max`` and grows with the distance (a negative stiffness), unlike the
          paper's restoring ``−k Δx3``;
        * gravity ``−m_i g`` on ``y1``, ``y2``, ``y3`` (neither paper's text applies any,
          ``g = 0`` except in ``"fnode_bb"``; on the slider it only loads the guide, i.e. λ7).

    Inputs ``[τ, F]`` (crank torque [N m], slider force [N]) default to
    ``τ = tau_amp sin(2π tau_freq t)``, ``F = F_amp sin(2π F_freq t)``.

    Presets (Δt = 0.01 s):
        * ``"fnode"`` (default) — FNODE §3.5 frictionless case: m_i = 1 kg, I_i = 0.1 kg m²,
          wall spring k = 1 N/m (the text's "Nm/rad" for a translational spring is read as
          N/m) with rest position x3_rest = 4 m (mid-stroke; the paper gives none), c12 = 0.05,
          c_slide = 0.2 (the paper names dampers but not values; these are the FNODE code's),
          release from θ1 = π/4 at rest. 4500 samples, the first 1500 train (t ∈ [0, 15), Fig. 14).
        * ``"fnode_friction"`` — the same with Coulomb friction μ = 0.6 (Table 7), ε = 0.01 m/s.
        * ``"fnode_bb"`` — the system that produced FNODE's published slider-crank numbers
          (Table 13, Fig. 14): ``generate_slider_crank_dataset`` in ``Model/Data_generator.py``
          of the FNODE code at commit 95a7cbd (2026-02-11), which ``main_fnode.py``,
          ``main_mbdnode.py``, ``main_lstm.py`` and ``main_fcnn.py`` called with
          ``--data_total_steps 4500 --train_ratio 1/3`` (``run_experiments.sh``, whose FNODE
          learning rate 5e-4 and decay 0.99 are Table 6's). It is the model of
          ``generate_slider_crank_dataset_with_friction`` with friction 0, and of the standalone
          ``Model/slider_crank_bb.py`` but for that script's slider damper (0.2 N s/m).
          m_i = 1 kg, I_i = 0.1 kg m², half-lengths 1 and 2 m, g = 9.81 m/s²,
          τ = −0.002 sin(2π t) N m, c12 = 0.05 N m s with the code's ``damper_reaction = −1``,
          no slider damper or friction (its Coulomb coefficient is 0), wall spring K = 1 N/m
          with x3_max = 6.5 m and no restoring spring (k = 0), released at rest from the
          straight pose θ1 = 0. The code steps backward Euler (augmented Lagrangian with
          Barzilai-Borwein inner iterations, h = 1 ms, constraint tolerance 1e-6) for 45 s and
          keeps every 10th step: 4500 samples of 0.01 s, the first 1500 train. The scripts
          score the MSE of (θ1, θ1') over all 4500 samples (the column named ``theta_0_2pi``
          holds the unwrapped θ1). The ground truth here is the same model integrated to
          1e-12; the code's samples differ from it by its first-order time stepping (mostly
          numerical damping): up to 0.05 rad in θ1 after 5 s and 1.3 rad after 45 s (an MSE of
          0.5 over (θ1, θ1'), against 5e-3 for an exact backward Euler of this model at 1 ms).
          The later code (commit 7bb4dd6, 2026-03) swapped this generator for a 1-DOF
          effective-inertia ODE whose spring rests at the initial angle: released at rest
          there, it never moves, so it cannot have produced the published numbers.
        * ``"fnode_bb_2025"`` — the same generator in the authors' first release of their code
          (commit 8d00a6c, 2025-11-18), the version their code run here trains on: ``fnode_bb``
          with a slider damper of 0.2 N s/m and a wall spring of K = 0.2 N/m instead of
          1 N/m (FNODE §3.5 names "a slider connected to a spring and damper"). Its swing
          decays: the largest |θ1'| of the exact solution is 2.6 rad/s in the first 5 s and
          0.34 rad/s in the last (``fnode_bb``: 3.7 and 3.0). That code's samples lie an MSE
          of 2.1e-3 over (θ1, θ1') from this preset's exact solution (at most 0.19 rad/s in
          θ1'), its first-order time stepping.
        * ``"mbdnode"`` — MBD-NODE §3.7: m = (3, 6, 1) kg, I = (4, 32, 1) kg m², same geometry,
          no spring, damper or friction, (θ1, θ1')(0) = (1, 1), 100 s (10,000 samples). MBD-NODE
          drives it with (F, τ) ~ U[−10, 10]² redrawn every step and trains on random states; a
          deterministic smooth drive τ = 5 sin(2π 0.1 t), F = 5 sin(2π 0.13 t) replaces that
          here, and the first 3000 samples are taken as the training window (our choice).

    Energy ``q'ᵀ M q'/2 + k (x3 − x3_rest)²/2 − k_wall (x3_max − x3)²/2 + g Σ m_i y_i`` is an
    invariant when all dampers, friction and inputs are zero.
    """

    name = "slider_crank"
    state_names = (*_COORDS, *(f"{c}_dot" for c in _COORDS))
    input_names = ("tau", "F")
    n_coords = 9
    independent = (_THETA1,)
    PRESETS = {
        "fnode": _preset(),
        "fnode_friction": _preset(mu=0.6),
        "fnode_bb": _preset(**_FNODE_BB),
        # the same generator in the authors' first release: a slider damper, a weaker wall spring
        "fnode_bb_2025": _preset(**(_FNODE_BB | {"c_slide": 0.2, "k_wall": 0.2})),
        "mbdnode": _preset(
            m1=3.0,
            m2=6.0,
            I1=4.0,
            I2=32.0,
            I3=1.0,
            k=0.0,
            c12=0.0,
            c_slide=0.0,
            tau_amp=5.0,
            tau_freq=0.1,
            F_amp=5.0,
            F_freq=0.13,
            theta1_0=1.0,
            omega1_0=1.0,
        ),
    }
    SAMPLING = {"mbdnode": {"n_steps": 10000, "n_train": 3000}}
    POSITIVE = ("m1", "m2", "m3", "I1", "I2", "I3", "r", "l", "eps")
    NONNEGATIVE = ("k", "c01", "c12", "c_slide", "mu", "tau_freq", "F_freq", "g", "k_wall")
    dt = 0.01
    n_steps = 4500
    n_train = 1500

    def __init__(self, preset: str | None = None, **overrides: float) -> None:
        super().__init__(preset, **overrides)
        if self.params["l"] <= self.params["r"]:
            # the rod must be longer than the crank or the crank cannot turn through θ1 = ±π/2
            raise ValueError(
                f"l (rod half-length) must exceed r (crank half-length) = {self.params['r']}, "
                f"got {self.params['l']}"
            )
        if self.params["damper_reaction"] not in (-1.0, 1.0):
            raise ValueError(
                "damper_reaction must be 1 (action and reaction) or -1 (the FNODE code's sign), "
                f"got {self.params['damper_reaction']}"
            )
        reach = 2 * (self.params["r"] + self.params["l"])
        if self.params["k_wall"] > 0 and self.params["x3_max"] < reach:
            # the code's wall spring switches off at x3 = x3_max; beyond the slider's reach the
            # switch never happens and the force is the smooth linear term used here
            raise ValueError(
                f"x3_max must be >= the slider's reach 2 (r + l) = {reach:g} when k_wall > 0, "
                f"got {self.params['x3_max']}"
            )

    # --- constraints (FNODE eqs. 53-54) ----------------------------------------------------------
    def _phi_rows(self, q: Any, lib: Any) -> list[Any]:
        r, l = self.params["r"], self.params["l"]
        x1, y1, t1, x2, y2, t2, x3, y3, t3 = (q[..., i] for i in range(9))
        return [
            x1 - r * lib.cos(t1),
            y1 - r * lib.sin(t1),
            x1 + r * lib.cos(t1) - x2 + l * lib.cos(t2),
            y1 + r * lib.sin(t1) - y2 + l * lib.sin(t2),
            x2 + l * lib.cos(t2) - x3,
            y2 + l * lib.sin(t2) - y3,
            y3,
            t3,
        ]

    def _phi_q_entries(self, q: Any, lib: Any) -> dict[tuple[int, int], Any]:
        r, l = self.params["r"], self.params["l"]
        c1, s1 = lib.cos(q[..., _THETA1]), lib.sin(q[..., _THETA1])
        c2, s2 = lib.cos(q[..., _THETA2]), lib.sin(q[..., _THETA2])
        return {
            (0, 0): 1.0,
            (0, 2): r * s1,
            (1, 1): 1.0,
            (1, 2): -r * c1,
            (2, 0): 1.0,
            (2, 2): -r * s1,
            (2, 3): -1.0,
            (2, 5): -l * s2,
            (3, 1): 1.0,
            (3, 2): r * c1,
            (3, 4): -1.0,
            (3, 5): l * c2,
            (4, 3): 1.0,
            (4, 5): -l * s2,
            (4, 6): -1.0,
            (5, 4): 1.0,
            (5, 5): l * c2,
            (5, 7): -1.0,
            (6, 7): 1.0,
            (7, 8): 1.0,
        }

    def _phi_q_dot_q_entries(self, q: Any, qd: Any, lib: Any) -> dict[tuple[int, int], Any]:
        r, l = self.params["r"], self.params["l"]
        c1, s1 = lib.cos(q[..., _THETA1]), lib.sin(q[..., _THETA1])
        c2, s2 = lib.cos(q[..., _THETA2]), lib.sin(q[..., _THETA2])
        w1, w2 = qd[..., _THETA1], qd[..., _THETA2]
        return {
            (0, 2): r * c1 * w1,
            (1, 2): r * s1 * w1,
            (2, 2): -r * c1 * w1,
            (2, 5): -l * c2 * w2,
            (3, 2): -r * s1 * w1,
            (3, 5): -l * s2 * w2,
            (4, 5): -l * c2 * w2,
            (5, 5): -l * s2 * w2,
        }

    def phi(self, q: np.ndarray) -> np.ndarray:
        q = np.asarray(q, dtype=float)
        return np.stack(self._phi_rows(q, np), axis=-1)

    def phi_q(self, q: np.ndarray) -> np.ndarray:
        q = np.asarray(q, dtype=float)
        return _dense(self._phi_q_entries(q, np), q.shape[:-1], (8, 9))

    def phi_q_dot_q(self, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        q, qd = np.asarray(q, dtype=float), np.asarray(qd, dtype=float)
        shape = np.broadcast_shapes(q.shape[:-1], qd.shape[:-1])
        return _dense(self._phi_q_dot_q_entries(q, qd, np), shape, (8, 9))

    def casadi_phi(self, q: Any) -> Any:
        """``Φ(q)`` for a CasADi column ``q`` (9, 1)."""
        import casadi as ca

        return ca.vertcat(*self._phi_rows(CasadiColumns(q), ca))

    def casadi_phi_q(self, q: Any) -> Any:
        """``Φ_q(q)`` for a CasADi column ``q`` (9, 1); shape (8, 9)."""
        import casadi as ca

        return _casadi_dense(self._phi_q_entries(CasadiColumns(q), ca), (8, 9))

    # --- dynamics --------------------------------------------------------------------------------
    def mass_matrix(self, q: np.ndarray) -> np.ndarray:
        p = self.params
        return np.diag([p[k] for k in ("m1", "m1", "I1", "m2", "m2", "I2", "m3", "m3", "I3")])

    def inputs(self, t: np.ndarray | float) -> np.ndarray:
        t = np.asarray(t, dtype=float)
        p = self.params
        tau = p["tau_amp"] * np.sin(2 * np.pi * p["tau_freq"] * t)
        force = p["F_amp"] * np.sin(2 * np.pi * p["F_freq"] * t)
        return np.stack([tau, force], axis=-1)

    def _forces(self, q: Any, qd: Any, u: Any) -> dict[int, Any]:
        """Nonzero entries of the applied generalized force (FNODE eq. 56, corrected, and the
        FNODE code's gravity, damper sign and wall spring)."""
        p = self.params
        damper12 = p["c12"] * (qd[..., _THETA1] - qd[..., _THETA2])
        x3 = q[..., _X3]
        out = {
            _THETA1: u[..., 0] - p["c01"] * qd[..., _THETA1] - damper12,
            _THETA2: p["damper_reaction"] * damper12,
            _X3: u[..., 1]
            - p["k"] * (x3 - p["x3_rest"])
            - p["k_wall"] * (p["x3_max"] - x3)
            - p["c_slide"] * qd[..., _X3],
        }
        if p["g"]:
            out.update({i: -p[m] * p["g"] for i, m in _Y_COORDS.items()})
        return out

    def applied_forces(
        self, t: float, q: np.ndarray, qd: np.ndarray, u: np.ndarray | None
    ) -> np.ndarray:
        u = self.inputs(t) if u is None else np.asarray(u, dtype=float)
        shape = np.broadcast_shapes(np.shape(q)[:-1], np.shape(qd)[:-1], u.shape[:-1])
        out = np.zeros((*shape, 9))
        for i, val in self._forces(q, qd, u).items():
            out[..., i] = val
        return out

    def reaction_forces(self, q: np.ndarray, qd: np.ndarray, lam0: np.ndarray) -> np.ndarray | None:
        """Coulomb friction ``−μ |λ7| tanh(x3'/ε)`` on the slider as ``−C λ`` with
        ``C[x3, 7] = μ tanh(x3'/ε) sign(λ7⁰)``."""
        mu = self.params["mu"]
        if mu == 0:
            return None
        out = np.zeros((*lam0.shape[:-1], 9, 8))
        slip = np.tanh(qd[..., _X3] / self.params["eps"])
        out[..., _X3, _Y3_ROW] = mu * slip * np.sign(lam0[..., _Y3_ROW])
        return out

    def casadi_rhs(self, x: Any, u: Any, t: Any) -> Any:
        """``[q', q'']`` with the KKT system solved symbolically (friction by the same
        sign-of-the-frictionless-reaction rule as `accelerations`)."""
        import casadi as ca

        p = self.params
        q, qd = x[:9], x[9:]
        jac = self.casadi_phi_q(q)
        pqq = _casadi_dense(
            self._phi_q_dot_q_entries(CasadiColumns(q), CasadiColumns(qd), ca), (8, 9)
        )
        gamma = -ca.mtimes(pqq, qd)
        uu = ca.DM.zeros(2) if u is None else u
        force = ca.SX.zeros(9) if isinstance(x, ca.SX) else ca.MX.zeros(9)
        for i, val in self._forces(CasadiColumns(q), CasadiColumns(qd), CasadiColumns(uu)).items():
            force[i] = val
        mass = ca.DM(self.mass_matrix(np.zeros(9)))
        kkt = ca.vertcat(ca.horzcat(mass, jac.T), ca.horzcat(jac, ca.DM.zeros(8, 8)))
        b = ca.vertcat(force, gamma)
        sol = ca.solve(kkt, b)
        if p["mu"] != 0:
            coef = p["mu"] * ca.tanh(qd[_X3] / p["eps"]) * ca.sign(sol[9 + _Y3_ROW])
            kkt[_X3, 9 + _Y3_ROW] = kkt[_X3, 9 + _Y3_ROW] + coef
            sol = ca.solve(kkt, b)
        return ca.vertcat(qd, sol[:9])

    # --- partitioning and ground truth -------------------------------------------------------
    def position_guess(self, q_independent: np.ndarray) -> np.ndarray:
        """The mechanism with the rod horizontal (θ2 = 0) and the slider to the right: on the
        physical assembly branch for every θ1 since |θ2| ≤ asin(r/l) < π/2 there."""
        r, l = self.params["r"], self.params["l"]
        t1 = np.asarray(q_independent, dtype=float)[..., 0]
        c1, s1 = np.cos(t1), np.sin(t1)
        z = np.zeros_like(t1)
        return np.stack(
            [r * c1, r * s1, t1, 2 * r * c1 + l, 2 * r * s1, z, 2 * r * c1 + 2 * l, z, z], axis=-1
        )

    @property
    def x0(self) -> np.ndarray:
        return self.recover(np.array([self.params["theta1_0"], self.params["omega1_0"]]))

    def energy(self, x: np.ndarray) -> np.ndarray:
        """Kinetic energy plus the potentials of the springs and gravity [J]; shape ``(...)``."""
        p = self.params
        q, qd = self.positions(x), self.velocities(x)
        kin = 0.5 * np.einsum("...i,ij,...j->...", qd, self.mass_matrix(qd), qd)
        x3 = q[..., _X3]
        springs = (
            0.5 * p["k"] * (x3 - p["x3_rest"]) ** 2 - 0.5 * p["k_wall"] * (p["x3_max"] - x3) ** 2
        )
        heights = sum(p[m] * q[..., i] for i, m in _Y_COORDS.items())
        return kin + springs + p["g"] * heights

    @property
    def conservative(self) -> bool:
        """No dampers, friction or inputs: the energy is an invariant."""
        keys = ("c01", "c12", "c_slide", "mu", "tau_amp", "F_amp")
        return all(self.params[k] == 0 for k in keys)

    def invariants(self, x: np.ndarray) -> dict[str, np.ndarray]:
        return {"energy": self.energy(x)} if self.conservative else {}


def _dense(
    entries: dict[tuple[int, int], Any], shape: tuple[int, ...], size: tuple[int, int]
) -> np.ndarray:
    out = np.zeros((*shape, *size))
    for (i, j), val in entries.items():
        out[..., i, j] = val
    return out


def _casadi_dense(entries: dict[tuple[int, int], Any], size: tuple[int, int]) -> Any:
    import casadi as ca

    vals = list(entries.values())
    if any(isinstance(e, ca.MX) for e in vals):
        out = ca.MX.zeros(*size)
    elif any(isinstance(e, ca.SX) for e in vals):
        out = ca.SX.zeros(*size)
    else:
        out = ca.DM.zeros(*size)
    for (i, j), val in entries.items():
        out[i, j] = val
    return out
