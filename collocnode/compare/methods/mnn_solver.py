"""The relaxed ODE solver of Mechanistic Neural Networks, as a batched least-squares layer.

Pervez, Locatello & Gavves, "Mechanistic Neural Networks for Scientific Machine Learning"
(ICML 2024), §3. A linear ODE of order ``R`` with time-varying coefficients (MNN eq. 3 without
the nonlinear terms),

    Σ_{i=0..R} c_i(t) u^(i)(t) = b(t),

is discretized on ``T`` points ``t_1 < … < t_T`` with steps ``h_t = t_{t+1} − t_t``. The unknowns
are every derivative ``u_t^(i)``, ``i = 0..R``, at every point (``n = T (R+1)`` per problem,
ordered ``t``-major). The constraint rows are

* the equation at each point (eq. 10): ``Σ_i c_{t,i} u_t^(i) = b_t``;
* the initial values: ``u_1^(i) = u0_i`` for ``i < R``;
* forward Taylor smoothness for ``i < R`` (eq. 12):
  ``Σ_{j=i..R} h_t^{j−i}/(j−i)! u_t^(j) − u_{t+1}^(i) = 0``, and the same backwards in time with
  ``−h_{t−1}`` towards ``u_{t−1}`` (eq. 13);
* a central difference for the top order (App. A):
  ``(u_{t+1}^(R−1) − u_{t−1}^(R−1)) / (h_{t−1} + h_t) − u_t^(R) = 0``.

The paper relaxes the resulting LP (minimise the largest residual ε) to a quadratic programme
(eqs. 16–17); with the slack dropped this is the least-squares problem ``min_z ‖M z − r‖²`` (the
reduction the MNN code solves and the scalable follow-up states). Each Taylor row ``i`` is scaled
by ``h^i`` (and the central row by ``H^{R−1}``) so that every smoothness row of the exact solution
has a residual of the same order ``O(h^{R+1})`` and none dominates the fit.

The normal equations ``(MᵀM + λI) z = Mᵀ r`` are solved by a batched Cholesky factorisation.
Gradients use implicit differentiation of the normal equations (MNN eq. 18), reusing the factor:
with ``v = (MᵀM + λI)⁻¹ ∂ℓ/∂z``,

    ∂ℓ/∂r = M v,        ∂ℓ/∂M = −(M v) zᵀ − (M z − r) vᵀ,

and autograd carries ``∂ℓ/∂M`` on to the coefficients and steps, from which ``M`` is built.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class ODEShape:
    """Sizes of one discretized problem: ``T`` points, order ``R``; rows and unknowns."""

    n_points: int
    order: int
    central: bool = True

    @property
    def n_vars(self) -> int:
        return self.n_points * (self.order + 1)

    @property
    def n_rows(self) -> int:
        T, R = self.n_points, self.order
        central = (T - 2) if (self.central and R >= 1 and T >= 3) else 0
        return T + R + 2 * (T - 1) * R + central

    def var(self, t: int, i: int) -> int:
        """Column of ``u_t^(i)``."""
        return t * (self.order + 1) + i


def ode_system(
    coeffs: torch.Tensor,
    rhs: torch.Tensor,
    iv: torch.Tensor,
    steps: torch.Tensor,
    central: bool = True,
) -> tuple[torch.Tensor, torch.Tensor]:
    """The constraint matrix and right-hand side of the discretized ODE (see the module doc).

    Args:
        coeffs: ``(B, T, R+1)``, ``coeffs[..., t, i]`` multiplies ``u^(i)`` at point t.
        rhs: ``(B, T)``, the right-hand side ``b_t``.
        iv: ``(B, R)``, initial values ``u^(i)(t_1)`` for ``i < R``.
        steps: ``(B, T−1)``, positive step sizes ``h_t``.
        central: add the central-difference rows for the top order.

    Returns:
        ``M`` of shape ``(B, m, n)`` and ``r`` of shape ``(B, m)`` with ``n = T (R+1)``.
    """
    if coeffs.ndim != 3:
        raise ValueError(f"coeffs must have shape (B, T, R+1), got {tuple(coeffs.shape)}")
    B, T, R1 = coeffs.shape
    R = R1 - 1
    if R < 1 or T < 2:
        raise ValueError(f"need order R >= 1 and T >= 2 points, got R={R}, T={T}")
    for name, arr, shape in (
        ("rhs", rhs, (B, T)),
        ("iv", iv, (B, R)),
        ("steps", steps, (B, T - 1)),
    ):
        if tuple(arr.shape) != shape:
            raise ValueError(f"{name} must have shape {shape}, got {tuple(arr.shape)}")
    shape = ODEShape(T, R, central)
    M = coeffs.new_zeros((B, shape.n_rows, shape.n_vars))
    r = coeffs.new_zeros((B, shape.n_rows))
    row = 0
    dev = coeffs.device
    tt = torch.arange(T, device=dev)
    # equation rows (MNN eq. 10)
    for i in range(R + 1):
        M[:, row + tt, tt * (R + 1) + i] = coeffs[:, :, i]
    r[:, row : row + T] = rhs
    row += T
    # initial values
    for i in range(R):
        M[:, row + i, i] = 1.0
    r[:, row : row + R] = iv
    row += R
    # Taylor smoothness, forward (eq. 12) and backward (eq. 13), each scaled by h^i
    ts = torch.arange(T - 1, device=dev)
    for sign, here, there in ((1.0, ts, ts + 1), (-1.0, ts + 1, ts)):
        h = sign * steps  # (B, T-1): h_t forward from t, -h_{t-1} backward from t
        for i in range(R):
            rows = row + torch.arange(T - 1, device=dev)
            for j in range(i, R + 1):
                M[:, rows, here * (R + 1) + j] = h**j / math.factorial(j - i)
            M[:, rows, there * (R + 1) + i] = -(h**i)
            row += T - 1
    # central difference of the top order (App. A), scaled by H^(R-1)
    if central and T >= 3:
        mid = torch.arange(1, T - 1, device=dev)
        rows = row + torch.arange(T - 2, device=dev)
        H = steps[:, :-1] + steps[:, 1:]  # (B, T-2)
        M[:, rows, (mid + 1) * (R + 1) + R - 1] = H ** (R - 2) if R >= 2 else 1.0 / H
        M[:, rows, (mid - 1) * (R + 1) + R - 1] = -(H ** (R - 2)) if R >= 2 else -1.0 / H
        M[:, rows, mid * (R + 1) + R] = -(H ** (R - 1))
        row += T - 2
    return M, r


class LeastSquares(torch.autograd.Function):
    """``z = argmin ‖M z − r‖² + λ‖z‖²`` per batch item by Cholesky; implicit backward."""

    @staticmethod
    def forward(ctx, M, r, ridge):  # type: ignore[override]
        Mt = M.transpose(-1, -2)
        K = Mt @ M
        if ridge:
            K = K + ridge * torch.eye(K.shape[-1], dtype=K.dtype, device=K.device)
        L, info = torch.linalg.cholesky_ex(K)
        if bool((info > 0).any()):
            bad = int(torch.nonzero(info)[0, 0])
            raise torch.linalg.LinAlgError(
                f"normal equations of batch item {bad} are not positive definite "
                "(rank-deficient ODE system; raise ridge)"
            )
        z = torch.cholesky_solve((Mt @ r.unsqueeze(-1)), L).squeeze(-1)
        ctx.save_for_backward(M, r, z, L)
        return z

    @staticmethod
    def backward(ctx, gz):  # type: ignore[override]
        M, r, z, L = ctx.saved_tensors
        vv = torch.cholesky_solve(gz.unsqueeze(-1), L).squeeze(-1)  # (B, n)
        Mv = (M @ vv.unsqueeze(-1)).squeeze(-1)  # (B, m)
        res = (M @ z.unsqueeze(-1)).squeeze(-1) - r
        gM = -(Mv.unsqueeze(-1) * z.unsqueeze(-2)) - res.unsqueeze(-1) * vv.unsqueeze(-2)
        return gM, Mv, None


def solve_ode(
    coeffs: torch.Tensor,
    rhs: torch.Tensor,
    iv: torch.Tensor,
    steps: torch.Tensor,
    central: bool = True,
    ridge: float = 0.0,
) -> torch.Tensor:
    """Solve the relaxed discretized ODE; returns ``u`` of shape ``(B, T, R+1)`` with
    ``u[..., t, i]`` ≈ ``u^(i)(t_t)``. Arguments as in `ode_system`; ``ridge`` ≥ 0 adds
    ``ridge ‖z‖²`` (a constant, so the implicit gradient stays exact)."""
    M, r = ode_system(coeffs, rhs, iv, steps, central)
    z = LeastSquares.apply(M, r, float(ridge))
    return z.reshape(coeffs.shape)
