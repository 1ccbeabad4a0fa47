"""Quarter-vehicle model (QVM) of Kamp, Ultsch & Brembeck (ICINCO 2023), used by Langenkamp et al.

State order as the collocation paper (§4.1): x = [z_b, z_w, v_b, v_w, z_r] (body and wheel heights,
their velocities, road height) [m, m, m/s, m/s, m]; input u = ż_r (road velocity) [m/s]; outputs
y = [a_b, a_w] (body and wheel accelerations) [m/s²]. (The paper text lists y as [a_w, a_b]; we keep
the order b, w of the states.) Heights are deviations from static equilibrium, so there is no
gravity term and x0 = 0; the state z_r is therefore the road height relative to its value at t = 0.

With Δz_s = z_w − z_b, Δv_s = v_w − v_b, Δz_t = z_r − z_w, Δv_t = u − v_w:

    linear base model (eq. 14):
        a_b = (c_s Δz_s + d_s Δv_s) / m_b
        a_w = (c_t Δz_t + d_t Δv_t − c_s Δz_s − d_s Δv_s) / m_w
    data-generating model (eq. 15): the same plus F_pr(Δz_s) + F_fr(Δv_s) between the masses,
        a_b = (c_s Δz_s + d_s Δv_s + F_pr + F_fr) / m_b
        a_w = (c_t Δz_t + d_t Δv_t − c_s Δz_s − d_s Δv_s − F_pr − F_fr) / m_w

Parameters (presets):

* ``"kamp2023"`` (default): m_b = 350 kg, m_w = 90 kg, c_s = 1e4 N/m, d_s = 800 N s/m,
  c_t = 3e5 N/m (DLR's public eFMI model; the 2023 paper prints none) and d_t = 100 N s/m
  (an assumption: the 2023 paper has a tire damper but gives no value). Friction and spring are
  least-squares fits of the paper's Fig. 2 reference curves (0.2 N and 0.3 N RMS):
  F_brk = 40 N, F_C = 30 N, v_brk = 0.02 m/s, d_lin = 150 N s/m; F_pr = 1000 Δz + 490 000 Δz²
  (Δz ≥ 0), 1000 Δz + 250 000 Δz² (Δz < 0) [N, m].
* ``"efmi2025"``: DLR's 2025 eFMI re-implementation: F_brk = 45 N, F_C = 35 N, no tire damper
  (d_t = 0), and the spring f = 250 000 s² + 15 000 s of the extension s = −Δz_s, which acts on
  the body as F_pr = 15 000 Δz_s − 250 000 Δz_s².

``model="nonlinear"`` (default) generates data with eq. 15; ``model="linear"`` is eq. 14.

Roads and data. The training road is `ISO8608Road.paper_calibrated` class "D" (seed 0):
V = 10 m/s, Gd(n0 = 0.1 cycles/m) = 64e-6 m³, n ∈ [0.011, 2.83] cycles/m, 420 m — the
angular-convention class D value read in cycles, *calibrated to the paper's Fig. 2 input
statistics*. With a true class D road (1024e-6 m³, seed 0) the nonlinear model blows up at t ≈ 1.2 s
(the progressive spring's total stiffness turns negative below Δz_s ≈ −22 mm); the linear model
reaches σ(Δz_s) = 23 mm there. The unseen test road is the class "C" counterpart in the same
convention (16e-6 m³) with seed 1. `generate` samples 42 s at 1000 Hz from x0 = 0 and adds
Gaussian noise with σ = 2 % of each signal's standard deviation to all states and both outputs
(10 % for the paper's ×5 robustness case); the input u is known exactly.

Measured (noise-free, DOP853 at rtol 1e-10; ``QuarterVehicle().input_statistics()``), against the
paper's Fig. 2 values σ(Δv_s) = 0.139 m/s and σ(Δz_s) = 5.77 mm (ratio 24.1 s⁻¹):

=====================  ===========  ===========  ========================  =======  =======
data                   σ(Δz_s)      σ(Δv_s)      Δz_s range                |z_b|    |a_b|
=====================  ===========  ===========  ========================  =======  =======
kamp2023, train road   4.95 mm      0.123 m/s    [−16.0, 15.5] mm          39 mm    1.6 m/s²
  seeds 0-5            4.98±0.04    0.1235±2e-4  min −19.9, max 15.6 mm
  same, d_t = 0        5.03±0.03    0.1291±3e-4
efmi2025, train road   4.88 mm      0.127 m/s    [−15.3, 15.5] mm          37 mm    1.7 m/s²
linear, train road     5.83 mm      0.145 m/s    [−17.9, 20.0] mm          42 mm    1.4 m/s²
kamp2023, test road    2.27 mm      0.057 m/s    [−7.4, 7.2] mm            15 mm    0.7 m/s²
=====================  ===========  ===========  ========================  =======  =======

So the calibrated road gives σ about 11-14 % below the paper's (ratio σ(Δv_s)/σ(Δz_s) = 24.9 s⁻¹
against 24.1), with deterministic-amplitude synthesis the figures hardly depend on the seed, and the
model stays bounded with Δz_s well inside the region of positive stiffness. The ground truth is
accurate to ~1e-7 of each state's range (checked against rtol 1e-13; the friction's tanh(Δv/2 mm/s)
limits it) and a 42 s trajectory takes about 7 s on one core. The true model's trajectories are
kept in memory (the last four) and, where one took more than a second, in the on-disk cache
(`collocnode.tools._cache`), so a later run on the same road reads them instead.
"""

