"""From the reduced Hessian of the training objective to the information and the posterior of
the fitted quantities: the noise, the objective's temperature and the prior its λ term implies.

The measurement model: every observed value of fitted column c is its model value plus
independent Gaussian noise of standard deviation σ_c, y_sc = q_c(t_s; θ) + ε_sc. The training
objective's data term for column c is (nearly) that column's negative log-likelihood times a
temperature: J_c = Σ_k w_kc r_kc² with loss weights w_kc summing to W_c over n_c observations,
so J_c ≈ (W_c / n_c) Σ_s r_sc² = T_c · ½ Σ_s r_sc² / σ_c² with

    T_c = 2 σ_c² W_c / n_c.

The information of the data about θ is therefore H_c / T_c summed over the columns, H_c the
reduced Hessian of J_c (`collocnode.training._uncertainty.linearization`): its Gauss-Newton part per
column, and with ``hessian="exact"`` the exact rest (the curvature of the model outputs and of the
collocated dynamics, weighted by the residuals) over the mean temperature T̄ (one number when every
column has the same σ_c² W_c / n_c, as when the columns are scaled by their spread and the noise is
proportional to it). The weight penalty λ‖w‖² (seed paper eq. 21a) is, at the same temperature,
a Gaussian prior w ~ N(0, τ² I) with

    τ² = T̄ / (2 λ),

so the posterior precision is information + prior precision 2λ/T̄ on the weights. Without a
given σ, σ_c is estimated from the residuals r_sc at the samples:

    σ̂_c² = RSS_c / (n_c − ν n_c / n),      ν = tr(P⁻¹ I),

ν the effective number of fitted quantities (P the posterior precision, I the information;
ν ≤ n_θ, equal to it without a prior on identifiable quantities) and n = Σ n_c.

When the loss does not weigh each column by its noise (the temperatures T_c differ: columns of
unequal noise and ``scale="none"``, say), the fit is not the maximum-likelihood estimate that
I⁻¹ describes. With r_c = T_c / T̄ the fit's own curvature is Ĩ = Σ_c r_c I_c (+ the exact
Hessian's second-order part), and the variance of its gradient under the noise is
B̃ = Σ_c r_c² I_c; the covariance is the sandwich

    C = P̃⁻¹ (B̃ + Λ/T̄) P̃⁻¹,      P̃ = Ĩ + Λ/T̄,

Λ/T̄ the prior's precision: the penalized estimator's variance under the stated noise plus the
prior's share. It is the inverse of the effective precision P̃ (B̃ + Λ/T̄)⁺ P̃, and the data-only
one is Ĩ B̃⁺ Ĩ. With equal temperatures (r_c = 1) both are P and I: the Laplace posterior above.
The sandwich is the Gauss-Newton variant's; the exact one keeps P̃, whose negative eigenvalues
mark a saddle.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ... import _validation as v
from .linearization import Linearization
from .spectrum import Spectrum

HESSIANS = ("gauss-newton", "exact")


def check_noise(noise: object, labels: list[str]) -> np.ndarray | None:
    """The noise standard deviations per fitted column (n_fit,), or None (estimate them)."""
    if noise is None:
        return None
    n = len(labels)
    if isinstance(noise, (bool, np.bool_)):
        raise TypeError(f"noise must be a number or one per fitted column ({n}), got {noise!r}")
    arr = v.finite_array("noise", noise)
    if arr.ndim == 0:
        arr = np.full(n, float(arr))
    if arr.shape != (n,):
        raise ValueError(
            f"noise must be one number or one per fitted column ({', '.join(labels)}), got "
            f"shape {arr.shape}"
        )
    if np.any(arr <= 0):
        k = int(np.flatnonzero(arr <= 0)[0])
        raise ValueError(
            f"noise must be > 0 (the standard deviation of the measurement noise), got "
            f"{float(arr[k])!r} for column {labels[k]!r}"
        )
    return arr


@dataclass(frozen=True)
class LaplaceFit:
    """The information and posterior precision of θ (both in θ), with the noise behind them.

    Attributes:
        noise: σ_c per fitted column, (n_fit,).
        estimated: whether σ was estimated from the residuals.
        temperature: T_c, (n_fit,).
        prior_std: τ of the weights' prior (None without a weight penalty).
        information: I (n_θ, n_θ).
        precision: P = I + prior precision (n_θ, n_θ).
        effective: ν, the effective number of fitted quantities.
        rss: the residual sum of squares per column, (n_fit,).
    """

    noise: np.ndarray
    estimated: bool
    temperature: np.ndarray
    prior_std: float | None
    information: np.ndarray
    precision: np.ndarray
    effective: float
    rss: np.ndarray


#: temperatures within this ratio count as equal, the loss weighing the columns by their noise:
#: the estimated σ of columns of equal noise differ by their estimation error (about 9 % at 61
#: samples), which is no weighting to correct for
EQUAL_TEMPERATURES = 1.5


def _matrices(
    lin: Linearization, sigma: np.ndarray, hessian: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    n_c = np.maximum(lin.observed, 1)
    temperature = 2.0 * sigma**2 * lin.weight_sum / n_c
    mean_t = float(temperature.mean())
    second = 0.0
    if hessian == "exact":
        # the second-order part of the objective's exact reduced Hessian, at its temperature
        second = (
            lin.objective_hessian - lin.objective_gauss_newton.sum(axis=0) - np.diag(lin.penalty)
        ) / mean_t
    prior = np.diag(lin.penalty / mean_t)
    positive = temperature[temperature > 0]
    # the exact variant keeps P̃ itself, whose negative eigenvalues mark a saddle (a warning)
    unequal = positive.size and positive.max() > EQUAL_TEMPERATURES * positive.min()
    if unequal and hessian == "gauss-newton":
        return (*_sandwich(lin, sigma, temperature / mean_t, second, prior), temperature, mean_t)
    info = np.einsum("c,cij->ij", 1.0 / sigma**2, lin.fisher) + second
    return info, info + prior, temperature, mean_t


def _sandwich(
    lin: Linearization, sigma: np.ndarray, ratio: np.ndarray, second: Any, prior: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The effective data-only information Ĩ B̃⁺ Ĩ and precision P̃ (B̃ + Λ/T̄)⁺ P̃ of a loss
    whose column weights are not the inverse noise variances (module docstring)."""
    per_column = lin.fisher / (sigma**2)[:, None, None]
    curvature = np.einsum("c,cij->ij", ratio, per_column) + second
    spread = np.einsum("c,cij->ij", ratio**2, per_column)
    precision = curvature + prior
    information = curvature @ _pinv(spread) @ curvature
    effective = precision @ _pinv(spread + prior) @ precision
    return _symmetric(information), _symmetric(effective)


