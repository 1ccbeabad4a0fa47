"""A learned vector field and the trainers built on one: FNODE, MBD-NODE, NODE and SNDE.

The network is an [`collocnode.nn.MLP`][collocnode.nn.MLP] spec instantiated with
``torch_module()``, so its flat weights load unchanged into the CasADi function of the same spec.
Its input is ``[z, u, μ]`` (model state, known inputs, parameter inputs) and its output the
accelerations of the model positions (second-order systems) or ``x'`` (first-order systems). An
augmented field (ANODE, ``augment`` extra states ``a``) reads ``[z, a, u, μ]`` and also outputs
``a'``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import torch
from torch import nn

from ... import _validation as v
from ..._data import Trajectory
from ...nn import MLP
from ...problems._layout import StateLayout
from ...tools._fixed_step import check_integrator, integrate
from .gradient import GradientOptions, GradientTrainer
from .inputs import InputSignal, StackedInputSignals, param_vector


@dataclass(frozen=True)
class FieldOptions(GradientOptions):
    """Options of every vector-field method.

    Attributes:
        partition: learn only the independent coordinates of a constrained second-order system.
        independent: the independent coordinate indices (default: the system's own choice).
    """

    partition: bool = True
    independent: tuple[int, ...] | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.independent is not None:
            object.__setattr__(self, "independent", tuple(int(i) for i in self.independent))


@dataclass(frozen=True)
class RolloutOptions(FieldOptions):
    """Options of the methods that roll out with a fixed-step scheme (FNODE, MBD-NODE).

    Attributes:
        integrator: "euler", "midpoint", "rk4", or for second-order systems only "leapfrog" and
            "rk4_mbdnode_code" (the MBD-NODE released code's first-order "RK4", for measuring
            its effect); also MBD-NODE's training step.
        substeps: integrator steps per sample interval in the rollout.
    """

    integrator: str = "rk4"
    substeps: int = 1

    def __post_init__(self) -> None:
        super().__post_init__()
        from ...tools._fixed_step import INTEGRATORS

        v.choice("integrator", self.integrator, INTEGRATORS)
        v.positive_int("substeps", self.substeps)


class NeuralField(nn.Module):
    """``dz/dt = F(t, z)`` with ``F = [z_v, net(z, u, μ)]`` (second order) or ``net(z, u, μ)``.

    Shapes: ``z`` (..., n_model + augment), ``u`` (..., n_inputs), ``mu`` (..., n_params) or
    (n_params,). With ``augment`` > 0 the state ends in the augmented states ``a`` and the
    network's output in ``a'`` (second order: state ``(q, v, a)``, ``(v', a') = net``).
    """

    def __init__(
        self,
        spec: MLP,
        layout: StateLayout,
        weights: np.ndarray,
        dtype: Any,
        device: Any,
        augment: int = 0,
    ) -> None:
        super().__init__()
        self.spec, self.layout, self.augment = spec, layout, augment
        self.net = spec.torch_module(weights, dtype=dtype, device=device)

    def features(self, z: torch.Tensor, u: torch.Tensor, mu: torch.Tensor) -> torch.Tensor:
        lead = z.shape[:-1]
        parts = [z]
        if u.shape[-1]:
            parts.append(u.expand(*lead, u.shape[-1]))
        if mu.shape[-1]:
            parts.append(mu.expand(*lead, mu.shape[-1]))
        return torch.cat(parts, dim=-1) if len(parts) > 1 else z

    def output(self, z: torch.Tensor, u: torch.Tensor, mu: torch.Tensor) -> torch.Tensor:
        """The network output: accelerations ``(..., n_q)`` or ``x'`` ``(..., n_states)``."""
        return self.net(self.features(z, u, mu))

    def forward(self, z: torch.Tensor, u: torch.Tensor, mu: torch.Tensor) -> torch.Tensor:
        out = self.output(z, u, mu)
        if self.layout.second_order:
            n_q = self.layout.n_q
            return torch.cat([z[..., n_q : 2 * n_q], out], dim=-1)
        return out


def data_stats(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Column means and standard deviations of ``a`` (n, k); constant columns get std 1."""
    mean, std = a.mean(axis=0), a.std(axis=0)
    std = np.where(std > 1e-12 * (1.0 + np.abs(mean)), std, 1.0)
    return mean, std


class FieldTrainer(GradientTrainer):
    """Shared parts of the vector-field trainers: network, weights, inputs, rollout."""

    options_class = FieldOptions
    # what predict_with_derivatives returns: the learned field at the rolled-out states
    derivative_source: ClassVar[str] = "field"

    # --- setup helpers --------------------------------------------------------------------------
    def _prepare(self, system: Any, trajs: list[Trajectory]) -> None:
        o = self.options
        self.layout = StateLayout.for_system(
            system, len(o.param_inputs), o.independent, partition=o.partition
        )
        if isinstance(o, RolloutOptions):
            check_integrator(o.integrator, self.layout.n_q if self.layout.second_order else 0)
        self.train_params = [
            param_vector(o.param_inputs, tr.params, f"train[{i}].params")
            for i, tr in enumerate(trajs)
        ]
        self._default_params = dict(trajs[0].params)

    def _net_inputs(self, traj: Trajectory, mu: np.ndarray) -> np.ndarray:
        """Network inputs ``[z, u, μ]`` at the samples of ``traj``: ``(n, n_net_in)``."""
        n = traj.n_samples
        z = self.layout.reduce(traj.x)
        return np.concatenate(
            [z, traj.u[:, : self.layout.n_inputs], np.broadcast_to(mu, (n, mu.size))], axis=1
        )

    def _tensor(self, a: np.ndarray) -> torch.Tensor:
        return torch.as_tensor(np.asarray(a, dtype=float), dtype=self.dtype, device=self.device)

    def _build_field(
        self, net_inputs: np.ndarray, outputs: np.ndarray | None, augment: int = 0
    ) -> None:
        """The MLP spec (normalised by the training data if asked) and its torch module.

        ``augment`` > 0 inserts that many augmented inputs after the model state and appends as
        many outputs; they are not normalised (shift 0, scale 1: they start at 0 and have no
        data)."""
        o, lay = self.options, self.layout
        kw: dict[str, Any] = {}
        if o.normalize:
            shift, scale = data_stats(net_inputs)
            at = lay.n_model
            shift = np.concatenate([shift[:at], np.zeros(augment), shift[at:]])
            scale = np.concatenate([scale[:at], np.ones(augment), scale[at:]])
            kw = {"input_shift": tuple(shift), "input_scale": tuple(scale)}
            if outputs is not None:
                out_scale = np.concatenate([data_stats(outputs)[1], np.ones(augment)])
                kw["output_scale"] = tuple(out_scale)
        sizes = (lay.n_net_in + augment, *o.hidden, lay.n_out + augment)
        spec = MLP(sizes, o.activation, o.init, **kw)
        weights = spec.init_weights(np.random.default_rng(o.seed))
        self.field = NeuralField(spec, lay, weights, self.dtype, self.device, augment)

    def modules(self) -> list[nn.Module]:
        return [self.field]

    # --- weights shared with the CasADi side ----------------------------------------------------
    @property
    def _block(self) -> str:
        """The block's name: ``"f"``, or ``"f_augmented"`` for an augmented field.

        An augmented network maps ``[z, a, u, μ]`` to ``[q'' or x', a']``: a CasADi model that
        loads ``"f"`` as ``[z, u, μ] -> q'' or x'`` cannot use it, so it is not offered under
        that name. Its spec still describes it exactly (sizes, scalings), so the CasADi side can
        evaluate it as a network, as it can the HNN's ``"H"``.
        """
        return "f_augmented" if getattr(self.field, "augment", 0) else "f"

    def blocks(self) -> dict[str, MLP]:
        """The network specs by name; ``"f"`` maps ``[z, u, μ]`` to ``q''`` or ``x'``
        (``"f_augmented"``: ``[z, a, u, μ]`` to ``[q'' or x', a']``)."""
        self._require_fitted()
        return {self._block: self.field.spec}

    def get_weights(self) -> dict[str, np.ndarray]:
        """Flat float64 weights per block, in the spec's layout (loadable by CasADi)."""
        self._require_fitted()
        return {self._block: self.field.net.get_flat()}

    def set_weights(self, weights: Mapping[str, np.ndarray]) -> None:
        """Load flat weights per block (e.g. trained on the collocation side)."""
        self._require_fitted()
        block = self._block
        if block not in weights:
            raise KeyError(f"set_weights needs the block {block!r}, got {sorted(weights)}")
        self.field.net.set_flat(weights[block])

    # --- rollout ---------------------------------------------------------------------------------
    def _mu(self, params: Mapping[str, float] | None) -> torch.Tensor:
        vals = param_vector(
            self.options.param_inputs, self._default_params if params is None else params
        )
        return self._tensor(vals)

    def _inputs(self, t: np.ndarray, u: object) -> InputSignal:
        default = self.system.inputs if self.system.n_inputs else None
        return InputSignal.from_any(
            self.system.n_inputs, t, u, default, dtype=self.dtype, device=self.device
        )

    def _signals_for(self, trajs: list[Trajectory]) -> None:
        """Per-trajectory input signals for training batches (piecewise-linear in the samples),
        stacked for one batched evaluation when every one is sampled."""
        self._signals = [self._inputs(tr.t, tr.u if self.layout.n_inputs else None) for tr in trajs]
        sampled = self.layout.n_inputs and all(s.sampled for s in self._signals)
        self._stacked_signals = StackedInputSignals(self._signals) if sampled else None

    def _batch_inputs(self, traj: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        """Inputs ``(B, n_inputs)`` of rows from trajectories ``traj`` (B,) at times ``t`` (B,)."""
        if not self.layout.n_inputs:
            return t.new_zeros((t.shape[0], 0))
        if self._stacked_signals is not None:
            return self._stacked_signals(traj, t)
        out = t.new_empty((t.shape[0], self.layout.n_inputs))
        for k in torch.unique(traj).tolist():  # callable signals: one call per trajectory
            sel = traj == k
            out[sel] = self._signals[k](t[sel])
        return out

    def _rhs(self, sig: InputSignal, mu: torch.Tensor) -> Callable[[float, torch.Tensor], Any]:
        def rhs(t: float, z: torch.Tensor) -> torch.Tensor:
            return self.field(z, sig(t), mu)

        return rhs

    def _rollout_model(
        self, t: np.ndarray, z0: np.ndarray, sig: InputSignal, mu: torch.Tensor
    ) -> np.ndarray:
        lay = self.layout
        with torch.no_grad():
            z = integrate(
                self._rhs(sig, mu),
                t,
                self._tensor(z0),
                self.options.integrator,
                n_coords=lay.n_q if lay.second_order else 0,
                substeps=self.options.substeps,
            )
        return z.cpu().numpy()

    def predict(
        self,
        t: np.ndarray,
        x0: np.ndarray,
        u: np.ndarray | Callable[[Any], Any] | None = None,
        *,
        params: Mapping[str, float] | None = None,
    ) -> np.ndarray:
        t, x0 = self._check_predict_args(t, x0)
        sig = self._inputs(t, u)
        z = self._rollout_model(t, self.layout.reduce(x0), sig, self._mu(params))
        return self.layout.expand(z, self.system, x0)

    def predict_with_derivatives(
        self,
        t: np.ndarray,
        x0: np.ndarray,
        u: np.ndarray | Callable[[Any], Any] | None = None,
        *,
        params: Mapping[str, float] | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """The rollout ``(n, n_states)`` and the model's own time derivative along it: the
        learned field F(z, u(t), μ) evaluated at the rolled-out states (for a first-order model
        the network output itself; no differencing of the rollout). States the model does not
        learn (dependent coordinates of a partition) get NaN."""
        x = self.predict(t, x0, u, params=params)
        sig, mu = self._inputs(np.asarray(t, dtype=float), u), self._mu(params)
        with torch.no_grad():
            tt = self._tensor(t)
            dz = self.field(self._tensor(self.layout.reduce(x)), sig(tt), mu).cpu().numpy()
        return x, self._expand_derivative(dz)

    def _expand_derivative(self, dz: np.ndarray) -> np.ndarray:
        """Model-state derivatives ``(n, n_model)`` -> ``(n, n_states)`` (NaN where unmodelled)."""
        dx = np.full((dz.shape[0], self.layout.n_states), np.nan)
        dx[:, self.layout.state_index] = dz
        return dx
