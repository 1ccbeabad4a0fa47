"""Derivative estimates from samples: FFT spectral differentiation, finite differences, a hybrid.

FNODE (Wang, Wang & Negrut) trains on acceleration labels obtained by differentiating the sampled
velocities once (FNODE §2.3). Everything here takes the samples of the *training window only*: the
reference code differentiated the concatenated train+test trajectory with a global FFT and then
cut the result, so test data leaked into the training labels. These functions cannot leak
because they never see more than they are given.

Arrays: ``y`` has shape ``(n,)`` or ``(n, k)`` (``k`` signals sampled at a uniform step ``dt``
[s]); every function returns ``dy/dt`` with the same shape, in units of ``y`` per second.
"""

from __future__ import annotations

import numpy as np

from .. import _validation as v

METHODS = ("hybrid", "fft", "fd")


def _as_columns(y: object) -> tuple[np.ndarray, bool]:
    arr = v.finite_array("y", y)
    if arr.ndim not in (1, 2):
        raise ValueError(f"y must have shape (n,) or (n, k), got {arr.shape}")
    if arr.shape[0] < 3:
        raise ValueError(f"y must hold at least 3 samples to differentiate, got {arr.shape[0]}")
    return (arr[:, None], True) if arr.ndim == 1 else (arr, False)


def fd_derivative(y: object, dt: float) -> np.ndarray:
    """Three-point central differences inside, one-sided first-order differences at the two
    ends (FNODE §2.3.2): O(dt²) inside, O(dt) at the ends."""
    z, flat = _as_columns(y)
    dt = v.positive_float("dt", dt)
    d = np.empty_like(z)
    d[1:-1] = (z[2:] - z[:-2]) / (2.0 * dt)
    d[0] = (z[1] - z[0]) / dt
    d[-1] = (z[-1] - z[-2]) / dt
    return d[:, 0] if flat else d


def _tukey(length: int, alpha: float) -> np.ndarray:
    """FNODE eq. 20 on ``length`` samples (equal to ``scipy.signal.windows.tukey``)."""
    if alpha <= 0.0:
        return np.ones(length)
    n = np.arange(length, dtype=float)
    width = alpha * (length - 1) / 2.0
    w = np.ones(length)
    lo = n < width
    hi = n > (length - 1) - width
    w[lo] = 0.5 * (1.0 + np.cos(np.pi * (width - n[lo]) / width))
    w[hi] = 0.5 * (1.0 + np.cos(np.pi * (n[hi] - (length - 1 - width)) / width))
    return w


