"""Radau IIA collocation tables at flipped Legendre-Gauss-Radau (fLGR) points (paper §2.3).

An m-stage Radau IIA method collocates at the m roots ``c`` of ``(1 - t) P_{m-1}^{(1,0)}(2t - 1)``
on ``(0, 1]``; ``c_m = 1``, so the last node of one interval is the first point of the next.
The state of one interval is the polynomial of degree m through the m + 1 points
``tau = (0, c_1, ..., c_m)`` (paper eq. 7), and the collocated dynamics use its derivative at the
nodes, ``D_jk = l~_k'(c_j)`` (eqs. 8-9). All interpolation runs through the barycentric formula
(Berrut & Trefethen 2004, the derivative after Schneider & Werner 1986, paper ref. [21]), which
stays accurate for the global spectral variant with up to a few hundred nodes.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
from scipy.special import roots_jacobi, roots_legendre

from .. import _validation as v

MAX_STAGES = 200
"""Largest number of stages `radau_table` builds."""

# Distances below this count as hitting a node: the basis there differs from the node's unit row
# by at most |s - tau| * |D| < 1e-190, and it keeps 1 / (s - tau) far from overflow.
_HIT = 1e-200
_EPS = np.finfo(float).eps


@dataclass(frozen=True, eq=False)
class RadauTable:
    """The m-stage Radau IIA / fLGR collocation table on the unit interval.

    Tables are cached and shared (get them from `radau_table`); all arrays are read-only.

    Attributes:
        m: number of stages (collocation nodes); the method has order 2m - 1, stage order m.
        c: collocation nodes, shape ``(m,)``, increasing in ``(0, 1]``, ``c[-1] == 1`` exactly.
        tau: interpolation points ``(0, c_1, ..., c_m)``, shape ``(m + 1,)``.
        D: differentiation matrix, shape ``(m, m + 1)``: ``D[j, k]`` is the derivative of the
            k-th Lagrange basis polynomial over ``tau`` at ``c[j]`` (paper eqs. 8-9), per unit of
            the local coordinate; divide by the interval length for a time derivative.
        b: quadrature weights, shape ``(m,)``: ``b_j = ∫_0^1 l_j`` over the nodes ``c``
            (paper eq. 11); they sum to 1 and integrate polynomials of degree 2m - 2 exactly.
        A: Butcher matrix, shape ``(m, m)``: ``A[j, k] = ∫_0^{c_j} l_k`` over ``c``;
            ``A[-1] == b``.
        bary: barycentric weights of ``tau``, shape ``(m + 1,)``, scaled to max abs 1.
    """

    m: int
    c: np.ndarray
    tau: np.ndarray
    D: np.ndarray
    b: np.ndarray
    A: np.ndarray
    bary: np.ndarray

    @property
    def order(self) -> int:
        """Classical order 2m - 1 at the interval ends."""
        return 2 * self.m - 1

    @property
    def stage_order(self) -> int:
        """Stage order m (the simplifying condition C(m) holds)."""
        return self.m

    def __repr__(self) -> str:
        return f"RadauTable(m={self.m})"


def radau_table(m: int) -> RadauTable:
    """The Radau IIA / fLGR table with ``m`` stages, ``1 <= m <= 200`` (cached)."""
    m = v.positive_int("stages", m)
    if m > MAX_STAGES:
        raise ValueError(f"stages must be at most {MAX_STAGES}, got {m}")
    return _build_table(m)


@functools.cache  # lru_cache without a size bound: at most 200 tables
def _build_table(m: int) -> RadauTable:
    c = flgr_nodes(m)
    tau = np.concatenate(([0.0], c))
    bary = barycentric_weights(tau)
    D = differentiation_matrix(tau, bary)[1:]
    b = _radau_weights(c)
    A = _butcher_matrix(c, b)
    arrays = {"c": c, "tau": tau, "D": D, "b": b, "A": A, "bary": bary}
    for arr in arrays.values():
        arr.setflags(write=False)
    return RadauTable(m=m, **arrays)


def shifted_jacobi_10(n: int, t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``P_n^{(1,0)}(2t - 1)`` and its t-derivative, shapes like ``t``.

    The three-term recurrence for Jacobi polynomials (Abramowitz & Stegun 22.7.1) with
    alpha = 1, beta = 0 and x = 2t - 1 has integer coefficients in t:

        (k + 1)(2k - 1) Q_k = [2(4k² - 1) t - 2(2k² - 1)] Q_{k-1} - (k - 1)(2k + 1) Q_{k-2}.

    Running it in t, rather than forming x = 2t - 1 first, keeps the relative accuracy of t near
    t = 0, where the smallest fLGR node sits (about 1.45 / m² for large m).
    """
    t = np.asarray(t, dtype=float)
    q_prev, q = np.ones_like(t), 3.0 * t - 1.0
    dq_prev, dq = np.zeros_like(t), np.full_like(t, 3.0)
    if n == 0:
        return q_prev, dq_prev
    for k in range(2, n + 1):
        slope = 2.0 * (4 * k * k - 1)
        lin = slope * t - 2.0 * (2 * k * k - 1)
        back = float((k - 1) * (2 * k + 1))
        scale = float((k + 1) * (2 * k - 1))
        q_prev, q, dq_prev, dq = (
            q,
            (lin * q - back * q_prev) / scale,
            dq,
            (lin * dq + slope * q - back * dq_prev) / scale,
        )
    return q, dq


