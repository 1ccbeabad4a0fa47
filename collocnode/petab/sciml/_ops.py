"""Tensor operations of the forward graph on `Tensor`: softmax and log_softmax along an
axis, flatten, reshape, cat, and the elementwise binary operations."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import casadi as ca

from ._errors import EvalError
from ._tensor import Tensor, axis, column, flatten_shape, matrix, numel, rowwise


def _softmax_dim(dim: int | None, ndim: int) -> int:
    """PyTorch's implicit softmax axis when ``dim`` is null: 0 for 0, 1 or 3 dimensions, else 1."""
    if dim is not None:
        return dim
    return 0 if ndim in (0, 1, 3) else 1


def _softmax_row(row: Any) -> Any:
    e = ca.exp(row - ca.mmax(row))  # the shift cancels exactly; it only avoids overflow
    return e / ca.sum2(e)


def _log_softmax_row(row: Any) -> Any:
    shifted = row - ca.mmax(row)
    return shifted - ca.log(ca.sum2(ca.exp(shifted)))


def softmax(input: Tensor, dim: int | None = None, **_: Any) -> Tensor:
    return rowwise(input, _softmax_dim(dim, len(input.shape)), _softmax_row)


def log_softmax(input: Tensor, dim: int | None = None, **_: Any) -> Tensor:
    return rowwise(input, _softmax_dim(dim, len(input.shape)), _log_softmax_row)


def flatten(input: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    return Tensor(flatten_shape(input.shape, start_dim, end_dim), input.flat)


def reshape(input: Tensor, shape: list[int]) -> Tensor:
    n = numel(input.shape)
    known = numel([s for s in shape if s != -1])
    if -1 in shape:
        if known == 0 or n % known:
            raise EvalError(f"cannot reshape {input.shape} into {tuple(shape)}")
        shape = [n // known if s == -1 else s for s in shape]
    if numel(shape) != n:
        raise EvalError(f"cannot reshape {input.shape} into {tuple(shape)}")
    return Tensor(tuple(shape), input.flat)


def cat(tensors: list[Tensor], dim: int = 0) -> Tensor:
    first = tensors[0].shape
    if not first:
        raise EvalError("cat: zero-dimensional tensors cannot be concatenated")
    along = axis(dim, len(first))
    for t in tensors[1:]:
        if len(t.shape) != len(first) or any(
            a != b for k, (a, b) in enumerate(zip(t.shape, first, strict=True)) if k != along
        ):
            raise EvalError(f"cat: shapes {first} and {t.shape} differ off dim {dim}")
    outer = numel(first[:along])
    blocks = [matrix(t.flat, outer, numel(t.shape[along:])) for t in tensors]
    shape = (*first[:along], sum(t.shape[along] for t in tensors), *first[along + 1 :])
    return Tensor(shape, column(ca.horzcat(*blocks)))


def binary(op: Callable[[Any, Any], Any]) -> Callable[..., Tensor]:
    """An elementwise operation of two operands, tensors of equal shapes or numbers."""

    def apply(input: Tensor | float, other: Tensor | float, alpha: float = 1) -> Tensor:
        shapes = [t.shape for t in (input, other) if isinstance(t, Tensor)]
        if not shapes:
            raise EvalError("needs at least one tensor operand")
        if len(set(shapes)) > 1:
            raise EvalError(
                f"operand shapes {shapes[0]} and {shapes[1]} differ "
                "(only equal shapes and numbers are supported)"
            )
        a = input.flat if isinstance(input, Tensor) else input
        b = other.flat if isinstance(other, Tensor) else other
        return Tensor(shapes[0], op(a, alpha * b if alpha != 1 else b))

    return apply
