"""Trained models in one file: save on one side, load on either (CasADi or torch).

A model file is UTF-8 JSON, written atomically (temporary file, then rename)::

    {
      "format": "collocnode-model",
      "format_version": 1,
      "library_version": "0.2.0",
      "model": {
        "recipe": {"function": "collocnode.models:NeuralODE", "kwargs": {...}},
        "n_states": 2, "n_inputs": 0, "n_outputs": 0, "n_params": 102,
        "state_names": [...], "input_names": [...], "output_names": [...],
        "blocks": {"f0": {"type": "MLP", "fields": {...}}, ...},
        "slices": {"f0": [0, 51], ...}
      },
      "p": [...],                    # the parameter vector, shortest round-trip float repr
      "p_sha256": "...",             # of p as little-endian float64 bytes
      "metadata": {...}              # free-form: problem, training settings, status, ...
    }

The physics of a hybrid model is Python code, so a model is stored as its *recipe*
(:attr:`collocnode.models.HybridModel.recipe`): the name of the registered *model builder* that
built it and that builder's keyword arguments. Blocks are stored by type name and dataclass
fields (their input and output scales, i.e. the normalisation, are fields), systems by registry
name, preset and parameters, and physical :class:`~collocnode.models.Parameter` objects by their
fields. ``blocks``, ``slices`` and the sizes are written for readers of the file and checked
against the rebuilt model on loading.

JSON writes every float with its shortest round-trip representation, so ``p`` comes back bit for
bit and a loaded model reproduces the saved model's rollout exactly on the same machine.

A model file is data; loading one never imports or calls anything the file names:

* the recipe names a model builder, matched by exact name against the library's own builders
  (``collocnode.models:NeuralODE``, ``collocnode.recipes.qvm:hybrid_model``; files of 0.1.0 that
  name ``collocnode.experiments.qvm:hybrid_model`` load with the latter) and the builders the user
  registered with :func:`register_builder` or passed as ``load_model(..., builders=...)``;
* the builder's keyword arguments are checked against its signature and type annotations before
  it is called; they can only be JSON values, float64/int64 arrays, blocks
  (:class:`~collocnode.nn.MLP`, :class:`~collocnode.nn.RationalChebyshev`), registered systems
  (:func:`collocnode.problems.get` with the system's own parameters) and Parameters;
* sizes are bounded before anything is allocated: the file (``max_bytes``, default 64 MiB), every
  array (shape checked against its data, at most :data:`MAX_ELEMENTS` elements), every block (no
  more weights than ``p`` holds; an MLP lists its scales in full) and the nesting depth
  (:data:`MAX_DEPTH`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib
import inspect
import itertools
import json
import math
import os
import re
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

import numpy as np

from . import _validation as v
from .io import atomic_write_text
from .models import HybridModel, Parameter
from .nn.base import Block

FORMAT = "collocnode-model"
FORMAT_VERSION = 1
SUPPORTED_VERSIONS: tuple[int, ...] = (1,)
"""Format versions :func:`load_model` reads."""

DEFAULT_MAX_BYTES = 64 * 2**20
"""Largest model file :func:`load_model` reads unless told otherwise [bytes] (64 MiB; a model of a
million parameters takes about 20 MB)."""
MAX_ELEMENTS = 2**24
"""Most elements of one array, and most weights of one model, in a model file."""
MAX_DEPTH = 64
"""Deepest nesting of JSON objects and lists in a model file."""
MAX_NDIM = 8
"""Most dimensions of an array in a model file."""

Builder = Callable[..., HybridModel]
"""A model builder: keyword arguments (JSON values, arrays, blocks, systems, Parameters) -> a
:class:`~collocnode.models.HybridModel` whose ``recipe`` names the builder."""

# Tags of the non-JSON values a recipe or the metadata may hold; user dict keys may not start
# with "$", so a tag can never be confused with data.
_BLOCK, _SYSTEM, _PARAMETER, _ARRAY, _FLOAT = "$block", "$system", "$parameter", "$array", "$float"
_TAGS = (_BLOCK, _SYSTEM, _PARAMETER, _ARRAY, _FLOAT)
_ARRAY_DTYPES = ("<f8", "<i8")
_SAMPLING_FIELDS = ("dt", "n_steps", "n_train")


@dataclass(frozen=True)
class _LibraryBuilder:
    module: str
    function: str
    # arguments annotated Any that must be a registered system (checked before the call)
    systems: tuple[str, ...] = ()


# The library's model builders by the name a file gives. Their modules are imported from this
# fixed table only (on first use), never from a name read from a file.
_LIBRARY_BUILDERS: dict[str, _LibraryBuilder] = {
    "collocnode.models:NeuralODE": _LibraryBuilder("collocnode.models", "NeuralODE"),
    "collocnode.recipes.qvm:hybrid_model": _LibraryBuilder(
        "collocnode.recipes.qvm", "hybrid_model", systems=("system",)
    ),
}
# Names written by earlier releases -> the current name of the same builder.
_RENAMED_BUILDERS: dict[str, str] = {
    "collocnode.experiments.qvm:hybrid_model": "collocnode.recipes.qvm:hybrid_model",
}
# Builders registered with register_builder, by name.
_user_builders: dict[str, Builder] = {}


def _block_types() -> dict[str, type[Block]]:
    """Block classes a file may name, by class name."""
    from .nn import MLP, RationalChebyshev

    return {cls.__name__: cls for cls in (MLP, RationalChebyshev)}


def _show(value: object, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


# ---- builders -------------------------------------------------------------------------------


def _check_builder_name(name: object) -> str:
    if not isinstance(name, str) or not name or name != name.strip() or not name.isprintable():
        raise ValueError(
            f"a model builder's name must be a non-empty printable string without surrounding "
            f"spaces, got {_show(name)}"
        )
    if len(name) > 200:
        raise ValueError(f"a model builder's name has at most 200 characters, got {len(name)}")
    if name in _LIBRARY_BUILDERS or name in _RENAMED_BUILDERS:
        raise ValueError(f"model builder name {name!r} is reserved for the library's own builder")
    return name


def _qualified(fn: object) -> str:
    return f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', repr(fn))}"


def register_builder(
    name: str, builder: Builder | None = None
) -> Callable[[Builder], Builder] | Builder:
    """Register a model builder under ``name``, so that model files naming it can be loaded and
    models whose recipe names it can be saved.

    A builder is a function of keyword arguments that returns a
    :class:`~collocnode.models.HybridModel` with ``recipe=(name, kwargs)``; the arguments may be
    JSON values, float64/int64 arrays, blocks, registered systems and Parameters, and are
    checked against the builder's signature and annotations before every call from a file.
    Use as a decorator or call directly::

        @register_builder("mypackage.models:oscillator")
        def oscillator(stiffness: Block, damping: Parameter) -> HybridModel: ...

        register_builder("mypackage.models:oscillator", oscillator)

    Registering a different function under a name already taken is an error; the library's own
    names are reserved. Without registering, pass ``builders={name: function}`` to
    :func:`load_model` and :func:`save_model`.

    Returns:
        ``builder`` when given, otherwise a decorator that registers and returns its function.

    Raises:
        ValueError: an empty, reserved or taken name. TypeError: a builder that is not callable.
    """
    _check_builder_name(name)

    def register(fn: Builder) -> Builder:
        if not callable(fn):
            raise TypeError(f"model builder {name!r} must be callable, got {_show(fn)}")
        old = _user_builders.get(name)
        # the same function defined again (a reloaded module, a re-run notebook cell) may replace
        # itself; another function may not take the name
        if old is not None and old is not fn and _qualified(old) != _qualified(fn):
            raise ValueError(
                f"model builder name {name!r} is already registered to {_qualified(old)}; "
                "choose another name"
            )
        _user_builders[name] = fn
        return fn

    return register if builder is None else register(builder)


def _check_builders(builders: object) -> dict[str, Builder]:
    """The ``builders=`` argument as a dict, checked."""
    if builders is None:
        return {}
    if not isinstance(builders, Mapping):
        raise TypeError(
            "builders must be a dict of model builder name -> function "
            f"(it replaces trusted_modules), got {_show(builders)}"
        )
    for name, fn in builders.items():
        _check_builder_name(name)
        if not callable(fn):
            raise TypeError(f"builders[{name!r}] must be callable, got {_show(fn)}")
    return dict(builders)


def _unregistered(name: str, where: str, call: str) -> ValueError:
    library = ", ".join(_LIBRARY_BUILDERS)
    why = ""
    if name.startswith("__main__:"):
        why = (
            " (it names a function defined in __main__ (a script or notebook), which another "
            "process cannot find by that name)"
        )
    return ValueError(
        f"{where} {_show(name)} is not a registered model builder{why}; a model file can name "
        f"the library's builders ({library}) and builders you register: decorate the function "
        f"with @collocnode.serialize.register_builder({_show(name)}) or pass "
        f"{call}(..., builders={{{_show(name)}: function}})"
    )


def _lookup(
    name: object, extra: Mapping[str, Builder], where: str, call: str
) -> tuple[str, Builder, dict[str, Any]]:
    """(name, builder, annotation overrides) of the builder named ``name``, by exact name."""
    if not isinstance(name, str):
        raise ValueError(f"{where} must be a string naming a model builder, got {_show(name)}")
    canonical = _RENAMED_BUILDERS.get(name, name)
    entry = _LIBRARY_BUILDERS.get(canonical)
    if entry is not None:
        from .problems import System

        fn = getattr(importlib.import_module(entry.module), entry.function)
        return canonical, fn, dict.fromkeys(entry.systems, System)
    fn = extra.get(name, _user_builders.get(name))
    if fn is None:
        raise _unregistered(name, where, call)
    return name, fn, {}


def _name_for_saving(target: object, extra: Mapping[str, Builder]) -> str:
    """The name a file stores for a recipe's builder (a registered name or function)."""
    if isinstance(target, str):
        _lookup(target, extra, "model.recipe builder", "save_model")
        return _RENAMED_BUILDERS.get(target, target)
    if callable(target):
        for table in (extra, _user_builders):
            for name, fn in table.items():
                if fn is target:
                    return name
        for name, entry in _LIBRARY_BUILDERS.items():
            if getattr(importlib.import_module(entry.module), entry.function) is target:
                return name
        raise ValueError(
            f"model.recipe builder {_qualified(target)} is not a registered model builder; "
            "register it with @collocnode.serialize.register_builder(name) or pass "
            "save_model(..., builders={name: function}); the file stores that name"
        )
    raise ValueError(f"model.recipe must be (builder name, kwargs), got a builder {_show(target)}")


