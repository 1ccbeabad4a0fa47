"""Encoding and decoding the values of a model file, with every size bounded before it is
allocated."""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Callable, Mapping
from enum import Enum
from typing import Any

import numpy as np

from .. import _validation as v
from ..models._hybrid import Parameter
from ..nn._base import Block
from ._builders import check_fields
from ._format import (
    ARRAY_DTYPES,
    MAX_DEPTH,
    MAX_ELEMENTS,
    MAX_NDIM,
    SAMPLING_FIELDS,
    TAG_ARRAY,
    TAG_BLOCK,
    TAG_FLOAT,
    TAG_PARAMETER,
    TAG_SYSTEM,
    TAGS,
    block_types,
    one_line,
    only,
    require,
    show,
)

# ---- encoding ---------------------------------------------------------------------------------


def encode(obj: Any, where: str, depth: int = 1) -> Any:
    """``obj`` as plain JSON data; ``where`` names the field in error messages."""
    from ..problems import System

    if depth > MAX_DEPTH:  # also stops self-referencing containers
        raise ValueError(f"{where}: nested more than {MAX_DEPTH} levels deep (or contains itself)")
    if obj is None or isinstance(obj, (bool, str)):
        return obj
    if isinstance(obj, Enum):
        return encode(obj.value, where, depth)
    if isinstance(obj, (int, np.integer)) and not isinstance(obj, np.bool_):
        return int(obj)
    if isinstance(obj, np.bool_):
        return bool(obj)
    if isinstance(obj, (float, np.floating)):
        f = float(obj)
        # strict JSON has no NaN/Inf; parameter bounds are often infinite
        return f if math.isfinite(f) else {TAG_FLOAT: repr(f)}
    if isinstance(obj, np.ndarray):
        return encode_array(obj, where)
    if isinstance(obj, Block):
        if not dataclasses.is_dataclass(obj):
            raise TypeError(f"{where}: block {type(obj).__name__} is not a dataclass")
        name = type(obj).__name__
        if name not in block_types():
            raise TypeError(
                f"{where}: unknown block type {name!r}; storable: {', '.join(block_types())}"
            )
        fields = {
            f.name: encode(getattr(obj, f.name), f"{where}.{f.name}", depth + 2)
            for f in dataclasses.fields(obj)
            if f.init
        }
        return {TAG_BLOCK: name, "fields": fields}
    if isinstance(obj, Parameter):
        return {
            TAG_PARAMETER: {
                f.name: encode(getattr(obj, f.name), f"{where}.{f.name}", depth + 2)
                for f in dataclasses.fields(obj)
            }
        }
    if isinstance(obj, System):
        # the physics of every registered system depends on its parameters only; sampling is
        # kept so that generate() of the rebuilt system gives the same grid
        return {
            TAG_SYSTEM: {
                "name": obj.name,
                "preset": obj.preset,
                "params": encode(dict(obj.params), f"{where}.params", depth + 2),
                "sampling": {"dt": float(obj.dt), "n_steps": obj.n_steps, "n_train": obj.n_train},
            }
        }
    if isinstance(obj, Mapping):
        out = {}
        for key, val in obj.items():
            if not isinstance(key, str):
                raise TypeError(f"{where}: dict keys must be strings, got {key!r}")
            if key.startswith("$"):
                raise TypeError(f"{where}: dict keys may not start with '$', got {key!r}")
            out[key] = encode(val, f"{where}[{key!r}]", depth + 1)
        return out
    if isinstance(obj, (list, tuple)):
        return [encode(val, f"{where}[{i}]", depth + 1) for i, val in enumerate(obj)]
    raise TypeError(
        f"{where}: cannot store a {type(obj).__name__} in a model file "
        "(JSON values, numpy arrays, blocks, systems and Parameters can be stored)"
    )


def encode_array(obj: np.ndarray, where: str) -> dict[str, Any]:
    """A float64 or int64 array (other real dtypes converted where exact) as tagged JSON."""
    kind, size = obj.dtype.kind, obj.dtype.itemsize
    if kind == "f" and size <= 8:
        arr, dtype = obj.astype(np.float64), "<f8"
    elif kind in "bi" or (
        kind == "u" and (size < 8 or obj.size == 0 or obj.max() <= np.iinfo(np.int64).max)
    ):
        arr, dtype = obj.astype(np.int64), "<i8"
    else:
        raise TypeError(
            f"{where}: cannot store an array of dtype {obj.dtype} "
            "(model files hold float64 and int64 arrays)"
        )
    if arr.ndim > MAX_NDIM or arr.size > MAX_ELEMENTS:
        raise ValueError(
            f"{where}: an array of shape {arr.shape} is too large for a model file "
            f"(at most {MAX_NDIM} dimensions and {MAX_ELEMENTS} elements)"
        )
    data = arr.ravel().tolist()
    if dtype == "<f8":
        data = [x if math.isfinite(x) else {TAG_FLOAT: repr(x)} for x in data]
    return {TAG_ARRAY: {"dtype": dtype, "shape": list(arr.shape), "data": data}}


