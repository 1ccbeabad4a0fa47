"""LNN: Lagrangian neural network, fitted to acceleration labels.

Cranmer, Greydanus, Hoyer, Battaglia, Spergel & Ho, "Lagrangian Neural Networks" (ICLR 2020
workshop); a baseline of the MBD-NODE paper (Wang et al., Multibody Syst. Dyn. 2024, Tables 3–6,
"Model C"). A scalar MLP ``L_Θ(q, q')`` defines the accelerations by the Euler–Lagrange equations
solved for ``q''`` (Cranmer eq. 6)::

    q'' = (∇_q' ∇_q'ᵀ L)⁻¹ [∇_q L − (∇_q ∇_q'ᵀ L) q'],

where the mixed matrix has entries ``∂²L/∂q'_i ∂q_j`` (row i: the equation of ``q_i``), which is
what ``d/dt ∂L/∂q'`` needs. The derivatives come from double back-propagation with torch
autograd, batched; the linear system is solved by LU (``torch.linalg.solve_ex``).
Where ``∇_q' ∇_q'ᵀ L`` is singular the acceleration is NaN, so a rollout reaching such a state
raises `DivergenceError` and a training loss there reads
"diverged".

Training: the mean over samples of ``‖q''_Θ − q''_label‖²`` (FNODE eq. 28 form) on the labels
FNODE uses (`fnode_targets`). The ``q'`` half of the field is the state's own
velocity and identically right, so it is left out of the loss; Cranmer's MSE over ``(q', q'')``
differs from this only by a constant factor. Rollout: ``(q', q'')`` with a fixed-step scheme, RK4
by default (MBD-NODE Table 5).

Activation: softplus, as Cranmer et al. use (any C² activation works: the loss needs third
derivatives of the network). The MBD-NODE authors' LNN has ``nn.Softmax`` layers — a softmax over
the hidden units, not an elementwise activation; we read it as an artifact and do not copy it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from .energy import EnergyOptions, ScalarField, ScalarTrainer, grad_of_sum, input_leaf


@dataclass(frozen=True)
class LNNOptions(EnergyOptions):
    """LNN options. Defaults (general): softplus, 2 × 256, Adam 1e-3 with decay 0.98 per epoch,
    batch size 32, 400 epochs, RK4, finite-difference labels (``targets="fd"``), and the
    gradient norm clipped to 1: a freshly initialised Lagrangian has nearly singular
    ``∇_q' ∇_q'ᵀ L`` at some samples, and the huge accelerations there otherwise leave Adam on a
    plateau (measured on ``sms``, 2 × 256, 40 epochs: epoch loss 15 without clipping, 0.03
    with; the labels' mean square is 12.5)."""

    epochs: int = 400
    activation: str = "softplus"
    batch_size: int = 32
    grad_clip: float | None = 1.0


class LagrangianField(ScalarField):
    """``dz/dt = (q', q'')`` with ``q''`` from the scalar network ``L(z)``, ``z = (q, q')``, by
    Cranmer eq. 6. Shapes: ``z`` (..., 2 n_q); `acceleration` (..., n_q). ``L`` has
    arbitrary units: ``q''`` does not change when ``L`` is scaled.
    """

    def derivatives(self, z: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``∇_z L`` (..., 2 n_q) and the rows of ``∇_z ∇_zᵀ L`` that belong to ``q'``,
        ``∂²L/∂q'_i ∂z_j`` (..., n_q, 2 n_q), at ``z`` (..., 2 n_q).

        Double back-propagation of the batch sum: one pass for the gradient, one per velocity
        component for the Hessian rows (the rows of ``z`` are independent, see
        `grad_of_sum`)."""
        n = self.layout.n_q
        train = torch.is_grad_enabled()
        with torch.enable_grad():
            zz = input_leaf(z)
            g = grad_of_sum(self.scalar(zz), zz, create_graph=True)
            rows = torch.stack(
                [grad_of_sum(g[..., n + i], zz, create_graph=train) for i in range(n)], dim=-2
            )
        return (g, rows) if train else (g.detach(), rows.detach())

    def acceleration(self, z: torch.Tensor) -> torch.Tensor:
        n = self.layout.n_q
        g, rows = self.derivatives(z)
        mass = rows[..., n:]  # ∇_q' ∇_q'ᵀ L
        mixed = rows[..., :n]  # ∂²L/∂q'_i ∂q_j
        rhs = g[..., :n] - (mixed @ z[..., n:, None])[..., 0]
        # solve_ex reports a singular matrix in `info` instead of raising: those rows become NaN
        # and surface as a diverged rollout or loss, like a blown-up field of the other methods
        acc, info = torch.linalg.solve_ex(mass, rhs[..., None])
        return torch.where((info == 0)[..., None], acc[..., 0], torch.full_like(rhs, np.nan))


class LNN(ScalarTrainer):
    """LNN trainer; see the module docstring. Its block "L" is the Lagrangian network."""

    name = "lnn"
    options_class = LNNOptions
    field_class = LagrangianField
    block = "L"
    options: LNNOptions
    field: LagrangianField
    # MBD-NODE Table 6 (sms): 400 epochs, Adam 1e-4, decay 0.98, 2 x 256; the authors' script
    # steps on one sample at a time (batch size 1). Their script used analytic derivatives
    # (get_xt_anal); every method here gets the same finite-difference labels ("fd"; "exact" is
    # an option). Softplus instead of their nn.Softmax (module docstring). No gradient clipping,
    # as the table gives none; at batch size 1 and lr 1e-4 the early outliers do no lasting harm
    # (measured: epoch loss 0.02-0.04 after 40 epochs).
    PAPER = {
        "sms": {
            "epochs": 400,
            "lr": 1e-4,
            "lr_decay": 0.98,
            "batch_size": 1,
            "grad_clip": None,
            "hidden": (256, 256),
            "activation": "softplus",
            "targets": "fd",
        },
    }

    def _labels(self, z: np.ndarray, acc: np.ndarray) -> np.ndarray:
        return acc

    def _predicted(self, z: torch.Tensor) -> torch.Tensor:
        return self.field.acceleration(z)
