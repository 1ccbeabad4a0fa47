"""Convolutions: the layer types ``Conv1d/2d/3d`` and ``ConvTranspose1d/2d/3d``, as PyTorch
defines them (cross-correlation; stride, padding, dilation, groups, bias; ``padding`` an
integer, a list, ``'valid'`` or ``'same'``; ``padding_mode`` ``zeros``, ``reflect``,
``replicate`` or ``circular``; transposed: ``output_padding``, zero padding only).

Both are evaluated as one matrix product per sample and group: the input entries each output
position reads (gathered by index, `_windows`) times the weight arranged as a matrix
``(in_channels/groups * prod(kernel), out_channels/groups)``."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import casadi as ca
import numpy as np

from ._args import INPUT, Arg
from ._errors import EvalError
from ._layer_type import DEVICE, Args, LayerType
from ._tensor import Tensor, column, numel
from ._windows import (
    Layout,
    combine,
    conv_taps,
    layout,
    per_axis,
    take,
    transposed_taps,
    wrong_lengths,
)

_CHANNELS = (Arg("in_channels", "count"), Arg("out_channels", "count"), Arg("kernel_size", "shape"))
_CONV_ARGS = (
    *_CHANNELS,
    Arg("stride", "shape", 1),
    Arg("padding", "padding", 0),
    Arg("dilation", "shape", 1),
    Arg("groups", "count", 1),
    Arg("bias", "bool", True),
    Arg("padding_mode", "padding_mode", "zeros"),
    *DEVICE,
)
_TRANSPOSED_ARGS = (
    *_CHANNELS,
    Arg("stride", "shape", 1),
    Arg("padding", "pads", 0),
    Arg("output_padding", "pads", 0),
    Arg("groups", "count", 1),
    Arg("bias", "bool", True),
    Arg("dilation", "shape", 1),
    Arg("padding_mode", "padding_mode", "zeros"),
    *DEVICE,
)


def _groups_problem(a: Args) -> str | None:
    if a["in_channels"] % a["groups"] or a["out_channels"] % a["groups"]:
        return (
            f"in_channels ({a['in_channels']}) and out_channels ({a['out_channels']}) must be "
            f"divisible by groups ({a['groups']})"
        )
    return None


def _conv_check(d: int) -> Callable[[Args], str | None]:
    def check(a: Args) -> str | None:
        problem = wrong_lengths(a, ("kernel_size", "stride", "padding", "dilation"), d)
        if problem or (problem := _groups_problem(a)):
            return problem
        if a["padding"] == "same" and any(s != 1 for s in per_axis(a["stride"], d)):
            return "padding='same' is not supported for strided convolutions (as in PyTorch)"
        return None

    return check


def _transposed_check(d: int) -> Callable[[Args], str | None]:
    names = ("kernel_size", "stride", "padding", "output_padding", "dilation")

    def check(a: Args) -> str | None:
        problem = wrong_lengths(a, names, d)
        if problem or (problem := _groups_problem(a)):
            return problem
        if a["padding_mode"] != "zeros":
            return f"padding_mode must be 'zeros' for ConvTranspose{d}d (as in PyTorch)"
        stride, dilation = per_axis(a["stride"], d), per_axis(a["dilation"], d)
        for op, s, dl in zip(per_axis(a["output_padding"], d), stride, dilation, strict=True):
            if op >= max(s, dl):
                return f"output_padding {op} must be smaller than stride {s} or dilation {dl}"
        return None

    return check


def _conv_arrays(d: int, transposed: bool) -> Callable[[Args], dict[str, tuple[int, ...]]]:
    def arrays(a: Args) -> dict[str, tuple[int, ...]]:
        n_in, n_out, groups = a["in_channels"], a["out_channels"], a["groups"]
        lead = (n_in, n_out // groups) if transposed else (n_out, n_in // groups)
        shapes = {"weight": (*lead, *per_axis(a["kernel_size"], d))}
        if a["bias"]:
            shapes["bias"] = (n_out,)
        return shapes

    return arrays


def _pads(padding: Any, kernel: int, dilation: int) -> tuple[int, int]:
    """An axis's (left, right) padding; ``'same'`` puts the odd one on the right."""
    if padding == "valid":
        return 0, 0
    if padding == "same":
        total = dilation * (kernel - 1)
        return total // 2, total - total // 2
    return padding, padding


def _checked_layout(input: Tensor, d: int, what: str, channels: int) -> Layout:
    lay = layout(input, d, what)
    if lay.channels != channels:
        raise EvalError(f"input of shape {input.shape}; {what} needs {channels} channels")
    return lay