# ---- decoding ---------------------------------------------------------------------------------


def decode(obj: Any, where: str, budget: int) -> Any:
    """Inverse of `encode`; malformed data raises ValueError naming ``where``.

    ``budget``: the most weights a block may have (the length of the file's ``p`` for the
    model's blocks).
    """
    if isinstance(obj, list):
        return [decode(val, f"{where}[{i}]", budget) for i, val in enumerate(obj)]
    if not isinstance(obj, dict):
        return obj
    tags = [key for key in obj if key.startswith("$")]
    if not tags:
        return {key: decode(val, f"{where}[{key!r}]", budget) for key, val in obj.items()}
    tag = tags[0]
    if tag not in TAGS:
        raise ValueError(f"{where}: unknown tag {show(tag)}; known: {', '.join(TAGS)}")
    only(obj, (tag, "fields") if tag == TAG_BLOCK else (tag,), where)
    if tag == TAG_FLOAT:
        return decode_float(obj[TAG_FLOAT], where)
    if tag == TAG_ARRAY:
        return decode_array(obj[TAG_ARRAY], where)
    if tag == TAG_BLOCK:
        return decode_block(obj, where, budget)
    if tag == TAG_PARAMETER:
        return decode_parameter(obj[TAG_PARAMETER], where)
    return decode_system(obj[TAG_SYSTEM], where)


def decode_float(text: Any, where: str) -> float:
    if not isinstance(text, str) or text not in ("inf", "-inf", "nan"):
        raise ValueError(f"{where}: invalid non-finite float {show(text)}")
    return float(text)


def decode_array(spec: Any, where: str) -> np.ndarray:
    spec = require(spec, ("dtype", "shape", "data"), where)
    only(spec, ("dtype", "shape", "data"), where)
    dtype, shape, data = spec["dtype"], spec["shape"], spec["data"]
    if not isinstance(dtype, str) or dtype not in ARRAY_DTYPES:
        raise ValueError(
            f"{where}: array dtype {show(dtype)} is not allowed; model files hold float64 "
            "('<f8') and int64 ('<i8') arrays only"
        )
    if not isinstance(shape, list) or not all(
        isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in shape
    ):
        raise ValueError(
            f"{where}: array shape must be a list of non-negative integers, got {show(shape)}"
        )
    if len(shape) > MAX_NDIM:
        raise ValueError(f"{where}: array has {len(shape)} dimensions, at most {MAX_NDIM} allowed")
    count = math.prod(shape)
    if count > MAX_ELEMENTS:
        raise ValueError(
            f"{where}: array of shape {shape} has too many elements ({count} > {MAX_ELEMENTS})"
        )
    if not isinstance(data, list) or len(data) != count:
        found = len(data) if isinstance(data, list) else show(data)
        raise ValueError(f"{where}: array of shape {shape} needs {count} values, got {found}")
    if dtype == "<i8":
        lo, hi = np.iinfo(np.int64).min, np.iinfo(np.int64).max
        for i, x in enumerate(data):
            if type(x) is not int or not lo <= x <= hi:
                raise ValueError(
                    f"{where}: int64 array data must be integers in the int64 range, "
                    f"got {show(x)} at index {i}"
                )
        return np.array(data, dtype=np.int64).reshape(shape)
    values = []
    for i, x in enumerate(data):
        if isinstance(x, dict) and set(x) == {TAG_FLOAT}:
            x = decode_float(x[TAG_FLOAT], f"{where}.data[{i}]")
        if type(x) is int:
            try:
                x = float(x)
            except OverflowError:
                x = None
        # a finite float, or a non-finite one written as a tag (JSON may round 1e999 to inf)
        if type(x) is not float or not (math.isfinite(x) or isinstance(data[i], dict)):
            raise ValueError(
                f"{where}: float64 array data must be numbers (non-finite ones as "
                f'{{"$float": "inf"}}), got {show(data[i])} at index {i}'
            )
        values.append(x)
    return np.array(values, dtype=np.float64).reshape(shape)


def _mlp_weights(fields: dict[str, Any], where: str) -> int:
    """Weights of an MLP spec, computed without building it; its scales must be listed in full
    (as save_model writes them) so that building it allocates no more than the file holds."""
    sizes = fields.get("sizes")
    if sizes is None:
        raise ValueError(f"missing field {where}.sizes")
    if len(sizes) < 2 or any(n < 1 for n in sizes):
        raise ValueError(
            f"{where}.sizes must list at least two positive layer widths, got {show(sizes)}"
        )
    for name, width, what in (
        ("input_shift", sizes[0], "input"),
        ("input_scale", sizes[0], "input"),
        ("output_scale", sizes[-1], "output"),
    ):
        value = fields.get(name)
        if not isinstance(value, list) or len(value) != width:
            raise ValueError(
                f"{where}.{name} must list {width} numbers (one per {what}), got {show(value)}"
            )
    return sum(n_out * n_in + n_out for n_in, n_out in itertools.pairwise(sizes))


