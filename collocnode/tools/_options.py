"""Options dataclasses composed of other options dataclasses, addressed by flat field names.

An experiment's options embed a recipe, which embeds its `CollocationSettings`; the command
line (``--stages 3``) and the comparison (``--set collocation.stages=3``) name a field without its
path. `flat_fields` lists those names and `replace_flat` changes a field wherever it
sits, so each setting is declared once and reached by one name.
"""

from __future__ import annotations

import dataclasses
import inspect
import re
from collections.abc import Iterator
from typing import Any


def _nested_default(f: dataclasses.Field) -> Any:
    if f.default is not dataclasses.MISSING:
        return f.default
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    return None


def flat_fields(obj_or_cls: Any) -> Iterator[tuple[tuple[str, ...], dataclasses.Field, Any]]:
    """``(path, field, default)`` of every leaf field of a (nested) options dataclass, outer
    fields first; ``path`` names the enclosing fields, then the field. A name that occurs at
    several depths is reached at its outermost occurrence."""
    seen: set[str] = set()
    queue: list[tuple[tuple[str, ...], Any]] = [((), obj_or_cls)]
    while queue:
        prefix, node = queue.pop(0)
        for f in dataclasses.fields(node):
            if not f.init or f.name.startswith("_"):
                continue
            value = getattr(node, f.name) if not isinstance(node, type) else _nested_default(f)
            if dataclasses.is_dataclass(value) and not isinstance(value, type):
                queue.append(((*prefix, f.name), value))
            elif f.name not in seen:
                seen.add(f.name)
                yield (*prefix, f.name), f, value


def replace_flat(obj: Any, **changes: Any) -> Any:
    """``dataclasses.replace`` on a nested options dataclass by flat field names (see
    `flat_fields`); an unknown name is a ValueError listing the valid ones."""
    paths = {f.name: (f.name,) for f in dataclasses.fields(obj) if f.init}
    paths.update({path[-1]: path for path, _, _ in flat_fields(obj) if path[-1] not in paths})
    nested: dict[str, dict[str, Any]] = {}
    direct: dict[str, Any] = {}
    for name, value in changes.items():
        if name not in paths:
            raise ValueError(
                f"unknown option {name!r} of {type(obj).__name__}; valid: {', '.join(paths)}"
            )
        path = paths[name]
        if len(path) == 1:
            direct[name] = value
        else:
            nested.setdefault(path[0], {})["/".join(path[1:])] = value
    for outer, inner in nested.items():
        child = getattr(obj, outer)
        by_name = {key.split("/")[-1]: val for key, val in inner.items()}
        direct[outer] = replace_flat(child, **by_name)
    return dataclasses.replace(obj, **direct) if direct else obj


def flat_dict(obj: Any) -> dict[str, Any]:
    """The leaf fields of a (nested) options dataclass by flat name (see `flat_fields`),
    e.g. the ``settings`` a result file records."""
    return {path[-1]: value for path, _, value in flat_fields(obj)}


def get_flat(obj: Any, name: str) -> Any:
    """The value of the leaf field ``name`` wherever it sits in ``obj`` (AttributeError if none)."""
    for path, _, value in flat_fields(obj):
        if path[-1] == name:
            return value
    raise AttributeError(f"{type(obj).__name__} has no option {name!r}")


def build(cls: type, **values: Any) -> Any:
    """``cls(**own)`` with its own fields, then `replace_flat` with the nested ones:
    ``build(VdPOptions, noise=0.1, stages=3)``."""
    own = {f.name for f in dataclasses.fields(cls) if f.init}
    obj = cls(**{k: val for k, val in values.items() if k in own})
    nested = {k: val for k, val in values.items() if k not in own}
    return replace_flat(obj, **nested) if nested else obj


def field_docs(cls: type) -> dict[str, str]:
    """The first sentence of each field's description in the ``Args:`` or ``Attributes:``
    section of the docstrings of ``cls`` and of the options dataclasses nested in it
    (``name: text``, continued on more deeply indented lines; ``a, b: text`` describes both),
    by flat field name; the outermost description of a name wins."""
    docs: dict[str, str] = {}
    queue: list[type] = [cls]
    while queue:
        node = queue.pop(0)
        for names, text in _documented_fields(inspect.getdoc(node) or ""):
            for name in names:
                docs.setdefault(name, _first_sentence(text))
        for f in dataclasses.fields(node):
            value = _nested_default(f)
            if dataclasses.is_dataclass(value) and not isinstance(value, type):
                queue.append(type(value))
    return docs


def _documented_fields(doc: str) -> Iterator[tuple[list[str], str]]:
    """``(names, text)`` of every entry of the docstring's Args/Attributes sections."""
    section, indent = False, 0
    names: list[str] | None = None
    text: list[str] = []
    for line in [*doc.splitlines(), ""]:
        stripped = line.strip()
        depth = len(line) - len(line.lstrip())
        if stripped in ("Args:", "Attributes:", "Arguments:", "Parameters:"):
            section, indent = True, -1
            continue
        if not section:
            continue
        if not stripped or depth == 0:
            if names:
                yield names, " ".join(text)
            names, text = None, []
            section = False  # a blank or unindented line ends the section
            continue
        entry = re.match(r"^([A-Za-z_][\w, ]*):\s+(.*)$", stripped)
        if entry and (indent < 0 or depth == indent):
            if names:
                yield names, " ".join(text)
            indent = depth
            names = [n.strip() for n in entry.group(1).split(",")]
            text = [entry.group(2)]
        elif names is not None:
            text.append(stripped)


def _first_sentence(text: str) -> str:
    """``text`` up to its first sentence's full stop (one followed by a capital letter or the
    end), without it, and with Sphinx roles and literals as plain words."""
    text = re.sub(r":\w+:`~?(?:[\w.]*\.)?([\w]+)`", r"\1", text)
    text = text.replace("``", "")
    match = re.match(r"^(.*?)\.(\s+[A-Z]|$)", text)
    return (match.group(1) if match else text).strip()
