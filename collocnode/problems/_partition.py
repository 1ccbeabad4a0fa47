"""Generalized coordinate partitioning for holonomic constraints Φ(q) = 0 (Wehage & Haug).

The coordinates ``q`` (length ``n``) of a mechanism with ``m`` independent holonomic constraints
split into ``k = n − m`` *independent* coordinates ``q_i`` and ``m`` *dependent* ones ``q_d``.
Given ``q_i`` (e.g. integrated by a learned ODE in minimal coordinates, as FNODE §1/Alg. 2 and
MBD-NODE eq. 21 do), the dependent positions solve ``Φ(q) = 0`` (Newton), the dependent
velocities solve ``Φ_q q' = 0`` and the dependent accelerations solve ``Φ_q q'' = γ``; all three
need the dependent block ``Φ_{q_d}`` to be non-singular, which `check_partition` verifies.

Every function works on one configuration (``q`` of shape ``(n,)``) and on batches
(``(..., n)``). ``phi`` and ``phi_q`` are callables that accept such batches and return shapes
``(..., m)`` and ``(..., m, n)``.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable, Sequence

import numpy as np

from .. import _validation as v

ArrayFn = Callable[[np.ndarray], np.ndarray]


class NewtonConvergenceError(RuntimeError):
    """Newton's method on Φ(q) = 0 did not reach the tolerance."""


