"""Tensors: a PyTorch shape and a CasADi column of its entries in row-major order; and the
shape utilities the layers and graph functions share."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import casadi as ca
import numpy as np

from ._errors import EvalError


@dataclass(frozen=True)
class Tensor:
    shape: tuple[int, ...]
    flat: Any  # CasADi SX/MX/DM column of prod(shape) entries, row-major


def numel(shape: Sequence[int]) -> int:
    return int(math.prod(shape))


def matrix(flat: Any, rows: int, cols: int) -> Any:
    """The row-major column ``flat`` as a CasADi ``(rows, cols)`` matrix."""
    return ca.reshape(flat, cols, rows).T


def column(mat: Any) -> Any:
    """A CasADi matrix flattened row-major into a column."""
    rows, cols = mat.shape
    return ca.reshape(mat.T, rows * cols, 1)


def axis(dim: int, ndim: int) -> int:
    """``dim`` (negative counts from the end) as an axis of a tensor of ``ndim`` dimensions."""
    if not -max(ndim, 1) <= dim < max(ndim, 1):
        raise EvalError(f"dim {dim} is out of range for a tensor of {ndim} dimensions")
    return dim % max(ndim, 1)


def _rows_along(x: Tensor, dim: int) -> tuple[np.ndarray, int]:
    """The row-major indices of ``x`` grouped so that each row of the returned ``(G, n)``
    index array runs along axis ``dim``; and ``n``."""
    if not x.shape:
        return np.zeros((1, 1), dtype=np.int64), 1
    along = axis(dim, len(x.shape))
    index = np.moveaxis(np.arange(numel(x.shape)).reshape(x.shape), along, -1)
    n = x.shape[along]
    return index.reshape(-1, n), n


def rowwise(x: Tensor, dim: int, fn: Callable[[Any], Any]) -> Tensor:
    """``fn`` (a row vector to a row vector) applied along axis ``dim`` of ``x``."""
    index, _ = _rows_along(x, dim)
    out = [None] * numel(x.shape)
    for row in index:
        values = fn(x.flat[row.tolist()].T)
        for k, i in enumerate(row.tolist()):
            out[i] = values[k]
    return Tensor(x.shape, ca.vertcat(*out) if out else x.flat)


def flatten_shape(shape: tuple[int, ...], start_dim: int, end_dim: int) -> tuple[int, ...]:
    """``shape`` with the axes ``start_dim`` to ``end_dim`` merged (as ``torch.flatten``)."""
    if not shape:
        return (1,)
    start, end = axis(start_dim, len(shape)), axis(end_dim, len(shape))
    if start > end:
        raise EvalError(f"flatten: start_dim {start_dim} comes after end_dim {end_dim}")
    return (*shape[:start], numel(shape[start : end + 1]), *shape[end + 1 :])
