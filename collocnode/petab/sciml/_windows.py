"""Sliding windows over the spatial axes of channels-first tensors (``(C, *spatial)`` or
``(N, C, *spatial)``), shared by the convolutions and the pooling layers.

A window is described by index arrays computed with numpy from the shapes alone: per spatial
axis, the *taps* ``(out, k)``: for output position ``o`` and window entry ``j``, the input
position it reads, or -1 (padding, or no entry). `combine` joins the axes into the flat
(row-major) spatial indices ``(prod(out), prod(k))``, and `take` gathers them from a CasADi
column, -1 giving a fill value. Only the gathered entries enter the expression, so a network's
CasADi graph has no padding arithmetic."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import casadi as ca
import numpy as np

from ._args import is_int
from ._errors import EvalError
from ._tensor import Tensor, matrix, numel


def per_axis(value: Any, d: int) -> tuple[int, ...]:
    """An argument given as one integer or a list of ``d`` (one per spatial axis)."""
    return (value,) * d if is_int(value) else tuple(value)


def wrong_lengths(a: Mapping[str, Any], names: Sequence[str], d: int) -> str | None:
    """Why one of the arguments ``names`` is a list of other than ``d`` entries, or None."""
    for name in names:
        value = a[name]
        if isinstance(value, list) and len(value) != d:
            return f"argument '{name}' must have {d} entries (one per spatial axis), got {value!r}"
    return None


@dataclass(frozen=True)
class Layout:
    """A channels-first input: its batch size (None: unbatched), channels and spatial shape."""

    batch: int | None
    channels: int
    spatial: tuple[int, ...]

    @property
    def planes(self) -> int:
        """The number of ``(sample, channel)`` pairs."""
        return (self.batch or 1) * self.channels

    def shape(self, channels: int, spatial: Sequence[int]) -> tuple[int, ...]:
        """The shape of an output of ``channels`` and ``spatial``, batched as the input."""
        lead = (channels,) if self.batch is None else (self.batch, channels)
        return (*lead, *spatial)


def layout(x: Tensor, d: int, what: str) -> Layout:
    """The layout of ``x`` as an input of ``d`` spatial axes (``what`` names the layer)."""
    if len(x.shape) == d + 2:
        return Layout(x.shape[0], x.shape[1], x.shape[2:])
    if len(x.shape) == d + 1:
        return Layout(None, x.shape[0], x.shape[1:])
    raise EvalError(
        f"{what} needs a {d + 1}-D (C, ...) or {d + 2}-D (N, C, ...) input, got shape {x.shape}"
    )


def _too_small(length: int, out: int) -> EvalError:
    return EvalError(
        f"input too small: a spatial axis of size {length} would give an output of size {out}"
    )


def _padded(t: np.ndarray, length: int, mode: str) -> np.ndarray:
    """Positions ``t`` (possibly outside ``[0, length)``) mapped into the input as the padding
    mode pads it; -1 for a zero."""
    if mode == "replicate":
        return np.clip(t, 0, length - 1)
    if mode == "circular":
        return t % length
    if mode == "reflect":
        return np.where(t < 0, -t, np.where(t >= length, 2 * (length - 1) - t, t))
    return np.where((t >= 0) & (t < length), t, -1)


def conv_taps(
    length: int, kernel: int, stride: int, pads: tuple[int, int], dilation: int, mode: str
) -> np.ndarray:
    """One axis of a convolution, padded by ``pads`` (left, right) in ``mode``."""
    if mode == "reflect" and max(pads) >= length:
        raise EvalError(f"reflect padding {max(pads)} must be smaller than the size {length}")
    if mode == "circular" and max(pads) > length:
        raise EvalError(f"circular padding {max(pads)} must be at most the size {length}")
    out = (length + sum(pads) - dilation * (kernel - 1) - 1) // stride + 1
    if out < 1:
        raise _too_small(length, out)
    t = np.arange(out)[:, None] * stride - pads[0] + np.arange(kernel)[None, :] * dilation
    return _padded(t, length, mode)


def transposed_taps(
    length: int, kernel: int, stride: int, padding: int, output_padding: int, dilation: int
) -> np.ndarray:
    """One axis of a transposed convolution: output ``o`` gets input ``i`` through kernel
    entry ``j`` where ``o = i * stride - padding + j * dilation``."""
    out = (length - 1) * stride - 2 * padding + dilation * (kernel - 1) + output_padding + 1
    if out < 1:
        raise _too_small(length, out)
    t = np.arange(out)[:, None] + padding - np.arange(kernel)[None, :] * dilation
    source = t // stride
    return np.where((t % stride == 0) & (source >= 0) & (source < length), source, -1)


def pool_length(
    length: int, kernel: int, stride: int, padding: int, dilation: int, ceil_mode: bool
) -> int:
    """The output size of a pooling axis (PyTorch's rule: with ``ceil_mode`` a last window
    must start inside the input or its left padding)."""
    span = length + 2 * padding - dilation * (kernel - 1) - 1
    out = (-(-span // stride) if ceil_mode else span // stride) + 1
    if ceil_mode and (out - 1) * stride >= length + padding:
        out -= 1
    if out < 1:
        raise _too_small(length, out)
    return out


def pool_taps(
    length: int, kernel: int, stride: int, padding: int, dilation: int, ceil_mode: bool
) -> np.ndarray:
    """One axis of a pooling window (padding positions -1)."""
    out = pool_length(length, kernel, stride, padding, dilation, ceil_mode)
    t = np.arange(out)[:, None] * stride - padding + np.arange(kernel)[None, :] * dilation
    return _padded(t, length, "zeros")


def adaptive_taps(length: int, out: int) -> np.ndarray:
    """One axis of an adaptive pooling: window ``i`` is ``[floor(i L / out), ceil((i + 1) L /
    out))``, padded with -1 to the longest window."""
    i = np.arange(out)
    start, end = (i * length) // out, -(-((i + 1) * length) // out)
    t = start[:, None] + np.arange(int(np.max(end - start)))[None, :]
    return np.where(t < end[:, None], t, -1)


def combine(taps: Sequence[np.ndarray], spatial: Sequence[int]) -> np.ndarray:
    """The axes' taps joined: ``(prod(out), prod(k))`` row-major indices into the spatial
    block ``spatial``; -1 where any axis reads padding."""
    d = len(taps)
    strides = [numel(spatial[a + 1 :]) for a in range(d)]
    index = np.zeros((1,) * (2 * d), dtype=np.int64)
    valid = np.ones((1,) * (2 * d), dtype=bool)
    for a, (t, step) in enumerate(zip(taps, strides, strict=True)):
        shape = [1] * (2 * d)
        shape[a], shape[d + a] = t.shape
        t = t.reshape(shape)
        index = index + np.where(t >= 0, t * step, 0)
        valid = valid & (t >= 0)
    out = numel([t.shape[0] for t in taps])
    return np.where(valid, index, -1).reshape(out, -1)


def take(flat: Any, index: np.ndarray, fill: float = 0.0) -> Any:
    """The entries ``index`` (a 2-D integer array, -1 for ``fill``) of the CasADi column
    ``flat``, as a CasADi matrix of ``index``'s shape."""
    if (index < 0).any():
        index = np.where(index < 0, flat.shape[0], index)
        flat = ca.vertcat(flat, fill)
    return matrix(flat[index.ravel().tolist()], *index.shape)
