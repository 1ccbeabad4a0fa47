"""ISO 8608 random road profiles by harmonic superposition.

The displacement power spectral density (PSD) of ISO 8608 is a power law

    Gd(n) = Gd(n0) · (n / n0)^(−w),    n0 = 0.1 cycles/m,  w = 2,

with the road classes A-H spaced by factors of 4 in Gd(n0) (class geometric means
A = 16e-6, B = 64e-6, C = 256e-6, D = 1024e-6 m³, ...). A profile with this PSD is synthesised
as a sum of cosines with deterministic amplitudes and random phases (Múčka 2018; Agostinacchio,
Ciampa & Olita 2014):

    z(x) = Σ_i sqrt(2 Gd(n_i) Δn) cos(2π n_i x + φ_i),    φ_i ~ U(0, 2π),

and a vehicle driving at constant speed V sees z_r(t) = z(V t). Because the sum is explicit, z_r and
its exact derivative ż_r(t) = −Σ_i A_i 2π n_i V sin(2π n_i V t + φ_i) can be evaluated at any time,
which the collocation side needs (its nodes are not on the sample grid).

Two conventions are in use and are easily mixed up:

* ``"cycles"``: spatial frequency n in cycles/m, reference n0 = 0.1 cycles/m, Gd in m³
  (m² per cycle/m). Class C = 256e-6, D = 1024e-6.
* ``"angular"``: angular spatial frequency Ω = 2π n in rad/m, reference Ω0 = 1 rad/m, Gd in m³/rad.
  Class C = 16e-6, D = 64e-6.

Both describe the same roads: Gd_n(n) dn = Gd_Ω(Ω) dΩ gives Gd_n(n) = 2π Gd_Ω(2π n), so with
w = 2, Gd_n(n0) = 2π Gd_Ω(Ω0) (2π n0 / Ω0)^(−2) = (50/π) Gd_Ω(Ω0) ≈ 15.9 Gd_Ω(Ω0). (The class
tables round this factor to 16.) Plugging an angular value into the cycles formula with
n0 = 0.1 cycles/m, a common slip in public code, gives a road two classes smoother.

The default road, `ISO8608Road.paper_calibrated`, is *calibrated to the paper's Fig. 2 input
statistics* (Kamp et al. 2023, the quarter-vehicle benchmark): V = 10 m/s and Gd(n0) = 64e-6 m³
at n0 = 0.1 cycles/m over n ∈ [0.011, 2.83] cycles/m on 420 m of road (42 s). That is the number
ISO 8608 gives for class "D" in the angular convention, read in the cycles convention, i.e. in
truth a class B road. Of the readings tried it is the one that comes close to the paper's
σ(Δz_s), σ(Δv_s) and their ratio; true class D at 10 m/s makes the nonlinear quarter vehicle blow
up. See ``qvm.py`` for the measured statistics.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from .. import _validation as v

ROAD_CLASSES = "ABCDEFGH"
CONVENTIONS = ("cycles", "angular")
N0 = 0.1  # reference spatial frequency of the cycles convention [cycles/m]
OMEGA0 = 1.0  # reference angular spatial frequency of the angular convention [rad/m]
_GD_A_CYCLES = 16e-6  # class A, Gd(n0) [m³], cycles convention
_GD_A_ANGULAR = 1e-6  # class A, Gd(Ω0) [m³/rad], angular convention
PAPER_CALIBRATED_GD = 64e-6  # Gd(n0) [m³] read in the cycles convention; see the module docstring
_CHEB_DEGREE = 16  # of the piecewise Chebyshev re-expansion in ISO8608Road.scalar_evaluator
_MAX_TABLE_ENTRIES = 2_000_000  # bound on (times × harmonics) evaluated at once (16 MB)


def class_gd(road_class: str, convention: str = "cycles") -> float:
    """The ISO 8608 geometric-mean Gd at the reference frequency of ``convention`` for a class.

    Args:
        road_class: one letter "A" ... "H".
        convention: ``"cycles"`` (Gd(n0 = 0.1 cycles/m) in m³) or ``"angular"``
            (Gd(Ω0 = 1 rad/m) in m³/rad).

    Returns:
        Gd [m³ or m³/rad]; 4× per class, e.g. C: 256e-6 (cycles) / 16e-6 (angular).
    """
    v.choice("road_class", road_class, ROAD_CLASSES)
    v.choice("convention", convention, CONVENTIONS)
    base = _GD_A_CYCLES if convention == "cycles" else _GD_A_ANGULAR
    return base * 4.0 ** ROAD_CLASSES.index(road_class)


def angular_to_cycles(gd_angular: float, waviness: float = 2.0) -> float:
    """Gd(n0 = 0.1 cycles/m) [m³] of the road whose angular PSD has Gd(Ω0 = 1 rad/m) = gd_angular.

    From Gd_n(n) = 2π Gd_Ω(2π n) and the power law: Gd_n(n0) = 2π Gd_Ω(Ω0) (2π n0/Ω0)^(−w).
    """
    gd = v.positive_float("gd_angular", gd_angular)
    w = v.positive_float("waviness", waviness)
    return 2.0 * np.pi * gd * (2.0 * np.pi * N0 / OMEGA0) ** (-w)


def cycles_to_angular(gd_cycles: float, waviness: float = 2.0) -> float:
    """Inverse of `angular_to_cycles`: Gd(Ω0 = 1 rad/m) [m³/rad] from Gd(n0) [m³]."""
    gd = v.positive_float("gd_cycles", gd_cycles)
    return gd / angular_to_cycles(1.0, waviness)


@dataclass(frozen=True)
class ISO8608Road:
    """One ISO 8608 road profile, driven at constant speed.

    Give either ``road_class`` (its geometric-mean Gd in ``convention``) or an explicit ``gd`` at
    the reference frequency of ``convention``; with neither, ``gd`` defaults to the paper-calibrated
    64e-6 m³ in the cycles convention (see the module docstring and `paper_calibrated`).

    Attributes:
        road_class: ISO class letter "A" ... "H", or None.
        gd: explicit Gd at the reference frequency [m³ (cycles) or m³/rad (angular)], or None.
        convention: ``"cycles"`` (n0 = 0.1 cycles/m) or ``"angular"`` (Ω0 = 1 rad/m); states how
            ``road_class`` / ``gd`` are to be read. The band and spacing are always in cycles/m.
        speed: vehicle speed V [m/s], > 0.
        length: road length [m]; the profile is defined for x ∈ [0, length], i.e. for
            t ∈ [0, length / speed] (`horizon`).
        n_min, n_max: synthesised band [cycles/m] (ISO 8608: 0.011 ... 2.83).
        spacing: harmonic spacing Δn [cycles/m]; None means 1/length, the fundamental of the road.
            Harmonics sit at the multiples k Δn inside [n_min, n_max], so with the default spacing
            the profile is exactly periodic in ``length`` and its periodogram over one period
            equals Gd(n_k) at every harmonic.
        waviness: PSD exponent w (ISO 8608: 2).
        seed: seed of the phases φ_i ~ U(0, 2π).
    """

    road_class: str | None = None
    gd: float | None = None
    convention: str = "cycles"
    speed: float = 10.0
    length: float = 420.0
    n_min: float = 0.011
    n_max: float = 2.83
    spacing: float | None = None
    waviness: float = 2.0
    seed: int = 0

    def __post_init__(self) -> None:
        v.choice("convention", self.convention, CONVENTIONS)
        if self.road_class is not None:
            v.choice("road_class", self.road_class, ROAD_CLASSES)
            if self.gd is not None:
                raise ValueError(
                    f"give road_class or gd, not both (got road_class={self.road_class!r}, "
                    f"gd={self.gd!r})"
                )
        elif self.gd is not None:
            object.__setattr__(self, "gd", v.positive_float("gd", self.gd))
        elif self.convention == "cycles":
            object.__setattr__(self, "gd", PAPER_CALIBRATED_GD)
        else:
            raise ValueError(
                "give road_class or gd with convention='angular' (the default gd is a value "
                "in the cycles convention)"
            )
        for name in ("speed", "length", "n_min", "n_max", "waviness"):
            object.__setattr__(self, name, v.positive_float(name, getattr(self, name)))
        if self.n_max <= self.n_min:
            raise ValueError(f"n_max must be > n_min = {self.n_min}, got {self.n_max}")
        if self.spacing is not None:
            object.__setattr__(self, "spacing", v.positive_float("spacing", self.spacing))
        object.__setattr__(self, "seed", v.nonnegative_int("seed", self.seed))
        if self.n_harmonics < 1:
            raise ValueError(
                f"spacing = {self.delta_n} cycles/m leaves no harmonic inside "
                f"[n_min, n_max] = [{self.n_min}, {self.n_max}] cycles/m"
            )

    @classmethod
    def paper_calibrated(cls, road_class: str = "D", **kwargs: object) -> ISO8608Road:
        """The road "calibrated to the paper's Fig. 2 input statistics" (Kamp et al. 2023).

        Gd(n0 = 0.1 cycles/m) is set to the *angular-convention* class value (D: 64e-6 m³,
        C: 16e-6 m³) and read in the cycles convention, at V = 10 m/s over 420 m unless
        ``kwargs`` say otherwise. Class "D" here is in truth ISO class B, class "C" is class A;
        of the readings tried, this one comes closest to the paper's quarter-vehicle data (see
        the module docstring). Other fields (``seed``, ``speed``, ...) pass through ``kwargs``.
        """
        gd = class_gd(road_class, "angular")
        return cls(gd=gd, convention="cycles", **kwargs)  # type: ignore[arg-type]

    # --- spectrum --------------------------------------------------------------------------------
    @property
    def gd_n0(self) -> float:
        """Gd(n0 = 0.1 cycles/m) in the cycles convention [m³], whatever the input convention."""
        if self.road_class is not None:
            gd = class_gd(self.road_class, self.convention)
        else:
            gd = float(self.gd)  # type: ignore[arg-type]  # set by __post_init__
        return gd if self.convention == "cycles" else angular_to_cycles(gd, self.waviness)

    def psd(self, n: np.ndarray | float) -> np.ndarray:
        """One-sided displacement PSD Gd(n) [m³] at spatial frequency n [cycles/m] (n > 0)."""
        n = np.asarray(n, dtype=float)
        return self.gd_n0 * (n / N0) ** (-self.waviness)

    def psd_angular(self, omega: np.ndarray | float) -> np.ndarray:
        """The same PSD in the angular convention, Gd_Ω(Ω) = Gd_n(Ω/2π)/2π [m³/rad], Ω in rad/m."""
        omega = np.asarray(omega, dtype=float)
        return self.psd(omega / (2.0 * np.pi)) / (2.0 * np.pi)

    @property
    def delta_n(self) -> float:
        """Harmonic spacing Δn [cycles/m]."""
        return 1.0 / self.length if self.spacing is None else self.spacing

    @property
    def n_harmonics(self) -> int:
        k_lo, k_hi = self._k_range
        return max(0, k_hi - k_lo + 1)

    @property
    def _k_range(self) -> tuple[int, int]:
        dn = self.delta_n
        # a relative tolerance keeps band edges that sit on the grid up to round-off
        k_lo = int(np.ceil(self.n_min / dn * (1 - 1e-12)))
        k_hi = int(np.floor(self.n_max / dn * (1 + 1e-12)))
        return max(k_lo, 1), k_hi

    @cached_property
    def _harmonics(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        k_lo, k_hi = self._k_range
        n = self.delta_n * np.arange(k_lo, k_hi + 1)
        amplitude = np.sqrt(2.0 * self.psd(n) * self.delta_n)
        phase = np.random.default_rng(self.seed).uniform(0.0, 2.0 * np.pi, n.size)
        for arr in (n, amplitude, phase):
            arr.setflags(write=False)
        return n, amplitude, phase

    @property
    def frequencies(self) -> np.ndarray:
        """Spatial frequencies n_i [cycles/m], shape ``(n_harmonics,)``."""
        return self._harmonics[0]

    @property
    def amplitudes(self) -> np.ndarray:
        """Cosine amplitudes A_i = sqrt(2 Gd(n_i) Δn) [m], shape ``(n_harmonics,)``."""
        return self._harmonics[1]

    @property
    def phases(self) -> np.ndarray:
        """Phases φ_i [rad], shape ``(n_harmonics,)``."""
        return self._harmonics[2]

    @property
    def omegas(self) -> np.ndarray:
        """Temporal angular frequencies ω_i = 2π n_i V [rad/s], shape ``(n_harmonics,)``."""
        return 2.0 * np.pi * self.speed * self.frequencies

    @property
    def std(self) -> float:
        """Standard deviation of z over one period, sqrt(Σ A_i²/2) [m] (exact for the sum)."""
        return float(np.sqrt(0.5 * np.sum(self.amplitudes**2)))

    @property
    def velocity_std(self) -> float:
        """Standard deviation of ż_r over one period, sqrt(Σ (A_i ω_i)²/2) [m/s]."""
        return float(np.sqrt(0.5 * np.sum((self.amplitudes * self.omegas) ** 2)))

    # --- evaluation ------------------------------------------------------------------------------
    @property
    def horizon(self) -> float:
        """The time the road lasts, length / speed [s]."""
        return self.length / self.speed

    def check_times(self, t: np.ndarray | float, name: str = "t") -> np.ndarray:
        """``t`` as a finite float array inside [0, `horizon`], or a ValueError naming it."""
        t = v.finite_array(name, t)
        if t.size:
            lo, hi = float(t.min()), float(t.max())
            tol = 1e-9 * max(1.0, self.horizon)
            if lo < -tol or hi > self.horizon + tol:
                bad = lo if lo < -tol else hi
                raise ValueError(
                    f"{name} = {bad!r} s lies outside the road horizon [0, {self.horizon:g}] s "
                    f"(length {self.length:g} m at speed {self.speed:g} m/s)"
                )
        return t

    def profile(self, x: np.ndarray | float) -> np.ndarray:
        """Elevation z(x) [m] at road positions x [m] (any shape; returns the same shape)."""
        x = np.asarray(x, dtype=float)
        return self._sum(x / self.speed, derivative=0) if x.size else np.zeros(x.shape)

    def elevation(self, t: np.ndarray | float) -> np.ndarray:
        """Road height z_r(t) = z(V t) [m] at times t [s] in [0, horizon]; same shape as t."""
        return self._sum(self.check_times(t), derivative=0)

    def velocity(self, t: np.ndarray | float) -> np.ndarray:
        """Exact road velocity ż_r(t) [m/s] at times t [s] in [0, horizon]; same shape as t."""
        return self._sum(self.check_times(t), derivative=1)

    def scalar_evaluator(
        self, derivative: int = 1, t_max: float | None = None
    ) -> PiecewiseChebyshev:
        """A fast evaluator of z_r(t) (``derivative=0``) or ż_r(t) (``derivative=1``) on
        [0, t_max] (default: the whole `horizon`; the set-up cost scales with t_max).

        For ODE right-hand sides, which ask for one time at a time ~10⁵ times: the harmonic sum is
        re-expanded, exactly by the Jacobi-Anger identity
        e^(i a s) = Σ_k ε_k i^k J_k(a) T_k(s) (ε_0 = 1, ε_k = 2), into Chebyshev series of degree
        16 on pieces of half-width ≤ 1/ω_max. The truncated tail is below J_17(1) ≈ 2e-20 of the
        amplitude sum, so it agrees with `elevation` / `velocity` to round-off
        (~1e-13 relative), at a few µs per scalar call instead of one sine per harmonic.
        """
        from scipy.special import jv

        d = v.choice("derivative", str(derivative), ("0", "1"))
        span = self.horizon if t_max is None else float(self.check_times(t_max, "t_max"))
        span = max(span, 1e-3 * self.horizon)
        n, amp, phase = self._harmonics
        omega = 2.0 * np.pi * self.speed * n
        pieces = max(1, int(np.ceil(span * float(omega.max()) / 2.0)))
        half = span / (2.0 * pieces)
        centers = (2.0 * np.arange(pieces) + 1.0) * half
        k = np.arange(_CHEB_DEGREE + 1)
        eps = np.where(k == 0, 1.0, 2.0)
        weight = amp if d == "0" else -amp * omega  # z = Σ A cos(.), ż = Σ −Aω sin(.)
        bessel = weight[:, None] * eps * jv(k[None, :], omega[:, None] * half)
        rotated = np.exp(1j * (np.multiply.outer(centers, omega) + phase)) @ (bessel * 1j**k)
        # cos(θ + a s) = Re[e^(iθ) e^(i a s)], sin(θ + a s) = Im[...]
        return PiecewiseChebyshev(half, rotated.real if d == "0" else rotated.imag)

    def _sum(self, t: np.ndarray, derivative: int) -> np.ndarray:
        n, amp, phase = self._harmonics
        omega = 2.0 * np.pi * self.speed * n
        if derivative == 0:
            weight, trig = amp, np.cos
        else:
            weight, trig = -amp * omega, np.sin
        flat = t.reshape(-1)
        out = np.empty(flat.size)
        # the (times × harmonics) table is built in chunks so 42 s at 1 kHz stays a few MB
        rows = max(1, _MAX_TABLE_ENTRIES // omega.size)
        for start in range(0, flat.size, rows):
            chunk = flat[start : start + rows]
            out[start : start + rows] = trig(np.multiply.outer(chunk, omega) + phase) @ weight
        return out.reshape(t.shape)


class PiecewiseChebyshev:
    """Chebyshev series on equal pieces [2 j h, 2 (j + 1) h] of a time axis starting at 0.

    ``coef`` has shape ``(pieces, degree + 1)``. Times outside the covered span are extrapolated
    from the first/last piece (no bounds check: this sits inside ODE right-hand sides).
    """

    def __init__(self, half_width: float, coef: np.ndarray) -> None:
        self.half_width = float(half_width)
        self.coef = np.ascontiguousarray(coef, dtype=float)
        self._rows = self.coef.tolist()  # Python floats: the scalar Clenshaw loop is ~3x faster
        self._last = self.coef.shape[0] - 1

    def __call__(self, t: float) -> float:
        """Value at one time t [s] (Clenshaw recurrence)."""
        h = self.half_width
        j = min(max(int(t / (2.0 * h)), 0), self._last)
        s2 = 2.0 * (t / h - (2 * j + 1))
        c = self._rows[j]
        b1 = b2 = 0.0
        for ck in c[:0:-1]:
            b1, b2 = ck + s2 * b1 - b2, b1
        return c[0] + 0.5 * s2 * b1 - b2

    def evaluate(self, t: np.ndarray) -> np.ndarray:
        """Values at an array of times (any shape)."""
        t = np.asarray(t, dtype=float)
        h = self.half_width
        j = np.clip((t / (2.0 * h)).astype(int), 0, self._last)
        s2 = 2.0 * (t / h - (2 * j + 1))
        c = self.coef[j]
        b1 = np.zeros(t.shape)
        b2 = np.zeros(t.shape)
        for k in range(c.shape[-1] - 1, 0, -1):
            b1, b2 = c[..., k] + s2 * b1 - b2, b1
        return c[..., 0] + 0.5 * s2 * b1 - b2
