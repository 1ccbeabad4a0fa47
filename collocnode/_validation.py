"""The one place where public inputs are checked.

Every public constructor and entry point validates through these helpers so that bad input
produces one clear ``ValueError`` / ``TypeError`` that names the field and the offending value.
"""

from __future__ import annotations

from collections.abc import Iterable
from numbers import Integral, Real

import numpy as np


def _show(value: object, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _to_float(name: str, value: Real) -> float:
    try:
        return float(value)
    except OverflowError:
        raise ValueError(f"{name} must be finite, got {_show(value)}") from None


def positive_int(name: str, value: object) -> int:
    """``value`` as an int > 0, or a ValueError/TypeError naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise TypeError(f"{name} must be a positive integer, got {_show(value)}")
    if value <= 0:
        raise ValueError(f"{name} must be a positive integer, got {value}")
    return int(value)


def nonnegative_int(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise TypeError(f"{name} must be a non-negative integer, got {_show(value)}")
    if value < 0:
        raise ValueError(f"{name} must be a non-negative integer, got {value}")
    return int(value)


def positive_float(name: str, value: object) -> float:
    """``value`` as a finite float > 0."""
    if isinstance(value, bool) or not isinstance(value, Real):
        raise TypeError(f"{name} must be a positive number, got {_show(value)}")
    v = _to_float(name, value)
    if not np.isfinite(v) or v <= 0.0:
        raise ValueError(f"{name} must be a positive finite number, got {value}")
    return v


def nonnegative_float(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, Real):
        raise TypeError(f"{name} must be a non-negative number, got {_show(value)}")
    v = _to_float(name, value)
    if not np.isfinite(v) or v < 0.0:
        raise ValueError(f"{name} must be a non-negative finite number, got {value}")
    return v


def finite_float(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, Real):
        raise TypeError(f"{name} must be a number, got {_show(value)}")
    v = _to_float(name, value)
    if not np.isfinite(v):
        raise ValueError(f"{name} must be finite, got {value}")
    return v


def finite_array(
    name: str, value: object, ndim: int | None = None, shape: tuple[int | None, ...] | None = None
) -> np.ndarray:
    """``value`` as a float64 array, checked for finiteness and (optionally) dimension/shape.

    ``shape`` may contain ``None`` for free axes.
    """
    try:
        raw = np.asarray(value)
        if raw.dtype.kind not in "biuf":  # complex, strings, objects are not real numbers
            if raw.dtype.kind == "O":
                raw = np.asarray(value, dtype=float)
            else:
                raise TypeError
        arr = np.asarray(raw, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be an array of real numbers, got {_show(value)}") from None
    except OverflowError:
        raise ValueError(f"{name} must be finite, got {_show(value)}") from None
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"{name} must have {ndim} dimension(s), got shape {arr.shape}")
    if shape is not None:
        if arr.ndim != len(shape) or any(
            s is not None and s != a for s, a in zip(shape, arr.shape, strict=True)
        ):
            want = "(" + ", ".join("*" if s is None else str(s) for s in shape)
            want += ",)" if len(shape) == 1 else ")"
            raise ValueError(f"{name} must have shape {want}, got {arr.shape}")
    if not np.all(np.isfinite(arr)):
        bad = np.argwhere(~np.isfinite(arr))[0]
        where = tuple(int(i) for i in bad)
        raise ValueError(f"{name} must be finite, found {float(arr[where])} at index {where}")
    return arr


def increasing(name: str, value: object, strict: bool = True) -> np.ndarray:
    """A finite 1-D array whose entries increase (strictly by default)."""
    arr = finite_array(name, value, ndim=1)
    d = np.diff(arr)
    bad = np.flatnonzero(d <= 0 if strict else d < 0)
    if bad.size:
        i = int(bad[0])
        raise ValueError(
            f"{name} must be {'strictly ' if strict else ''}increasing, "
            f"but {name}[{i}] = {float(arr[i])!r} >= {name}[{i + 1}] = {float(arr[i + 1])!r}"
            if strict
            else f"{name} must be non-decreasing, but {name}[{i}] > {name}[{i + 1}]"
        )
    return arr


def choice(name: str, value: object, options: Iterable[str]) -> str:
    """``value`` if it is one of ``options``; otherwise a ValueError listing the valid ones."""
    opts = list(options)
    if not isinstance(value, str) or value not in opts:
        raise ValueError(f"unknown {name} {_show(value)}; valid: {', '.join(map(str, opts))}")
    return value