def fft_derivative(
    y: object,
    dt: float,
    extension: float = 0.25,
    tukey_alpha: float = 0.2,
    sigma: float | None = None,
    reflection: str = "even",
) -> np.ndarray:
    """Spectral derivative with the FNODE preprocessing (FNODE eqs. 16–22).

    Per signal: least-squares linear detrend (eqs. 16–17); mirror reflection about each end,
    excluding the end sample, over ``M = extension * n`` samples with a raised-cosine taper that
    falls to zero away from the data (eq. 19); a Tukey window with ``tukey_alpha`` over the
    extended signal (eq. 20); FFT, multiplication by ``j ω_k`` and by the Gaussian low-pass
    ``exp(-(k / σ)² / 2)`` with ``σ = n / 20`` in frequency-index units (eqs. 21–22b); inverse FFT
    (eq. 22c), crop to the data, add back the trend slope. The Nyquist bin of an even-length
    transform is zeroed: its derivative is not representable as a real signal.

    ``reflection="even"`` is eq. 19 as printed (``z_d(-t)``); it leaves a kink at each end of the
    data, whose Gibbs ringing the Gaussian filter only spreads out. ``"odd"`` reflects through
    the end point (``2 z_d(0) - z_d(-t)``), which keeps the first derivative continuous and is
    far more accurate on clean data (measured in ``docs/pytorch_methods.md``). ``sigma=inf``
    switches the Gaussian filter off.
    """
    z, flat = _as_columns(y)
    dt = v.positive_float("dt", dt)
    extension = v.nonnegative_float("extension", extension)
    tukey_alpha = v.nonnegative_float("tukey_alpha", tukey_alpha)
    if tukey_alpha > 1.0:
        raise ValueError(f"tukey_alpha must be in [0, 1], got {tukey_alpha}")
    n = z.shape[0]
    if sigma is None:
        sig = max(1.0, n / 20.0)
    elif isinstance(sigma, float) and sigma == np.inf:
        sig = np.inf
    else:
        sig = v.positive_float("sigma", sigma)
    v.choice("reflection", reflection, ("even", "odd"))

    tt = np.arange(n, dtype=float)
    A = np.stack([np.ones(n), tt], axis=1)
    coef, *_ = np.linalg.lstsq(A, z, rcond=None)  # (2, k): intercept, slope per sample
    zd = z - A @ coef

    m = min(int(extension * n), n - 1)
    if m > 0:
        # τ rises from 0 at the far end of each mirror to 1 next to the data
        tau = 0.5 * (1.0 - np.cos(np.pi * np.arange(m, dtype=float) / m))[:, None]
        left = zd[m:0:-1]  # zd[m], ..., zd[1] become samples -m, ..., -1
        right = zd[-2 : -m - 2 : -1]  # zd[n-2], ..., zd[n-1-m] become samples n, ..., n-1+m
        if reflection == "odd":
            left, right = 2.0 * zd[:1] - left, 2.0 * zd[-1:] - right
        left, right = tau * left, tau[::-1] * right
        ze = np.concatenate([left, zd, right], axis=0)
    else:
        ze = zd
    length = ze.shape[0]
    ze = ze * _tukey(length, tukey_alpha)[:, None]

    spec = np.fft.fft(ze, axis=0)
    k = np.fft.fftfreq(length, d=1.0 / length)  # signed integer frequency index
    omega = 2.0 * np.pi * k / (length * dt)
    gain = 1j * omega * (np.exp(-0.5 * (k / sig) ** 2) if np.isfinite(sig) else 1.0)
    if length % 2 == 0:
        gain[length // 2] = 0.0
    d = np.real(np.fft.ifft(spec * gain[:, None], axis=0))[m : m + n]
    d = d + coef[1] / dt
    return d[:, 0] if flat else d


def hybrid_derivative(
    y: object, dt: float, edge_fraction: float = 0.02, blend: int | None = None, **fft_kw: float
) -> np.ndarray:
    """FFT inside, finite differences in the first and last ``edge_fraction`` of the samples,
    joined by a raised-cosine blend of ``blend`` samples (FNODE §2.3: "FFT where its assumptions
    hold, FD at the trajectory boundaries")."""
    z, flat = _as_columns(y)
    edge_fraction = v.nonnegative_float("edge_fraction", edge_fraction)
    if edge_fraction >= 0.5:
        raise ValueError(f"edge_fraction must be < 0.5, got {edge_fraction}")
    n = z.shape[0]
    edge = max(1, round(edge_fraction * n))
    width = max(1, min(10, edge // 2)) if blend is None else v.positive_int("blend", blend)
    if 2 * (edge + width) > n:
        return fd_derivative(y, dt)
    spectral = fft_derivative(z, dt, **fft_kw)
    finite = fd_derivative(z, dt)
    # weight of the FD estimate: 1 on the edges, cosine ramp to 0 over `width` samples
    w = np.zeros(n)
    w[:edge] = 1.0
    ramp = 0.5 * (1.0 + np.cos(np.pi * (np.arange(1, width + 1) / (width + 1))))
    w[edge : edge + width] = ramp
    w = np.maximum(w, w[::-1])
    d = w[:, None] * finite + (1.0 - w[:, None]) * spectral
    return d[:, 0] if flat else d


def derivative(y: object, dt: float, method: str = "hybrid", **kw: float) -> np.ndarray:
    """``dy/dt`` by ``method`` ("hybrid", "fft" or "fd")."""
    v.choice("target method", method, METHODS)
    if method == "fd":
        return fd_derivative(y, dt)
    if method == "fft":
        return fft_derivative(y, dt, **kw)
    return hybrid_derivative(y, dt, **kw)


def uniform_step(t: object, rtol: float = 1e-6) -> float:
    """The common step of a uniform grid ``t`` [s]; a ValueError if the grid is not uniform."""
    t = v.increasing("t", t)
    if t.size < 2:
        raise ValueError("t must hold at least 2 samples to have a step")
    d = np.diff(t)
    h = float(np.mean(d))
    if np.max(np.abs(d - h)) > rtol * h:
        raise ValueError(
            f"t must be uniformly sampled for spectral targets; steps range over "
            f"[{d.min():.6g}, {d.max():.6g}] s"
        )
    return h
