"""Collocation meshes: node layout, quadrature, dense output and validation."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from collocnode.transcription import Mesh, radau_table


@st.composite
def meshes(draw, max_intervals: int = 8, max_stages: int = 8) -> Mesh:
    """Random meshes: 1-8 intervals of lengths 0.01-3 (ratios up to 300) starting anywhere in
    [-50, 50], with a random stage count per interval or one for all."""
    n = draw(st.integers(1, max_intervals))
    lengths = draw(st.lists(st.floats(0.01, 3.0), min_size=n, max_size=n))
    t0 = draw(st.floats(-50.0, 50.0))
    grid = t0 + np.concatenate(([0.0], np.cumsum(lengths)))
    stages = draw(
        st.one_of(
            st.integers(1, max_stages),
            st.lists(st.integers(1, max_stages), min_size=n, max_size=n),
        )
    )
    return Mesh.from_grid(grid, stages)


def _poly(coef: np.ndarray, mesh: Mesh, t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A polynomial in the centred, scaled time (well conditioned on any mesh) and its time
    derivative."""
    mid, half = (mesh.t0 + mesh.tf) / 2, (mesh.tf - mesh.t0) / 2
    p = np.polynomial.Polynomial(coef)
    u = (t - mid) / half
    return p(u), p.deriv()(u) / half


# ---------------------------------------------------------------------------------------------
# Layout


def test_paper_van_der_pol_mesh():
    # 500 intervals x Radau5 on [0, 7]: 2,500 collocation nodes plus x_00 (DESIGN §3).
    mesh = Mesh.equidistant(0.0, 7.0, 500, 5)
    assert (mesh.n_intervals, mesh.n_collocation, mesh.n_nodes) == (500, 2500, 2501)
    np.testing.assert_allclose(mesh.h, 7.0 / 500, rtol=1e-12)
    assert mesh.grid[-1] == 7.0 and mesh.t0 == 0.0 and mesh.tf == 7.0
    np.testing.assert_array_equal(mesh.interval_start[:3], [0, 5, 10])
    np.testing.assert_array_equal(mesh.collocation_stage[:7], [1, 2, 3, 4, 5, 1, 2])
    np.testing.assert_array_equal(mesh.collocation_interval[:7], [0, 0, 0, 0, 0, 1, 1])


def test_spectral_mesh():
    mesh = Mesh.spectral(0.0, 7.0, 70)
    assert mesh.n_intervals == 1 and mesh.n_nodes == 71
    table = radau_table(70)
    np.testing.assert_allclose(mesh.node_times, 7.0 * table.tau, rtol=0, atol=1e-14)
    np.testing.assert_allclose(mesh.quadrature_weights, 7.0 * table.b, rtol=1e-15)


def test_mixed_stage_layout():
    mesh = Mesh.from_grid([0.0, 1.0, 1.5, 3.0], [1, 3, 2])
    c3 = radau_table(3).c
    expected = [0.0, 1.0, *(1.0 + 0.5 * c3[:2]), 1.5, 1.5 + 1.5 / 3, 3.0]
    np.testing.assert_allclose(mesh.node_times, expected, rtol=0, atol=1e-15)
    np.testing.assert_array_equal(mesh.interval_start, [0, 1, 4])
    np.testing.assert_array_equal(mesh.collocation_index, [1, 2, 3, 4, 5, 6])
    np.testing.assert_array_equal(mesh.collocation_interval, [0, 1, 1, 1, 2, 2])
    np.testing.assert_array_equal(mesh.collocation_stage, [1, 1, 2, 3, 1, 2])
    np.testing.assert_allclose(
        mesh.quadrature_weights, [1.0, *(0.5 * radau_table(3).b), *(1.5 * radau_table(2).b)]
    )


@settings(max_examples=60, deadline=None)
@given(mesh=meshes())
def test_layout_invariants(mesh):
    n = mesh.n_intervals
    assert mesh.grid.shape == (n + 1,) and mesh.stages.shape == (n,)
    assert mesh.n_nodes == 1 + mesh.stages.sum() == 1 + mesh.n_collocation
    times = mesh.node_times
    assert times.shape == (mesh.n_nodes,) and np.all(np.diff(times) > 0)
    # Each interval starts and ends exactly on the grid (c_m = 1 is exact).
    np.testing.assert_array_equal(times[mesh.interval_start], mesh.grid[:-1])
    np.testing.assert_array_equal(times[mesh.interval_start + mesh.stages], mesh.grid[1:])
    np.testing.assert_array_equal(mesh.collocation_index, np.arange(1, mesh.n_nodes))
    np.testing.assert_array_equal(
        mesh.interval_start[mesh.collocation_interval] + mesh.collocation_stage,
        mesh.collocation_index,
    )
    assert np.all((mesh.collocation_stage >= 1) & (mesh.collocation_stage <= mesh.stages.max()))
    for arr in (times, mesh.h, mesh.quadrature_weights, mesh.grid, mesh.stages):
        assert not arr.flags.writeable