from __future__ import annotations

import math
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import scipy
from scipy.integrate import solve_ivp

from .. import _validation as v
from .._data import Trajectory
from ..tools import _cache as cache
from . import _road as road_module
from ._base import Split, System
from ._road import ISO8608Road

MODELS = ("nonlinear", "linear")
# noise σ as a fraction of each signal's σ: the paper gives no level; its Fig. 3b loss floors
# suggest about 2 % (and 10 % for the robustness test)
NOISE_BASELINE = 0.02
NOISE_ROBUST = 5 * NOISE_BASELINE  # the paper's "increased by a factor of five"
OUTPUT_NAMES = ("a_b", "a_w")

ForceFn = Callable[[np.ndarray], np.ndarray]
# DLR's public eFMI model (Controllers/LinearQVM); the 2023 paper prints no values
_MASSES_AND_SPRINGS = {"m_b": 350.0, "m_w": 90.0, "c_s": 1e4, "d_s": 800.0, "c_t": 3e5}


def _friction_coefficients(p: dict[str, float]) -> tuple[float, float, float, float, float]:
    """(sqrt(2e)(F_brk − F_C), 1/v_St, F_C, 1/v_C, d_lin) with v_St = v_brk/√2, v_C = v_brk/10."""
    return (
        math.sqrt(2.0 * math.e) * (p["F_brk"] - p["F_C"]),
        math.sqrt(2.0) / p["v_brk"],
        p["F_C"],
        10.0 / p["v_brk"],
        p["d_lin"],
    )


def _friction(dv: Any, coef: tuple[float, ...], exp: Callable, tanh: Callable) -> Any:
    """Stribeck + Coulomb + viscous friction [N] of the suspension speed dv [m/s] (DLR form).

    F = sqrt(2e) (F_brk − F_C) exp(−(dv/v_St)²) dv/v_St + F_C tanh(dv/v_C) + d_lin dv with
    v_St = v_brk/√2 and v_C = v_brk/10. The Stribeck bump peaks at dv = v_brk/2 with height
    F_brk − F_C. Written with backend functions so numpy, CasADi and plain floats share it.
    """
    stribeck, inv_v_st, f_c, inv_v_c, d_lin = coef
    r = dv * inv_v_st
    return stribeck * exp(-r * r) * r + f_c * tanh(dv * inv_v_c) + d_lin * dv