def _pinv(a: np.ndarray, rcond: float = 1e-12) -> np.ndarray:
    """The pseudo-inverse of a positive semi-definite ``a`` whose entries mix units: taken of
    its diagonally scaled form, so that the cut-off is relative per quantity."""
    d = np.sqrt(np.clip(np.diag(a), 0.0, None))
    d[d == 0] = 1.0
    inv = np.linalg.pinv(a / np.outer(d, d), rcond=rcond, hermitian=True)
    return inv / np.outer(d, d)


def _symmetric(a: np.ndarray) -> np.ndarray:
    return 0.5 * (a + a.T)


def _effective(lin: Linearization, info: np.ndarray, precision: np.ndarray, rcond: float) -> float:
    T = lin.basis
    cov = Spectrum.of(T.T @ precision @ T, rcond).covariance()
    return float(np.trace(cov @ (T.T @ info @ T)))


def fit(lin: Linearization, noise: np.ndarray | None, hessian: str, rcond: float) -> LaplaceFit:
    """The Laplace fit of ``lin`` with the given noise (None: estimated; module docstring)."""
    v.choice("hessian", hessian, HESSIANS)
    if hessian == "exact" and lin.objective_hessian is None:
        raise ValueError("hessian='exact' needs a linearisation with the exact Hessian")
    rss = np.array([np.nansum(r**2, axis=0) for r in lin.residuals]).sum(axis=0)
    n_c = lin.observed.astype(float)
    estimated = noise is None
    if estimated:
        if np.any(rss <= 0):
            raise ValueError(
                "the model fits the data exactly (zero residuals), so the noise cannot be "
                "estimated from them; give it: noise=..."
            )
        sigma = np.sqrt(rss / n_c)
        info, precision, _, _ = _matrices(lin, sigma, hessian)
        nu = _effective(lin, info, precision, rcond)
        n = n_c.sum()
        dof = n_c - nu * n_c / n
        # less than half a residual degree of freedom per column leaves σ to round-off
        if np.any(dof < 0.5):
            raise ValueError(
                f"the fit has about {nu:.1f} effective parameters for {int(n)} observations, so "
                "the noise cannot be estimated from the residuals; give it: noise=..."
            )
        sigma = np.sqrt(rss / dof)
    else:
        sigma = noise
    info, precision, temperature, mean_t = _matrices(lin, sigma, hessian)
    nu = _effective(lin, info, precision, rcond)
    lam_present = bool(np.any(lin.penalty > 0))
    prior_std = float(np.sqrt(mean_t / lin.penalty.max())) if lam_present else None
    return LaplaceFit(
        noise=np.asarray(sigma, dtype=float),
        estimated=estimated,
        temperature=temperature,
        prior_std=prior_std,
        information=info,
        precision=precision,
        effective=nu,
        rss=rss,
    )
