"""Argument specifications: how a node's args/kwargs (or a layer's constructor args) bind to
named arguments, with defaults filled in and every value checked against its kind."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

_REQUIRED = object()


@dataclass(frozen=True)
class Arg:
    """One argument: ``kind`` says what it may be (a key of `KINDS`); an ``ignored``
    argument is checked but not passed on (e.g. ``inplace``)."""

    name: str
    kind: str
    default: Any = _REQUIRED
    ignored: bool = False


def is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _ints(v: Any, low: int) -> bool:
    """An integer ``>= low``, or a list of them (one per spatial axis)."""
    if isinstance(v, list):
        return all(is_int(s) and s >= low for s in v)
    return is_int(v) and v >= low


def _is_number(v: Any) -> bool:
    return (isinstance(v, (int, float)) and not isinstance(v, bool)) and math.isfinite(v)


KINDS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "tensor": (lambda v: isinstance(v, str), "the name of an earlier node"),
    "tensors": (
        lambda v: isinstance(v, list) and bool(v) and all(isinstance(t, str) for t in v),
        "a list of names of earlier nodes",
    ),
    "operand": (lambda v: isinstance(v, str) or _is_number(v), "a node name or a number"),
    "count": (lambda v: is_int(v) and v > 0, "a positive integer"),
    "int": (is_int, "an integer"),
    "dim": (lambda v: v is None or is_int(v), "an integer or null"),
    "number": (_is_number, "a finite number"),
    "positive": (lambda v: _is_number(v) and v > 0, "a positive number"),
    "nonzero": (lambda v: _is_number(v) and v != 0, "a nonzero number"),
    "threshold": (lambda v: _is_number(v) or v == math.inf, "a number"),
    "bool": (lambda v: isinstance(v, bool), "true or false"),
    "none": (lambda v: v is None, "null"),
    "any": (lambda v: True, "anything"),
    "shape": (
        lambda v: (
            (is_int(v) and v > 0) or (isinstance(v, list) and all(is_int(s) and s > 0 for s in v))
        ),
        "a positive integer or a list of them",
    ),
    "reshape": (
        lambda v: (
            isinstance(v, list)
            and all(is_int(s) and s >= -1 for s in v)
            and sum(s == -1 for s in v) <= 1
        ),
        "a list of integers (at most one -1)",
    ),
    "approximate": (lambda v: v in ("none", "tanh"), "'none' or 'tanh'"),
    "stride": (lambda v: v is None or _ints(v, 1), "null, a positive integer or a list of them"),
    "pads": (lambda v: _ints(v, 0), "a non-negative integer or a list of them"),
    "padding": (
        lambda v: v in ("same", "valid") or _ints(v, 0),
        "'same', 'valid', a non-negative integer or a list of them",
    ),
    "padding_mode": (
        lambda v: v in ("zeros", "reflect", "replicate", "circular"),
        "'zeros', 'reflect', 'replicate' or 'circular'",
    ),
    "output_size": (
        lambda v: _ints(v, 1) or (isinstance(v, list) and all(s is None or _ints(s, 1) for s in v)),
        "a positive integer or a list of positive integers and nulls",
    ),
    "divisor": (lambda v: v is None or (is_int(v) and v != 0), "null or a nonzero integer"),
    "momentum": (lambda v: v is None or _is_number(v), "null or a finite number"),
}

#: The tensor argument of most functions, methods and layers.
INPUT = Arg("input", "tensor")


def _check_value(arg: Arg, value: Any) -> str | None:
    ok, what = KINDS[arg.kind]
    return None if ok(value) else f"argument '{arg.name}' must be {what}, got {value!r}"


def bind(
    spec: Sequence[Arg], args: Sequence[Any], kwargs: Mapping[str, Any]
) -> tuple[dict[str, Any], str | None]:
    """Positional and keyword values bound to ``spec`` (defaults filled in, values checked);
    or an error message."""
    if len(args) > len(spec):
        return {}, f"takes at most {len(spec)} positional arguments, got {len(args)}"
    bound = {a.name: v for a, v in zip(spec, args, strict=False)}
    names = {a.name for a in spec}
    for key, value in kwargs.items():
        if key not in names:
            known = ", ".join(sorted(names)) or "none"
            return {}, f"unknown argument '{key}' (known: {known})"
        if key in bound:
            return {}, f"argument '{key}' given twice"
        bound[key] = value
    for a in spec:
        if a.name not in bound:
            if a.default is _REQUIRED:
                return {}, f"missing argument '{a.name}'"
            bound[a.name] = a.default
        else:
            problem = _check_value(a, bound[a.name])
            if problem:
                return {}, problem
    return bound, None


def passed(spec: Sequence[Arg], bound: Mapping[str, Any]) -> dict[str, Any]:
    """The bound values that are passed on (the ``ignored`` arguments left out)."""
    return {a.name: bound[a.name] for a in spec if not a.ignored}


def references(spec: Sequence[Arg], bound: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """``(argument name, node name)`` for every bound value that names a node (a tensor)."""
    refs = []
    for a in spec:
        value = bound[a.name]
        if a.kind == "tensors":
            refs.extend((a.name, v) for v in value)
        elif a.kind == "tensor" or (a.kind == "operand" and isinstance(value, str)):
            refs.append((a.name, value))
    return refs
