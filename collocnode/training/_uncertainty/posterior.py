"""The Laplace posterior of the fitted quantities θ: a Gaussian N(θ̂, C) on the subspace θ may
move in, with the directions the information does not determine set apart
(`collocnode.training._uncertainty.spectrum`).

It is all a loaded model needs to draw bands for any function of its parameters (a model file
stores it, `collocnode.serialize`): the fitted values, the basis T of the subspace and the
precision in its coordinates φ (θ = θ̂ + T φ).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import casadi as ca
import numpy as np
from scipy.special import ndtri  # the normal quantile, without loading scipy.stats

from ... import _validation as v
from .bands import Band
from .quantities import KINDS
from .spectrum import RCOND, Spectrum


@dataclass(frozen=True)
class ParameterPosterior:
    """θ ~ N(θ̂, T P_φ⁺ Tᵀ) (module docstring).

    Attributes:
        names, kinds: of the entries of θ (`FittedQuantities`).
        p_index: each entry's index into p (-1 for an initial state), (n_θ,) int.
        values: θ̂, (n_θ,) physical units.
        p: the whole fitted parameter vector p̂ (entries outside θ stay at their values), (n_p,).
        basis: T, (n_θ, n_φ).
        precision: P_φ, the information (or posterior precision) in φ, (n_φ, n_φ).
        rcond: the threshold of `Spectrum`.
        label: what the precision is: "posterior" (data and the λ prior) or "data".
    """

    names: tuple[str, ...]
    kinds: tuple[str, ...]
    p_index: np.ndarray
    values: np.ndarray
    p: np.ndarray
    basis: np.ndarray
    precision: np.ndarray
    rcond: float = RCOND
    label: str = "posterior"
    spectrum: Spectrum = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        n = len(self.names)
        if len(self.kinds) != n or any(k not in KINDS for k in self.kinds):
            raise ValueError(f"kinds must give one of {KINDS} per name ({n})")
        for name, arr, shape in (
            ("p_index", self.p_index, (n,)),
            ("values", self.values, (n,)),
            ("basis", self.basis, (n, np.shape(self.basis)[-1] if np.ndim(self.basis) else 0)),
        ):
            if np.shape(arr) != shape:
                raise ValueError(f"{name} must have shape {shape}, got {np.shape(arr)}")
        k = self.basis.shape[1]
        if np.shape(self.precision) != (k, k):
            raise ValueError(
                f"precision must have shape ({k}, {k}), got {np.shape(self.precision)}"
            )
        object.__setattr__(self, "spectrum", Spectrum.of(self.precision, self.rcond))

    # ---- the distribution ----------------------------------------------------------------------
    @property
    def n(self) -> int:
        return len(self.names)

    def covariance(self) -> np.ndarray:
        """C = T P_φ⁺ Tᵀ, (n_θ, n_θ) (finite; see `bounded` for where it is not the
        whole story)."""
        return self.basis @ self.spectrum.covariance() @ self.basis.T

    def _reduced(self, gradients: np.ndarray) -> np.ndarray:
        """θ-gradients (..., n_θ) in the coordinates φ, Tᵀa; exactly 0 where a lies along the
        normals of the active constraints (a quantity the constraints fix, such as a block's
        value where a block constraint holds it) up to round-off."""
        a = np.asarray(gradients, dtype=float)
        reduced = a @ self.basis
        largest = float(np.abs(self.basis).max()) if self.basis.size else 1.0
        size = np.linalg.norm(a, axis=-1, keepdims=True) * max(1.0, largest)
        return np.where(
            np.linalg.norm(reduced, axis=-1, keepdims=True) <= 1e-10 * size, 0.0, reduced
        )

    def bounded(self, gradients: np.ndarray) -> np.ndarray:
        """Whether the variance of linear functions with these θ-gradients (..., n_θ) is
        bounded (they do not move along a non-identifiable direction)."""
        return self.spectrum.bounded(self._reduced(gradients))

    def variance(self, gradients: np.ndarray) -> np.ndarray:
        """Var(aᵀθ) for θ-gradients a (..., n_θ): (...,), inf where unbounded."""
        a = self._reduced(gradients)
        root = self.spectrum.square_root()
        var = np.sum((a @ root) ** 2, axis=-1)
        return np.where(self.spectrum.bounded(a), var, np.inf)

    def std(self) -> np.ndarray:
        """Standard deviation of every entry of θ, (n_θ,), inf where not identifiable."""
        return np.sqrt(self.variance(np.eye(self.n)))

    def index(self, name: str) -> int:
        if name not in self.names:
            shown = [n for n, k in zip(self.names, self.kinds, strict=True) if k != "weight"]
            raise ValueError(
                f"unknown fitted quantity {name!r}; physical parameters and initial states: "
                f"{', '.join(shown) or 'none'} (block weights are named like 'block[3]')"
            )
        return self.names.index(name)

    def sample(self, n: int, seed: int | None = None) -> np.ndarray:
        """``n`` draws of θ, (n, n_θ) (the non-identifiable directions are not sampled)."""
        n = v.positive_int("samples", n)
        rng = np.random.default_rng(v.optional_seed("seed", seed))
        root = self.basis @ self.spectrum.square_root()
        return self.values + rng.standard_normal((n, root.shape[1])) @ root.T

    def parameter_vectors(self, theta: np.ndarray) -> np.ndarray:
        """Parameter vectors p (n, n_p) of draws θ (n, n_θ): p̂ with the θ entries replaced."""
        theta = np.atleast_2d(theta)
        P = np.tile(self.p, (theta.shape[0], 1))
        cols = np.flatnonzero(self.p_index >= 0)
        P[:, self.p_index[cols]] = theta[:, cols]
        return P

    def p_gradient(self, jacobian_p: np.ndarray) -> np.ndarray:
        """θ-gradients (..., n_θ) of functions whose p-gradients are ``jacobian_p`` (..., n_p)
        (initial states: 0)."""
        jp = np.asarray(jacobian_p, dtype=float)
        out = np.zeros((*jp.shape[:-1], self.n))
        cols = np.flatnonzero(self.p_index >= 0)
        out[..., cols] = jp[..., self.p_index[cols]]
        return out

    # ---- bands of functions of the parameters -------------------------------------------------
    def band_of(
        self,
        fn: Callable[[Any], Any],
        x: np.ndarray,
        level: float = 0.95,
        method: str = "delta",
        samples: int = 500,
        seed: int | None = 0,
    ) -> Band:
        """The band of ``fn(p)`` for a CasADi function of the parameter vector.

        Args:
            fn: ``fn(p: casadi.SX (n_p, 1)) -> (m, 1)`` expression (one value per point of
                ``x``), e.g. a block evaluated on a grid.
            x: the points the m values belong to (for the record and plots), (m,) or (m, d).
            level: the band's probability (0 < level < 1).
            method: "delta" (linearised: value ± z σ, σ² = gᵀ C g) or "sampling" (quantiles of
                fn over draws from the posterior).
            samples, seed: the draws of "sampling".
        """
        level = _level(level)
        v.choice("method", method, ("delta", "sampling"))
        p = ca.SX.sym("p", self.p.size)
        expr = ca.vec(fn(p))
        values = ca.Function("band_values", [p], [expr])
        jacobian = ca.Function("band_jacobian", [p], [ca.jacobian(expr, p)])
        value = np.asarray(values(self.p)).ravel()
        x = np.asarray(x, dtype=float)
        if x.shape[0] != value.size:
            raise ValueError(f"x has {x.shape[0]} points, fn gives {value.size} values")
        gradients = self.p_gradient(np.asarray(jacobian(self.p)))
        if method == "delta":
            return delta_band(x, value, gradients, self, level)
        draws = self.parameter_vectors(self.sample(samples, seed))
        sampled = np.asarray(values.map(draws.shape[0])(draws.T)).T
        return sampled_band(x, value, sampled, level, self.bounded(gradients))

    def block_band(
        self,
        model: Any,
        block: str,
        inputs: np.ndarray,
        output: int = 0,
        level: float = 0.95,
        method: str = "delta",
        samples: int = 500,
        seed: int | None = 0,
    ) -> Band:
        """The band of one output of a block of ``model`` over ``inputs`` (m,) or (m, n_in)
        (e.g. the quarter vehicle's friction over a range of Δv)."""
        if block not in model.blocks:
            raise ValueError(f"unknown block {block!r}; blocks: {', '.join(model.blocks)}")
        b = model.blocks[block]
        X = np.asarray(inputs, dtype=float)
        X = X[:, None] if X.ndim == 1 else X
        if X.ndim != 2 or X.shape[1] != b.n_in:
            raise ValueError(f"inputs must have shape (m, {b.n_in}), got {np.shape(inputs)}")
        v.finite_array("inputs", X)
        if not 0 <= int(output) < b.n_out:
            raise ValueError(f"output must be in [0, {b.n_out}), got {output!r}")
        level = _level(level)
        v.choice("method", method, ("delta", "sampling"))
        s = model.slices[block]
        # the block and its Jacobian in its own weights, mapped over the points (the weights
        # shared): numbers, not a symbolic Jacobian of all points in all of p
        xs, ws = ca.SX.sym("x", b.n_in), ca.SX.sym("w", b.n_params)
        y = b.casadi(xs, ws)[int(output)]
        fn = ca.Function("block_band", [xs, ws], [y, ca.jacobian(y, ws)])
        m = X.shape[0]
        value, jac = fn.map("block_band_map", "serial", m, [1], [])(X.T, self.p[s])
        value = np.asarray(value).ravel()
        jac_p = np.zeros((m, self.p.size))
        jac_p[:, s] = np.asarray(jac).reshape(m, b.n_params)
        gradients = self.p_gradient(jac_p)
        x = X[:, 0] if b.n_in == 1 else X
        if method == "delta":
            return delta_band(x, value, gradients, self, level)
        draws = self.parameter_vectors(self.sample(samples, seed))
        sampled = np.stack([b.numpy(X, w)[:, int(output)] for w in draws[:, s]])
        return sampled_band(x, value, sampled, level, self.bounded(gradients))


def _level(level: float) -> float:
    level = v.finite_float("level", level)
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level!r}")
    return level


