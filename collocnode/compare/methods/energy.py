"""Trainers whose network is a scalar function of the state — an energy (HNN) or a Lagrangian
(LNN) — and whose vector field follows from it by automatic differentiation.

Both regress the derived field on the derivative labels that FNODE uses
(`collocnode.compare.methods.labels`), with the loss of FNODE eq. 28 (mean over samples of the
squared error norm), and roll out with the fixed-step integrators of FNODE and MBD-NODE (RK4 by
default, as in MBD-NODE Table 5). The network input is the model state ``z = (q, q')`` of
`StateLayout` — the independent coordinates of a partitioned mechanism, as for FNODE — so
``predict``, the rollout, devices and budgets are those of `FieldTrainer`.

They apply to second-order systems without known inputs u(t) and without parameter inputs μ:
the scalar is a function of ``(q, q')`` alone, the autonomous conservative setting of both
papers. Dissipative systems are accepted (the method applies), but the learned flow conserves
the learned scalar, so it cannot follow the damping.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, ClassVar

import numpy as np
import torch

from ..._data import Trajectory
from ...nn import MLP
from .base import NotApplicableError
from .field import FieldTrainer, NeuralField, data_stats
from .labels import LabelOptions, fnode_targets


@dataclass(frozen=True)
class EnergyOptions(LabelOptions):
    """Options shared by HNN and LNN.

    Defaults that differ from FNODE's: ``targets="fd"`` (central differences, the labels every
    method of the comparison can be given alike; "exact" is what the MBD-NODE authors' scripts
    used, see the method modules); float32, the dtype of the MBD-NODE authors' HNN and LNN
    scripts.

    Attributes:
        full_batch: every optimizer step uses all training samples and ``batch_size`` is
            ignored (``fit`` sets it to the number of samples), as in the HNN code of Greydanus
            et al. and the MBD-NODE authors' HNN script.
    """

    targets: str = "fd"
    full_batch: bool = False
    dtype: str = "float32"

    def __post_init__(self) -> None:
        super().__post_init__()
        if not isinstance(self.full_batch, bool):
            raise TypeError(f"full_batch must be a bool, got {self.full_batch!r}")


def input_leaf(z: torch.Tensor) -> torch.Tensor:
    """``z`` itself if autograd already tracks it, else a leaf copy that requires grad."""
    return z if z.requires_grad else z.detach().requires_grad_(True)


def grad_of_sum(y: torch.Tensor, z: torch.Tensor, create_graph: bool) -> torch.Tensor:
    """``∂(Σ y)/∂z``, the shape of ``z`` (zeros where ``y`` does not depend on ``z``).

    When each row of ``y`` depends on the same row of ``z`` only, this is the per-row gradient
    of the whole batch in one backward pass. Plain autograd: on the small batches of training
    and on the single state of a rollout it is several times faster than ``torch.func``
    transforms, whose per-call overhead dominates there (measured for the LNN's gradient and
    Hessian on 1–32 states of a 2 × 32 or 2 × 256 network: 0.5–2.8 ms against 4.5–10 ms).
    """
    if not y.requires_grad:
        return torch.zeros_like(z)
    (g,) = torch.autograd.grad(
        y.sum(),
        z,
        create_graph=create_graph,
        retain_graph=True,
        allow_unused=True,
        materialize_grads=True,
    )
    return g


class ScalarField(NeuralField):
    """A vector field derived from a scalar network ``s(z)``.

    ``net`` maps the model state ``z`` (..., n_model) to (..., 1); it has no input or parameter
    channels (see the module docstring). Subclasses define `acceleration`. The derivatives
    of ``s`` are taken with autograd also inside ``torch.no_grad`` (the rollout), where they are
    returned detached; with grad enabled (training) they keep the graph to the weights.
    """

    def scalar(self, z: torch.Tensor) -> torch.Tensor:
        """The network's scalar at ``z`` (..., n_model): shape (...)."""
        return self.net(z)[..., 0]

    def gradient(self, z: torch.Tensor) -> torch.Tensor:
        """``∇_z s`` at ``z`` (..., n_model): shape (..., n_model)."""
        train = torch.is_grad_enabled()
        with torch.enable_grad():
            zz = input_leaf(z)
            g = grad_of_sum(self.scalar(zz), zz, create_graph=train)
        return g if train else g.detach()

    def acceleration(self, z: torch.Tensor) -> torch.Tensor:
        """The accelerations ``(..., n_q)`` of the model positions at ``z``."""
        raise NotImplementedError

    def output(self, z: torch.Tensor, u: torch.Tensor, mu: torch.Tensor) -> torch.Tensor:
        return self.acceleration(z)


