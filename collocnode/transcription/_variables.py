"""Node-local unknowns besides the differential states: free controls and algebraic states.

Both are decision variables at every collocation node only (on a flipped-LGR mesh those are all
nodes but each trajectory's initial point), like the controls of Radau pseudospectral methods
(Garg et al. 2010, Betts §4.5). Neither couples two nodes, so the NLP keeps its structure: per
node a small block, and a border only where the parameters p enter.

Between nodes they are reported by the degree m - 1 polynomial through an interval's m
collocation values (constant for m = 1); they are not continuous across interval boundaries.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import _validation as v

SymbolicFn = Callable[..., Any]


def per_component(name: str, value: Any, n: int, default: float) -> np.ndarray:
    """A scalar or (n,) bound/nominal as an (n,) float array; None gives ``default``."""
    if value is None:
        return np.full(n, default)
    arr = v.real_array(name, value)
    if arr.ndim > 1 or arr.size not in (1, n):
        raise ValueError(f"{name} must be a scalar or have shape ({n},), got shape {arr.shape}")
    return np.broadcast_to(arr, (n,)).copy()


def guess_at(name: str, guess: Any, t: np.ndarray, n: int) -> np.ndarray:
    """A guess at times ``t`` (n_t,), shape (n_t, n): a callable ``t -> (n_t, n)`` (its output
    checked and named ``name(t)``) or a constant (n,) repeated."""
    if callable(guess):
        out = np.asarray(guess(t), dtype=float)
        if out.shape != (t.size, n):
            raise ValueError(f"{name}(t) must return shape ({t.size}, {n}), got {out.shape}")
        return v.finite_array(f"{name}(t)", out)
    return np.tile(guess, (t.size, 1))


def _check_bounds(name: str, lb: np.ndarray, ub: np.ndarray) -> None:
    bad = np.flatnonzero(lb > ub)
    if bad.size:
        i = int(bad[0])
        raise ValueError(
            f"{name}.lb must be <= {name}.ub, got {name}.lb[{i}] = {float(lb[i])!r} > "
            f"{name}.ub[{i}] = {float(ub[i])!r}"
        )


@dataclass(frozen=True)
class _NodeVariables:
    """Shared checks and guesses of the node-local variables (``n`` per collocation node)."""

    n: int
    lb: Any = None
    ub: Any = None
    guess: Any = None
    nominal: Any = None
    names: tuple[str, ...] = ()

    _label = "variables"

    def __post_init__(self) -> None:
        name = self._label
        n = v.positive_int(f"{name}.n", self.n)
        lb = per_component(f"{name}.lb", self.lb, n, -np.inf)
        ub = per_component(f"{name}.ub", self.ub, n, np.inf)
        _check_bounds(name, lb, ub)
        object.__setattr__(self, "lb", lb)
        object.__setattr__(self, "ub", ub)
        if self.guess is not None and not callable(self.guess):
            guess = per_component(f"{name}.guess", self.guess, n, 0.0)
            object.__setattr__(self, "guess", v.finite_array(f"{name}.guess", guess))
        nominal = per_component(f"{name}.nominal", self.nominal, n, 1.0)
        nominal = v.finite_array(f"{name}.nominal", nominal)
        if np.any(nominal <= 0):
            raise ValueError(f"{name}.nominal must be positive, got {nominal}")
        object.__setattr__(self, "nominal", nominal)
        object.__setattr__(self, "names", v.names(f"{name}.names", self.names, n))

    def initial(self, t: np.ndarray) -> np.ndarray:
        """The initial guess at times ``t`` (n_t,), shape (n_t, n), inside the bounds: the given
        guess, else the middle of finite bounds, else the finite bound, else 0."""
        t = np.asarray(t, dtype=float)
        if self.guess is not None:
            out = guess_at(f"{self._label}.guess", self.guess, t, self.n)
        else:
            lo, hi = np.isfinite(self.lb), np.isfinite(self.ub)
            lb, ub = np.where(lo, self.lb, 0.0), np.where(hi, self.ub, 0.0)
            mid = np.where(lo & hi, 0.5 * (lb + ub), lb + ub)
            out = np.tile(mid, (t.size, 1))
        return np.clip(out, self.lb, self.ub)


@dataclass(frozen=True)
class Controls(_NodeVariables):
    """Free control inputs u_c(t): n decision variables at every collocation node.

    The model functions see them after the known inputs: ``u = [known inputs, controls]``.

    Args:
        n: number of controls.
        lb, ub: bounds (scalars or shape (n,)); default ±inf.
        guess: initial guess: a constant (n,), a callable ``t (n_t,) -> (n_t, n)``, or None for
            the middle of the bounds (0 where unbounded).
        nominal: typical magnitude per control (n,), default 1; the NLP works with u / nominal.
        rate_penalty: weight rho >= 0 of ``rho * Σ_k |u_{k+1} - u_k|² / (t_{k+1} - t_k)`` over
            consecutive collocation nodes of each trajectory: a discrete ``rho ∫ |u'|² dt``
            [objective units · s / control units²] that smooths bang-bang-like profiles. It is a
            constant quadratic in the unknowns, so it adds exact constant Hessian entries
            between neighbouring nodes only.
        names: labels.
    """

    rate_penalty: float = 0.0

    _label = "controls"

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(
            self, "rate_penalty", v.nonnegative_float("controls.rate_penalty", self.rate_penalty)
        )


@dataclass(frozen=True)
class AlgebraicStates(_NodeVariables):
    """Algebraic states z(t) of a semi-explicit index-1 DAE: ``0 = g(x, p, u, t, z)`` at every
    collocation node, with ``∂g/∂z`` nonsingular (otherwise the collocated system is singular).

    When a problem has algebraic states, its dynamics, path constraints and Lagrange term are
    called with them as a fifth argument: ``f(x, p, u, t, z)``.

    Args:
        fn: ``g(x, p, u, t, z) -> (n,)`` CasADi expression.
        n: number of algebraic states (and of equations).
        lb, ub, guess, nominal, names: as for [`Controls`][collocnode.Controls].
    """

    fn: SymbolicFn | None = None

    _label = "algebraic"

    def __post_init__(self) -> None:
        super().__post_init__()
        if not callable(self.fn):
            raise TypeError(f"algebraic.fn must be callable, got {self.fn!r:.80}")