def _rational_weights(fields: dict[str, Any], where: str) -> int:
    num, den = fields.get("num_degree", 7), fields.get("den_degree", 7)
    return max(num, 0) + 1 + max(den, 0) + (0 if fields.get("fixed_theta0", True) else 1)


_BLOCK_WEIGHTS: dict[str, Callable[[dict[str, Any], str], int]] = {
    "MLP": _mlp_weights,
    "RationalChebyshev": _rational_weights,
}


def decode_block(obj: dict[str, Any], where: str, budget: int) -> Block:
    name = obj[TAG_BLOCK]
    types_ = block_types()
    if not isinstance(name, str) or name not in types_:
        raise ValueError(f"{where}: unknown block type {show(name)}; known: {', '.join(types_)}")
    raw = require(obj, ("fields",), where)["fields"]
    if not isinstance(raw, dict):
        raise ValueError(f"{where}.fields must be an object, got {type(raw).__name__}")
    fields = decode(raw, f"{where}.fields", budget)
    if not isinstance(fields, dict):
        raise ValueError(f"{where}.fields must be an object, got {show(fields)}")
    cls = types_[name]
    check_fields(cls, fields, f"{where}.fields")
    weights = _BLOCK_WEIGHTS[name](fields, f"{where}.fields")
    if weights > budget:
        limit = "the values of the file's p" if budget < MAX_ELEMENTS else "the limit"
        raise ValueError(
            f"{where}: the {name} block has {weights} weights, more than {limit} "
            f"({min(budget, MAX_ELEMENTS)})"
        )
    try:
        return cls(**fields)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{where}: invalid {name} block ({one_line(exc)})") from None


def decode_parameter(spec: Any, where: str) -> Parameter:
    if not isinstance(spec, dict):
        raise ValueError(f"{where} must be an object, got {type(spec).__name__}")
    fields = decode(spec, where, 0)
    if not isinstance(fields, dict):
        raise ValueError(f"{where} must be an object, got {show(fields)}")
    check_fields(Parameter, fields, where)
    try:
        return Parameter(**fields)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{where}: invalid parameter ({one_line(exc)})") from None


def decode_system(spec: Any, where: str) -> Any:
    """A registered system, rebuilt with its own parameters and typed sampling fields only."""
    from .. import problems

    spec = require(spec, ("name", "preset", "params"), where)
    only(spec, ("name", "preset", "params", "sampling"), where)
    name, preset = spec["name"], spec["preset"]
    try:
        v.choice("problem", name, problems.available())
        v.choice(f"preset of {name}", preset, problems.presets(name))
    except ValueError as exc:
        raise ValueError(f"{where}: {exc}") from None
    valid = problems.parameters(name, preset)
    params = decode(spec["params"], f"{where}.params", 0)
    sampling = spec.get("sampling", {})
    for field_name, value, allowed in (("params", params, valid), ("sampling", sampling, None)):
        if not isinstance(value, dict):
            raise ValueError(f"{where}.{field_name} must be an object, got {show(value)}")
        for key in value:
            if allowed is not None and key not in allowed:
                raise ValueError(
                    f"{where}.params: unknown parameter {show(key)} of {name}; "
                    f"valid: {', '.join(allowed)}"
                )
            if allowed is None and key not in SAMPLING_FIELDS:
                raise ValueError(
                    f"{where}.sampling: unknown sampling field {show(key)}; "
                    f"valid: {', '.join(SAMPLING_FIELDS)}"
                )
    try:
        checked = {key: v.finite_float(key, value) for key, value in params.items()}
        if "dt" in sampling:
            checked["dt"] = v.positive_float("dt", sampling["dt"])
        for key in ("n_steps", "n_train"):
            if key in sampling:
                checked[key] = v.positive_int(key, sampling[key])
                if checked[key] > MAX_ELEMENTS:
                    raise ValueError(f"{key} must be at most {MAX_ELEMENTS}, got {checked[key]}")
        return problems.get(name, preset, **checked)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{where}: cannot rebuild system {name!r} ({one_line(exc)})") from None


def check_depth(doc: Any) -> None:
    """Refuse data nested more than MAX_DEPTH levels (without recursing)."""
    stack = [(doc, 1)]
    while stack:
        obj, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise ValueError(f"the data is nested too deeply (more than {MAX_DEPTH} levels)")
        items = obj.values() if isinstance(obj, dict) else obj
        stack.extend((x, depth + 1) for x in items if isinstance(x, (dict, list)))