def build_scalar_field(
    field_class: type[ScalarField],
    net_inputs: np.ndarray,
    output_scale: float,
    options: Any,
    layout: Any,
    dtype: Any,
    device: Any,
) -> ScalarField:
    """A ``field_class`` of a new MLP ``n_model -> options.hidden -> 1`` (``options.seed``'s
    initial weights); with ``options.normalize`` the spec carries the mean/std of
    ``net_inputs`` (n, n_model), what the network reads, and ``output_scale``."""
    kw: dict[str, Any] = {}
    if options.normalize:
        shift, scale = data_stats(net_inputs)
        kw = {
            "input_shift": tuple(shift),
            "input_scale": tuple(scale),
            "output_scale": (output_scale,),
        }
    spec = MLP((layout.n_model, *options.hidden, 1), options.activation, options.init, **kw)
    weights = spec.init_weights(np.random.default_rng(options.seed))
    return field_class(spec, layout, weights, dtype, device)


class ScalarTrainer(FieldTrainer):
    """Shared parts of HNN and LNN: applicability, labels, the scalar network and its block.

    Subclasses set ``field_class`` and ``block`` and define what the loss compares
    (`_labels`, `_predicted`).
    """

    options_class = EnergyOptions
    field_class: ClassVar[type[ScalarField]] = ScalarField
    block: ClassVar[str] = "s"

    options: EnergyOptions
    field: ScalarField

    # --- applicability ---------------------------------------------------------------------------
    @classmethod
    def not_applicable(cls, system: Any) -> str | None:
        if not int(getattr(system, "n_coords", 0) or 0):
            return (
                "it learns a scalar of (q, q') and needs a second-order system (state [q, q']); "
                f"{system.name} is first order"
            )
        if system.n_inputs:
            return (
                "it learns an autonomous conservative model, a scalar of (q, q') alone; "
                f"{system.name} has known inputs ({', '.join(system.input_names)})"
            )
        return None

    def _require_applicable(self, system: Any) -> None:
        super()._require_applicable(system)
        # parameter inputs are an option, not a property of the system, so the class-level
        # not_applicable cannot see them
        if self.options.param_inputs:
            raise NotApplicableError(
                f"{self.name} does not apply with parameter inputs "
                f"{self.options.param_inputs!r}: its scalar is a function of (q, q') alone"
            )

    # --- what a subclass compares ----------------------------------------------------------------
    def _labels(self, z: np.ndarray, acc: np.ndarray) -> np.ndarray:
        """Loss targets from the model states ``z`` (n, n_model) and acceleration labels
        ``acc`` (n, n_q)."""
        raise NotImplementedError

    def _predicted(self, z: torch.Tensor) -> torch.Tensor:
        """What the model predicts for the targets of `_labels` at ``z`` (B, n_model)."""
        raise NotImplementedError

    def _scalar_scale(self, input_scale: np.ndarray, labels: np.ndarray) -> float:
        """Output scale of the network when ``normalize`` is on (1: the loss is invariant)."""
        return 1.0

    # --- setup and loss --------------------------------------------------------------------------
    def _setup(self, system: Any, trajs: list[Trajectory]) -> int:
        self._prepare(system, trajs)
        zs, labels = [], []
        for tr in trajs:
            z = self.layout.reduce(tr.x)
            zs.append(z)
            labels.append(self._labels(z, fnode_targets(system, tr, self.layout, self.options)))
        Z, Y = np.concatenate(zs), np.concatenate(labels)
        self._build_scalar(Z, Y)
        self._Z, self._Y = self._tensor(Z), self._tensor(Y)
        if self.options.full_batch:
            self.options = replace(self.options, batch_size=Z.shape[0])
        return Z.shape[0]

    def _build_scalar(self, z: np.ndarray, labels: np.ndarray) -> None:
        """The MLP spec ``n_model -> hidden -> 1`` (normalised by the data if asked)."""
        scale = self._scalar_scale(data_stats(z)[1], labels) if self.options.normalize else 1.0
        self.field = build_scalar_field(
            self.field_class, z, scale, self.options, self.layout, self.dtype, self.device
        )

    def _loss(self, idx: torch.Tensor) -> torch.Tensor:
        # FNODE eq. 28 form: mean over samples of the squared error norm
        err = self._predicted(self._Z[idx]) - self._Y[idx]
        return (err * err).sum(dim=-1).mean()

    # --- the scalar network ----------------------------------------------------------------------
    def blocks(self) -> dict[str, MLP]:
        """The scalar network's spec under ``block`` ("H" or "L"): it maps ``z = [q, q']`` to an
        energy or a Lagrangian, not to a vector field, so the collocation side cannot load it
        as its field ``f``."""
        self._require_fitted()
        return {self.block: self.field.spec}

    def get_weights(self) -> dict[str, np.ndarray]:
        """Flat float64 weights of the scalar network under ``block`` (see `blocks`)."""
        self._require_fitted()
        return {self.block: self.field.net.get_flat()}

    def set_weights(self, weights: Mapping[str, np.ndarray]) -> None:
        """Load flat weights of the scalar network from ``weights[block]``."""
        self._require_fitted()
        self.field.net.set_flat(weights[self.block])