def flgr_nodes(m: int) -> np.ndarray:
    """The m fLGR nodes on (0, 1], increasing, last one exactly 1, shape ``(m,)``.

    The m - 1 interior nodes are the roots of ``P_{m-1}^{(1,0)}(2t - 1)`` (paper §2.3). Start from
    the Gauss-Jacobi nodes of scipy (Golub-Welsch) and polish with Newton's method on the
    recurrence in t, which brings every node, also the small ones next to t = 0, to ~1e-14
    relative accuracy (checked against 40-digit arithmetic in the tests).
    """
    if m == 1:
        return np.array([1.0])
    x, _ = roots_jacobi(m - 1, 1.0, 0.0)
    t = (np.sort(x) + 1.0) / 2.0
    for _ in range(8):
        q, dq = shifted_jacobi_10(m - 1, t)
        step = q / dq
        t = t - step
        # Newton converges quadratically: after a step below 1e-11 relative the error is at the
        # rounding floor of evaluating Q (~eps / m absolute), where further steps only jitter.
        if np.all(np.abs(step) <= 1e-11 * t):
            break
    # The start is accurate to ~1e-14, far below the node spacing (~1/m²), so Newton cannot
    # jump to a neighbouring root; this guards the claim.
    if not (np.all(np.diff(t) > 0) and t[0] > 0 and t[-1] < 1):
        raise RuntimeError(f"fLGR node computation failed for m = {m}")
    return np.append(t, 1.0)


def barycentric_weights(x: np.ndarray) -> np.ndarray:
    """Barycentric weights ``w_k ∝ 1 / prod_{r != k} (x_k - x_r)`` of points in [0, 1].

    Each factor is multiplied by 4 (an exact power of two; 1/4 is the logarithmic capacity of a
    unit interval), which keeps the products near order one instead of ~4^-m, then the weights are
    scaled to max abs 1. Shape ``(len(x),)``.
    """
    x = np.asarray(x, dtype=float)
    diff = 4.0 * (x[:, None] - x[None, :])
    np.fill_diagonal(diff, 1.0)
    w = 1.0 / np.prod(diff, axis=1)
    return w / np.max(np.abs(w))