@settings(max_examples=60, deadline=None)
@given(mesh=meshes())
def test_quadrature(mesh):
    w = mesh.quadrature_weights
    span = mesh.tf - mesh.t0
    assert np.all(w > 0)
    assert abs(w.sum() - span) <= 1e-13 * span
    # Radau quadrature is exact to degree 2 min(stages) - 2 on every interval.
    degree = 2 * int(mesh.stages.min()) - 2
    rng = np.random.default_rng(degree)
    coef = rng.standard_normal(degree + 1)
    t = mesh.node_times[mesh.collocation_index]
    antideriv = np.polynomial.Polynomial(coef).integ()
    exact = (antideriv(1.0) - antideriv(-1.0)) * span / 2
    p, _ = _poly(coef, mesh, t)
    assert abs(w @ p - exact) <= 1e-12 * span * np.abs(coef).sum()


# ---------------------------------------------------------------------------------------------
# Dense output


@settings(max_examples=60, deadline=None)
@given(mesh=meshes(), seed=st.integers(0, 2**31))
def test_interpolate_reproduces_node_values(mesh, seed):
    values = np.random.default_rng(seed).standard_normal((mesh.n_nodes, 2))
    np.testing.assert_array_equal(mesh.interpolate(values, mesh.node_times), values)


@settings(max_examples=60, deadline=None)
@given(mesh=meshes(), seed=st.integers(0, 2**31))
def test_interpolate_reproduces_polynomials(mesh, seed):
    # The piecewise polynomial has degree m_i per interval, so any global polynomial of degree
    # <= min(stages) is reproduced everywhere, derivative included.
    rng = np.random.default_rng(seed)
    coef = rng.standard_normal(int(mesh.stages.min()) + 1)
    t = np.concatenate((rng.uniform(mesh.t0, mesh.tf, 50), mesh.grid))
    values, _ = _poly(coef, mesh, mesh.node_times)
    p, dp = _poly(coef, mesh, t)
    scale = np.abs(coef).sum()
    np.testing.assert_allclose(mesh.interpolate(values, t), p, rtol=0, atol=1e-11 * scale)
    # Derivatives scale like (degree / h)², with h down to 0.01 here.
    dtol = 1e-11 * scale * (mesh.stages.max() / mesh.h.min()) ** 2
    np.testing.assert_allclose(mesh.derivative(values, t), dp, rtol=0, atol=dtol)


def test_polynomial_of_higher_degree_is_not_reproduced():
    # The can-fail counterpart of the test above: degree min(stages) + 1 is not exact.
    mesh = Mesh.from_grid([0.0, 1.0, 2.0], [3, 4])
    t = np.linspace(0.1, 1.9, 19)
    f = mesh.node_times**4
    assert np.max(np.abs(mesh.interpolate(f, t) - t**4)) > 1e-4


def test_dense_output_shapes_and_scalars():
    mesh = Mesh.equidistant(-1.0, 2.0, 4, 3)
    values = np.arange(mesh.n_nodes * 6, dtype=float).reshape(mesh.n_nodes, 2, 3)
    assert mesh.interpolate(values, np.linspace(-1, 2, 7)).shape == (7, 2, 3)
    assert mesh.derivative(values, [0.3]).shape == (1, 2, 3)
    assert mesh.interpolate(values, 0.25).shape == (2, 3)
    assert mesh.interpolate(values[:, 0, 0], 0.25).shape == ()


def test_derivative_at_nodes_is_the_collocated_one():
    # At a collocation node the derivative is D_j x_i / h_i, the quantity the NLP constrains to
    # equal f(x_ij) (paper eq. 8), taken from the interval that ends there.
    mesh = Mesh.from_grid([0.0, 0.5, 2.0], [4, 2])
    x = np.cos(3 * mesh.node_times)
    d = mesh.derivative(x, mesh.node_times)
    for m, h, nodes in ((4, 0.5, slice(0, 5)), (2, 1.5, slice(4, 7))):
        np.testing.assert_allclose(d[nodes][1:], radau_table(m).D @ x[nodes] / h, rtol=1e-13)