def delta_band(
    x: np.ndarray, value: np.ndarray, gradients: np.ndarray, post: ParameterPosterior, level: float
) -> Band:
    """value ± z σ with σ² = gᵀ C g for θ-gradients g (m, n_θ); unbounded points get ±inf."""
    z = float(ndtri(0.5 + 0.5 * level))
    var = post.variance(gradients)
    std = np.sqrt(var)
    return Band(
        x=x,
        value=value,
        lower=value - z * std,
        upper=value + z * std,
        std=std,
        level=level,
        method="delta",
        bounded=np.isfinite(var),
    )


def sampled_band(
    x: np.ndarray,
    value: np.ndarray,
    draws: np.ndarray,
    level: float,
    bounded: np.ndarray | None = None,
    failed: int = 0,
) -> Band:
    """Quantiles of ``draws`` (n, m) around the fitted ``value`` (m,); ±inf where not
    ``bounded`` (the draws do not explore the non-identifiable directions)."""
    bounded = np.ones(value.shape, dtype=bool) if bounded is None else np.asarray(bounded)
    if draws.shape[0] == 0:
        raise ValueError("no draw could be evaluated (all re-simulations failed)")
    lo, hi = np.quantile(draws, [0.5 - 0.5 * level, 0.5 + 0.5 * level], axis=0)
    std = draws.std(axis=0, ddof=1) if draws.shape[0] > 1 else np.zeros(value.shape)
    return Band(
        x=x,
        value=value,
        lower=np.where(bounded, lo, -np.inf),
        upper=np.where(bounded, hi, np.inf),
        std=np.where(bounded, std, np.inf),
        level=level,
        method="sampling",
        bounded=bounded,
        samples=int(draws.shape[0]),
        failed=failed,
    )
