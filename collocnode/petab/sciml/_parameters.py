"""A network's parameters ``{layer_id: {array_id: value}}`` checked against the expected
``{layer_id: {array_id: shape}}``: as numeric arrays, as row-major CasADi columns, and split
from one vector."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import casadi as ca
import numpy as np

from ._errors import EvalError
from ._tensor import column, numel

Params = Mapping[str, Mapping[str, Any]]
Shapes = Mapping[str, Mapping[str, tuple[int, ...]]]


def numeric_parameters(expected: Shapes, params: Params) -> dict[str, dict[str, np.ndarray]]:
    """Every parameter as a float64 array in its PyTorch shape (numpy arrays, or CasADi DM
    columns of the row-major entries), shapes checked; nothing else allowed."""
    unknown = sorted(set(params) - set(expected))
    if unknown:
        raise ValueError(f"parameters for {unknown}, which are not layers with parameters")
    out: dict[str, dict[str, np.ndarray]] = {}
    for layer_id, named in expected.items():
        given = params.get(layer_id, {})
        extra = sorted(set(given) - set(named))
        if extra:
            raise ValueError(f"layer {layer_id!r} has no arrays {extra}")
        out[layer_id] = {}
        for name, shape in named.items():
            if name not in given:
                raise ValueError(f"missing parameter array {layer_id}.{name}")
            value = given[name]
            if isinstance(value, (ca.SX, ca.MX)):
                raise ValueError(f"parameter {layer_id}.{name} is symbolic, not a number")
            if isinstance(value, ca.DM) and value.shape == (numel(shape), 1):
                value = value.full().reshape(shape)  # a row-major column
            value = np.asarray(value, dtype=float)
            if value.shape != shape:
                raise ValueError(
                    f"parameter {layer_id}.{name} has shape {value.shape}; expected {shape}"
                )
            out[layer_id][name] = value
    return out


def _as_column(value: Any, shape: tuple[int, ...], name: str) -> Any:
    """A parameter array as a row-major CasADi column: numpy arrays in ``shape``; CasADi
    columns of ``prod(shape)`` entries (row-major); CasADi matrices of a 2-D ``shape``."""
    n = numel(shape)
    if isinstance(value, (ca.SX, ca.MX, ca.DM)):
        if value.shape == (n, 1):
            return value
        if len(shape) == 2 and value.shape == shape:
            return column(value)
        raise EvalError(f"parameter {name} is a CasADi {value.shape}; expected {shape} or ({n}, 1)")
    array = np.asarray(value, dtype=float)
    if array.shape != shape:
        raise EvalError(f"parameter {name} has shape {array.shape}; expected {shape}")
    return ca.DM(array.reshape(-1, 1))


def layer_columns(
    layer_id: str, shapes: Mapping[str, tuple[int, ...]], params: Params
) -> dict[str, Any]:
    """A layer's parameter arrays (of ``shapes``) as row-major CasADi columns."""
    if not shapes:
        return {}
    if layer_id not in params:
        raise EvalError(f"no parameters for layer {layer_id!r}")
    given = params[layer_id]
    out = {}
    for name, shape in shapes.items():
        if name not in given:
            raise EvalError(f"missing parameter array {layer_id}.{name}")
        out[name] = _as_column(given[name], shape, f"{layer_id}.{name}")
    return out


def split_vector(theta: Any, expected: Shapes) -> dict[str, dict[str, Any]]:
    """``{layer_id: {array_id: value}}`` from one vector of all entries, layers and arrays in
    the order of ``expected``, each array row-major: numpy arrays in their shapes for a numpy
    ``theta``, row-major CasADi columns for a CasADi column."""
    n = sum(numel(s) for a in expected.values() for s in a.values())
    symbolic = isinstance(theta, (ca.SX, ca.MX, ca.DM))
    if symbolic:
        if theta.shape != (n, 1):
            raise ValueError(f"theta is {theta.shape}; expected ({n}, 1)")
    else:
        theta = np.asarray(theta, dtype=float)
        if theta.shape != (n,):
            raise ValueError(f"theta has shape {theta.shape}; expected ({n},)")
    out: dict[str, dict[str, Any]] = {}
    start = 0
    for layer_id, named in expected.items():
        out[layer_id] = {}
        for name, shape in named.items():
            piece = theta[start : start + numel(shape)]
            out[layer_id][name] = piece if symbolic else piece.reshape(shape)
            start += numel(shape)
    return out
