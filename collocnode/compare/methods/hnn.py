"""HNN: Hamiltonian neural network, fitted to derivative labels.

Greydanus, Dzamba & Yosinski, "Hamiltonian Neural Networks" (NeurIPS 2019); a baseline of the
MBD-NODE paper (Wang et al., Multibody Syst. Dyn. 2024, Tables 3–6, "Model B"). A scalar MLP
``H_Θ(q, p)`` defines the field by Hamilton's equations (Greydanus eq. 2)::

    dq/dt = ∂H/∂p,        dp/dt = −∂H/∂q.

The state of our second-order systems is ``(q, q')``; the momentum is taken as ``p = q'``. That
is canonical up to a constant factor when the mass matrix is a constant multiple of the identity,
``M = m I`` (the mass-spring and single-pendulum presets): with ``p = m q'`` canonical and
``H_can`` the energy, ``H = H_can / m`` gives exactly the equations above in ``(q, q')``, so the
network learns the energy divided by the mass. For other mass matrices (e.g. the double
pendulum) ``(q, q')`` is not a canonical pair and the HNN is a biased model.

Training regresses the symplectic gradient on derivative data, as the MBD-NODE paper gives HNN
(its Table 13 caption): the loss is the mean over samples of
``‖(∂H/∂p, −∂H/∂q) − (q', q'')_label‖²``, with ``q'`` from the data and ``q''`` from the labels
FNODE uses (`fnode_targets`). Both halves are learned: the position rate of the
model is ``∂H/∂p``, not the state's ``q'``. The rollout integrates that field with RK4 (MBD-NODE
Table 5, "HNN, RK4"); leapfrog and the MBD-NODE code's RK4 are refused because they advance
``q`` with the state's ``q'`` and would ignore ``∂H/∂p``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from ...tools._fixed_step import INTEGRATORS
from .energy import EnergyOptions, ScalarField, ScalarTrainer
from .field import data_stats


@dataclass(frozen=True)
class HNNOptions(EnergyOptions):
    """HNN options. Defaults (general, after Greydanus et al.'s spring experiment): tanh,
    2 × 256, 2000 full-batch Adam steps at lr 1e-3 without decay, RK4, finite-difference
    labels (``targets="fd"``). With ``full_batch`` an epoch is one optimizer step."""

    epochs: int = 2000
    lr_decay: float = 1.0
    full_batch: bool = True

    def __post_init__(self) -> None:
        super().__post_init__()
        if INTEGRATORS[self.integrator].second_order_only:
            # leapfrog and the MBD-NODE code's RK4 advance q with the state's q'
            raise ValueError(
                f"integrator {self.integrator!r} does not apply to HNN: its position update "
                "uses the state's q' and would ignore the learned dq/dt = ∂H/∂p; use 'rk4', "
                "'midpoint' or 'euler'"
            )


class HamiltonianField(ScalarField):
    """``dz/dt = (∂H/∂p, −∂H/∂q)`` of the scalar network ``H(z)``, ``z = (q, p)``, ``p = q'``.

    Shapes: ``z`` (..., 2 n_q) -> (..., 2 n_q); ``H`` in state units² per second² (the energy
    per unit mass for ``M = m I``).
    """

    def time_derivative(self, z: torch.Tensor) -> torch.Tensor:
        """Greydanus eq. 2: ``(∂H/∂p, −∂H/∂q)``, shape (..., 2 n_q)."""
        n = self.layout.n_q
        g = self.gradient(z)
        return torch.cat([g[..., n:], -g[..., :n]], dim=-1)

    def acceleration(self, z: torch.Tensor) -> torch.Tensor:
        return -self.gradient(z)[..., : self.layout.n_q]

    def forward(self, z: torch.Tensor, u: torch.Tensor, mu: torch.Tensor) -> torch.Tensor:
        return self.time_derivative(z)


class SquaredInputHamiltonianField(HamiltonianField):
    """A `HamiltonianField` whose network reads the squared state, ``H(z ⊙ z)``: the
    SNDE code's HNN for the two-body problem (App. D.1; its first layer squares the inputs),
    whose Hamiltonian ``|p|²/2 − 1/|q|`` is even in every coordinate. Shapes as the parent;
    the spec describes the network of ``z ⊙ z``."""

    def scalar(self, z: torch.Tensor) -> torch.Tensor:
        return self.net(z * z)[..., 0]


def hamiltonian_output_scale(input_scale: np.ndarray, labels: np.ndarray, n_q: int) -> float:
    """The output scale of an HNN network when ``normalize`` is on.

    ``∂H/∂z_i ≈ scale / input_scale_i`` and its labels are ``±labels[:, i']`` (the symplectic
    partner; ``labels`` (n, 2 n_q) are ``(q', q'')``): the geometric mean of (label std · input
    std) puts every one near order one."""
    partner = np.concatenate([labels[:, n_q:], labels[:, :n_q]], axis=1)
    return float(np.exp(np.mean(np.log(data_stats(partner)[1] * input_scale))))


class HNN(ScalarTrainer):
    """HNN trainer; see the module docstring. Its block "H" is the Hamiltonian network."""

    name = "hnn"
    options_class = HNNOptions
    field_class = HamiltonianField
    block = "H"
    options: HNNOptions
    field: HamiltonianField
    # MBD-NODE Table 6 (sms): 30,000 epochs, Adam 1e-3, 2 x 256. The table's decay 0.98 per
    # epoch would leave lr = 1e-3 · 0.98^30000 ≈ 0 after a few hundred epochs; the authors'
    # script trains full batch with weight decay 1e-4 and no scheduler, which is what runs here.
    # Their script used the exact derivatives of Greydanus's spring data set; every method here
    # gets the same finite-difference labels ("fd"; "exact" is an option).
    PAPER = {
        "sms": {
            "epochs": 30_000,
            "lr": 1e-3,
            "lr_decay": 1.0,
            "weight_decay": 1e-4,
            "full_batch": True,
            "hidden": (256, 256),
            "targets": "fd",
        },
    }

    def _labels(self, z: np.ndarray, acc: np.ndarray) -> np.ndarray:
        # (q', q''): the position rate is the data's own velocity
        return np.concatenate([z[:, self.layout.n_q :], acc], axis=1)

    def _predicted(self, z: torch.Tensor) -> torch.Tensor:
        return self.field.time_derivative(z)

    def _scalar_scale(self, input_scale: np.ndarray, labels: np.ndarray) -> float:
        return hamiltonian_output_scale(input_scale, labels, self.layout.n_q)