def _grouped_product(
    input: Tensor,
    lay: Layout,
    taps: list[np.ndarray],
    weights: list[Any],
    bias: Any,
) -> Tensor:
    """``out[n, g, co, o] = sum over (ci, j) of x[n, g, ci, taps(o, j)] * weights[g][(ci, j),
    co]`` (channels split into ``len(weights)`` groups), plus ``bias``."""
    spatial = combine(taps, lay.spatial)  # (positions, prod(kernel))
    positions, plane = spatial.shape[0], numel(lay.spatial)
    groups = len(weights)
    per_group = lay.channels // groups
    channel = np.arange(per_group)[None, :, None] * plane
    patch = np.where(spatial[:, None, :] >= 0, spatial[:, None, :] + channel, -1)
    patch = patch.reshape(positions, -1)
    source = ca.vertcat(input.flat, 0)  # the last entry is the zero of the padding
    sentinel = numel(input.shape)
    samples = []
    for n in range(lay.batch or 1):
        blocks = []
        for g, w in enumerate(weights):
            offset = (n * lay.channels + g * per_group) * plane
            index = np.where(patch >= 0, patch + offset, sentinel)
            blocks.append(ca.mtimes(take(source, index), w).T)
        y = ca.vertcat(*blocks)  # (out_channels, positions)
        if bias is not None:
            y = y + ca.repmat(bias, 1, positions)
        samples.append(column(y))
    n_out = sum(w.shape[1] for w in weights)
    return Tensor(lay.shape(n_out, [t.shape[0] for t in taps]), ca.vertcat(*samples))


def _conv_apply(d: int) -> Callable[..., Tensor]:
    what = f"Conv{d}d"

    def apply(a: Args, arrays: Mapping[str, Any], input: Tensor) -> Tensor:
        lay = _checked_layout(input, d, what, a["in_channels"])
        kernel, dilation = per_axis(a["kernel_size"], d), per_axis(a["dilation"], d)
        padding = a["padding"]
        padding = (padding,) * d if isinstance(padding, str) else per_axis(padding, d)
        taps = [
            conv_taps(n, k, s, _pads(p, k, dl), dl, a["padding_mode"])
            for n, k, s, p, dl in zip(
                lay.spatial, kernel, per_axis(a["stride"], d), padding, dilation, strict=True
            )
        ]
        groups, n_out = a["groups"], a["out_channels"]
        rows = a["in_channels"] // groups * numel(kernel)
        # weight (out, in/groups, *kernel): per group, (in/groups * kernel, out/groups)
        index = np.arange(n_out * rows).reshape(groups, n_out // groups, rows).transpose(0, 2, 1)
        weights = [take(arrays["weight"], block) for block in index]
        return _grouped_product(input, lay, taps, weights, arrays.get("bias"))

    return apply


def _transposed_apply(d: int) -> Callable[..., Tensor]:
    what = f"ConvTranspose{d}d"

    def apply(a: Args, arrays: Mapping[str, Any], input: Tensor, output_size: Any = None) -> Tensor:
        lay = _checked_layout(input, d, what, a["in_channels"])
        kernel = per_axis(a["kernel_size"], d)
        names = ("stride", "padding", "output_padding", "dilation")
        taps = [
            transposed_taps(*axis)
            for axis in zip(
                lay.spatial, kernel, *(per_axis(a[name], d) for name in names), strict=True
            )
        ]
        groups, n_in, k = a["groups"], a["in_channels"], numel(kernel)
        n_out = a["out_channels"] // groups
        # weight (in, out/groups, *kernel): per group, (in/groups * kernel, out/groups)
        index = np.arange(n_in * n_out * k).reshape(groups, n_in // groups, n_out, k)
        index = index.transpose(0, 1, 3, 2).reshape(groups, -1, n_out)
        weights = [take(arrays["weight"], block) for block in index]
        return _grouped_product(input, lay, taps, weights, arrays.get("bias"))

    return apply


#: The convolution layer types.
CONV_LAYERS: dict[str, LayerType] = {
    **{
        f"Conv{d}d": LayerType(
            _CONV_ARGS, (INPUT,), _conv_arrays(d, False), _conv_apply(d), _conv_check(d)
        )
        for d in (1, 2, 3)
    },
    **{
        f"ConvTranspose{d}d": LayerType(
            _TRANSPOSED_ARGS,
            (INPUT, Arg("output_size", "none", None)),
            _conv_arrays(d, True),
            _transposed_apply(d),
            _transposed_check(d),
        )
        for d in (1, 2, 3)
    },
}
