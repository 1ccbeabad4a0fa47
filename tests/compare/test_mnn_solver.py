"""The MNN least-squares ODE solver against exact solutions, and its implicit gradients."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from collocnode.compare.methods.mnn_solver import ODEShape, ode_system, solve_ode

F64 = torch.float64


def _const(coeffs, T, B=1):
    return torch.tensor(coeffs, dtype=F64).expand(B, T, len(coeffs)).clone()


@pytest.mark.parametrize(
    ("coeffs", "iv", "exact"),
    [
        ([1.0, 0.0, 1.0], [0.0, 1.0], lambda t: np.sin(t)),  # u'' + u = 0
        ([1.0, 1.0], [1.0], lambda t: np.exp(-t)),  # u' + u = 0
        ([2.0, 0.5, 1.0], [1.0, 0.0], None),  # damped: compared with scipy below
    ],
    ids=["harmonic", "decay", "damped"],
)
def test_solution_converges_to_the_exact_one_with_second_order(coeffs, iv, exact):
    if exact is None:
        from scipy.integrate import solve_ivp

        def exact(t):
            sol = solve_ivp(
                lambda _, y: [y[1], -2.0 * y[0] - 0.5 * y[1]],
                (0, t[-1]),
                [1.0, 0.0],
                t_eval=t,
                rtol=1e-12,
                atol=1e-12,
            )
            return sol.y[0]

    errs = []
    for h in (0.1, 0.05, 0.025):
        T = round(4.0 / h) + 1
        t = np.arange(T) * h
        u = solve_ode(
            _const(coeffs, T),
            torch.zeros(1, T, dtype=F64),
            torch.tensor([iv], dtype=F64),
            torch.full((1, T - 1), h, dtype=F64),
        )
        assert u.shape == (1, T, len(coeffs))
        errs.append(np.max(np.abs(u[0, :, 0].numpy() - exact(t))))
    assert errs[-1] < 2e-3
    assert np.allclose(np.diff(np.log2(errs)), -2.0, atol=0.3), errs


def test_derivative_variables_are_the_derivatives():
    T, h = 81, 0.05
    t = np.arange(T) * h
    u = solve_ode(
        _const([1.0, 0.0, 1.0], T),
        torch.zeros(1, T, dtype=F64),
        torch.tensor([[0.0, 1.0]], dtype=F64),
        torch.full((1, T - 1), h, dtype=F64),
    )[0].numpy()
    assert np.max(np.abs(u[:, 1] - np.cos(t))) < 5e-3
    assert np.max(np.abs(u[:, 2] + np.sin(t))) < 5e-3


def test_forcing_and_nonuniform_steps():
    # u' = cos(t) (c = [0, 1], b = cos t), u(0) = 0 -> sin(t) on a non-uniform grid
    rng = np.random.default_rng(0)
    h = rng.uniform(0.02, 0.05, size=79)
    t = np.concatenate([[0.0], np.cumsum(h)])
    T = t.size
    u = solve_ode(
        _const([0.0, 1.0], T),
        torch.tensor(np.cos(t)[None], dtype=F64),
        torch.zeros(1, 1, dtype=F64),
        torch.tensor(h[None], dtype=F64),
    )[0, :, 0].numpy()
    assert np.max(np.abs(u - np.sin(t))) < 1e-3


def test_system_shape_matches_the_row_count():
    for T, R in ((5, 1), (6, 2), (7, 3)):
        shape = ODEShape(T, R)
        M, r = ode_system(
            torch.rand(2, T, R + 1, dtype=F64),
            torch.rand(2, T, dtype=F64),
            torch.rand(2, R, dtype=F64),
            torch.full((2, T - 1), 0.1, dtype=F64),
        )
        assert M.shape == (2, shape.n_rows, shape.n_vars)
        assert r.shape == (2, shape.n_rows)
        # every row constrains something
        assert torch.all(M.abs().sum(-1) > 0)


@pytest.mark.parametrize("ridge", [0.0, 1e-3])
@pytest.mark.parametrize("order", [1, 2])
def test_implicit_gradients_match_finite_differences(ridge, order):
    torch.manual_seed(0)
    B, T = 2, 6
    top = torch.zeros(order + 1, dtype=F64)
    top[-1] = 1.0
    c = (0.3 * torch.randn(B, T, order + 1, dtype=F64) + top).requires_grad_()
    b = torch.randn(B, T, dtype=F64, requires_grad=True)
    iv = torch.randn(B, order, dtype=F64, requires_grad=True)
    h = (0.1 + 0.05 * torch.rand(B, T - 1, dtype=F64)).requires_grad_()
    assert torch.autograd.gradcheck(
        lambda c, b, iv, h: solve_ode(c, b, iv, h, ridge=ridge), (c, b, iv, h)
    )


def test_backward_agrees_with_autograd_through_a_dense_solve():
    torch.manual_seed(1)
    B, T, R = 3, 7, 2
    c = (0.3 * torch.randn(B, T, R + 1, dtype=F64) + torch.tensor([0, 0, 1.0])).requires_grad_()
    b = torch.randn(B, T, dtype=F64)
    iv = torch.randn(B, R, dtype=F64)
    h = torch.full((B, T - 1), 0.1, dtype=F64)
    w = torch.randn(B, T, R + 1, dtype=F64)
    (solve_ode(c, b, iv, h) * w).sum().backward()
    ours = c.grad.clone()
    c.grad = None
    M, r = ode_system(c, b, iv, h)
    z = torch.linalg.lstsq(M, r.unsqueeze(-1)).solution.squeeze(-1)
    (z.reshape(B, T, R + 1) * w).sum().backward()
    torch.testing.assert_close(ours, c.grad, rtol=1e-7, atol=1e-9)


def test_bad_shapes_name_the_argument():
    with pytest.raises(ValueError, match="steps"):
        solve_ode(
            _const([1.0, 1.0], 5),
            torch.zeros(1, 5, dtype=F64),
            torch.zeros(1, 1, dtype=F64),
            torch.full((1, 5), 0.1, dtype=F64),
        )
    with pytest.raises(ValueError, match="order R >= 1"):
        solve_ode(
            _const([1.0], 5),
            torch.zeros(1, 5, dtype=F64),
            torch.zeros(1, 0, dtype=F64),
            torch.full((1, 4), 0.1, dtype=F64),
        )