def differentiation_matrix(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Full first-derivative matrix over points ``x`` with barycentric weights ``w``.

    ``M[j, k] = l_k'(x_j) = (w_k / w_j) / (x_j - x_k)`` for ``j != k``; the diagonal is minus the
    row sum of the off-diagonal entries (the "negative sum trick", Baltensperger & Trummer 2003),
    which makes the derivative of a constant vanish to rounding and is more accurate than the
    closed-form diagonal. Shape ``(len(x), len(x))``.
    """
    n = x.size
    dx = x[:, None] - x[None, :]
    np.fill_diagonal(dx, 1.0)
    M = (w[None, :] / w[:, None]) / dx
    np.fill_diagonal(M, 0.0)
    M[np.arange(n), np.arange(n)] = -np.sum(M, axis=1)
    return M


def _radau_weights(c: np.ndarray) -> np.ndarray:
    """Radau IIA weights on [0, 1], shape ``(m,)``.

    The interior nodes are the Gauss-Jacobi nodes for the weight ``1 - x``; the Radau weights are
    the Gauss-Jacobi weights divided by ``1 - x_j``, and those are proportional to
    ``1 / ((1 - x_j²) P'(x_j)²)`` (Szegő, Orthogonal Polynomials, §15.3). In t this gives
    ``b_j ∝ 1 / (c_j (1 - c_j)² Q'(c_j)²)`` with ``Q = P_{m-1}^{(1,0)}(2t - 1)``, normalised so that
    all weights sum to 1 with ``b_m = 1 / m²`` (Abramowitz & Stegun 25.4.31). The derivative at a
    simple root keeps full relative accuracy, unlike the textbook form ``c_j / (m P_{m-1})²``,
    where ``P_{m-1}`` is small at the nodes next to t = 0 and loses ~1e-11 there for m = 150.
    """
    m = c.size
    b = np.empty(m)
    b[-1] = 1.0 / (m * m)
    if m > 1:
        t = c[:-1]
        _, dq = shifted_jacobi_10(m - 1, t)
        r = 1.0 / (t * (1.0 - t) ** 2 * dq**2)
        b[:-1] = r * ((1.0 - b[-1]) / math.fsum(r))
    return b


def _butcher_matrix(c: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``A[j, k] = ∫_0^{c_j} l_k(s) ds`` over the nodes c, shape ``(m, m)``.

    Each l_k has degree m - 1, so Gauss-Legendre with m // 2 + 1 points on [0, c_j] is exact; the
    integrand is evaluated by the barycentric formula. The last row is set to b (c_m = 1).
    """
    m = c.size
    g, gw = roots_legendre(m // 2 + 1)
    s = c[:, None] * (g[None, :] + 1.0) / 2.0  # (m, n_gauss) quadrature points per row
    basis = _barycentric_basis(c, barycentric_weights(c), s.ravel()).reshape(*s.shape, m)
    A = np.einsum("jq,jqk->jk", c[:, None] * gw[None, :] / 2.0, basis)
    A[-1] = b
    return A


def _check_s(s: object) -> np.ndarray:
    arr = np.atleast_1d(v.finite_array("s", s))
    if arr.ndim != 1:
        raise ValueError(f"s must be a scalar or 1-D array, got shape {arr.shape}")
    bad = np.flatnonzero((arr < 0.0) | (arr > 1.0))
    if bad.size:
        i = int(bad[0])
        raise ValueError(f"s must lie in [0, 1], got s[{i}] = {float(arr[i])!r}")
    return arr


def _hits(x: np.ndarray, s: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``s - x`` (shape ``(len(s), len(x))``), which rows hit a point and the index hit."""
    diff = s[:, None] - x[None, :]
    hit = np.abs(diff) < _HIT
    rows = hit.any(axis=1)
    return diff, rows, np.argmax(hit, axis=1)


def _barycentric_basis(x: np.ndarray, w: np.ndarray, s: np.ndarray) -> np.ndarray:
    """Second-kind barycentric formula: Lagrange basis over x at s, shape ``(len(s), len(x))``."""
    diff, rows, at = _hits(x, s)
    u = w[None, :] / np.where(rows[:, None], 1.0, diff)
    # Away from the nodes sum(u) = 1 / prod(s - x_k) (up to scale) never vanishes; on a node it
    # may (sum(w) = 0), and that row is overwritten below anyway.
    L = u / np.where(rows[:, None], 1.0, np.sum(u, axis=1, keepdims=True))
    L[rows] = 0.0
    L[rows, at[rows]] = 1.0
    return L


def lagrange_basis(table: RadauTable, s: object) -> np.ndarray:
    """Lagrange basis over ``table.tau`` at local points ``s`` in [0, 1].

    Returns shape ``(len(s), m + 1)``: row i holds ``l~_k(s_i)`` (paper eq. 9), so the interval's
    polynomial at ``s_i`` is ``row @ x_i``. Rows at the points ``tau`` are exact unit rows.
    """
    s = _check_s(s)
    return _barycentric_basis(table.tau, table.bary, s)


def collocation_basis(table: RadauTable, s: object) -> np.ndarray:
    """Lagrange basis over the collocation points ``table.c`` alone at local points ``s`` in
    [0, 1] (extrapolated on [0, c_1)), shape ``(len(s), m)``: the degree m - 1 polynomial of
    node-local unknowns (controls, algebraic states), which have no value at s = 0."""
    s = _check_s(s)
    if table.m == 1:
        return np.ones((s.size, 1))
    return _barycentric_basis(table.c, barycentric_weights(table.c), s)


def lagrange_derivative(table: RadauTable, s: object) -> np.ndarray:
    """Derivative of the Lagrange basis over ``table.tau`` at local points ``s`` in [0, 1].

    Returns shape ``(len(s), m + 1)``, per unit of the local coordinate (divide by the interval
    length for a time derivative). Rows at the nodes ``c_j`` equal ``table.D[j]``. Elsewhere it
    uses ``l_q'(s) = sum_k (tau_k - tau_q) U_k U_q`` with ``U_k = l_k(s) / (s - tau_k)``, a form
    of the Schneider-Werner formula with no cancellation as s approaches a node.
    """
    s = _check_s(s)
    x, w = table.tau, table.bary
    diff, rows, at = _hits(x, s)
    L = _barycentric_basis(x, w, s)
    U = L / np.where(rows[:, None], 1.0, diff)
    spread = x[:, None] - x[None, :]  # spread[k, q] = tau_k - tau_q
    dL = U * (U @ spread)
    if rows.any():
        # Row 0 (s = 0) is not part of table.D; it is the first row of the full matrix.
        full = np.vstack([differentiation_matrix(x, w)[:1], table.D])
        dL[rows] = full[at[rows]]
    return dL