@pytest.mark.parametrize("stages", [1, 2, 3, 4, 5])
def test_dense_output_convergence(stages):
    # Collocating y'' = -y (as a first-order system) and evaluating the dense output between the
    # nodes: the collocation polynomial is O(h^(m+1)) accurate (Hairer, Nørsett & Wanner I,
    # Thm II.7.10), for m = 1 the order is 1.
    order = stages + 1 if stages > 1 else 1
    errors = []
    Ns = [16, 32, 64] if stages < 5 else [8, 16, 32]
    for N in Ns:
        mesh = Mesh.equidistant(0.0, 3.0, N, stages)
        table = radau_table(stages)
        J = np.array([[0.0, 1.0], [-1.0, 0.0]])
        nodes = np.zeros((mesh.n_nodes, 2))
        nodes[0] = (1.0, 0.0)
        h = mesh.h[0]
        # Per interval: (D[:, 1:] kron I - h I kron J) X = -D[:, 0] kron x0.
        K = np.kron(table.D[:, 1:], np.eye(2)) - h * np.kron(np.eye(stages), J)
        for i in range(N):
            start = mesh.interval_start[i]
            rhs = -np.kron(table.D[:, 0], nodes[start])
            nodes[start + 1 : start + stages + 1] = np.linalg.solve(K, rhs).reshape(stages, 2)
        t = np.linspace(0.0, 3.0, 301)
        exact = np.stack((np.cos(t), -np.sin(t)), axis=1)
        errors.append(np.max(np.abs(mesh.interpolate(nodes, t) - exact)))
    slope = -np.polyfit(np.log(Ns), np.log(errors), 1)[0]
    assert abs(slope - order) < 0.3, errors


def test_interpolate_bad_input():
    mesh = Mesh.equidistant(0.0, 1.0, 2, 2)
    good = np.zeros(mesh.n_nodes)
    with pytest.raises(ValueError, match="node_values"):
        mesh.interpolate(np.zeros(mesh.n_nodes + 1), 0.5)
    with pytest.raises(ValueError, match="node_values"):
        mesh.interpolate(np.full(mesh.n_nodes, np.nan), 0.5)
    with pytest.raises(ValueError, match=r"t\[1\] = 1.5"):
        mesh.interpolate(good, [0.5, 1.5])
    with pytest.raises(ValueError, match="t must"):
        mesh.derivative(good, [[0.5]])
    with pytest.raises(ValueError, match="t must be finite"):
        mesh.interpolate(good, [np.inf])


# ---------------------------------------------------------------------------------------------
# Construction, identity and validation


def test_equality_and_hash():
    a = Mesh.equidistant(0.0, 1.0, 4, 3)
    b = Mesh.from_grid(np.linspace(0.0, 1.0, 5), [3, 3, 3, 3])
    assert a == b and hash(a) == hash(b)
    assert a != Mesh.equidistant(0.0, 1.0, 4, 2)
    assert "intervals=4" in repr(a)


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: Mesh.from_grid([0.0, 1.0, 1.0], 3), r"grid must be strictly increasing"),
        (lambda: Mesh.from_grid([0.0, 2.0, 1.0], 3), r"grid\[1\] = .*2\.0"),
        (lambda: Mesh.from_grid([0.0, np.nan], 3), "grid must be finite"),
        (lambda: Mesh.from_grid([0.0], 3), "grid must hold at least 2"),
        (lambda: Mesh.from_grid([[0.0, 1.0]], 3), "grid must have 1 dimension"),
        (lambda: Mesh.from_grid([0.0, 1.0, 2.0], [3]), "stages must have one entry per"),
        (lambda: Mesh.from_grid([0.0, 1.0, 2.0], [3, 0]), r"stages\[1\] must be a positive"),
        (lambda: Mesh.from_grid([0.0, 1.0], [2.5]), r"stages\[0\] must be a positive"),
        (lambda: Mesh.from_grid([0.0, 1.0], 2.0), "stages must be a positive"),
        (lambda: Mesh.from_grid([0.0, 1.0], True), "stages must be a positive"),
        (lambda: Mesh.from_grid([0.0, 1.0], 201), "stages must be at most 200"),
        (lambda: Mesh.from_grid([0.0, 1.0, 2.0], [2, 300]), r"stages\[1\] must be at most 200"),
        (lambda: Mesh.from_grid([0.0, 1.0], [[2]]), "stages must be an int or a 1-D"),
        (lambda: Mesh.from_grid([1.0, 1.0 + 4e-16], 5), "grid interval 0 .* too short"),
        (lambda: Mesh.equidistant(0.0, 1.0, 0, 3), "intervals must be a positive"),
        (lambda: Mesh.equidistant(0.0, 1.0, 2.0, 3), "intervals must be a positive"),
        (lambda: Mesh.equidistant(1.0, 1.0, 2, 3), "tf must be greater than t0"),
        (lambda: Mesh.equidistant(2.0, 1.0, 2, 3), "tf must be greater than t0"),
        (lambda: Mesh.equidistant(0.0, np.inf, 2, 3), "tf must be finite"),
        (lambda: Mesh.equidistant(np.nan, 1.0, 2, 3), "t0 must be finite"),
        (lambda: Mesh.spectral(0.0, 1.0, 0), "nodes must be a positive"),
        (lambda: Mesh.spectral(0.0, 1.0, 250), "nodes must be at most 200"),
        (lambda: Mesh.equidistant(0.0, 1.0, 10**12, 2), r"^intervals needs 10{12} intervals \("),
    ],
)
def test_bad_input(make, match):
    with pytest.raises((ValueError, TypeError), match=match):
        make()
