"""Rational functions of Chebyshev polynomials (Langenkamp et al. eq. 19) as a block."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import _validation as v
from ._base import Block


def chebyshev_basis(s: Any, degree: int, zeros: Any = None) -> list[Any]:
    """[T_0(s), ..., T_degree(s)] by the three-term recurrence (works for numpy and CasADi)."""
    one = 1.0 + 0.0 * s
    out = [one, s]
    for _ in range(2, degree + 1):
        out.append(2.0 * s * out[-1] - out[-2])
    return out[: degree + 1]


@dataclass(frozen=True)
class RationalChebyshev(Block):
    """F(x) = output_scale · Σ_{k=0}^{N} ω_k T_k(s) / (θ_0 + Σ_{k=1}^{D} θ_k T_k(s)),
    s = (x − input_shift) / input_scale   (paper eq. 19, one input, one output).

    The Chebyshev polynomials are meant for s ∈ [−1, 1], so the block's ``domain`` is
    ``input_shift ± input_scale``; choose the scale to cover the inputs the block will see.

    Two deviations from the paper, each with a switch; ``fixed_theta0=False,
    positive_denominator=False`` gives eq. 19 exactly (2·(N + 1) = 16 parameters per block for
    N = D = 7, the paper's 32 for the quarter vehicle's two blocks):

    * ``fixed_theta0`` (default on): θ_0 = 1. Multiplying all ω and θ by one constant leaves
      eq. 19 unchanged, so with θ_0 free the NLP has a one-dimensional family of optima and a
      singular Hessian; fixing θ_0 removes exactly that freedom (N + 1 + D parameters).
    * ``positive_denominator`` (default on): the denominator is written θ_0² + (Σ_{k=1}^{D} θ_k
      T_k(s))², a Chebyshev rational function of the same family that cannot vanish while
      θ_0 ≠ 0. With the plain θ_0 + Σ θ_k T_k the iterates of the quarter-vehicle training can
      push the denominator through zero (a pole inside the data range).

    Parameters: ``[ω_0..ω_N, θ_1..θ_D]``, or ``[ω_0..ω_N, θ_0..θ_D]`` with ``fixed_theta0=False``;
    initialised N(0, init_scale²), θ_0 at 1 + N(0, init_scale²) so the denominator starts away
    from zero.
    """

    num_degree: int = 7
    den_degree: int = 7
    input_shift: float = 0.0
    input_scale: float = 1.0
    output_scale: float = 1.0
    init_scale: float = 0.1
    positive_denominator: bool = True
    fixed_theta0: bool = True

    def __post_init__(self) -> None:
        v.nonnegative_int("num_degree", self.num_degree)
        v.nonnegative_int("den_degree", self.den_degree)
        v.finite_float("input_shift", self.input_shift)
        v.positive_float("input_scale", self.input_scale)
        if v.finite_float("output_scale", self.output_scale) == 0:
            raise ValueError("output_scale must be non-zero, got 0.0")
        v.nonnegative_float("init_scale", self.init_scale)
        for name in ("positive_denominator", "fixed_theta0"):
            if not isinstance(getattr(self, name), (bool, np.bool_)):
                raise TypeError(f"{name} must be True or False, got {getattr(self, name)!r:.60}")
        # every degree costs one weight and one term of the symbolic recurrence
        v.fits_in_memory(
            f"RationalChebyshev degrees ({self.num_degree}, {self.den_degree})",
            self.n_params,
            "weights",
        )

    n_in = 1
    n_out = 1

    @property
    def n_params(self) -> int:
        return self.num_degree + 1 + self.den_degree + (0 if self.fixed_theta0 else 1)

    @property
    def domain(self) -> tuple[float, float]:
        return (self.input_shift - self.input_scale, self.input_shift + self.input_scale)

    def _ratio(self, s: Any, w: Any) -> Any:
        n, d = self.num_degree, self.den_degree
        T = chebyshev_basis(s, max(n, d))
        num = sum(w[k] * T[k] for k in range(n + 1))
        # θ_k is w[n + k] with θ_0 free, w[n + k] for k >= 1 after the fixed θ_0 = 1 otherwise
        theta0, first = (1.0, n) if self.fixed_theta0 else (w[n + 1], n + 1)
        q = sum(w[first + k] * T[k] for k in range(1, d + 1))
        den = theta0 * theta0 + q * q if self.positive_denominator else theta0 + q
        return self.output_scale * num / den

    def casadi(self, x: Any, w: Any) -> Any:
        s = (x[0] - self.input_shift) / self.input_scale
        return self._ratio(s, w)

    def numpy(self, x: np.ndarray, w: np.ndarray) -> np.ndarray:
        w = np.asarray(w, dtype=float)
        if w.shape != (self.n_params,):
            raise ValueError(f"w must have shape ({self.n_params},), got {w.shape}")
        x = np.asarray(x, dtype=float)
        if x.ndim == 0 or x.shape[-1] != 1:
            raise ValueError(f"x must have shape (..., 1), got {x.shape}")
        s = (x[..., 0] - self.input_shift) / self.input_scale
        return self._ratio(s, w)[..., None]

    def init_weights(self, rng: np.random.Generator | int | None = None) -> np.ndarray:
        rng = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
        # θ random too: at θ = 0 the pole-free denominator 1 + q² has zero slope in θ (a saddle)
        w = self.init_scale * rng.standard_normal(self.n_params)
        if not self.fixed_theta0:
            w[self.num_degree + 1] += 1.0  # θ_0 near 1: the denominator starts away from zero
        return w

    def torch_module(
        self, weights: np.ndarray | None = None, dtype: Any = None, device: Any = None
    ) -> Any:
        from ._torch import TorchRational

        return TorchRational(self, weights=weights, dtype=dtype, device=device)
