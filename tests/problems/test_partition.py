"""Coordinate partitioning helpers against closed-form recoveries."""

from __future__ import annotations

import numpy as np
import pytest

from collocnode.problems import _partition as pt

L = 1.5


# A pendulum in Cartesian coordinates: q = (x, y), Φ = x² + y² − L², x independent.
def circle_phi(q):
    return (q[..., 0] ** 2 + q[..., 1] ** 2 - L**2)[..., None]


def circle_phi_q(q):
    return 2 * q[..., None, :]


# Two constraints on q = (a, b, c): b = sin a, c = b² + a; a independent.
def chain_phi(q):
    a, b, c = q[..., 0], q[..., 1], q[..., 2]
    return np.stack([b - np.sin(a), c - b**2 - a], axis=-1)


def chain_phi_q(q):
    a, b = q[..., 0], q[..., 1]
    one, zero = np.ones_like(a), np.zeros_like(a)
    return np.stack(
        [np.stack([-np.cos(a), one, zero], -1), np.stack([-one, -2 * b, one], -1)], axis=-2
    )


def test_positions_single_and_batched():
    x = np.linspace(-1.4, 1.4, 7)
    q = pt.recover_positions(circle_phi, circle_phi_q, x[:, None], np.array([0.0, -1.0]), [0])
    assert q.shape == (7, 2)
    np.testing.assert_allclose(q[:, 0], x)
    np.testing.assert_allclose(q[:, 1], -np.sqrt(L**2 - x**2), rtol=1e-13)
    assert np.max(np.abs(circle_phi(q))) <= 1e-12
    # the guess picks the branch
    one = pt.recover_positions(circle_phi, circle_phi_q, np.array([0.3]), np.array([0.0, 2.0]), [0])
    assert one.shape == (2,)
    np.testing.assert_allclose(one[1], np.sqrt(L**2 - 0.09), rtol=1e-12)


def test_two_constraints_recover_exactly():
    a = np.array([[-2.0], [0.1], [3.0]])
    q = pt.recover_positions(chain_phi, chain_phi_q, a, np.zeros(3), (0,))
    np.testing.assert_allclose(q[:, 1], np.sin(a[:, 0]), atol=1e-14)
    np.testing.assert_allclose(q[:, 2], np.sin(a[:, 0]) ** 2 + a[:, 0], atol=1e-13)


def test_velocities_and_velocity_map():
    x, xd = np.array([0.4, -1.1]), np.array([2.0, -0.5])
    q = pt.recover_positions(circle_phi, circle_phi_q, x[:, None], np.array([0.0, -1.0]), [0])
    qd = pt.recover_velocities(circle_phi_q, q, xd[:, None], [0])
    s = np.sqrt(L**2 - x**2)
    np.testing.assert_allclose(qd[:, 1], x * xd / s, rtol=1e-13)  # d/dt of y = −s(x)
    np.testing.assert_allclose(np.einsum("...ij,...j->...i", circle_phi_q(q), qd), 0, atol=1e-13)
    jac = pt.velocity_map(circle_phi_q, q, [0])
    assert jac.shape == (2, 2, 1)
    np.testing.assert_allclose(jac[..., 0] * xd[:, None], qd, rtol=1e-13)


def test_accelerations_match_second_derivative():
    x, xd, xdd = 0.7, -1.3, 0.4
    q = pt.recover_positions(circle_phi, circle_phi_q, [x], np.array([0.0, -1.0]), [0])
    qd = pt.recover_velocities(circle_phi_q, q, [xd], [0])
    gamma = np.array([-2 * (qd @ qd)])  # Φ_q q'' = −2 |q'|²
    qdd = pt.recover_accelerations(circle_phi_q, q, [xdd], gamma, [0])
    s = np.sqrt(L**2 - x**2)
    np.testing.assert_allclose(qdd[1], (xd**2 + x * xdd) / s + x**2 * xd**2 / s**3, rtol=1e-12)


def test_check_partition_detects_singular_choice():
    q = np.array([[0.3, -np.sqrt(L**2 - 0.09)], [L, 0.0]])
    cond = pt.check_partition(circle_phi_q, q[:1], [0])
    assert cond.shape == (1,) and np.all(cond < 10)
    with pytest.raises(ValueError, match=r"independent = \[0\].*singular.*index \(1,\)"):
        pt.check_partition(circle_phi_q, q, [0])
    # two independent coordinates leave no dependent one for the one constraint
    with pytest.raises(ValueError, match="independent"):
        pt.check_partition(circle_phi_q, q[0], [0, 1])


def test_newton_failure_is_reported():
    # no configuration with x > L exists
    with pytest.raises(pt.NewtonConvergenceError, match=r"did not converge|singular"):
        pt.recover_positions(circle_phi, circle_phi_q, [2.0], np.array([0.0, -1.0]), [0])
    with pytest.raises(pt.NewtonConvergenceError, match="1 iterations"):
        pt.recover_positions(
            circle_phi, circle_phi_q, [0.3], np.array([0.0, -5.0]), [0], max_iter=1
        )


@pytest.mark.parametrize(
    ("independent", "error"),
    [([2], ValueError), ([0, 0], ValueError), ([0, 1], ValueError), ([], ValueError)],
)
def test_bad_independent_sets(independent, error):
    with pytest.raises(error, match="independent"):
        pt.split_indices(2, independent)


def test_bad_arguments():
    with pytest.raises(TypeError, match="independent"):
        pt.split_indices(3, [0.5])
    with pytest.raises(ValueError, match="q_independent"):
        pt.recover_positions(circle_phi, circle_phi_q, [0.1, 0.2], np.zeros(2), [0])
    with pytest.raises(ValueError, match="tol"):
        pt.recover_positions(circle_phi, circle_phi_q, [0.1], np.zeros(2), [0], tol=-1.0)
    with pytest.raises(ValueError, match="q_guess"):
        pt.recover_positions(circle_phi, circle_phi_q, [0.1], np.array([0.0, np.nan]), [0])
