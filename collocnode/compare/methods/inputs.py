"""Known inputs u(t) and parameters μ, as the torch networks receive them.

Integrator stages are evaluated between samples, so sampled inputs are interpolated linearly;
a callable ``u(t)`` is evaluated exactly.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import torch

from ... import _validation as v


class InputSignal:
    """``u(t)`` of shape ``(..., n_inputs)`` for scalar or batched times ``t`` [s].

    Built from samples ``(t_s (n,), u_s (n, n_inputs))`` (piecewise-linear, held constant outside
    the sampled range) or from a callable ``u(t) -> (n_inputs,)`` / ``(len(t), n_inputs)``.
    """

    def __init__(
        self,
        n_inputs: int,
        samples: tuple[np.ndarray, np.ndarray] | None = None,
        func: Callable[[Any], Any] | None = None,
        dtype: Any = torch.float64,
        device: Any = None,
    ) -> None:
        self.n_inputs = int(n_inputs)
        self.dtype, self.device = dtype, device
        self._func = func
        self._t = self._u = None
        if samples is not None:
            ts = v.increasing("input times", samples[0])
            us = v.finite_array("u", samples[1])
            us = us.reshape(ts.size, -1) if us.size else np.zeros((ts.size, 0))
            if us.shape != (ts.size, self.n_inputs):
                raise ValueError(f"u must have shape ({ts.size}, {self.n_inputs}), got {us.shape}")
            self._t = torch.as_tensor(ts, dtype=dtype, device=device)
            self._u = torch.as_tensor(us, dtype=dtype, device=device)

    @classmethod
    def from_any(
        cls,
        n_inputs: int,
        t: np.ndarray,
        u: object,
        default: Callable[[Any], Any] | None = None,
        dtype: Any = torch.float64,
        device: Any = None,
    ) -> InputSignal:
        """Samples ``u`` at the times ``t``, or a callable ``u``, or ``default`` when u is None."""
        if u is None:
            if n_inputs and default is not None:
                return cls(n_inputs, func=default, dtype=dtype, device=device)
            if n_inputs:
                raise ValueError(f"u is required: the system has {n_inputs} known input(s)")
            return cls(0, dtype=dtype, device=device)
        if callable(u):
            return cls(n_inputs, func=u, dtype=dtype, device=device)
        return cls(n_inputs, samples=(np.asarray(t), np.asarray(u)), dtype=dtype, device=device)

    @property
    def sampled(self) -> bool:
        """Whether the signal interpolates samples (False: a callable or no input)."""
        return self._t is not None

    def __call__(self, t: float | torch.Tensor) -> torch.Tensor:
        tt = torch.as_tensor(t, dtype=self.dtype, device=self.device)
        if self.n_inputs == 0:
            return torch.zeros((*tt.shape, 0), dtype=self.dtype, device=self.device)
        if self._func is not None:
            val = np.asarray(self._func(tt.detach().cpu().numpy()), dtype=float)
            return torch.as_tensor(val, dtype=self.dtype, device=self.device).reshape(
                *tt.shape, self.n_inputs
            )
        ts, us = self._t, self._u
        if ts.numel() == 1:
            return us[0].expand(*tt.shape, self.n_inputs)
        tc = tt.clamp(ts[0], ts[-1])
        i = torch.searchsorted(ts, tc.reshape(-1), right=True).clamp(1, ts.numel() - 1)
        w = ((tc.reshape(-1) - ts[i - 1]) / (ts[i] - ts[i - 1]))[:, None]
        out = us[i - 1] * (1.0 - w) + us[i] * w
        return out.reshape(*tt.shape, self.n_inputs)


class StackedInputSignals:
    """Sampled signals of several trajectories, evaluated for a batch of rows in one call.

    ``signals[k]`` must be sampled (not a callable); the samples are padded to a common length
    (times with +inf, inputs with the last sample), so that one batched ``searchsorted``
    replaces a loop over trajectories. The interpolation is `InputSignal`'s, element
    by element, so the values are the same to the bit.
    """

    def __init__(self, signals: Sequence[InputSignal]) -> None:
        if not signals or any(not s.sampled for s in signals):
            raise ValueError("StackedInputSignals needs sampled signals (no callable u(t))")
        first = signals[0]
        self.n_inputs, self.dtype, self.device = first.n_inputs, first.dtype, first.device
        counts = [s._t.numel() for s in signals]
        length = max(counts)
        self._t = torch.full(
            (len(signals), length), torch.inf, dtype=self.dtype, device=self.device
        )
        self._u = torch.empty(
            (len(signals), length, self.n_inputs), dtype=self.dtype, device=self.device
        )
        for k, s in enumerate(signals):
            n = s._t.numel()
            self._t[k, :n], self._u[k, :n], self._u[k, n:] = s._t, s._u, s._u[-1]
        self._last = torch.as_tensor(counts, device=self.device) - 1  # (K,) last index
        self._t_end = torch.stack([s._t[-1] for s in signals])  # (K,)

    def __call__(self, rows: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        """``u`` of shape ``(B, n_inputs)`` of trajectories ``rows`` (B,) at times ``t`` (B,)."""
        ts = self._t[rows]  # (B, L)
        tc = torch.minimum(torch.maximum(t, ts[:, 0]), self._t_end[rows])
        hi = self._last[rows].clamp(min=1)
        i = torch.searchsorted(ts, tc[:, None], right=True)[:, 0]
        i = torch.minimum(i.clamp(min=1), hi)
        t_lo, t_hi = self._t[rows, i - 1], self._t[rows, i]
        w = ((tc - t_lo) / (t_hi - t_lo))[:, None]
        return self._u[rows, i - 1] * (1.0 - w) + self._u[rows, i] * w


def param_vector(
    names: Sequence[str], params: Mapping[str, float] | None, where: str = "params"
) -> np.ndarray:
    """The values of the named parameters μ, shape ``(len(names),)``; missing names are an error."""
    params = {} if params is None else params
    missing = [n for n in names if n not in params]
    if missing:
        have = ", ".join(params) or "none"
        raise ValueError(f"{where} lacks parameter(s) {', '.join(missing)} (has: {have})")
    return np.array([float(params[n]) for n in names], dtype=float)
