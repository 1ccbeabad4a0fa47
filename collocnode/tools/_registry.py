"""One registry mechanism: names mapped to ``"package.module:attribute"`` references, imported
on first use.

Every named collection of the library is one `Registry` -- the benchmark systems, the
comparison's methods and scenarios, the experiments of ``train_collocation.py``, the recipes,
the builders a model file may name -- so that importing a package does no work and a name
resolves the same way everywhere: an unknown name is one ValueError listing the known ones, a
reference loads with `importlib.import_module` and ``getattr`` only when used, and an
entry may carry metadata (a summary, option defaults) that is read without loading it.

Only references registered in code are ever loaded: a name read from a file or a command line
selects an entry, never a module.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Generic, TypeVar

from .. import _validation as v

T = TypeVar("T")

#: a reference: a dotted module path, a colon, a dotted attribute path
REFERENCE = re.compile(r"^[A-Za-z_][\w]*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")


@dataclass(frozen=True)
class Entry:
    """One registered name: its ``"package.module:attribute"`` reference and metadata, or (an
    object registered at run time, such as a user's model builder) the object itself."""

    name: str
    ref: str | None
    meta: Mapping[str, Any] = field(default_factory=dict)
    value: Any = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.ref is None:
            object.__setattr__(self, "meta", MappingProxyType(dict(self.meta)))
            return
        if not isinstance(self.ref, str) or not REFERENCE.match(self.ref):
            raise ValueError(
                f"registry entry {self.name!r}: ref must read 'package.module:attribute', got "
                f"{self.ref!r:.80}"
            )
        object.__setattr__(self, "meta", MappingProxyType(dict(self.meta)))

    @property
    def module(self) -> str:
        return (self.ref or ":").split(":", 1)[0]

    @property
    def attribute(self) -> str:
        return (self.ref or ":").split(":", 1)[1]

    def load(self) -> Any:
        """The referenced object (its module imported now, if it was not)."""
        if self.ref is None:
            return self.value
        obj: Any = importlib.import_module(self.module)
        for part in self.attribute.split("."):
            obj = getattr(obj, part)
        return obj


class Registry(Generic[T]):
    """Names of one ``kind`` (it names them in errors: "problem", "method", ...) mapped to
    lazily loaded objects.

    Args:
        kind: what a name names, for the error of an unknown one.
        entries: name -> reference, or name -> ``(reference, metadata)``.
    """

    def __init__(self, kind: str, entries: Mapping[str, Any] | None = None) -> None:
        self.kind = kind
        self._entries: dict[str, Entry] = {}
        for name, value in (entries or {}).items():
            ref, meta = (value, {}) if isinstance(value, str) else value
            self.register(name, ref, **meta)

    def register(self, name: str, ref: str, **meta: Any) -> Entry:
        """Add ``name`` -> ``ref`` (a ``"package.module:attribute"`` reference) with ``meta``;
        a name registered already is a ValueError."""
        if not isinstance(name, str) or not name:
            raise ValueError(f"{self.kind} name must be a non-empty string, got {name!r:.80}")
        if name in self._entries:
            raise ValueError(f"{self.kind} {name!r} is registered already")
        entry = Entry(name, ref, meta)
        self._entries[name] = entry
        return entry

    def register_object(self, name: str, value: Any, **meta: Any) -> Entry:
        """Add ``name`` -> ``value``, an object that exists already (registered at run time);
        a name registered already is a ValueError."""
        if not isinstance(name, str) or not name:
            raise ValueError(f"{self.kind} name must be a non-empty string, got {name!r:.80}")
        if name in self._entries:
            raise ValueError(f"{self.kind} {name!r} is registered already")
        entry = Entry(name, None, meta, value)
        self._entries[name] = entry
        return entry

    def replace_object(self, name: str, value: Any, **meta: Any) -> Entry:
        """Register ``value`` under ``name``, replacing an object registered before (never a
        reference registered in code)."""
        old = self._entries.get(name)
        if old is not None and old.ref is not None:
            raise ValueError(f"{self.kind} name {name!r} is reserved for the library's own entry")
        self._entries.pop(name, None)
        return self.register_object(name, value, **meta)

    def entries(self) -> list[Entry]:
        """Every entry, by name."""
        return [self._entries[n] for n in self.names()]

    def names(self) -> list[str]:
        """The registered names, sorted."""
        return sorted(self._entries)

    def entry(self, name: str) -> Entry:
        """The entry of ``name``; an unknown name is one ValueError listing the known ones."""
        return self._entries[v.choice(self.kind, name, self.names())]

    def load(self, name: str) -> T:
        """The object ``name`` refers to (imported on first use)."""
        return self.entry(name).load()

    def get(self, name: str, default: Any = None) -> Entry | Any:
        """The entry of ``name``, or ``default`` where it is not registered (no error)."""
        return self._entries.get(name, default) if isinstance(name, str) else default

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __len__(self) -> int:
        return len(self._entries)

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}, {len(self)} entries)"
