"""Model builders: the library's own by exact name, the user's by registration, and the checks
of a builder's keyword arguments against its signature and annotations."""

from __future__ import annotations

import dataclasses
import inspect
import re
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from ..tools._registry import Registry
from ._format import Builder, one_line, show


def new_registry() -> Registry[Builder]:
    """The model builders a file may name: the library's own, by the name a file gives (their
    modules are imported from these fixed references only, on first use, never from a name read
    from a file; ``systems`` names the arguments annotated Any that must be a registered system,
    checked before the call), and those registered with
    [`register_builder`][collocnode.serialize.register_builder] at run time."""
    return Registry(
        "model builder",
        {
            "collocnode.models:NeuralODE": ("collocnode.models:NeuralODE", {"systems": ()}),
            "collocnode.recipes.qvm:hybrid_model": (
                "collocnode.recipes.qvm:hybrid_model",
                {"systems": ("system",)},
            ),
        },
    )


BUILDERS = new_registry()
# Names written by earlier releases -> the current name of the same builder.
RENAMED_BUILDERS: dict[str, str] = {
    "collocnode.experiments.qvm:hybrid_model": "collocnode.recipes.qvm:hybrid_model",
}


def _library(name: str) -> bool:
    entry = BUILDERS.get(name)
    return entry is not None and entry.ref is not None


# ---- builders -------------------------------------------------------------------------------


def _check_builder_name(name: object) -> str:
    if not isinstance(name, str) or not name or name != name.strip() or not name.isprintable():
        raise ValueError(
            f"a model builder's name must be a non-empty printable string without surrounding "
            f"spaces, got {show(name)}"
        )
    if len(name) > 200:
        raise ValueError(f"a model builder's name has at most 200 characters, got {len(name)}")
    if _library(name) or name in RENAMED_BUILDERS:
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
    [`HybridModel`][collocnode.HybridModel] with ``recipe=(name, kwargs)``; the arguments may be
    JSON values, float64/int64 arrays, blocks, registered systems and Parameters, and are
    checked against the builder's signature and annotations before every call from a file.
    Use as a decorator or call directly::

        @register_builder("mypackage.models:oscillator")
        def oscillator(stiffness: Block, damping: Parameter) -> HybridModel: ...

        register_builder("mypackage.models:oscillator", oscillator)

    Registering a different function under a name already taken is an error; the library's own
    names are reserved. Without registering, pass ``builders={name: function}`` to
    [`load_model`][collocnode.serialize.load_model] and
    [`save_model`][collocnode.serialize.save_model].

    Returns:
        ``builder`` when given, otherwise a decorator that registers and returns its function.

    Raises:
        ValueError: an empty, reserved or taken name. TypeError: a builder that is not callable.
    """
    _check_builder_name(name)

    def register(fn: Builder) -> Builder:
        if not callable(fn):
            raise TypeError(f"model builder {name!r} must be callable, got {show(fn)}")
        entry = BUILDERS.get(name)
        old = None if entry is None else entry.value
        # the same function defined again (a reloaded module, a re-run notebook cell) may replace
        # itself; another function may not take the name
        if old is not None and old is not fn and _qualified(old) != _qualified(fn):
            raise ValueError(
                f"model builder name {name!r} is already registered to {_qualified(old)}; "
                "choose another name"
            )
        BUILDERS.replace_object(name, fn)
        return fn

    return register if builder is None else register(builder)


def check_builders(builders: object) -> dict[str, Builder]:
    """The ``builders=`` argument as a dict, checked."""
    if builders is None:
        return {}
    if not isinstance(builders, Mapping):
        raise TypeError(
            "builders must be a dict of model builder name -> function "
            f"(it replaces trusted_modules), got {show(builders)}"
        )
    for name, fn in builders.items():
        _check_builder_name(name)
        if not callable(fn):
            raise TypeError(f"builders[{name!r}] must be callable, got {show(fn)}")
    return dict(builders)


def unregistered(name: str, where: str, call: str) -> ValueError:
    library = ", ".join(e.name for e in BUILDERS.entries() if e.ref is not None)
    why = ""
    if name.startswith("__main__:"):
        why = (
            " (it names a function defined in __main__ (a script or notebook), which another "
            "process cannot find by that name)"
        )
    return ValueError(
        f"{where} {show(name)} is not a registered model builder{why}; a model file can name "
        f"the library's builders ({library}) and builders you register: decorate the function "
        f"with @collocnode.serialize.register_builder({show(name)}) or pass "
        f"{call}(..., builders={{{show(name)}: function}})"
    )


def lookup(
    name: object, extra: Mapping[str, Builder], where: str, call: str
) -> tuple[str, Builder, dict[str, Any]]:
    """(name, builder, annotation overrides) of the builder named ``name``, by exact name."""
    if not isinstance(name, str):
        raise ValueError(f"{where} must be a string naming a model builder, got {show(name)}")
    canonical = RENAMED_BUILDERS.get(name, name)
    if _library(canonical):
        from ..problems import System

        entry = BUILDERS.entry(canonical)
        return canonical, entry.load(), dict.fromkeys(entry.meta["systems"], System)
    entry = BUILDERS.get(name)
    fn = extra.get(name, None if entry is None else entry.value)
    if fn is None:
        raise unregistered(name, where, call)
    return name, fn, {}


def name_for_saving(target: object, extra: Mapping[str, Builder]) -> str:
    """The name a file stores for a recipe's builder (a registered name or function)."""
    if isinstance(target, str):
        lookup(target, extra, "model.recipe builder", "save_model")
        return RENAMED_BUILDERS.get(target, target)
    if callable(target):
        for name, fn in extra.items():
            if fn is target:
                return name
        for entry in BUILDERS.entries():  # the user's (loaded) first: loading imports nothing
            if entry.ref is None and entry.value is target:
                return entry.name
        for entry in BUILDERS.entries():
            if entry.ref is not None and entry.load() is target:
                return entry.name
        raise ValueError(
            f"model.recipe builder {_qualified(target)} is not a registered model builder; "
            "register it with @collocnode.serialize.register_builder(name) or pass "
            "save_model(..., builders={name: function}); the file stores that name"
        )
    raise ValueError(f"model.recipe must be (builder name, kwargs), got a builder {show(target)}")


# ---- type checks against annotations ------------------------------------------------------


def _type_text(hint: Any) -> str:
    if isinstance(hint, type):
        return hint.__name__
    # "collocnode.nn.base.Block | list[collocnode.nn.base.Block]" -> "Block | list[Block]"
    return re.sub(r"\b(?:[A-Za-z_]\w*\.)+([A-Za-z_]\w*)", r"\1", str(hint))


def _kind_text(value: object) -> str:
    return f"{type(value).__name__} {show(value)}"


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
            f"({one_line(exc)})"
        ) from None


def check_arguments(
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
                f"{where}: unknown argument {show(key)} of model builder {name!r}; "
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


def check_fields(cls: type, fields: dict[str, Any], where: str) -> None:
    """Refuse unknown or mistyped dataclass fields before ``cls(**fields)``."""
    hints = _hints(cls, cls.__name__)
    known = [f.name for f in dataclasses.fields(cls) if f.init]
    for key, value in fields.items():
        if key not in known:
            raise ValueError(
                f"{where}: unknown field {show(key)} of {cls.__name__}; fields: {', '.join(known)}"
            )
        if not _matches(value, hints.get(key, Any)):
            raise ValueError(
                f"{where}.{key} must be {_type_text(hints[key])}, got {_kind_text(value)}"
            )
