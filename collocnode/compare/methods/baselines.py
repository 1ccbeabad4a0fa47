"""Black-box baselines of the FNODE and MBD-NODE papers: an LSTM next-state model and an FCNN.

* LSTM: a window of the last ``window`` states (each with its inputs u and parameters μ) is read
  by a stacked LSTM whose last hidden state is mapped to the next state by an affine head; states
  are min–max scaled to [−1, 1] with the training data's range. Prediction is autoregressive.
  Windows that would reach before the first sample repeat the first sample, in training and in
  prediction alike, so a rollout needs nothing but the initial state (``start="padded"``). With
  ``start="data"``, as the authors' code of both papers does, the training windows are the full
  ones only and a rollout starts from the first ``window`` true states.
* FCNN: a tanh MLP from time to state, ``x(t) = N(t)`` (plus μ) — the FCNN of both papers' code,
  which fits one trajectory as a function of time and so ignores the initial state of a rollout
  (it is the papers' strawman; time enters scaled to [0, 1] over the training window, or in a
  fixed unit with ``time_unit``, as the authors' code feeds it).

Settings (FNODE Tables 3–8): LSTM 2 layers of 256 (3 for the slider-crank), 300 epochs;
FCNN 2 hidden layers of 256 (3 for the slider-crank), 450 epochs; Adam 1e-3, decay 0.98.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import nn

from ... import _validation as v
from ..._data import Trajectory
from ...nn import MLP
from ...problems._layout import StateLayout
from ...tools._fixed_step import DivergenceError
from .gradient import GradientOptions, GradientTrainer
from .inputs import InputSignal, param_vector


def _check_rollout(x: np.ndarray, t: np.ndarray, blowup: float) -> np.ndarray:
    bad = ~np.isfinite(x).all(axis=1) | (np.abs(np.nan_to_num(x, nan=np.inf)).max(axis=1) > blowup)
    if bad.any():
        k = int(np.argmax(bad))
        raise DivergenceError(k, t[k], x[:k], "non-finite or blow-up")
    return x


class _Common(GradientTrainer):
    """Parameter inputs and default inputs shared by the two baselines."""

    def _prepare(self, system: Any, trajs: list[Trajectory]) -> None:
        o = self.options
        self.train_params = [
            param_vector(o.param_inputs, tr.params, f"train[{i}].params")
            for i, tr in enumerate(trajs)
        ]
        self._default_params = dict(trajs[0].params)

    def _tensor(self, a: np.ndarray) -> torch.Tensor:
        return torch.as_tensor(np.asarray(a, dtype=float), dtype=self.dtype, device=self.device)

    def _mu_np(self, params: Mapping[str, float] | None) -> np.ndarray:
        return param_vector(
            self.options.param_inputs, self._default_params if params is None else params
        )


@dataclass(frozen=True)
class LSTMOptions(GradientOptions):
    """LSTM options.

    Attributes:
        layers: stacked LSTM layers; ``hidden[0]`` is their width.
        window: past states per prediction (the reference code's 16).
        dtype: float32, as the authors' code of both papers trains its LSTM.
        blowup: a rollout whose state exceeds this magnitude counts as diverged.
        start: how the first windows are filled. "padded": by repeating the first sample, in
            training and rollout, so that a rollout starts from the initial state alone;
            "data" (the authors' code): training uses the windows that lie inside the data,
            and a rollout starts from the first ``window`` true states (``predict``'s ``x0``
            is ``(window, n_states)``).
        partition: for a mechanism with holonomic constraints Φ(q) = 0, model only its
            independent coordinates and their velocities (the slider-crank's (θ1, θ1'), the
            states the FNODE authors' code generates and its LSTM learns); a rollout recovers
            the other coordinates from the constraints. Off: every state of the system.
    """

    epochs: int = 300
    dtype: str = "float32"
    layers: int = 2
    window: int = 16
    blowup: float = 1e8
    start: str = "padded"
    partition: bool = False

    def __post_init__(self) -> None:
        super().__post_init__()
        v.positive_int("layers", self.layers)
        v.positive_int("window", self.window)
        v.positive_float("blowup", self.blowup)
        v.choice("start", self.start, ("padded", "data"))
        if not isinstance(self.partition, bool):
            raise TypeError(f"partition must be a bool, got {self.partition!r}")


class _LSTMNet(nn.Module):
    def __init__(
        self, n_in: int, width: int, layers: int, head: MLP, seed: int, dtype: Any, device: Any
    ):
        super().__init__()
        self.lstm = nn.LSTM(
            n_in, width, num_layers=layers, batch_first=True, dtype=dtype, device=device
        )
        w = head.init_weights(np.random.default_rng(seed))
        self.head = head.torch_module(w, dtype=dtype, device=device)

    def forward(self, seq: torch.Tensor) -> torch.Tensor:
        out, _ = self.lstm(seq)
        return self.head(out[:, -1])


class LSTM(_Common):
    """LSTM next-state baseline; see the module docstring."""

    name = "lstm"
    options_class = LSTMOptions
    CUDA_GRAPH = True
    QUICK = {"epochs": 10, "batch_size": 32, "hidden": (32,)}
    PAPER = {"slider_crank": {"layers": 3}}

    def _setup(self, system: Any, trajs: list[Trajectory]) -> int:
        self._prepare(system, trajs)
        o = self.options
        self.system = system
        self.layout = StateLayout.for_system(system, len(o.param_inputs), partition=o.partition)
        n_model = self.layout.n_model
        allx = self.layout.reduce(np.concatenate([tr.x for tr in trajs]))
        lo, hi = allx.min(0), allx.max(0)
        span = np.where(hi - lo > 1e-12 * (1.0 + np.abs(hi)), hi - lo, 1.0)
        self._lo, self._span = lo, span
        first = self.start_samples - 1  # the last sample of the first window
        seqs, nexts = [], []
        for k, (tr, mu) in enumerate(zip(trajs, self.train_params, strict=True)):
            if o.start == "data" and tr.n_samples <= o.window:
                raise ValueError(
                    f"train[{k}] has {tr.n_samples} samples; the LSTM with start='data' and "
                    f"window={o.window} needs more than {o.window}"
                )
            z = self.layout.reduce(tr.x)
            f = self._frames(z, tr.u[:, : system.n_inputs], mu)
            for i in range(first, tr.n_samples - 1):
                seqs.append(self._window_at(f, i))
                nexts.append(self._scale(z[i + 1]))
        torch.manual_seed(o.seed)
        head = MLP((o.hidden[0], n_model), "identity", o.init)
        n_in = n_model + system.n_inputs + len(o.param_inputs)
        self.net = _LSTMNet(n_in, o.hidden[0], o.layers, head, o.seed, self.dtype, self.device)
        self._S, self._Y = self._tensor(np.asarray(seqs)), self._tensor(np.asarray(nexts))
        return self._S.shape[0]

    @property
    def start_samples(self) -> int:
        return self.options.window if self.options.start == "data" else 1

    def _scale(self, x: np.ndarray) -> np.ndarray:
        return 2.0 * (np.asarray(x) - self._lo) / self._span - 1.0

    def _unscale(self, s: np.ndarray) -> np.ndarray:
        return (np.asarray(s) + 1.0) * 0.5 * self._span + self._lo

    def _frames(self, x: np.ndarray, u: np.ndarray, mu: np.ndarray) -> np.ndarray:
        n = x.shape[0]
        return np.concatenate([self._scale(x), u, np.broadcast_to(mu, (n, mu.size))], axis=1)

    def _window_at(self, frames: np.ndarray, i: int) -> np.ndarray:
        w = self.options.window
        idx = np.clip(np.arange(i - w + 1, i + 1), 0, None)
        return frames[idx]

    def modules(self) -> list[Any]:
        return [self.net]

    def _loss(self, idx: torch.Tensor) -> torch.Tensor:
        err = self.net(self._S[idx]) - self._Y[idx]
        return (err * err).sum(dim=-1).mean()

    def predict(
        self,
        t: np.ndarray,
        x0: np.ndarray,
        u: np.ndarray | Callable[[Any], Any] | None = None,
        *,
        params: Mapping[str, float] | None = None,
    ) -> np.ndarray:
        t, x0 = self._check_predict_args(t, x0)
        sysm = self.system
        sig = InputSignal.from_any(
            sysm.n_inputs, t, u, sysm.inputs if sysm.n_inputs else None, self.dtype, self.device
        )
        us = sig(self._tensor(t)).cpu().numpy()
        mu = self._mu_np(params)
        start = np.atleast_2d(x0)  # the rollout's first samples: (start_samples, n_states)
        k = start.shape[0]
        z = np.empty((t.size, self.layout.n_model))
        z[:k] = self.layout.reduce(start)
        frames = np.empty((t.size, self.layout.n_model + sysm.n_inputs + mu.size))
        frames[:k] = self._frames(z[:k], us[:k], mu)
        with torch.no_grad():
            for i in range(k - 1, t.size - 1):
                seq = self._tensor(self._window_at(frames[: i + 1], i))[None]
                z[i + 1] = self._unscale(self.net(seq)[0].cpu().numpy())
                frames[i + 1] = self._frames(z[i + 1][None], us[i + 1 : i + 2], mu)[0]
                if (
                    not np.all(np.isfinite(z[i + 1]))
                    or np.abs(z[i + 1]).max() > self.options.blowup
                ):
                    step = i + 1  # the samples before it passed this check
                    partial = self._expand(z[:step], start[0])
                    raise DivergenceError(step, t[step], partial, "non-finite or blow-up")
        return self._expand(z, start[0])

    def _expand(self, z: np.ndarray, x_first: np.ndarray) -> np.ndarray:
        """Model states ``(n, n_model)`` -> system states ``(n, n_states)`` (the identity
        without a partition)."""
        return self.layout.expand(z, self.system, x_first) if self.layout.partitioned else z


@dataclass(frozen=True)
class FCNNOptions(GradientOptions):
    """FCNN options (450 epochs; the double pendulum uses lr 3e-3 in the FNODE paper; float32,
    the dtype of the authors' code).

    Attributes:
        time_unit: how time enters the network. None: scaled to [0, 1] over the training
            window. A number [s]: as ``t / time_unit``, unscaled by the window, as the authors'
            code feeds the time column of its data (seconds; for the FNODE slider-crank a
            column that counts 0.1 per 0.01 s sample, ``time_unit = 0.1``). The extrapolation
            depends on it: far outside the training inputs the tanh units saturate and the
            prediction levels off.
    """

    epochs: int = 450
    dtype: str = "float32"
    time_unit: float | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.time_unit is not None:
            v.positive_float("time_unit", self.time_unit)


class FCNN(_Common):
    """Time-to-state MLP baseline; see the module docstring."""

    name = "fcnn"
    CUDA_GRAPH = True
    options_class = FCNNOptions
    QUICK = {"epochs": 40, "batch_size": 16, "hidden": (64, 64)}
    PAPER = {"double_pendulum": {"lr": 3e-3}, "slider_crank": {"hidden": (256, 256, 256)}}

    def _setup(self, system: Any, trajs: list[Trajectory]) -> int:
        self._prepare(system, trajs)
        o = self.options
        t0 = min(tr.t0 for tr in trajs)
        span = max(tr.tf for tr in trajs) - t0 or 1.0
        n_mu = len(o.param_inputs)
        if o.time_unit is None:
            shift, scale = (t0,) + (0.0,) * n_mu, (span,) + (1.0,) * n_mu
        else:
            shift, scale = (0.0,) * (1 + n_mu), (o.time_unit,) + (1.0,) * n_mu
        self._spec = MLP((1 + n_mu, *o.hidden, system.n_states), o.activation, o.init, shift, scale)
        self.net = self._spec.torch_module(
            self._spec.init_weights(np.random.default_rng(o.seed)),
            dtype=self.dtype,
            device=self.device,
        )
        X = np.concatenate(
            [
                np.concatenate([tr.t[:, None], np.broadcast_to(mu, (tr.n_samples, n_mu))], axis=1)
                for tr, mu in zip(trajs, self.train_params, strict=True)
            ]
        )
        self._X = self._tensor(X)
        self._Y = self._tensor(np.concatenate([tr.x for tr in trajs]))
        return self._X.shape[0]

    def modules(self) -> list[Any]:
        return [self.net]

    def blocks(self) -> dict[str, MLP]:
        self._require_fitted()
        return {"f": self._spec}

    def get_weights(self) -> dict[str, np.ndarray]:
        self._require_fitted()
        return {"f": self.net.get_flat()}

    def _loss(self, idx: torch.Tensor) -> torch.Tensor:
        err = self.net(self._X[idx]) - self._Y[idx]
        return (err * err).sum(dim=-1).mean()

    def predict(
        self,
        t: np.ndarray,
        x0: np.ndarray,
        u: np.ndarray | Callable[[Any], Any] | None = None,
        *,
        params: Mapping[str, float] | None = None,
    ) -> np.ndarray:
        t, x0 = self._check_predict_args(t, x0)
        mu = self._mu_np(params)
        X = np.concatenate([t[:, None], np.broadcast_to(mu, (t.size, mu.size))], axis=1)
        with torch.no_grad():
            x = self.net(self._tensor(X)).cpu().numpy()
        return _check_rollout(x, t, 1e8)