# ---- type checks against annotations ------------------------------------------------------


def _type_text(hint: Any) -> str:
    if isinstance(hint, type):
        return hint.__name__
    # "collocnode.nn.base.Block | list[collocnode.nn.base.Block]" -> "Block | list[Block]"
    return re.sub(r"\b(?:[A-Za-z_]\w*\.)+([A-Za-z_]\w*)", r"\1", str(hint))


def _kind_text(value: object) -> str:
    return f"{type(value).__name__} {_show(value)}"


# typing.get_origin maps typing.List, typing.Sequence, ... to these
_SEQUENCES = (list, tuple, Sequence)
_MAPPINGS = (dict, Mapping)


def _matches(value: Any, hint: Any) -> bool:
    """Whether decoded file data ``value`` is of the annotated type ``hint``.

    JSON has no tuples, so a list matches a tuple annotation; an int matches ``float`` (PEP 484);
    a bool is not an int here. Annotations that name no checkable type match anything.
    """
    if hint is Any or hint is inspect.Parameter.empty or isinstance(hint, typing.TypeVar):
        return True
    if hint is None or hint is type(None):
        return value is None
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is typing.Annotated:
        return _matches(value, args[0])
    if origin is typing.Union or origin is types.UnionType:
        return any(_matches(value, arm) for arm in args)
    if origin is typing.Literal:
        return any(type(value) is type(a) and value == a for a in args)
    if hint is bool:
        return isinstance(value, (bool, np.bool_))
    if hint is int:
        return isinstance(value, (int, np.integer)) and not isinstance(value, bool)
    if hint is float:
        return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(
            value, bool
        )
    container = origin or hint
    if container in _SEQUENCES:
        if not isinstance(value, (list, tuple)):
            return False
        if container is tuple and args and args[-1] is not Ellipsis:
            return len(value) == len(args) and all(map(_matches, value, args))
        item = args[0] if args else Any
        return all(_matches(x, item) for x in value)
    if container in _MAPPINGS:
        if not isinstance(value, dict):
            return False
        key_type, value_type = args if len(args) == 2 else (Any, Any)
        return all(_matches(k, key_type) and _matches(x, value_type) for k, x in value.items())
    if isinstance(container, type):
        return isinstance(value, container)
    return True


