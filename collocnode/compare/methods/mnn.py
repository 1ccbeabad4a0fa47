"""MNN: the mechanistic block for forecasting trajectories.

Pervez, Locatello & Gavves, "Mechanistic Neural Networks for Scientific Machine Learning" (ICML
2024). An encoder (an [`collocnode.nn.MLP`][collocnode.nn.MLP]) reads the current state ``z`` (plus
inputs u and parameters μ) and emits, for every state dimension and each of the next ``T`` points,
the coefficients ``c_0..c_R`` and right-hand side ``b`` of a linear ODE of order ``R`` (MNN eq. 3
with time-varying coefficients, one independent ODE per dimension as the paper's ``ODEINDLayer``).
The relaxed solver (`collocnode.compare.methods.mnn_solver`) turns it into a least-squares
problem whose solution over the window is the block's output; its initial values are the current
state (``R = 2``: positions and velocities of a second-order system; ``R = 1``: the states of a
first- order one). Training fits the solutions to the next ``T − 1`` samples of every window;
prediction chains windows, each starting from the last state of the previous one.

Our choices where the paper leaves freedom: the step sizes are the data's (the learned-step
option of the paper is exercised by the solver's gradient test but not trained here), and the top
coefficient is ``1 + net output`` so that the freshly initialised ODE is well posed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from ... import _validation as v
from ..._data import Trajectory
from ...nn import MLP
from ...tools._fixed_step import DivergenceError
from .field import FieldOptions, FieldTrainer, data_stats
from .mnn_solver import solve_ode


@dataclass(frozen=True)
class MNNOptions(FieldOptions):
    """MNN options.

    Attributes:
        horizon: points ``T`` per solved window (``T − 1`` predicted steps; the paper's KdV model
            predicts 9 steps per call).
        central: include the central-difference rows of the top order.
        ridge: Tikhonov term λ of the normal equations (keeps them positive definite).
        stride: training windows start every ``stride`` samples.
        blowup: a rollout whose state exceeds this magnitude counts as diverged.
    """

    epochs: int = 300
    batch_size: int = 8
    hidden: tuple[int, ...] = (256, 256)
    horizon: int = 10
    central: bool = True
    ridge: float = 1e-10
    stride: int = 1
    blowup: float = 1e8

    def __post_init__(self) -> None:
        super().__post_init__()
        if v.positive_int("horizon", self.horizon) < 2:
            raise ValueError(f"horizon must be >= 2, got {self.horizon}")
        v.nonnegative_float("ridge", self.ridge)
        v.positive_int("stride", self.stride)
        v.positive_float("blowup", self.blowup)


class MNN(FieldTrainer):
    """Mechanistic neural network trainer; see the module docstring."""

    name = "mnn"
    options_class = MNNOptions
    derivative_source = "solver"  # no field: the relaxed solver's derivatives
    QUICK = {"epochs": 20, "batch_size": 32, "hidden": (64, 64)}
    # not in the paper: default settings with the data-derived scaling (see FNODE.PAPER)
    PAPER = {"qvm": {"normalize": True}}

    @property
    def _order(self) -> int:
        return 2 if self.layout.second_order else 1

    @property
    def _dims(self) -> int:
        return self.layout.n_q if self.layout.second_order else self.layout.n_states

    def _setup(self, system: Any, trajs: list[Trajectory]) -> int:
        self._prepare(system, trajs)
        lay, o = self.layout, self.options
        T = o.horizon
        feats, windows, steps = [], [], []
        for k, (tr, mu) in enumerate(zip(trajs, self.train_params, strict=True)):
            if tr.n_samples < T:
                raise ValueError(f"train[{k}] has {tr.n_samples} samples, fewer than horizon = {T}")
            z = lay.reduce(tr.x)
            f = self._net_inputs(tr, mu)
            for s in range(0, tr.n_samples - T + 1, o.stride):
                feats.append(f[s])
                windows.append(z[s : s + T])
                steps.append(np.diff(tr.t[s : s + T]))
        feats_a = np.asarray(feats)
        n_out = self._dims * T * (self._order + 2)
        kw: dict[str, Any] = {}
        if o.normalize:
            mean, std = data_stats(feats_a)
            kw = {"input_shift": tuple(mean), "input_scale": tuple(std)}
        spec = MLP((lay.n_net_in, *o.hidden, n_out), o.activation, o.init, **kw)
        self.encoder = spec.torch_module(
            spec.init_weights(np.random.default_rng(o.seed)), dtype=self.dtype, device=self.device
        )
        self._spec = spec
        self._F = self._tensor(feats_a)
        self._W = self._tensor(np.asarray(windows))  # (N, T, n_model)
        self._H = self._tensor(np.asarray(steps))  # (N, T-1)
        return self._F.shape[0]

    def modules(self) -> list[Any]:
        return [self.encoder]

    def blocks(self) -> dict[str, MLP]:
        self._require_fitted()
        return {"encoder": self._spec}

    def get_weights(self) -> dict[str, np.ndarray]:
        self._require_fitted()
        return {"encoder": self.encoder.get_flat()}

    def set_weights(self, weights: Mapping[str, np.ndarray]) -> None:
        self._require_fitted()
        self.encoder.set_flat(weights["encoder"])

    # --- the block -------------------------------------------------------------------------------
    def _window(self, feats: torch.Tensor, z0: torch.Tensor, steps: torch.Tensor) -> torch.Tensor:
        """Model states over a window: ``feats`` (B, n_net_in), ``z0`` (B, n_model), ``steps``
        (B, T'−1) with T' ≤ horizon; returns (B, T', n_model)."""
        return self._window_with_derivatives(feats, z0, steps)[0]

    def _window_with_derivatives(
        self, feats: torch.Tensor, z0: torch.Tensor, steps: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """`_window` and the time derivative of the model state that the solver returns
        with it (its unknowns are every derivative up to order R at every point); both
        (B, T', n_model)."""
        B, D, R, T = feats.shape[0], self._dims, self._order, self.options.horizon
        Tw = steps.shape[1] + 1
        out = self.encoder(feats).reshape(B, D, T, R + 2)[:, :, :Tw]
        coeffs = out[..., : R + 1] + torch.cat(
            [out.new_zeros(R), out.new_ones(1)]
        )  # top coefficient 1 + output
        rhs = out[..., R + 1]
        if R == 2:
            iv = torch.stack([z0[:, :D], z0[:, D:]], dim=-1)  # (B, D, 2): q, q'
        else:
            iv = z0[:, :, None]
        u = solve_ode(
            coeffs.reshape(B * D, Tw, R + 1),
            rhs.reshape(B * D, Tw),
            iv.reshape(B * D, R),
            steps.repeat_interleave(D, dim=0),
            central=self.options.central,
            ridge=self.options.ridge,
        ).reshape(B, D, Tw, R + 1)
        if R == 2:
            states = torch.cat([u[..., 0], u[..., 1]], dim=1)
            derivs = torch.cat([u[..., 1], u[..., 2]], dim=1)
        else:
            states, derivs = u[..., 0], u[..., 1]
        return states.transpose(1, 2), derivs.transpose(1, 2)

    def _loss(self, idx: torch.Tensor) -> torch.Tensor:
        win = self._W[idx]
        pred = self._window(self._F[idx], win[:, 0], self._H[idx])
        err = pred[:, 1:] - win[:, 1:]
        return (err * err).sum(dim=-1).mean()

    def _rollout_model(
        self, t: np.ndarray, z0: np.ndarray, sig: Any, mu: torch.Tensor
    ) -> np.ndarray:
        return self._rollout(t, z0, sig, mu)[0]

    def _rollout(
        self, t: np.ndarray, z0: np.ndarray, sig: Any, mu: torch.Tensor
    ) -> tuple[np.ndarray, np.ndarray]:
        """Chained windows: the states ``(n, n_model)`` and the solver's derivatives at them
        (each point's from the window that starts there; the last point's from the last
        window)."""
        T = self.options.horizon
        out, dout = [self._tensor(z0)], []
        k = 0
        with torch.no_grad():
            while k < t.size - 1:
                end = min(k + T - 1, t.size - 1)
                z = out[-1][None, :]
                feats = self._features(z, sig(float(t[k]))[None, :], mu[None, :])
                steps = self._tensor(np.diff(t[k : end + 1]))[None, :]
                win, dwin = (w[0] for w in self._window_with_derivatives(feats, z, steps))
                bad = ~torch.isfinite(win).all(dim=-1) | (
                    win.abs().amax(dim=-1) > self.options.blowup
                )
                if bool(bad.any()):
                    j = int(torch.nonzero(bad)[0, 0])
                    part = torch.stack(out).cpu().numpy()
                    raise DivergenceError(k + j, t[k + j], part, "non-finite or blow-up")
                out.extend(win[1:])
                dout.extend(dwin[:-1])
                k = end
            dout.append(dwin[-1] if t.size > 1 else torch.full_like(out[0], float("nan")))
        return torch.stack(out).cpu().numpy(), torch.stack(dout).cpu().numpy()

    def predict_with_derivatives(
        self,
        t: np.ndarray,
        x0: np.ndarray,
        u: Any = None,
        *,
        params: Mapping[str, float] | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """The rollout and the derivatives the relaxed solver computes with it (an MNN has no
        vector field to evaluate; its solution carries u' at every point); see
        `FieldTrainer.predict_with_derivatives`."""
        t, x0 = self._check_predict_args(t, x0)
        z, dz = self._rollout(t, self.layout.reduce(x0), self._inputs(t, u), self._mu(params))
        return self.layout.expand(z, self.system, x0), self._expand_derivative(dz)

    def _features(self, z: torch.Tensor, u: torch.Tensor, mu: torch.Tensor) -> torch.Tensor:
        parts = [z]
        if u.shape[-1]:
            parts.append(u)
        if mu.shape[-1]:
            parts.append(mu)
        return torch.cat(parts, dim=-1)