def split_indices(n_coords: int, independent: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """Validated ``(independent, dependent)`` index arrays of ``n_coords`` coordinates
    (read-only; cached, since the trainers call the recovery once per step)."""
    n = v.positive_int("n_coords", n_coords)
    try:
        key = tuple(operator.index(i) for i in independent)
    except TypeError:
        raise TypeError(f"independent must be a sequence of ints, got {independent!r}") from None
    return _split(n, key)


@functools.lru_cache(maxsize=64)
def _split(n: int, ind: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    if not ind:
        raise ValueError("independent must name at least one coordinate, got ()")
    if any(i < 0 or i >= n for i in ind):
        raise ValueError(f"independent must hold indices in [0, {n}), got {list(ind)}")
    if len(set(ind)) != len(ind):
        raise ValueError(f"independent must not repeat an index, got {list(ind)}")
    if len(ind) >= n:
        raise ValueError(f"independent must leave dependent coordinates, got all {n} of them")
    mask = np.ones(n, dtype=bool)
    mask[list(ind)] = False
    out = np.array(ind, dtype=int), np.flatnonzero(mask)
    for arr in out:
        arr.flags.writeable = False
    return out


def _dependent_block(
    phi_q_val: np.ndarray, dep: np.ndarray, independent: Sequence[int]
) -> np.ndarray:
    if phi_q_val.shape[-2] != dep.size:
        raise ValueError(
            f"independent = {list(independent)} leaves {dep.size} dependent coordinates for "
            f"{phi_q_val.shape[-2]} constraints; they must be equal"
        )
    return phi_q_val[..., :, dep]


def check_partition(
    phi_q: ArrayFn, q: np.ndarray, independent: Sequence[int], max_cond: float = 1e10
) -> np.ndarray:
    """Condition numbers of the dependent Jacobian ``Φ_{q_d}`` at ``q`` (shape ``(...)``).

    Raises ValueError naming ``independent`` if the block is not square or, at any of the given
    configurations, singular (condition number above ``max_cond``).
    """
    q = v.finite_array("q", q)
    _, dep = split_indices(q.shape[-1], independent)
    block = _dependent_block(np.asarray(phi_q(q), dtype=float), dep, independent)
    cond = np.linalg.cond(block)
    bad = ~np.isfinite(cond) | (cond > max_cond)
    if np.any(bad):
        where = tuple(int(i) for i in np.argwhere(np.atleast_1d(bad))[0])
        worst = float(np.max(np.where(np.isfinite(cond), cond, np.inf)))
        raise ValueError(
            f"independent = {list(independent)} gives a singular dependent Jacobian "
            f"(condition number {worst:.3g} > {max_cond:g}) at configuration index {where}"
        )
    return cond


def recover_positions(
    phi: ArrayFn,
    phi_q: ArrayFn,
    q_independent: np.ndarray,
    q_guess: np.ndarray,
    independent: Sequence[int],
    tol: float = 1e-12,
    max_iter: int = 50,
) -> np.ndarray:
    """Full coordinates ``q`` (shape ``(..., n)``) with ``q[..., independent] = q_independent``
    and ``Φ(q) = 0``, by Newton's method on the dependent coordinates from ``q_guess``.

    Args:
        q_independent: values of the independent coordinates, shape ``(..., k)``.
        q_guess: starting point, shape ``(..., n)`` (its independent entries are replaced); the
            guess selects the assembly branch (e.g. which side the slider is on).
        tol: converged when ``max|Φ(q)| <= tol`` (absolute, in the units of Φ) for every
            configuration.

    Raises:
        NewtonConvergenceError: if some configuration does not converge in ``max_iter`` steps or
            its dependent Jacobian is singular.
    """
    tol = v.positive_float("tol", tol)
    max_iter = v.positive_int("max_iter", max_iter)
    guess = v.finite_array("q_guess", q_guess)
    ind, dep = split_indices(guess.shape[-1], independent)
    qi = v.finite_array("q_independent", q_independent)
    if qi.shape[-1:] != (ind.size,):
        raise ValueError(f"q_independent must have shape (..., {ind.size}), got {qi.shape}")
    shape = np.broadcast_shapes(guess.shape[:-1], qi.shape[:-1])
    q = np.array(np.broadcast_to(guess, (*shape, guess.shape[-1])), dtype=float)
    q[..., ind] = qi
    for _ in range(max_iter + 1):
        res = np.asarray(phi(q), dtype=float)
        err = np.max(np.abs(res), axis=-1)
        if np.all(err <= tol):
            return q
        if not np.all(np.isfinite(res)):
            raise NewtonConvergenceError("Newton on Φ(q) = 0 produced non-finite residuals")
        block = _dependent_block(np.asarray(phi_q(q), dtype=float), dep, independent)
        try:
            step = np.linalg.solve(block, res[..., None])[..., 0]
        except np.linalg.LinAlgError:
            raise NewtonConvergenceError(
                f"dependent Jacobian is singular during Newton on Φ(q) = 0 "
                f"(independent = {list(independent)})"
            ) from None
        q[..., dep] -= step
    worst = np.unravel_index(int(np.argmax(err)), err.shape) if err.ndim else ()
    raise NewtonConvergenceError(
        f"Newton on Φ(q) = 0 did not converge in {max_iter} iterations: "
        f"max |Φ| = {float(np.max(err)):.3e} > tol = {tol:g} (worst at index {tuple(worst)})"
    )


def velocity_map(phi_q: ArrayFn, q: np.ndarray, independent: Sequence[int]) -> np.ndarray:
    """The matrix ``J`` (shape ``(..., n, k)``) with ``q' = J q_i'`` on the constraint manifold.

    ``J[..., independent, :]`` is the identity and ``Φ_{q_d} J_d = −Φ_{q_i}``.
    """
    q = v.finite_array("q", q)
    ind, dep = split_indices(q.shape[-1], independent)
    jac = np.asarray(phi_q(q), dtype=float)
    block = _dependent_block(jac, dep, independent)
    out = np.zeros((*q.shape[:-1], q.shape[-1], ind.size))
    out[..., ind, np.arange(ind.size)] = 1.0
    out[..., dep, :] = -np.linalg.solve(block, jac[..., :, ind])
    return out


def recover_velocities(
    phi_q: ArrayFn, q: np.ndarray, qd_independent: np.ndarray, independent: Sequence[int]
) -> np.ndarray:
    """Full velocities ``q'`` (shape ``(..., n)``) from ``Φ_q(q) q' = 0`` and the independent
    velocities ``qd_independent`` (shape ``(..., k)``)."""
    q = v.finite_array("q", q)
    qdi = v.finite_array("qd_independent", qd_independent)
    return _complete(phi_q, q, qdi, np.zeros(()), independent, "qd_independent")


def recover_accelerations(
    phi_q: ArrayFn,
    q: np.ndarray,
    qdd_independent: np.ndarray,
    gamma: np.ndarray,
    independent: Sequence[int],
) -> np.ndarray:
    """Full accelerations ``q''`` (shape ``(..., n)``) from ``Φ_q q'' = γ`` (``gamma`` of shape
    ``(..., m)``, see MBD-NODE eq. 1) and the independent accelerations ``(..., k)``."""
    q = v.finite_array("q", q)
    qddi = v.finite_array("qdd_independent", qdd_independent)
    g = v.finite_array("gamma", gamma)
    return _complete(phi_q, q, qddi, g, independent, "qdd_independent")


def _complete(
    phi_q: ArrayFn,
    q: np.ndarray,
    given: np.ndarray,
    rhs: np.ndarray,
    independent: Sequence[int],
    field: str,
) -> np.ndarray:
    """Solve ``Φ_q w = rhs`` for the dependent part of ``w`` with ``w_i = given``."""
    ind, dep = split_indices(q.shape[-1], independent)
    if given.shape[-1:] != (ind.size,):
        raise ValueError(f"{field} must have shape (..., {ind.size}), got {given.shape}")
    jac = np.asarray(phi_q(q), dtype=float)
    block = _dependent_block(jac, dep, independent)
    shape = np.broadcast_shapes(q.shape[:-1], given.shape[:-1], rhs.shape[:-1])
    b = np.broadcast_to(rhs, (*shape, dep.size)) - np.einsum(
        "...ij,...j->...i", jac[..., :, ind], given
    )
    out = np.zeros((*shape, q.shape[-1]))
    out[..., ind] = given
    out[..., dep] = np.linalg.solve(
        np.broadcast_to(block, (*shape, dep.size, dep.size)), b[..., None]
    )[..., 0]
    return out


__all__ = [
    "NewtonConvergenceError",
    "check_partition",
    "recover_accelerations",
    "recover_positions",
    "recover_velocities",
    "split_indices",
    "velocity_map",
]
