"""FNODE: regression of the acceleration field on differentiated data, no solver in training.

Wang, Wang & Negrut, "FNODE: Flow-Matching for Data-Driven Simulation of Constrained Multibody
Systems". The network ``f_Θ(z, ż, u, μ)`` predicts ``z̈`` (FNODE eqs. 4, 8) and is fitted by plain
MSE to acceleration labels (eq. 28) obtained by differentiating the sampled velocities of the
training window (§2.3, eqs. 16–22; :mod:`collocnode.derivatives`). Inference integrates
``[ż, f_Θ]`` with a fixed-step scheme (eq. 9; RK4, or leapfrog for FNODE_LF). Constrained
mechanisms learn the independent coordinates only (§3.5, coordinate partitioning). First-order
systems regress ``x'`` the same way (the paper's vehicle model maps (q, u, Θ) to q̇).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from .. import _validation as v
from .. import derivatives as tg
from ..data import Trajectory
from .field import FieldTrainer, RolloutOptions

TARGETS = ("hybrid", "fft", "fd", "exact")


@dataclass(frozen=True)
class FNODEOptions(RolloutOptions):
    """FNODE options (defaults: FNODE Tables 2–8, Adam 1e-3, decay 0.98, 450 epochs, batch 1).

    Attributes:
        targets: acceleration labels: "hybrid" (FFT inside, FD at the ends; the paper's),
            "fft", "fd" (central differences), or "exact" (the system's true accelerations at the
            samples; the reference code's "analytical" option, for diagnosis only).
        reflection: mirror of eq. 19, "even" (as printed) or "odd" (see ``targets``).
        sigma: width of the Gaussian low-pass in frequency-index units (None: n/20, eq. 21;
            ``float("inf")``: no filter).
        edge_fraction: share of samples at each end that use finite differences (hybrid).
    """

    epochs: int = 450
    targets: str = "hybrid"
    reflection: str = "even"
    sigma: float | None = None
    edge_fraction: float = 0.02

    def __post_init__(self) -> None:
        super().__post_init__()
        v.choice("targets", self.targets, TARGETS)
        v.choice("reflection", self.reflection, ("even", "odd"))
        if self.sigma is not None and self.sigma != float("inf"):
            v.positive_float("sigma", self.sigma)
        f = v.nonnegative_float("edge_fraction", self.edge_fraction)
        if f >= 0.5:
            raise ValueError(f"edge_fraction must be < 0.5, got {self.edge_fraction}")


def fnode_targets(system: Any, traj: Trajectory, layout: Any, options: FNODEOptions) -> np.ndarray:
    """Derivative labels of one training trajectory: ``z̈`` of the model positions
    ``(n, n_q)`` (second order) or ``x'`` ``(n, n_states)`` (first order).

    Only ``traj`` is differentiated, so the labels cannot depend on samples after it.
    """
    z = layout.reduce(traj.x)
    if options.targets == "exact":
        if layout.second_order:
            acc = np.stack(
                [
                    system.acceleration(t, x, u if u.size else None)
                    for t, x, u in zip(traj.t, traj.x, traj.u, strict=True)
                ]
            )
            idx = list(layout.independent) if layout.partitioned else slice(None)
            return acc[:, idx]
        return np.stack(
            [
                system.rhs(t, x, u if u.size else None)
                for t, x, u in zip(traj.t, traj.x, traj.u, strict=True)
            ]
        )
    dt = tg.uniform_step(traj.t)
    signal = z[:, layout.n_q :] if layout.second_order else z
    kw: dict[str, Any] = {}
    if options.targets in ("fft", "hybrid"):
        kw = {"reflection": options.reflection, "sigma": options.sigma}
    if options.targets == "hybrid":
        kw["edge_fraction"] = options.edge_fraction
    return tg.derivative(signal, dt, options.targets, **kw)


class FNODE(FieldTrainer):
    """FNODE trainer; see the module docstring."""

    name = "fnode"
    options_class = FNODEOptions
    # FNODE Tables 2–8 (paper) and the per-case weight decay / gradient clip of its code. The
    # reference code differentiates the double pendulum by FD only ("chaotic, FFT unsuitable").
    # The cart-pole uses FD too: its pole swings through the bottom, and the Gaussian filter of
    # eq. 21 (σ = n/20) smooths its accelerations so much that the RMS error of the hybrid labels
    # is 33 % of their RMS (measured; docs/pytorch_methods.md), against 1 % for FD labels.
    PAPER = {
        "sms": {"weight_decay": 1e-3, "grad_clip": 1.0, "integrator": "leapfrog"},
        "smsd": {"weight_decay": 9e-5, "grad_clip": 0.3},
        "tmsd": {"weight_decay": 5e-5, "grad_clip": 1.0},
        "double_pendulum": {
            "lr": 3e-3,
            "weight_decay": 5e-4,
            "grad_clip": 1.0,
            "targets": "fd",
        },
        "slider_crank": {
            "lr": 5e-4,
            "lr_decay": 0.99,
            "weight_decay": 1e-4,
            "grad_clip": 1.0,
            "hidden": (256, 256, 256),
        },
        "cart_pole": {"weight_decay": 1e-5, "grad_clip": 1.0, "targets": "fd"},
        "vehicle4dof": {
            "lr": 1e-4,
            "optimizer": "adamw",
            "epochs": 300,
            "hidden": (256,) * 6,
        },
        # no paper runs FNODE on the quarter vehicle: its default settings, with the data-derived
        # input/output scaling on, as the states are millimetres and the derivatives up to
        # tens of m/s² (raw signals leave a tanh net nearly linear and badly conditioned)
        "qvm": {"normalize": True},
    }

    def _setup(self, system: Any, trajs: list[Trajectory]) -> int:
        self._prepare(system, trajs)
        feats, labels = [], []
        for tr, mu in zip(trajs, self.train_params, strict=True):
            feats.append(self._net_inputs(tr, mu))
            labels.append(fnode_targets(system, tr, self.layout, self.options))
        X, Y = np.concatenate(feats), np.concatenate(labels)
        self._build_field(X, Y)
        self._X, self._Y = self._tensor(X), self._tensor(Y)
        return X.shape[0]

    def _loss(self, idx: torch.Tensor) -> torch.Tensor:
        # FNODE eq. 28: mean over samples of the squared error norm
        err = self.field.net(self._X[idx]) - self._Y[idx]
        return (err * err).sum(dim=-1).mean()
