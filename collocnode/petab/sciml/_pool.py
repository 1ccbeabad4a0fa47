"""Pooling: the layer types ``MaxPool``, ``AvgPool``, ``LPPool``, ``AdaptiveMaxPool`` and
``AdaptiveAvgPool`` (each 1d, 2d and 3d), as PyTorch defines them.

Every output entry is a reduction over the input entries of its window (gathered by index,
`_windows`): the maximum as a fold of ``fmax`` (exact; its derivative is a subgradient at
ties), the average as a sum over a divisor that follows PyTorch's rules for padding and
``ceil_mode`` windows, the power mean of ``LPPool`` as PyTorch computes it from that average.
Padding never enters a maximum (PyTorch pads max pooling with -inf)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import casadi as ca
import numpy as np

from ._args import INPUT, Arg, is_int
from ._errors import EvalError
from ._layer_type import Args, LayerType, no_arrays
from ._tensor import Tensor, numel
from ._windows import (
    Layout,
    adaptive_taps,
    combine,
    layout,
    per_axis,
    pool_taps,
    take,
    wrong_lengths,
)

Taps = Callable[[tuple[int, ...]], list[np.ndarray]]

_KERNEL = (Arg("kernel_size", "shape"), Arg("stride", "stride", None))
_MAX_ARGS = (
    *_KERNEL,
    Arg("padding", "pads", 0),
    Arg("dilation", "shape", 1),
    Arg("return_indices", "bool", False),
    Arg("ceil_mode", "bool", False),
)
_AVG1_ARGS = (
    *_KERNEL,
    Arg("padding", "pads", 0),
    Arg("ceil_mode", "bool", False),
    Arg("count_include_pad", "bool", True),
)
_AVG_ARGS = (*_AVG1_ARGS, Arg("divisor_override", "divisor", None))
_LP_ARGS = (Arg("norm_type", "positive"), *_KERNEL, Arg("ceil_mode", "bool", False))


def _pool_check(d: int) -> Callable[[Args], str | None]:
    def check(a: Args) -> str | None:
        names = ["kernel_size", "padding", "dilation", "output_size"]
        if a.get("stride") not in (None, []):  # null or empty: the kernel size
            names.append("stride")
        problem = wrong_lengths(a, [n for n in names if n in a], d)
        if problem or "padding" not in a:
            return problem
        for p, k in zip(per_axis(a["padding"], d), per_axis(a["kernel_size"], d), strict=True):
            if 2 * p > k:
                return f"padding {p} must be at most half of the kernel size {k} (as in PyTorch)"
        return None

    return check


def _refuse_indices(a: Args) -> str | None:
    if a.get("return_indices"):
        return "return_indices=True (a tuple of values and indices) is not supported"
    return None


def _stride(a: Args, d: int) -> tuple[int, ...]:
    """The stride; null (or an empty list) is the kernel size, as in PyTorch."""
    return per_axis(a["stride"] or a["kernel_size"], d)


def _gather(input: Tensor, d: int, what: str, taps_of: Taps) -> tuple[Layout, list, np.ndarray]:
    """The input's layout, each axis's taps and the windows' flat input indices ``(planes *
    prod(out), window)`` (-1: padding or no entry), planes (samples and channels) first."""
    lay = layout(input, d, what)
    taps = taps_of(lay.spatial)
    spatial = combine(taps, lay.spatial)
    offsets = np.arange(lay.planes)[:, None, None] * numel(lay.spatial)
    index = np.where(spatial[None] >= 0, spatial[None] + offsets, -1)
    return lay, taps, index.reshape(-1, spatial.shape[1])


def _output(lay: Layout, taps: Sequence[np.ndarray], flat: Any) -> Tensor:
    return Tensor(lay.shape(lay.channels, [t.shape[0] for t in taps]), flat)


def _maximum(flat: Any, index: np.ndarray) -> Any:
    """The maximum of each row's entries of ``flat`` (a fold of ``fmax`` over the window; a
    row's missing entries repeat its first one, which leaves the maximum as it is)."""
    valid = index >= 0
    if not valid.any(axis=1).all():
        raise EvalError("a pooling window lies entirely in the padding")
    first = index[np.arange(index.shape[0]), valid.argmax(axis=1)]
    index = np.where(valid, index, first[:, None])
    result = flat[index[:, 0].tolist()]
    for j in range(1, index.shape[1]):
        result = ca.fmax(result, flat[index[:, j].tolist()])
    return result


def _tiled(counts: Sequence[np.ndarray], planes: int) -> Any:
    """Per-axis counts ``(out,)`` multiplied out over the output positions, for every plane,
    as a CasADi column."""
    product = functools.reduce(np.multiply.outer, counts).ravel()
    return ca.DM(np.tile(product, planes).astype(float).reshape(-1, 1))


def _window_counts(
    length: int, kernel: int, stride: int, padding: int, out: int, include_pad: bool
) -> np.ndarray:
    """PyTorch's average-pooling divisor along one axis: the window clipped to the padded
    input (``include_pad``) or to the input itself."""
    start = np.arange(out) * stride - padding
    end = np.minimum(start + kernel, length + padding)
    if include_pad:
        return end - start
    return np.minimum(end, length) - np.maximum(start, 0)


