"""Radau IIA / fLGR tables: textbook values, exactness, accuracy and convergence order."""

from decimal import Decimal, localcontext

import numpy as np
import pytest
from numpy.polynomial import legendre

from collocnode.transcription import RadauTable, lagrange_basis, lagrange_derivative, radau_table

EPS = np.finfo(float).eps
ALL_M = range(1, 151)
S6 = np.sqrt(6.0)

# Hairer & Wanner, Solving ODEs II, Table IV.5.5/5.6 (m = 1 is implicit Euler).
TEXTBOOK = {
    1: ([1.0], [[1.0]]),
    2: ([1 / 3, 1.0], [[5 / 12, -1 / 12], [3 / 4, 1 / 4]]),
    3: (
        [(4 - S6) / 10, (4 + S6) / 10, 1.0],
        [
            [(88 - 7 * S6) / 360, (296 - 169 * S6) / 1800, (-2 + 3 * S6) / 225],
            [(296 + 169 * S6) / 1800, (88 + 7 * S6) / 360, (-2 - 3 * S6) / 225],
            [(16 - S6) / 36, (16 + S6) / 36, 1 / 9],
        ],
    ),
}


def chebyshev_samples(points: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """``T_k(2t - 1)`` and its t-derivative at ``points`` in [0, 1], by the trigonometric form.

    ``2t - 1 = cos θ`` with ``θ = 2 atan2(√(1 - t), √t)``, accurate at both ends, so the samples
    carry only ~k ulps of error (Clenshaw's recurrence loses ~k² near ±1).
    """
    points = np.asarray(points, dtype=float)
    theta = 2.0 * np.arctan2(np.sqrt(1.0 - points), np.sqrt(points))
    inner = (points > 0.0) & (points < 1.0)
    slope = np.where(points == 1.0, float(k * k), (-1.0) ** (k + 1) * k * k)  # T_k'(±1)
    slope[inner] = k * np.sin(k * theta[inner]) / np.sin(theta[inner])
    return np.cos(k * theta), 2.0 * slope


# ---------------------------------------------------------------------------------------------
# Textbook tables


@pytest.mark.parametrize("m", sorted(TEXTBOOK))
def test_textbook_tableau(m):
    c, A = (np.array(a) for a in TEXTBOOK[m])
    table = radau_table(m)
    np.testing.assert_allclose(table.c, c, rtol=0, atol=1e-14)
    np.testing.assert_allclose(table.A, A, rtol=0, atol=1e-14)
    np.testing.assert_allclose(table.b, A[-1], rtol=0, atol=1e-14)
    np.testing.assert_array_equal(table.tau, np.concatenate(([0.0], table.c)))
    assert (table.order, table.stage_order) == (2 * m - 1, m)


def test_implicit_euler_differentiation():
    # m = 1: one node at t = 1, and the derivative of the line through (0, x0), (1, x1).
    np.testing.assert_array_equal(radau_table(1).D, [[-1.0, 1.0]])


# ---------------------------------------------------------------------------------------------
# Every table from 1 to 150 stages


@pytest.mark.parametrize("m", ALL_M)
def test_nodes_and_layout(m):
    t = radau_table(m)
    assert isinstance(t, RadauTable) and t.m == m
    assert t.c.shape == (m,) and t.tau.shape == (m + 1,) and t.D.shape == (m, m + 1)
    assert t.b.shape == (m,) and t.A.shape == (m, m) and t.bary.shape == (m + 1,)
    assert t.c[-1] == 1.0 and t.c[0] > 0.0
    assert np.all(np.diff(t.c) > 0)
    assert np.max(np.abs(t.bary)) == 1.0
    np.testing.assert_array_equal(t.A[-1], t.b)
    # Interior nodes solve the Legendre form of the fLGR equation, P_{m-1}(x) - P_m(x) = 0 with
    # x = 2c - 1: an independent characterisation. The implied Newton correction in x must be at
    # the rounding level.
    if m > 1:
        r = legendre.Legendre.basis(m - 1) - legendre.Legendre.basis(m)
        x = 2.0 * t.c[:-1] - 1.0
        assert np.max(np.abs(r(x) / r.deriv()(x))) < 8 * EPS


@pytest.mark.parametrize("m", ALL_M)
def test_differentiation_matrix_exact_on_polynomials(m):
    t = radau_table(m)
    row_scale = np.abs(t.D).sum(axis=1)
    # Rows sum to zero (the negative sum trick) up to one rounding of the row's entries.
    assert np.all(np.abs(t.D.sum(axis=1)) <= 2 * EPS * row_scale)
    # The samples of T_k carry ~k ulps of error, which D amplifies by at most its row sum, so
    # 4 (m + 1) eps * row_scale bounds the error of an exact differentiation (measured: ~1.2 m).
    tol = 4 * (m + 1) * EPS * row_scale
    for k in range(m + 1):
        f, df = chebyshev_samples(t.tau, k)
        assert np.all(np.abs(t.D @ f - df[1:]) <= tol), f"degree {k}"


@pytest.mark.parametrize("m", ALL_M)
def test_quadrature_degree_is_2m_minus_2(m):
    t = radau_table(m)
    assert abs(t.b.sum() - 1.0) <= 4 * EPS * m
    assert np.all(t.b > 0)
    for k in range(2 * m):
        f, _ = chebyshev_samples(t.c, k)
        exact = 0.0 if k % 2 else 1.0 / (1.0 - k * k)  # ∫_0^1 T_k(2t - 1) dt
        err = abs(t.b @ f - exact)
        if k <= 2 * m - 2:
            assert err <= 4 * m * EPS, f"degree {k}"
        else:  # degree 2m - 1 is not integrated exactly: the rule has exactly this degree
            assert err > 0.1


@pytest.mark.parametrize("m", ALL_M)
def test_butcher_matrix(m):
    t = radau_table(m)
    # Collocation: D[:, 1:] is the inverse of A (the stage equations in both forms).
    scale = m * EPS * np.abs(t.D).sum(axis=1).max() * np.abs(t.A).max()
    np.testing.assert_allclose(t.D[:, 1:] @ t.A, np.eye(m), rtol=0, atol=8 * scale)
    # Simplifying condition C(q): sum_k a_jk c_k^(q-1) = c_j^q / q (stage order m); checked up to
    # q = 10 where the monomials are still a well-conditioned test.
    for q in range(1, min(m, 10) + 1):
        np.testing.assert_allclose(t.A @ t.c ** (q - 1), t.c**q / q, rtol=0, atol=2 * m * EPS)


# ---------------------------------------------------------------------------------------------
# Accuracy against an independent 40-digit computation


def _decimal_reference(m: int, start: np.ndarray) -> tuple[list, np.ndarray, np.ndarray]:
    """Nodes, D (exact diagonal formula) and b for m stages, in 40-digit decimal arithmetic.

    Nodes by Newton on P_{m-1}^{(1,0)}(2t - 1) (Abramowitz & Stegun 22.7.1), b by the textbook
    Radau formula ``b_j = c_j / (m P_{m-1}(2c_j - 1))²``, ``b_m = 1/m²`` (A&S 25.4.31), D from the
    product form of the Lagrange basis: none of it shares code with the library.
    """

    def jacobi(n, t):
        q0, q1, d0, d1 = Decimal(1), 3 * t - 1, Decimal(0), Decimal(3)
        for k in range(2, n + 1):
            lin = 2 * (4 * k * k - 1) * t - 2 * (2 * k * k - 1)
            den = (k + 1) * (2 * k - 1)
            back = (k - 1) * (2 * k + 1)
            q0, q1, d0, d1 = (
                q1,
                (lin * q1 - back * q0) / den,
                d1,
                (lin * d1 + 2 * (4 * k * k - 1) * q1 - back * d0) / den,
            )
        return (q1, d1) if n > 0 else (Decimal(1), Decimal(0))

    def legendre_p(n, t):
        p0, p1 = Decimal(1), 2 * t - 1
        for k in range(2, n + 1):
            p0, p1 = p1, ((2 * k - 1) * (2 * t - 1) * p1 - (k - 1) * p0) / k
        return p1 if n > 0 else p0

    with localcontext() as ctx:
        ctx.prec = 40
        nodes = []
        for guess in start[:-1]:
            c = Decimal(float(guess))
            for _ in range(5):
                q, dq = jacobi(m - 1, c)
                c -= q / dq
            nodes.append(c)
        nodes.append(Decimal(1))
        tau = [Decimal(0), *nodes]
        w = []
        for k, tk in enumerate(tau):
            prod = Decimal(1)
            for r, tr in enumerate(tau):
                if r != k:
                    prod *= tk - tr
            w.append(1 / prod)
        D = np.empty((m, m + 1))
        for j in range(1, m + 1):
            for k in range(m + 1):
                if k == j:
                    value = sum(1 / (tau[j] - tau[r]) for r in range(m + 1) if r != j)
                else:
                    value = (w[k] / w[j]) / (tau[j] - tau[k])
                D[j - 1, k] = float(value)
        b = [c / (m * m * legendre_p(m - 1, c) ** 2) for c in nodes[:-1]]
        b.append(Decimal(1) / (m * m))
        return nodes, D, np.array([float(x) for x in b])


@pytest.mark.parametrize("m", [7, 70, 150])
def test_accuracy_against_high_precision(m):
    t = radau_table(m)
    nodes, D_ref, b_ref = _decimal_reference(m, t.c)
    node_err = [
        float(abs(Decimal(float(c)) - ref) / ref) for c, ref in zip(t.c, nodes, strict=True)
    ]
    # Newton on the recurrence in t keeps the relative accuracy of the small nodes near t = 0
    # (the start from x = 2t - 1 alone loses ~3e-13 there at m = 150).
    assert max(node_err) < 1e-13
    np.testing.assert_allclose(t.b, b_ref, rtol=1e-10, atol=0)
    off = ~np.eye(m, m + 1, k=1, dtype=bool)
    np.testing.assert_allclose(t.D[off], D_ref[off], rtol=1e-10, atol=0)
    # A diagonal entry is minus a sum of entries up to ~1e4 (m = 150) and moves by
    # 1 ulp(c_j) / spacing² ≈ 4e-9 when c_j moves by one ulp, so it is only determined relative
    # to its row's scale.
    row_scale = np.abs(D_ref).max(axis=1, keepdims=True)
    assert np.max(np.abs(t.D - D_ref) / row_scale) < 1e-10


@pytest.mark.parametrize("m", [70, 150])
def test_differentiation_of_smooth_functions(m):
    t = radau_table(m)
    x = t.tau
    f = np.sin(5 * x) + np.exp(x)
    df = 5 * np.cos(5 * x) + np.exp(x)
    # Interpolation error of such entire functions at 70+ nodes is far below eps, so only the
    # rounding of the samples (~1 ulp of |f| <= 4) times the row sum of D remains.
    tol = 4 * (m + 1) * EPS * np.abs(t.D).sum(axis=1) * np.abs(f).max()
    assert np.all(np.abs(t.D @ f - df[1:]) <= tol)
    # ... and b integrates them to the same level.
    exact = (1 - np.cos(5.0)) / 5 + np.e - 1
    assert abs(t.b @ (np.sin(5 * t.c) + np.exp(t.c)) - exact) < 20 * EPS * m


def test_largest_table_is_finite():
    t = radau_table(200)
    for arr in (t.c, t.D, t.b, t.A, t.bary):
        assert np.all(np.isfinite(arr))
    assert abs(t.b.sum() - 1.0) < 1e-13


# ---------------------------------------------------------------------------------------------
# Convergence order of the collocation method on y' = λ y


def _collocate_linear(table: RadauTable, lam: complex, T: float, N: int):
    """Collocate y' = λ y, y(0) = 1 on N equal intervals of [0, T], one linear solve per interval
    (paper eq. 8: D[:, 0] y_i0 + D[:, 1:] Y - h λ Y = 0). Returns the end error and the largest
    error at the interior collocation nodes (c_j < 1)."""
    h = T / N
    K = table.D[:, 1:] - h * lam * np.eye(table.m)
    y, interior_err = 1.0 + 0j, 0.0
    for i in range(N):
        Y = np.linalg.solve(K, -table.D[:, 0] * y)
        times = (i + table.c[:-1]) * h
        if times.size:
            interior_err = max(interior_err, np.max(np.abs(Y[:-1] - np.exp(lam * times))))
        y = Y[-1]
    return abs(y - np.exp(lam * T)), interior_err


def _observed_order(errors: dict[int, float]) -> float:
    """Least-squares slope of -log(error) over log(N) on the finest three points before the
    round-off floor. The floor grows like N eps (one rounding per interval); 1e-12 keeps the fit
    clear of it for every N used here."""
    Ns, errs = [], []
    for N, e in sorted(errors.items()):
        if e < max(1e-12, 50 * N * EPS):
            break
        Ns.append(N)
        errs.append(e)
    assert len(Ns) >= 3, f"too few points above round-off: {errors}"
    return -np.polyfit(np.log(Ns[-3:]), np.log(errs[-3:]), 1)[0]


@pytest.mark.parametrize("lam", [-1.0, 2.0j], ids=["decay", "oscillation"])
@pytest.mark.parametrize("m", [1, 2, 3, 4, 5])
def test_convergence_order(m, lam):
    table = radau_table(m)
    end, interior = {}, {}
    for N in 2 ** np.arange(11):
        end[int(N)], interior[int(N)] = _collocate_linear(table, lam, 4.0, int(N))
        if end[int(N)] < 1e-13 and interior[int(N)] < 1e-13:
            break
    # Radau IIA has order 2m - 1 at the interval ends (Hairer & Wanner IV.5).
    assert abs(_observed_order(end) - (2 * m - 1)) < 0.3
    # Inside an interval the error is the local stage error O(h^(m+1)) (stage order m, the
    # collocation polynomial is O(h^(m+1)) accurate; Hairer, Nørsett & Wanner I, Thm II.7.10)
    # plus the propagated end error O(h^(2m-1)), so the interior nodes converge with order m + 1
    # (m = 1 has no interior node).
    if m > 1:
        assert abs(_observed_order(interior) - (m + 1)) < 0.3


# ---------------------------------------------------------------------------------------------
# Lagrange basis and its derivative at arbitrary points


@pytest.mark.parametrize("m", [1, 2, 5, 30, 150])
def test_basis_unit_rows_and_partition_of_unity(m, rng):
    t = radau_table(m)
    np.testing.assert_array_equal(lagrange_basis(t, t.tau), np.eye(m + 1))
    np.testing.assert_array_equal(lagrange_derivative(t, t.c), t.D)
    s = rng.uniform(0, 1, 50)
    np.testing.assert_allclose(lagrange_basis(t, s).sum(axis=1), 1.0, rtol=0, atol=1e-13)
    assert np.all(np.abs(lagrange_derivative(t, s).sum(axis=1)) < 1e-13 * m * m)


@pytest.mark.parametrize("m", [1, 2, 5, 30, 150])
def test_basis_reproduces_polynomials(m, rng):
    t = radau_table(m)
    s = np.concatenate((rng.uniform(0, 1, 40), [0.0, 1.0]))
    basis, dbasis = lagrange_basis(t, s), lagrange_derivative(t, s)
    for k in sorted({0, 1, m // 2, m}):
        f, _ = chebyshev_samples(t.tau, k)
        fs, dfs = chebyshev_samples(s, k)
        np.testing.assert_allclose(basis @ f, fs, rtol=0, atol=1e-13 * (k + 1))
        tol = 8 * (m + 1) * EPS * np.abs(dbasis).sum(axis=1)
        assert np.all(np.abs(dbasis @ f - dfs) <= tol + 1e-12), f"degree {k}"


@pytest.mark.parametrize("m", [3, 10, 70])
def test_derivative_is_continuous_at_the_nodes(m):
    # The Schneider-Werner form must not cancel as s approaches a node: one step of 1e-9 away
    # moves the row by about 1e-9 * |second derivative|, not by eps / 1e-9.
    t = radau_table(m)
    full = np.vstack([lagrange_derivative(t, [0.0]), t.D])
    d2 = np.abs(full @ full).max()  # largest second derivative of a basis polynomial at a point
    for delta in (1e-9, 1e-12):
        s = np.clip(t.tau + delta, 0.0, 1.0)
        near = lagrange_derivative(t, s)
        assert np.max(np.abs(near - full)) < 4 * delta * d2 + 1e-12 * np.abs(full).max()


def test_derivative_matches_finite_differences(rng):
    t = radau_table(6)
    s = rng.uniform(0.05, 0.95, 20)
    h = 1e-6
    fd = (lagrange_basis(t, s + h) - lagrange_basis(t, s - h)) / (2 * h)
    np.testing.assert_allclose(lagrange_derivative(t, s), fd, rtol=0, atol=1e-7)


# ---------------------------------------------------------------------------------------------
# Caching, immutability and bad input


def test_tables_are_cached_and_read_only():
    assert radau_table(5) is radau_table(5)
    assert radau_table(np.int64(5)) is radau_table(5)
    with pytest.raises(ValueError, match="read-only"):
        radau_table(5).D[0, 0] = 1.0


@pytest.mark.parametrize(
    "m, error", [(0, ValueError), (-3, ValueError), (201, ValueError), (2.5, TypeError)]
)
def test_bad_stage_counts(m, error):
    with pytest.raises(error, match="stages"):
        radau_table(m)


def test_bool_is_not_a_stage_count():
    radau_table(1)  # a cached 1 must not let True through
    with pytest.raises(TypeError, match="stages"):
        radau_table(True)


@pytest.mark.parametrize("s", [[-0.1, 0.5], [0.5, 1.0 + 1e-9], [np.nan], [[0.1, 0.2]]])
@pytest.mark.parametrize("fn", [lagrange_basis, lagrange_derivative])
def test_bad_local_points(fn, s):
    with pytest.raises(ValueError, match="s"):
        fn(radau_table(3), s)