def _hints(obj: Any, what: str) -> dict[str, Any]:
    try:
        return typing.get_type_hints(obj)
    except Exception as exc:  # annotations name something that does not resolve
        raise ValueError(
            f"cannot check the arguments of {what}: its annotations do not resolve "
            f"({_one_line(exc)})"
        ) from None


def _check_arguments(
    name: str, fn: Builder, kwargs: dict[str, Any], overrides: dict[str, Any], where: str
) -> None:
    """Refuse arguments the builder does not take, lacks, or of the wrong type, before calling."""
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        raise ValueError(
            f"model builder {name!r} has no signature to check its arguments"
        ) from None
    hints = {**_hints(fn, f"model builder {name!r}"), **overrides}
    P = inspect.Parameter
    params = list(signature.parameters.values())
    by_name = {p.name: p for p in params if p.kind in (P.POSITIONAL_OR_KEYWORD, P.KEYWORD_ONLY)}
    var_keyword = next((p for p in params if p.kind is P.VAR_KEYWORD), None)
    for key in kwargs:
        if key not in by_name and var_keyword is None:
            raise ValueError(
                f"{where}: unknown argument {_show(key)} of model builder {name!r}; "
                f"it takes {', '.join(by_name) or 'no arguments'}"
            )
    for p in params:
        needed = p.default is P.empty and p.kind not in (P.VAR_POSITIONAL, P.VAR_KEYWORD)
        if needed and (p.kind is P.POSITIONAL_ONLY or p.name not in kwargs):
            raise ValueError(f"{where}: missing argument {p.name!r} of model builder {name!r}")
    for key, value in kwargs.items():
        hint = hints.get(key if key in by_name else var_keyword.name, Any)  # type: ignore[union-attr]
        if not _matches(value, hint):
            raise ValueError(
                f"{where}[{key!r}] must be {_type_text(hint)}, got {_kind_text(value)}"
            )


def _check_fields(cls: type, fields: dict[str, Any], where: str) -> None:
    """Refuse unknown or mistyped dataclass fields before ``cls(**fields)``."""
    hints = _hints(cls, cls.__name__)
    known = [f.name for f in dataclasses.fields(cls) if f.init]
    for key, value in fields.items():
        if key not in known:
            raise ValueError(
                f"{where}: unknown field {_show(key)} of {cls.__name__}; fields: {', '.join(known)}"
            )
        if not _matches(value, hints.get(key, Any)):
            raise ValueError(
                f"{where}.{key} must be {_type_text(hints[key])}, got {_kind_text(value)}"
            )


# ---- encoding ---------------------------------------------------------------------------------


