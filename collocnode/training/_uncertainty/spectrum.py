"""Inverting an information (precision) matrix that may be singular, and saying where.

An information matrix P of fitted quantities mixes units (network weights, rate constants,
initial states), so its eigenvalues mean nothing by themselves. It is first scaled to unit
diagonal, P̃ = D^{-1/2} P D^{-1/2} with D = diag(P) (the scaled matrix is the correlation-like
form of the information; a quantity about which the data say nothing has D = 0 and is put at
scale 1). The eigen-decomposition P̃ = V diag(e) Vᵀ is unit-free: an eigenvalue e_k ≤ rcond · max(e)
(or negative, for an indefinite exact Hessian) marks a direction the data do not determine, a
non-identifiable combination of the quantities. The covariance is the pseudo-inverse over the
other directions,

    C = D^{-1/2} V₊ diag(1/e₊) V₊ᵀ D^{-1/2},

finite by construction; a quantity (or a linear function aᵀθ of them) whose scaled gradient
D^{-1/2} a lies by more than `NULL_FRACTION` of its length in the non-identifiable
directions is reported as unbounded rather than given the pseudo-inverse's finite variance.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: eigenvalues of the scaled information below rcond times the largest are non-identifiable
RCOND = 1e-10
#: a gradient with more than this fraction of its (scaled) length in non-identifiable
#: directions has an unbounded variance
NULL_FRACTION = 0.1


@dataclass(frozen=True)
class Spectrum:
    """The scaled eigen-decomposition of a symmetric information matrix (module docstring).

    Attributes:
        scale: sqrt(diag(P)) (1 where the diagonal is not positive), (n,).
        values: eigenvalues e of the scaled matrix, ascending, (n,).
        vectors: its eigenvectors (columns), (n, n).
        kept: which eigenvalues are identifiable directions, (n,) bool.
        rcond: the relative threshold used.
    """

    scale: np.ndarray
    values: np.ndarray
    vectors: np.ndarray
    kept: np.ndarray
    rcond: float

    @classmethod
    def of(cls, P: np.ndarray, rcond: float = RCOND) -> Spectrum:
        """The spectrum of P (n, n), symmetrised; finite entries required."""
        P = 0.5 * (np.asarray(P, dtype=float) + np.asarray(P, dtype=float).T)
        if P.shape[0] == 0:
            empty = np.zeros(0)
            return cls(empty, empty, np.zeros((0, 0)), np.zeros(0, dtype=bool), rcond)
        if not np.all(np.isfinite(P)):
            raise ValueError("the information matrix has NaN or Inf entries")
        d = np.diag(P).copy()
        scale = np.sqrt(np.where(d > 0, d, 1.0))
        scaled = P / scale[:, None] / scale[None, :]
        values, vectors = np.linalg.eigh(0.5 * (scaled + scaled.T))
        top = max(float(values[-1]), 0.0)
        kept = values > rcond * top if top > 0 else np.zeros(values.size, dtype=bool)
        return cls(scale, values, vectors, kept, rcond)

    @property
    def n(self) -> int:
        return self.scale.size

    @property
    def n_null(self) -> int:
        """The number of non-identifiable directions."""
        return int((~self.kept).sum())

    @property
    def negative(self) -> int:
        """The number of negative eigenvalues beyond round-off (an indefinite Hessian)."""
        top = float(np.abs(self.values).max()) if self.n else 0.0
        return int((self.values < -self.rcond * top).sum())

    def covariance(self) -> np.ndarray:
        """The pseudo-inverse over the identifiable directions, (n, n)."""
        V = self.vectors[:, self.kept] / self.scale[:, None]
        return (V / self.values[self.kept]) @ V.T

    def square_root(self) -> np.ndarray:
        """L (n, n_kept) with L Lᵀ = `covariance` (for sampling)."""
        return self.vectors[:, self.kept] / self.scale[:, None] / np.sqrt(self.values[self.kept])

    def null_fraction(self, gradients: np.ndarray) -> np.ndarray:
        """The fraction of each scaled gradient's length in the non-identifiable directions:
        ``gradients`` (..., n) -> (...,) in [0, 1] (0 for a zero gradient)."""
        g = np.asarray(gradients, dtype=float) / self.scale
        norm = np.linalg.norm(g, axis=-1)
        if not self.n_null:
            return np.zeros(norm.shape)
        null = np.linalg.norm(g @ self.vectors[:, ~self.kept], axis=-1)
        return np.divide(null, norm, out=np.zeros_like(norm), where=norm > 0)

    def bounded(self, gradients: np.ndarray) -> np.ndarray:
        """Whether the variance of each linear function with these gradients is bounded."""
        return self.null_fraction(gradients) <= NULL_FRACTION

    def null_directions(self) -> np.ndarray:
        """The non-identifiable directions in the unscaled coordinates, unit columns (n, k)."""
        V = self.vectors[:, ~self.kept] / self.scale[:, None]
        return V / np.linalg.norm(V, axis=0, keepdims=True)
