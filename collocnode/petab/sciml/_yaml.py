"""The network file as YAML data: loaded with ``yaml.safe_load`` (data only: no tags, nothing
imported or run), and the structural checks of its parts, each error naming the file and
where in it."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._tables import PetabError
from ._args import Arg, references

_ID = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-]*")


def _yaml() -> Any:
    try:
        import yaml
    except ImportError as exc:  # pragma: no cover - pyyaml is in the petab extra
        raise ImportError("reading PEtab SciML networks needs pyyaml (pip install pyyaml)") from exc
    return yaml


def load_yaml(path: Path) -> Any:
    """The data of the YAML file ``path``; a missing, unreadable or invalid file is one
    [`PetabError`][collocnode.petab.PetabError] naming it."""
    yaml = _yaml()
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise PetabError(f"{path}: no such network file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise PetabError(f"{path}: cannot be read: {exc}") from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise PetabError(f"{path}: not valid YAML: {first}") from None


@dataclass(frozen=True)
class Checks:
    """Checks of the parts of the file ``path``; each raises a
    [`PetabError`][collocnode.petab.PetabError] naming the file and ``where`` (a key, an index or a
    layer or node) or returns the checked value."""

    path: Path

    def fail(self, where: str, message: str) -> PetabError:
        return PetabError(
            f"{self.path}: {where}: {message}" if where else f"{self.path}: {message}"
        )

    def mapping(
        self, value: Any, where: str, keys: Sequence[str], optional: Sequence[str] = ()
    ) -> dict:
        if not isinstance(value, dict):
            raise self.fail(where, f"must be a mapping, got {type(value).__name__}")
        unknown = sorted(str(k) for k in value if k not in (*keys, *optional))
        if unknown:
            raise self.fail(where, f"unknown key(s) {', '.join(unknown)}")
        missing = [k for k in keys if k not in value]
        if missing:
            raise self.fail(where, f"missing key(s) {', '.join(missing)}")
        return value

    def listing(self, value: Any, where: str) -> list:
        if not isinstance(value, list):
            raise self.fail(where, f"must be a list, got {type(value).__name__}")
        return value

    def ident(self, value: Any, where: str) -> str:
        if not isinstance(value, str) or not _ID.fullmatch(value):
            raise self.fail(where, f"must be an id (letters, digits, '_', '.', '-'), got {value!r}")
        return value

    def refs(
        self, bound: Mapping[str, Any], spec: Sequence[Arg], names: set[str], where: str
    ) -> None:
        """Every tensor argument in ``bound`` must name one of ``names`` (an earlier node)."""
        for arg_name, ref in references(spec, bound):
            if ref not in names:
                raise self.fail(where, f"argument '{arg_name}' names no earlier node: {ref!r}")