def _encode(obj: Any, where: str, depth: int = 1) -> Any:
    """``obj`` as plain JSON data; ``where`` names the field in error messages."""
    from .problems import System

    if depth > MAX_DEPTH:  # also stops self-referencing containers
        raise ValueError(f"{where}: nested more than {MAX_DEPTH} levels deep (or contains itself)")
    if obj is None or isinstance(obj, (bool, str)):
        return obj
    if isinstance(obj, Enum):
        return _encode(obj.value, where, depth)
    if isinstance(obj, (int, np.integer)) and not isinstance(obj, np.bool_):
        return int(obj)
    if isinstance(obj, np.bool_):
        return bool(obj)
    if isinstance(obj, (float, np.floating)):
        f = float(obj)
        # strict JSON has no NaN/Inf; parameter bounds are often infinite
        return f if math.isfinite(f) else {_FLOAT: repr(f)}
    if isinstance(obj, np.ndarray):
        return _encode_array(obj, where)
    if isinstance(obj, Block):
        if not dataclasses.is_dataclass(obj):
            raise TypeError(f"{where}: block {type(obj).__name__} is not a dataclass")
        name = type(obj).__name__
        if name not in _block_types():
            raise TypeError(
                f"{where}: unknown block type {name!r}; storable: {', '.join(_block_types())}"
            )
        fields = {
            f.name: _encode(getattr(obj, f.name), f"{where}.{f.name}", depth + 2)
            for f in dataclasses.fields(obj)
            if f.init
        }
        return {_BLOCK: name, "fields": fields}
    if isinstance(obj, Parameter):
        return {
            _PARAMETER: {
                f.name: _encode(getattr(obj, f.name), f"{where}.{f.name}", depth + 2)
                for f in dataclasses.fields(obj)
            }
        }
    if isinstance(obj, System):
        # the physics of every registered system depends on its parameters only; sampling is
        # kept so that generate() of the rebuilt system gives the same grid
        return {
            _SYSTEM: {
                "name": obj.name,
                "preset": obj.preset,
                "params": _encode(dict(obj.params), f"{where}.params", depth + 2),
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
            out[key] = _encode(val, f"{where}[{key!r}]", depth + 1)
        return out
    if isinstance(obj, (list, tuple)):
        return [_encode(val, f"{where}[{i}]", depth + 1) for i, val in enumerate(obj)]
    raise TypeError(
        f"{where}: cannot store a {type(obj).__name__} in a model file "
        "(JSON values, numpy arrays, blocks, systems and Parameters can be stored)"
    )


def _encode_array(obj: np.ndarray, where: str) -> dict[str, Any]:
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
        data = [x if math.isfinite(x) else {_FLOAT: repr(x)} for x in data]
    return {_ARRAY: {"dtype": dtype, "shape": list(arr.shape), "data": data}}


# ---- decoding ---------------------------------------------------------------------------------


def _decode(obj: Any, where: str, budget: int) -> Any:
    """Inverse of :func:`_encode`; malformed data raises ValueError naming ``where``.

    ``budget``: the most weights a block may have (the length of the file's ``p`` for the
    model's blocks).
    """
    if isinstance(obj, list):
        return [_decode(val, f"{where}[{i}]", budget) for i, val in enumerate(obj)]
    if not isinstance(obj, dict):
        return obj
    tags = [key for key in obj if key.startswith("$")]
    if not tags:
        return {key: _decode(val, f"{where}[{key!r}]", budget) for key, val in obj.items()}
    tag = tags[0]
    if tag not in _TAGS:
        raise ValueError(f"{where}: unknown tag {_show(tag)}; known: {', '.join(_TAGS)}")
    _only(obj, (tag, "fields") if tag == _BLOCK else (tag,), where)
    if tag == _FLOAT:
        return _decode_float(obj[_FLOAT], where)
    if tag == _ARRAY:
        return _decode_array(obj[_ARRAY], where)
    if tag == _BLOCK:
        return _decode_block(obj, where, budget)
    if tag == _PARAMETER:
        return _decode_parameter(obj[_PARAMETER], where)
    return _decode_system(obj[_SYSTEM], where)


def _decode_float(text: Any, where: str) -> float:
    if not isinstance(text, str) or text not in ("inf", "-inf", "nan"):
        raise ValueError(f"{where}: invalid non-finite float {_show(text)}")
    return float(text)


def _decode_array(spec: Any, where: str) -> np.ndarray:
    spec = _require(spec, ("dtype", "shape", "data"), where)
    _only(spec, ("dtype", "shape", "data"), where)
    dtype, shape, data = spec["dtype"], spec["shape"], spec["data"]
    if not isinstance(dtype, str) or dtype not in _ARRAY_DTYPES:
        raise ValueError(
            f"{where}: array dtype {_show(dtype)} is not allowed; model files hold float64 "
            "('<f8') and int64 ('<i8') arrays only"
        )
    if not isinstance(shape, list) or not all(
        isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in shape
    ):
        raise ValueError(
            f"{where}: array shape must be a list of non-negative integers, got {_show(shape)}"
        )
    if len(shape) > MAX_NDIM:
        raise ValueError(f"{where}: array has {len(shape)} dimensions, at most {MAX_NDIM} allowed")
    count = math.prod(shape)
    if count > MAX_ELEMENTS:
        raise ValueError(
            f"{where}: array of shape {shape} has too many elements ({count} > {MAX_ELEMENTS})"
        )
    if not isinstance(data, list) or len(data) != count:
        found = len(data) if isinstance(data, list) else _show(data)
        raise ValueError(f"{where}: array of shape {shape} needs {count} values, got {found}")
    if dtype == "<i8":
        lo, hi = np.iinfo(np.int64).min, np.iinfo(np.int64).max
        for i, x in enumerate(data):
            if type(x) is not int or not lo <= x <= hi:
                raise ValueError(
                    f"{where}: int64 array data must be integers in the int64 range, "
                    f"got {_show(x)} at index {i}"
                )
        return np.array(data, dtype=np.int64).reshape(shape)
    values = []
    for i, x in enumerate(data):
        if isinstance(x, dict) and set(x) == {_FLOAT}:
            x = _decode_float(x[_FLOAT], f"{where}.data[{i}]")
        if type(x) is int:
            try:
                x = float(x)
            except OverflowError:
                x = None
        # a finite float, or a non-finite one written as a tag (JSON may round 1e999 to inf)
        if type(x) is not float or not (math.isfinite(x) or isinstance(data[i], dict)):
            raise ValueError(
                f"{where}: float64 array data must be numbers (non-finite ones as "
                f'{{"$float": "inf"}}), got {_show(data[i])} at index {i}'
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
            f"{where}.sizes must list at least two positive layer widths, got {_show(sizes)}"
        )
    for name, width, what in (
        ("input_shift", sizes[0], "input"),
        ("input_scale", sizes[0], "input"),
        ("output_scale", sizes[-1], "output"),
    ):
        value = fields.get(name)
        if not isinstance(value, list) or len(value) != width:
            raise ValueError(
                f"{where}.{name} must list {width} numbers (one per {what}), got {_show(value)}"
            )
    return sum(n_out * n_in + n_out for n_in, n_out in itertools.pairwise(sizes))


def _rational_weights(fields: dict[str, Any], where: str) -> int:
    num, den = fields.get("num_degree", 7), fields.get("den_degree", 7)
    return max(num, 0) + 1 + max(den, 0)


_BLOCK_WEIGHTS: dict[str, Callable[[dict[str, Any], str], int]] = {
    "MLP": _mlp_weights,
    "RationalChebyshev": _rational_weights,
}


def _decode_block(obj: dict[str, Any], where: str, budget: int) -> Block:
    name = obj[_BLOCK]
    types_ = _block_types()
    if not isinstance(name, str) or name not in types_:
        raise ValueError(f"{where}: unknown block type {_show(name)}; known: {', '.join(types_)}")
    raw = _require(obj, ("fields",), where)["fields"]
    if not isinstance(raw, dict):
        raise ValueError(f"{where}.fields must be an object, got {type(raw).__name__}")
    fields = _decode(raw, f"{where}.fields", budget)
    if not isinstance(fields, dict):
        raise ValueError(f"{where}.fields must be an object, got {_show(fields)}")
    cls = types_[name]
    _check_fields(cls, fields, f"{where}.fields")
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
        raise ValueError(f"{where}: invalid {name} block ({_one_line(exc)})") from None


def _decode_parameter(spec: Any, where: str) -> Parameter:
    if not isinstance(spec, dict):
        raise ValueError(f"{where} must be an object, got {type(spec).__name__}")
    fields = _decode(spec, where, 0)
    if not isinstance(fields, dict):
        raise ValueError(f"{where} must be an object, got {_show(fields)}")
    _check_fields(Parameter, fields, where)
    try:
        return Parameter(**fields)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{where}: invalid parameter ({_one_line(exc)})") from None


def _decode_system(spec: Any, where: str) -> Any:
    """A registered system, rebuilt with its own parameters and typed sampling fields only."""
    from . import problems

    spec = _require(spec, ("name", "preset", "params"), where)
    _only(spec, ("name", "preset", "params", "sampling"), where)
    name, preset = spec["name"], spec["preset"]
    try:
        v.choice("problem", name, problems.available())
        v.choice(f"preset of {name}", preset, problems.presets(name))
    except ValueError as exc:
        raise ValueError(f"{where}: {exc}") from None
    valid = problems.parameters(name, preset)
    params = _decode(spec["params"], f"{where}.params", 0)
    sampling = spec.get("sampling", {})
    for field_name, value, allowed in (("params", params, valid), ("sampling", sampling, None)):
        if not isinstance(value, dict):
            raise ValueError(f"{where}.{field_name} must be an object, got {_show(value)}")
        for key in value:
            if allowed is not None and key not in allowed:
                raise ValueError(
                    f"{where}.params: unknown parameter {_show(key)} of {name}; "
                    f"valid: {', '.join(allowed)}"
                )
            if allowed is None and key not in _SAMPLING_FIELDS:
                raise ValueError(
                    f"{where}.sampling: unknown sampling field {_show(key)}; "
                    f"valid: {', '.join(_SAMPLING_FIELDS)}"
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
        raise ValueError(f"{where}: cannot rebuild system {name!r} ({_one_line(exc)})") from None


def _require(obj: Any, keys: Sequence[str], where: str) -> dict[str, Any]:
    if not isinstance(obj, dict):
        raise ValueError(f"{where} must be an object, got {type(obj).__name__}")
    for key in keys:
        if key not in obj:
            raise ValueError(f"missing field {where}.{key}" if where else f"missing field {key}")
    return obj


def _only(obj: dict[str, Any], keys: Sequence[str], where: str) -> None:
    for key in obj:
        if key not in keys:
            raise ValueError(f"{where}: unexpected field {_show(key)}; expected {', '.join(keys)}")


def _check_depth(doc: Any) -> None:
    """Refuse data nested more than MAX_DEPTH levels (without recursing)."""
    stack = [(doc, 1)]
    while stack:
        obj, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise ValueError(f"the data is nested too deeply (more than {MAX_DEPTH} levels)")
        items = obj.values() if isinstance(obj, dict) else obj
        stack.extend((x, depth + 1) for x in items if isinstance(x, (dict, list)))


# ---- recipes --------------------------------------------------------------------------------


def _rebuild(
    recipe: Any, builders: Mapping[str, Builder], budget: int, call: str = "load_model"
) -> HybridModel:
    """The model a recipe read from a file describes, built by its registered builder."""
    recipe = _require(recipe, ("function", "kwargs"), "model.recipe")
    _only(recipe, ("function", "kwargs"), "model.recipe")
    name, fn, overrides = _lookup(recipe["function"], builders, "model.recipe.function", call)
    if not isinstance(recipe["kwargs"], dict):
        raise ValueError(
            f"model.recipe.kwargs must be an object, got {type(recipe['kwargs']).__name__}"
        )
    kwargs = _decode(recipe["kwargs"], "model.recipe.kwargs", budget)
    if not isinstance(kwargs, dict):  # a tagged value such as {"$float": ...}
        raise ValueError(f"model.recipe.kwargs must be an object, got {_show(kwargs)}")
    _check_arguments(name, fn, kwargs, overrides, "model.recipe.kwargs")
    try:
        model = fn(**kwargs)
    except (MemoryError, RecursionError):
        raise
    except Exception as exc:  # the builder's own check of its (well-typed) arguments
        raise ValueError(
            f"model.recipe {name!r} failed: {type(exc).__name__}: {_one_line(exc)}"
        ) from None
    if not isinstance(model, HybridModel):
        raise ValueError(
            f"model.recipe {name!r} returned a {type(model).__name__}, not a HybridModel"
        )
    return model


def _describe(model: HybridModel) -> dict[str, Any]:
    """What the file states about the model besides its recipe (checked on loading)."""
    return {
        "n_states": model.n_states,
        "n_inputs": model.n_inputs,
        "n_outputs": model.n_outputs,
        "n_params": model.n_params,
        "state_names": list(model.state_names),
        "input_names": list(model.input_names),
        "output_names": list(model.output_names),
        "blocks": {
            name: _encode(block, f"model.blocks[{name!r}]") for name, block in model.blocks.items()
        },
        "slices": {name: [s.start, s.stop] for name, s in model.slices.items()},
    }


def _block_json(encoded: dict[str, Any]) -> dict[str, Any]:
    # the readable form written under model.blocks: {"type": ..., "fields": ...}
    return {"type": encoded[_BLOCK], "fields": encoded["fields"]}


def _json(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True)


def _checksum(p: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(p, dtype="<f8").tobytes()).hexdigest()


# ---- public API -------------------------------------------------------------------------------


def save_model(
    path: str | Path,
    model: Any,
    p: np.ndarray | None = None,
    metadata: Mapping[str, Any] | None = None,
    builders: Mapping[str, Builder] | None = None,
) -> Path:
    """Write a trained model to one JSON file, atomically.

    Args:
        path: the file to write (parent directories are created); not a directory.
        model: a :class:`~collocnode.models.HybridModel` whose ``recipe`` names a registered
            model builder (every :func:`~collocnode.models.NeuralODE` has one), or a
            :class:`~collocnode.training.TrainingSolution`, whose model, ``p`` and status are
            taken.
        p: the parameter vector, shape ``(model.n_params,)``; finite. Optional for a
            TrainingSolution.
        metadata: free-form JSON-able data (numpy values, enums, systems and blocks are
            converted; arrays are stored as float64 or int64): the problem the model came from,
            training settings, status, ...
        builders: model builders by name besides the registered ones (see
            :func:`register_builder`); the recipe may name one, or be the function itself.

    Returns:
        The path written.

    Raises:
        ValueError: ``path`` is a directory, no recipe, a builder that is not registered, a
            recipe that rebuilds a different model, data nested too deeply, or a ``p`` of the
            wrong shape or with NaN/Inf.
        TypeError: a recipe argument or metadata value that cannot be stored (named).
    """
    from ._version import __version__
    from .training import TrainingSolution

    if Path(path).is_dir():
        raise ValueError(
            f"path {str(path)!r} is a directory; save_model writes one file: give a file name "
            f"such as {str(Path(path) / 'model.json')!r}"
        )
    extra = _check_builders(builders)
    meta: dict[str, Any] = {}
    if isinstance(model, TrainingSolution):
        sol = model
        model = sol.model
        p = sol.p if p is None else p
        meta.update(
            status=sol.status.value,
            ipopt_status=sol.solution.ipopt_status,
            objective=sol.solution.objective,
            iterations=sol.solution.iterations,
        )
    if not isinstance(model, HybridModel):
        raise TypeError(f"model must be a HybridModel or TrainingSolution, got {model!r}")
    if p is None:
        raise ValueError("p is required when model is a HybridModel")
    p = v.finite_array("p", p, shape=(model.n_params,))
    if model.recipe is None:
        raise ValueError(
            "model has no recipe, so it cannot be rebuilt from a file: build it with NeuralODE, "
            "or with a registered model builder that sets HybridModel(recipe=(name, kwargs))"
        )
    if metadata is not None and not isinstance(metadata, Mapping):
        raise TypeError(f"metadata must be a dict, got {metadata!r}")
    meta.update(metadata or {})
    if not isinstance(model.recipe, tuple) or len(model.recipe) != 2:
        raise ValueError(f"model.recipe must be (builder name, kwargs), got {_show(model.recipe)}")
    target, kwargs = model.recipe
    name = _name_for_saving(target, extra)
    if not isinstance(kwargs, Mapping):
        raise ValueError(f"model.recipe kwargs must be a dict, got {_show(kwargs)}")
    if model.n_params > MAX_ELEMENTS:
        raise ValueError(
            f"the model has {model.n_params} parameters, more than a model file holds "
            f"({MAX_ELEMENTS})"
        )
    recipe = {"function": name, "kwargs": _encode(dict(kwargs), "model.recipe.kwargs", 4)}
    # Fail now, not when the file is needed: the recipe must rebuild a model of the same layout
    # through the same checks load_model makes.
    rebuilt = _rebuild(json.loads(json.dumps(recipe)), extra, model.n_params, "save_model")
    if _describe(rebuilt) != _describe(model):
        raise ValueError(
            f"model.recipe {name!r} rebuilds a model with a different layout than the model "
            "being saved (blocks, sizes, names or parameter slices differ)"
        )
    description = _describe(model)
    description["blocks"] = {k: _block_json(b) for k, b in description["blocks"].items()}
    doc = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "library_version": __version__,
        "model": {"recipe": recipe, **description},
        "p": p.tolist(),
        "p_sha256": _checksum(p),
        "metadata": _encode(meta, "metadata", 2),
    }
    try:
        _check_depth(doc)
    except ValueError as exc:
        raise ValueError(f"cannot save the model: {exc}") from None
    # allow_nan=False: the encoder already replaced non-finite floats; this guards the claim
    return atomic_write_text(path, json.dumps(doc, indent=1, allow_nan=False) + "\n")


@dataclass(frozen=True)
class LoadedModel:
    """A model read by :func:`load_model`.

    Attributes:
        model: the rebuilt :class:`~collocnode.models.HybridModel`.
        p: its parameter vector, shape ``(model.n_params,)`` (read-only).
        metadata: the free-form metadata stored with it.
        library_version: the collocnode version that wrote the file.
        format_version: the file format version.
    """

    model: HybridModel
    p: np.ndarray
    metadata: dict[str, Any] = field(default_factory=dict)
    library_version: str = ""
    format_version: int = FORMAT_VERSION

    @property
    def params(self) -> dict[str, np.ndarray | float]:
        """Block weights (arrays) and fitted physical parameters (floats) by name."""
        return self.model.split_params(self.p)

    def torch_modules(self, dtype: Any = None, device: Any = None) -> dict[str, Any]:
        """Block name -> ``torch.nn.Module`` holding that block's trained weights (float64 by
        default; the flat weight layout is the same as in ``p``)."""
        return {
            # a writable copy: torch warns about (and cannot own) read-only numpy memory
            name: block.torch_module(
                self.p[self.model.slices[name]].copy(), dtype=dtype, device=device
            )
            for name, block in self.model.blocks.items()
        }

    def simulate(
        self,
        t: np.ndarray,
        x0: np.ndarray,
        inputs: Callable[[np.ndarray], np.ndarray] | None = None,
        **kwargs: Any,
    ) -> Any:
        """:func:`collocnode.simulate.simulate` of the loaded model: states (and outputs) on
        ``t`` (n,) from ``x0`` (n_states,); ``inputs(t: (n,)) -> (n, n_inputs)`` if the model has
        inputs. Returns a :class:`~collocnode.data.Trajectory`."""
        from .simulate import simulate

        return simulate(self.model, self.p, t, x0, inputs=inputs, **kwargs)


def load_model(
    path: str | Path,
    builders: Mapping[str, Builder] | None = None,
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
    **removed: Any,
) -> LoadedModel:
    """Read a model written by :func:`save_model`.

    The file is data: its recipe is rebuilt only by a model builder of the library or one
    registered with :func:`register_builder` or given in ``builders``, matched by exact name, and
    only after the arguments were checked against the builder's signature and annotations.
    Nothing the file names is imported.

    Args:
        path: the model file.
        builders: model builders by name besides the library's and the registered ones, e.g.
            ``{"mypackage.models:oscillator": oscillator}``.
        max_bytes: the largest file read [bytes] (default :data:`DEFAULT_MAX_BYTES`, 64 MiB);
            the size is checked before reading.

    Raises:
        ValueError: not a collocnode model file, a file larger than ``max_bytes``, data nested
            more than :data:`MAX_DEPTH` levels, an unsupported format version (the message lists
            the supported ones), a missing or malformed field (named), a builder that is not
            registered, arguments the builder does not take or of the wrong type, an unknown
            block type, an array that is not float64/int64 or whose shape does not match its
            data, a block larger than ``p``, or a file whose parameters do not fit the rebuilt
            model.
        TypeError: ``trusted_modules`` (removed: register builders instead) or another unknown
            keyword; ``builders`` that is not a dict of functions.
        OSError: the file cannot be read.
    """
    if removed:
        if "trusted_modules" in removed:
            raise TypeError(
                "load_model(trusted_modules=...) was removed: a model file no longer names "
                "modules to import; register the function that builds your model with "
                "@collocnode.serialize.register_builder(name) or pass builders={name: function}"
            )
        raise TypeError(f"load_model() got an unexpected keyword argument {next(iter(removed))!r}")
    extra = _check_builders(builders)
    max_bytes = v.positive_int("max_bytes", max_bytes)
    path = Path(path)
    doc = _parse(_read(path, max_bytes), path)
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        found = doc.get("format") if isinstance(doc, dict) else type(doc).__name__
        raise ValueError(
            f"{str(path)!r} is not a collocnode model file (format {_show(found)}, "
            f"expected {FORMAT!r})"
        )
    try:
        _check_depth(doc)
        return _load(doc, extra)
    except ValueError as exc:
        raise ValueError(f"{str(path)!r}: {_one_line(exc)}") from None


def _read(path: Path, max_bytes: int) -> bytes:
    """The file's bytes, refusing a file larger than ``max_bytes`` before reading it."""

    def too_large(size: int | str) -> ValueError:
        return ValueError(
            f"{str(path)!r} is {size} bytes, more than max_bytes = {max_bytes}; pass a larger "
            "max_bytes to load_model if you trust this file"
        )

    with open(path, "rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        if size > max_bytes:
            raise too_large(size)
        # read what fstat reports, then on until EOF: a pipe or a growing file reports less
        raw = bytearray(fh.read(size + 1))
        while len(raw) <= max_bytes:
            more = fh.read(min(2**20, max_bytes + 1 - len(raw)))
            if not more:
                break
            raw += more
    if len(raw) > max_bytes:
        raise too_large(f"more than {max_bytes}")
    return bytes(raw)


class _NonFiniteToken(ValueError):
    pass


def _refuse_constant(token: str) -> float:
    raise _NonFiniteToken(
        f"the number {token} is not JSON (save_model writes non-finite floats as "
        f'{{"$float": "{token.lower().replace("infinity", "inf")}"}})'
    )


def _parse(raw: bytes, path: Path) -> Any:
    try:
        return json.loads(raw.decode("utf-8"), parse_constant=_refuse_constant)
    except _NonFiniteToken as exc:
        raise ValueError(f"{str(path)!r}: {exc}") from None
    except RecursionError:  # the C parser's own depth limit, far above MAX_DEPTH
        raise ValueError(
            f"{str(path)!r}: the data is nested too deeply (more than {MAX_DEPTH} levels)"
        ) from None
    except (UnicodeDecodeError, ValueError) as exc:  # ValueError: also over-long integers
        raise ValueError(
            f"{str(path)!r} is not a collocnode model file (not JSON: {_show(str(exc), 80)})"
        ) from None


def _load(doc: dict[str, Any], builders: Mapping[str, Builder]) -> LoadedModel:
    _require(doc, ("format_version",), "")
    version = doc["format_version"]
    if (
        isinstance(version, bool)
        or not isinstance(version, int)
        or version not in SUPPORTED_VERSIONS
    ):
        written_by = doc.get("library_version", "an unknown version")
        raise ValueError(
            f"format_version {_show(version)} (written by collocnode {_show(written_by)}) is not "
            f"supported; this collocnode reads format versions "
            f"{', '.join(map(str, SUPPORTED_VERSIONS))}"
        )
    _require(doc, ("library_version", "model", "p"), "")
    if not isinstance(doc["library_version"], str):
        raise ValueError(f"library_version must be a string, got {_show(doc['library_version'])}")
    p_list = doc["p"]
    if not isinstance(p_list, list):
        raise ValueError(f"p must be an array of real numbers, got {_show(p_list)}")
    if len(p_list) > MAX_ELEMENTS:
        raise ValueError(
            f"p has {len(p_list)} values, more than a model file holds ({MAX_ELEMENTS})"
        )
    # no block of the model can have more weights than the file carries values of p
    budget = len(p_list)
    spec = _require(
        doc["model"],
        ("recipe", "n_states", "n_inputs", "n_outputs", "n_params", "blocks", "slices"),
        "model",
    )
    for key in ("blocks", "slices"):
        if not isinstance(spec[key], dict):
            raise ValueError(f"model.{key} must be an object, got {type(spec[key]).__name__}")
    for name, block in spec["blocks"].items():
        # the readable block list must name known types too (it is what a reader trusts)
        where = f"model.blocks[{name!r}]"
        _require(block, ("type", "fields"), where)
        _only(block, ("type", "fields"), where)
        _decode_block({_BLOCK: block["type"], "fields": block["fields"]}, where, budget)
    model = _rebuild(spec["recipe"], builders, budget)
    described = _describe(model)
    described["blocks"] = {k: _block_json(b) for k, b in described["blocks"].items()}
    for key in described:
        # compared as JSON text: 1 == True == 1.0 in Python, not in the file
        if key in spec and _json(described[key]) != _json(spec[key]):
            raise ValueError(
                f"model.{key} does not match the model its recipe rebuilds: "
                f"file {_show(spec[key], 200)}, rebuilt {_show(described[key], 200)}"
            )
    if len(p_list) != model.n_params:
        raise ValueError(f"p must have shape ({model.n_params},), got ({len(p_list)},)")
    for i, x in enumerate(p_list):
        if type(x) not in (int, float):
            raise ValueError(f"p must be an array of real numbers, got {_show(x)} at index {i}")
    try:
        p = v.finite_array("p", p_list, shape=(model.n_params,))
    except TypeError as exc:
        raise ValueError(str(exc)) from None
    if "p_sha256" in doc and doc["p_sha256"] != _checksum(p):
        raise ValueError("p does not match p_sha256 (the file was edited or corrupted)")
    p.setflags(write=False)
    metadata = _decode(doc.get("metadata", {}), "metadata", MAX_ELEMENTS)
    return LoadedModel(
        model=model,
        p=p,
        metadata=metadata if isinstance(metadata, dict) else {"value": metadata},
        library_version=str(doc["library_version"]),
        format_version=int(version),
    )


__all__ = [
    "DEFAULT_MAX_BYTES",
    "FORMAT",
    "FORMAT_VERSION",
    "MAX_DEPTH",
    "MAX_ELEMENTS",
    "SUPPORTED_VERSIONS",
    "Builder",
    "LoadedModel",
    "load_model",
    "register_builder",
    "save_model",
]