class QuarterVehicle(System):
    """The quarter-vehicle benchmark (Langenkamp et al. §4.1, eqs. 14-15); see the module docstring.

    Args:
        preset: ``"kamp2023"`` (default) or ``"efmi2025"``.
        model: ``"nonlinear"`` (eq. 15, default) or ``"linear"`` (eq. 14).
        road: training road (default: paper-calibrated class "D", seed 0).
        test_road: unseen road (default: class "C" of the training road's convention, seed + 1;
            for a road given by an explicit ``gd`` that is ``gd / 4``, one class smoother).
        **overrides: parameter values (see ``PRESETS``).

    Shapes: states ``(..., 5)``, input ``(..., 1)`` or scalar, outputs ``(..., 2)``.
    """

    name = "qvm"
    state_names = ("z_b", "z_w", "v_b", "v_w", "z_r")
    input_names = ("dz_r",)
    output_names = OUTPUT_NAMES
    dt = 1e-3
    n_steps = 42_001  # 42 s at 1000 Hz, both ends included
    n_train = 42_001  # the whole training road; the test data is the second road

    PRESETS = {
        "kamp2023": {
            **_MASSES_AND_SPRINGS,
            "d_t": 100.0,
            "F_brk": 40.0,
            "F_C": 30.0,
            "v_brk": 0.02,
            "d_lin": 150.0,
            "k_pr": 1000.0,
            "k_pr_pos": 490_000.0,
            "k_pr_neg": 250_000.0,
        },
        "efmi2025": {
            **_MASSES_AND_SPRINGS,
            "d_t": 0.0,
            "F_brk": 45.0,
            "F_C": 35.0,
            "v_brk": 0.02,
            "d_lin": 150.0,
            "k_pr": 15_000.0,
            "k_pr_pos": -250_000.0,
            "k_pr_neg": -250_000.0,
        },
    }
    POSITIVE = ("m_b", "m_w", "c_s", "d_s", "c_t", "v_brk")
    NONNEGATIVE = ("d_t", "F_brk", "F_C", "d_lin")  # d_t = 0 in the efmi2025 preset

    def __init__(
        self,
        preset: str | None = None,
        model: str = "nonlinear",
        road: ISO8608Road | None = None,
        test_road: ISO8608Road | None = None,
        **overrides: float,
    ) -> None:
        super().__init__(preset, **overrides)  # also checks POSITIVE and NONNEGATIVE
        self.model = v.choice("model", model, MODELS)
        for name, value in (("road", road), ("test_road", test_road)):
            if value is not None and not isinstance(value, ISO8608Road):
                raise TypeError(f"{name} must be an ISO8608Road, got {type(value).__name__}")
        self.road = ISO8608Road.paper_calibrated("D", seed=0) if road is None else road
        self.test_road = _class_c_counterpart(self.road) if test_road is None else test_road

    # --- the two non-linear force elements --------------------------------------------------------
    def friction(self, dv: np.ndarray | float) -> np.ndarray:
        """F_fr(Δv_s) [N], Stribeck + Coulomb + viscous (DLR's form); dv [m/s], any shape."""
        return _friction(
            np.asarray(dv, dtype=float), _friction_coefficients(self.params), np.exp, np.tanh
        )

    def casadi_friction(self, dv: Any) -> Any:
        """F_fr with CasADi symbols (SX/MX/DM); smooth (C∞)."""
        import casadi as ca

        return _friction(dv, _friction_coefficients(self.params), ca.exp, ca.tanh)

    def spring(self, dz: np.ndarray | float, smoothing: float = 0.0) -> np.ndarray:
        """F_pr(Δz_s) [N], the progressive spring; dz [m], any shape.

        F = k_pr Δz + k_± Δz² with k_+ = k_pr_pos for Δz ≥ 0 and k_- = k_pr_neg below. The
        piecewise quadratic is C¹ only (its curvature jumps at 0): fine for data generation with an
        explicit integrator. ``smoothing`` = ε > 0 blends the two curvatures with tanh(Δz/ε),
        which is C∞ and deviates from the exact spring by at most 0.121 |k_+ − k_-| ε² (for IPOPT).
        """
        dz = np.asarray(dz, dtype=float)
        eps = v.nonnegative_float("smoothing", smoothing)
        p = self.params
        if eps == 0.0:
            k2 = np.where(dz >= 0.0, p["k_pr_pos"], p["k_pr_neg"])
        else:
            k2 = _blend(p, np.tanh(dz / eps))
        return p["k_pr"] * dz + k2 * dz * dz

    def casadi_spring(self, dz: Any, smoothing: float = 0.0) -> Any:
        """F_pr with CasADi symbols; ``if_else`` (C¹) unless ``smoothing`` > 0 (C∞)."""
        import casadi as ca

        eps = v.nonnegative_float("smoothing", smoothing)
        p = self.params
        if eps == 0.0:
            k2 = ca.if_else(dz >= 0, p["k_pr_pos"], p["k_pr_neg"])
        else:
            k2 = _blend(p, ca.tanh(dz / eps))
        return p["k_pr"] * dz + k2 * dz * dz

    # --- dynamics ---------------------------------------------------------------------------------
    @staticmethod
    def relative_motion(x: Any) -> tuple[Any, Any]:
        """(Δz_s, Δv_s) = (z_w − z_b, v_w − v_b), the inputs of the two force elements.

        ``x``: a CasADi column of 5 entries, or a numpy array ``(..., 5)``.
        """
        if isinstance(x, np.ndarray) or isinstance(x, list | tuple):
            x = np.asarray(x, dtype=float)
            return x[..., 1] - x[..., 0], x[..., 3] - x[..., 2]
        return x[1] - x[0], x[3] - x[2]

    def _terms(self, x: tuple[Any, ...], u: Any, f_fr: Any, f_pr: Any) -> tuple[Any, ...]:
        """Eq. 15 written once in plain arithmetic: numpy arrays and CasADi symbols share it."""
        p = self.params
        z_b, z_w, v_b, v_w, z_r = x
        suspension = p["c_s"] * (z_w - z_b) + p["d_s"] * (v_w - v_b) + f_pr + f_fr
        tire = p["c_t"] * (z_r - z_w) + p["d_t"] * (u - v_w)
        a_b = suspension / p["m_b"]
        a_w = (tire - suspension) / p["m_w"]
        return v_b, v_w, a_b, a_w, u

    def physics_rhs(self, x: Any, u: Any, F_fr: Any, F_pr: Any) -> tuple[Any, Any]:
        """Hybrid-physics right-hand side in CasADi: (x', y) of eq. 15 with given force values.

        The two force values are arguments, so a collocation model plugs in network blocks
        (F_fr = NN_d(Δv_s), F_pr = NN_c(Δz_s)); pass 0 for the linear model (eq. 14).

        Args:
            x: states, a 5×1 SX/MX/DM column [z_b, z_w, v_b, v_w, z_r].
            u: road velocity ż_r (scalar symbol) [m/s].
            F_fr, F_pr: friction and progressive-spring forces [N] (scalar symbols or numbers).

        Returns:
            x' (5×1) and y = [a_b, a_w] (2×1), of the type of ``x``.
        """
        import casadi as ca

        terms = self._terms(tuple(x[i] for i in range(5)), u, F_fr, F_pr)
        return ca.vertcat(*terms), ca.vertcat(terms[2], terms[3])

    def physics_rhs_np(
        self,
        x: np.ndarray,
        u: np.ndarray | float,
        F_fr: np.ndarray | float,
        F_pr: np.ndarray | float,
    ) -> tuple[np.ndarray, np.ndarray]:
        """numpy twin of `physics_rhs`: x ``(..., 5)``, u/F_fr/F_pr broadcastable to
        ``(...)``; returns x' ``(..., 5)`` and y ``(..., 2)``."""
        x = np.asarray(x, dtype=float)
        u = np.asarray(u, dtype=float)
        if u.ndim == x.ndim and u.shape[-1:] == (1,):
            u = u[..., 0]
        terms = self._terms(tuple(x[..., i] for i in range(5)), u, F_fr, F_pr)
        terms = np.broadcast_arrays(*terms)
        return np.stack(terms, axis=-1), np.stack(terms[2:4], axis=-1)

    def _forces(
        self, x: np.ndarray, friction: ForceFn | None = None, spring: ForceFn | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        dz, dv = self.relative_motion(x)
        if friction is None and spring is None and self.model == "linear":
            return np.zeros_like(dv), np.zeros_like(dz)
        f_fr = (self.friction if friction is None else friction)(dv)
        f_pr = (self.spring if spring is None else spring)(dz)
        return np.asarray(f_fr, dtype=float), np.asarray(f_pr, dtype=float)

    def rhs(self, t: float, x: np.ndarray, u: np.ndarray | float | None = None) -> np.ndarray:
        """x' of the selected model; u defaults to the training road's ż_r(t)."""
        x = np.asarray(x, dtype=float)
        u = self.inputs(t) if u is None else u
        return self.physics_rhs_np(x, u, *self._forces(x))[0]

    def outputs(self, x: np.ndarray, u: np.ndarray | float) -> np.ndarray:
        """y = [a_b, a_w] [m/s²] of the selected model at states ``(..., 5)``: ``(..., 2)``."""
        x = np.asarray(x, dtype=float)
        return self.physics_rhs_np(x, u, *self._forces(x))[1]

    def casadi_rhs(self, x: Any, u: Any, t: Any = None) -> Any:
        """x' of the selected model with CasADi symbols (the true forces, exact C¹ spring)."""
        if u is None:
            raise ValueError("u (the road velocity) is required by the quarter vehicle")
        dz, dv = self.relative_motion(x)
        if self.model == "linear":
            return self.physics_rhs(x, u, 0, 0)[0]
        return self.physics_rhs(x, u, self.casadi_friction(dv), self.casadi_spring(dz))[0]

    def inputs(self, t: np.ndarray | float) -> np.ndarray:
        """ż_r of the training road at t [s]: shape ``(1,)`` for scalar t, ``(len(t), 1)``."""
        return self.road.velocity(np.asarray(t, dtype=float))[..., None]

    @property
    def x0(self) -> np.ndarray:
        return np.zeros(5)

    # --- ground truth and data --------------------------------------------------------------------
    def simulate(
        self,
        t: np.ndarray,
        x0: np.ndarray | None = None,
        rtol: float = 1e-10,
        atol: float = 1e-12,
        method: str = "DOP853",
        inputs: Callable[[float], np.ndarray] | None = None,
        use_exact: bool = True,
        *,
        road: ISO8608Road | None = None,
        friction: ForceFn | None = None,
        spring: ForceFn | None = None,
    ) -> Trajectory:
        """Noise-free trajectory on the grid ``t`` driven by ``road`` (default: the training road).

        ``friction`` / ``spring`` replace the force elements (callables of Δv_s resp. Δz_s [m/s,
        m] returning N, vectorised over arrays); this is how a trained hybrid model is re-simulated
        on the unseen road: ``qvm.simulate(t, road=qvm.test_road, friction=nn_d, spring=nn_c)``.
        With neither given, the selected model's own forces are used (none for "linear").

        Returns a Trajectory with x ``(n, 5)``, u = ż_r ``(n, 1)`` and y = [a_b, a_w] ``(n, 2)``.
        ``t`` must lie inside the road's horizon [0, length/speed].

        ``inputs`` (a callable t -> ż_r of shape ``(1,)``, as in `System.simulate`) drives
        the model with any road velocity instead of a road (slower: one Python call per stage).
        There is no closed form, so ``use_exact`` has no effect.
        """
        t = v.increasing("t", t)
        x0 = self.x0 if x0 is None else v.finite_array("x0", x0, shape=(5,))
        v.positive_float("rtol", rtol)
        v.positive_float("atol", atol)
        road, road_velocity = self._drive(t, inputs, road)
        # the true model on one of its roads is asked for again and again (data, evaluation,
        # figures): keep the last few trajectories of it
        key = None
        if inputs is None and friction is None and spring is None:
            key = (
                self.model,
                tuple(sorted(self.params.items())),
                road,
                t.tobytes(),
                x0.tobytes(),
                rtol,
                atol,
                method,
            )
            if key in _TRUTHS:
                _TRUTHS.move_to_end(key)
                return _copy(_TRUTHS[key])
        if key is None:
            x = self._integrate(t, x0, road_velocity, friction, spring, rtol, atol, method)
        else:
            x = _stored_truth(
                key,
                t.size,
                lambda: self._integrate(t, x0, road_velocity, None, None, rtol, atol, method),
            )
        u = road_velocity.evaluate(t)[:, None]
        y = self.physics_rhs_np(x, u, *self._forces(x, friction, spring))[1]
        traj = Trajectory(
            t=t,
            x=x,
            u=u,
            y=y,
            state_names=self.state_names,
            input_names=self.input_names,
            output_names=self.output_names,
            params=dict(self.params),
        )
        if key is not None:
            _TRUTHS[key] = _copy(traj)
            while len(_TRUTHS) > _TRUTHS_KEPT:
                _TRUTHS.popitem(last=False)
        return traj

    def _drive(
        self,
        t: np.ndarray,
        inputs: Callable[[float], np.ndarray] | None,
        road: ISO8608Road | None,
    ) -> tuple[ISO8608Road | None, Any]:
        """What drives `simulate`: the road (the training road by default; None with
        ``inputs``) and the road velocity ż_r, a scalar callable of t with ``evaluate`` on
        arrays."""
        if inputs is not None:
            if road is not None:
                raise ValueError("give road or inputs, not both")
            if not callable(inputs):
                raise TypeError(f"inputs must be a callable t -> u, got {inputs!r}")
            return None, _CallableInput(inputs)
        road = self.road if road is None else road
        if not isinstance(road, ISO8608Road):
            raise TypeError(f"road must be an ISO8608Road, got {type(road).__name__}")
        road.check_times(t, "t")
        return road, road.scalar_evaluator(derivative=1, t_max=float(t[-1]))

    def _integrate(
        self,
        t: np.ndarray,
        x0: np.ndarray,
        road_velocity: Any,
        friction: ForceFn | None,
        spring: ForceFn | None,
        rtol: float,
        atol: float,
        method: str,
    ) -> np.ndarray:
        """The states on ``t`` from ``x0`` under ``road_velocity`` (``solve_ivp``), (n, 5);
        an error where the integration fails or diverges."""
        if t.size == 1:
            x = x0[None, :]
        else:
            sol = solve_ivp(
                self._fast_rhs(road_velocity, friction, spring),
                (t[0], t[-1]),
                x0,
                method=method,
                t_eval=t,
                rtol=rtol,
                atol=atol,
            )
            if not sol.success or sol.y.shape[1] != t.size:
                raise RuntimeError(
                    f"simulation of {self.name} failed at t = {sol.t[-1]:.4g} s ({sol.message}); "
                    "a road too rough for the nonlinear model (true ISO class D at 10 m/s) "
                    "makes it blow up"
                )
            x = sol.y.T
        if not np.all(np.isfinite(x)):
            raise RuntimeError(f"{self.name} simulation diverged on this road")
        return x

    def _fast_rhs(
        self,
        road_velocity: Callable[[float], float],
        friction: ForceFn | None,
        spring: ForceFn | None,
    ) -> Callable[[float, np.ndarray], np.ndarray]:
        # solve_ivp calls this ~5·10⁵ times for 42 s: the road velocity comes from its scalar
        # evaluator (equal to the harmonic sum to round-off, ~8x cheaper than one sine per
        # harmonic), the rest is scalar arithmetic without per-call validation
        p = self.params
        m_b, m_w, c_s, d_s, c_t, d_t = (p[k] for k in ("m_b", "m_w", "c_s", "d_s", "c_t", "d_t"))
        linear = self.model == "linear" and friction is None and spring is None
        k_lin, k_pos, k_neg = p["k_pr"], p["k_pr_pos"], p["k_pr_neg"]
        fric = _friction_coefficients(p)

        def true_friction(dv: float) -> float:
            return _friction(dv, fric, math.exp, math.tanh)

        def true_spring(dz: float) -> float:
            return k_lin * dz + (k_pos if dz >= 0.0 else k_neg) * dz * dz

        f_fr = true_friction if friction is None else _as_scalar(friction)
        f_pr = true_spring if spring is None else _as_scalar(spring)

        def f(t: float, x: np.ndarray) -> np.ndarray:
            u = road_velocity(t)
            z_b, z_w, v_b, v_w, z_r = x
            dz, dv = z_w - z_b, v_w - v_b
            susp = c_s * dz + d_s * dv
            if not linear:
                susp += f_fr(dv) + f_pr(dz)
            a_w = (c_t * (z_r - z_w) + d_t * (u - v_w) - susp) / m_w
            return np.array([v_b, v_w, susp / m_b, a_w, u])

        return f

    def generate(
        self,
        noise: float = NOISE_BASELINE,
        seed: int | None = 0,
        n_steps: int | None = None,
        n_train: int | None = None,
        dt: float | None = None,
        x0: np.ndarray | None = None,
        duration: float | None = None,
    ) -> Split:
        """Training data on the training road and test data on the unseen road.

        Args:
            noise: noise σ as a *fraction of each signal's standard deviation* (not an absolute
                σ as in `System.generate`); added to all states and both outputs, never to
                the input u. 0.02 by default, `NOISE_ROBUST` = 0.10 for the ×5 case.
            seed: noise seed (the roads carry their own phase seeds).
            n_steps, dt: sampling grid t = k dt, k < n_steps (default 42 001 samples at 1 ms);
                it must stay inside both roads' horizons.
            duration: horizon [s] instead of ``n_steps`` (n_steps = duration/dt + 1); with both
                given, the grid must cover [0, duration].
            n_train: keep only the first ``n_train`` samples for training (default: all).
            x0: initial state (default 0).

        Returns:
            ``Split(train, test, full)``: ``train`` the (noisy) training-road trajectory
            (x ``(n_train, 5)``, u = ż_r ``(n_train, 1)``, y = [a_b, a_w] ``(n_train, 2)``),
            ``test`` the (noisy) trajectory on the unseen test road over the same grid, and
            ``full`` the whole training-road trajectory (= ``train`` unless ``n_train`` < n_steps).
            Noise-free references come from `simulate`.
        """
        noise = v.nonnegative_float("noise", noise)
        if duration is not None:
            duration = v.positive_float("duration", duration)
            step = v.positive_float("dt", self.dt if dt is None else dt)
            needed = int(np.floor(duration / step * (1 + 1e-12))) + 1
            if n_steps is None:
                n_steps = needed
            elif v.positive_int("n_steps", n_steps) < needed:
                raise ValueError(
                    f"n_steps = {n_steps} samples at dt = {step:g} s cover "
                    f"{(n_steps - 1) * step:g} s, less than duration = {duration:g} s"
                )
        t = self.time_grid(n_steps, dt)
        n_tr = v.positive_int("n_train", t.size if n_train is None else n_train)
        if n_tr > t.size:
            raise ValueError(f"n_train must be <= n_steps = {t.size}, got {n_tr}")
        for name, road in (("road", self.road), ("test_road", self.test_road)):
            if t[-1] > road.horizon * (1 + 1e-12):
                raise ValueError(
                    f"sampling to t = {t[-1]:g} s does not fit the {name}: it covers "
                    f"[0, {road.horizon:g}] s ({road.length:g} m at {road.speed:g} m/s)"
                )
        rng_train, rng_test = np.random.default_rng(seed).spawn(2)
        full = _add_noise(self.simulate(t, x0, road=self.road), noise, rng_train)
        test = _add_noise(self.simulate(t, x0, road=self.test_road), noise, rng_test)
        train = full if n_tr == t.size else full.head(n_tr)
        return Split(train=train, test=test, full=full)

    def input_statistics(self, road: ISO8608Road | None = None) -> dict[str, float]:
        """Statistics of the force-element inputs over the default sampling (42 s), noise-free.

        The check against the paper's Fig. 2.

        Returns σ and range of Δz_s [m] and Δv_s [m/s] and the maxima of |z_b| [m], |a_b|, |a_w|
        [m/s²]. The paper's training data has σ(Δv_s) ≈ 0.139 m/s and σ(Δz_s) ≈ 5.77 mm.
        """
        road = self.road if road is None else road
        traj = self.simulate(self.time_grid(min(self.n_steps, _n_fit(road, self.dt))), road=road)
        dz, dv = self.relative_motion(traj.x)
        return {
            "std_dz_s": float(np.std(dz)),
            "std_dv_s": float(np.std(dv)),
            "min_dz_s": float(dz.min()),
            "max_dz_s": float(dz.max()),
            "max_abs_z_b": float(np.abs(traj.x[:, 0]).max()),
            "max_abs_a_b": float(np.abs(traj.y[:, 0]).max()),
            "max_abs_a_w": float(np.abs(traj.y[:, 1]).max()),
        }

    def __repr__(self) -> str:
        return super().__repr__()[:-1] + f", model={self.model!r})"


#: the true model's last simulations on a road, by everything that decides them
_TRUTHS: OrderedDict[tuple, Trajectory] = OrderedDict()
_TRUTHS_KEPT = 4


#: a truth whose integration takes longer than this [s] is kept in the on-disk cache
_TRUTH_STORED_AFTER_S = 1.0
#: its folder there
_TRUTHS_KIND = "qvm-truths"


def _stored_truth(key: tuple, n: int, integrate: Callable[[], np.ndarray]) -> np.ndarray:
    """The ``(n, 5)`` states of the true model's simulation decided by ``key``: from the
    on-disk cache (`collocnode.tools._cache`) when an earlier run kept them, else
    ``integrate()``, kept there when it took longer than `_TRUTH_STORED_AFTER_S`. The file's
    key also carries the source of this module and of the road's and the versions of scipy and
    numpy, so that a change to any of them integrates anew."""
    sources = [Path(__file__).read_bytes(), Path(road_module.__file__).read_bytes()]
    disk_key = cache.key_of(*key, *sources, scipy.__version__, np.__version__)
    stored = cache.load_arrays(_TRUTHS_KIND, disk_key)
    if stored is not None and stored.get("x", np.empty(0)).shape == (n, 5):
        return stored["x"]
    started = time.perf_counter()
    x = integrate()
    if time.perf_counter() - started > _TRUTH_STORED_AFTER_S:
        cache.store_arrays(_TRUTHS_KIND, disk_key, {"x": x})
    return x


def _copy(traj: Trajectory) -> Trajectory:
    """``traj`` with its own arrays (a cached trajectory is never handed out itself)."""
    return replace(
        traj,
        **{
            name: getattr(traj, name).copy()
            for name in ("t", "x", "u", "y")
            if getattr(traj, name) is not None
        },
    )


def _blend(p: dict[str, float], s: Any) -> Any:
    """Curvature k_- ... k_+ as s = tanh(Δz/ε) goes from −1 to 1."""
    return 0.5 * (p["k_pr_pos"] + p["k_pr_neg"]) + 0.5 * (p["k_pr_pos"] - p["k_pr_neg"]) * s


def _class_c_counterpart(road: ISO8608Road) -> ISO8608Road:
    """The unseen test road: class C in the training road's convention, next seed."""
    if road.road_class is not None:
        return replace(road, road_class="C", seed=road.seed + 1)
    # an explicit Gd (e.g. the paper-calibrated "D") goes one class smoother: D -> C is Gd/4
    return replace(road, gd=float(road.gd) / 4.0, seed=road.seed + 1)  # type: ignore[arg-type]


class _CallableInput:
    """A user's input signal t -> u (shape (1,)) with the interface of PiecewiseChebyshev."""

    def __init__(self, fn: Callable[[float], np.ndarray]) -> None:
        self.fn = fn

    def __call__(self, t: float) -> float:
        return float(np.asarray(self.fn(t), dtype=float).reshape(-1)[0])

    def evaluate(self, t: np.ndarray) -> np.ndarray:
        return np.array([self(float(s)) for s in t])


def _as_scalar(fn: ForceFn) -> Callable[[float], float]:
    return lambda s: float(np.asarray(fn(np.asarray(s))).reshape(()))


def _n_fit(road: ISO8608Road, dt: float) -> int:
    """Samples at spacing ``dt`` that fit into the road's horizon."""
    return int(np.floor(road.horizon / dt * (1 + 1e-12))) + 1


def _add_noise(traj: Trajectory, level: float, rng: np.random.Generator) -> Trajectory:
    """Gaussian noise with σ = level × std of each state and output column (not the input)."""
    if level == 0.0:
        return traj
    noisy = {}
    for name in ("x", "y"):
        arr = getattr(traj, name)
        sigma = level * np.std(arr, axis=0)
        noisy[name] = arr + rng.standard_normal(arr.shape) * sigma
    return replace(traj, **noisy)