def _max_pool(d: int) -> Callable[..., Tensor]:
    def apply(a: Args, arrays: Mapping[str, Any], input: Tensor) -> Tensor:
        axes = (
            per_axis(a["kernel_size"], d),
            _stride(a, d),
            per_axis(a["padding"], d),
            per_axis(a["dilation"], d),
        )

        def taps_of(spatial: tuple[int, ...]) -> list[np.ndarray]:
            return [
                pool_taps(n, k, s, p, dl, a["ceil_mode"])
                for n, k, s, p, dl in zip(spatial, *axes, strict=True)
            ]

        lay, taps, index = _gather(input, d, f"MaxPool{d}d", taps_of)
        return _output(lay, taps, _maximum(input.flat, index))

    return apply


def _avg_pool(d: int) -> Callable[..., Tensor]:
    def apply(a: Args, arrays: Mapping[str, Any], input: Tensor) -> Tensor:
        axes = (per_axis(a["kernel_size"], d), _stride(a, d), per_axis(a["padding"], d))

        def taps_of(spatial: tuple[int, ...]) -> list[np.ndarray]:
            return [
                pool_taps(n, k, s, p, 1, a["ceil_mode"])
                for n, k, s, p in zip(spatial, *axes, strict=True)
            ]

        lay, taps, index = _gather(input, d, f"AvgPool{d}d", taps_of)
        total = ca.sum2(take(input.flat, index))
        if a.get("divisor_override") is not None:
            return _output(lay, taps, total / a["divisor_override"])
        counts = [
            _window_counts(n, k, s, p, t.shape[0], a["count_include_pad"])
            for n, k, s, p, t in zip(lay.spatial, *axes, taps, strict=True)
        ]
        return _output(lay, taps, total / _tiled(counts, lay.planes))

    return apply


def _lp_pool(d: int) -> Callable[..., Tensor]:
    def apply(a: Args, arrays: Mapping[str, Any], input: Tensor) -> Tensor:
        kernel, stride, p = per_axis(a["kernel_size"], d), _stride(a, d), a["norm_type"]

        def taps_of(spatial: tuple[int, ...]) -> list[np.ndarray]:
            return [
                pool_taps(n, k, s, 0, 1, a["ceil_mode"])
                for n, k, s in zip(spatial, kernel, stride, strict=True)
            ]

        lay, taps, index = _gather(input, d, f"LPPool{d}d", taps_of)
        total = ca.sum2(take(input.flat**p, index))
        # PyTorch: the average of x**p (its divisor clipped to the input in ceil_mode windows)
        # times the full kernel size, to the power 1/p
        counts = [
            _window_counts(n, k, s, 0, t.shape[0], True)
            for n, k, s, t in zip(lay.spatial, kernel, stride, taps, strict=True)
        ]
        return _output(lay, taps, (total / _tiled(counts, lay.planes) * numel(kernel)) ** (1 / p))

    return apply


def _adaptive_taps(a: Args, d: int) -> Taps:
    size = a["output_size"]
    sizes = per_axis(size, d) if is_int(size) else size

    def taps_of(spatial: tuple[int, ...]) -> list[np.ndarray]:
        return [
            adaptive_taps(n, n if out is None else out)
            for n, out in zip(spatial, sizes, strict=True)
        ]

    return taps_of


def _adaptive_max_pool(d: int) -> Callable[..., Tensor]:
    def apply(a: Args, arrays: Mapping[str, Any], input: Tensor) -> Tensor:
        what = f"AdaptiveMaxPool{d}d"
        lay, taps, index = _gather(input, d, what, _adaptive_taps(a, d))
        return _output(lay, taps, _maximum(input.flat, index))

    return apply


def _adaptive_avg_pool(d: int) -> Callable[..., Tensor]:
    def apply(a: Args, arrays: Mapping[str, Any], input: Tensor) -> Tensor:
        what = f"AdaptiveAvgPool{d}d"
        lay, taps, index = _gather(input, d, what, _adaptive_taps(a, d))
        counts = [(t >= 0).sum(axis=1) for t in taps]
        total = ca.sum2(take(input.flat, index))
        return _output(lay, taps, total / _tiled(counts, lay.planes))

    return apply


def _pool_layers(d: int) -> dict[str, LayerType]:
    check = _pool_check(d)
    adaptive = (Arg("output_size", "output_size"),)
    return {
        f"MaxPool{d}d": LayerType(
            _MAX_ARGS, (INPUT,), no_arrays, _max_pool(d), check, _refuse_indices
        ),
        f"AvgPool{d}d": LayerType(
            _AVG1_ARGS if d == 1 else _AVG_ARGS, (INPUT,), no_arrays, _avg_pool(d), check
        ),
        f"LPPool{d}d": LayerType(_LP_ARGS, (INPUT,), no_arrays, _lp_pool(d), check),
        f"AdaptiveMaxPool{d}d": LayerType(
            (*adaptive, Arg("return_indices", "bool", False)),
            (INPUT,),
            no_arrays,
            _adaptive_max_pool(d),
            check,
            _refuse_indices,
        ),
        f"AdaptiveAvgPool{d}d": LayerType(
            adaptive, (INPUT,), no_arrays, _adaptive_avg_pool(d), check
        ),
    }


#: The pooling layer types.
POOL_LAYERS: dict[str, LayerType] = {
    name: kind for d in (1, 2, 3) for name, kind in _pool_layers(d).items()
}
