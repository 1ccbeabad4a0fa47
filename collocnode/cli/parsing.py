"""Argument parsing shared by the command lines: a parser whose errors are one line, and one
``--option`` per field of an options dataclass (nested ones by their flat field names)."""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

from .exits import EXIT_USAGE


class OneLineParser(argparse.ArgumentParser):
    """argparse with a single ``prog: error: message`` line on bad arguments (exit code 2)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def _int_or_widths(text: str) -> int | tuple[int, ...]:
    """``"16"`` -> 16, ``"16,8"`` -> (16, 8) (hidden-layer widths)."""
    parts = [p for p in text.replace(" ", "").split(",") if p]
    try:
        values = tuple(int(p) for p in parts)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected an int or comma-separated ints, got {text!r}"
        ) from None
    return values[0] if len(values) == 1 and "," not in text else values


def _field_type(field: dataclasses.Field) -> Callable[[str], Any]:
    hint = str(field.type)
    if "tuple" in hint:
        return _int_or_widths
    if "float" in hint:
        return float
    if "int" in hint:
        return int
    return str


def add_dataclass_options(
    parser: argparse.ArgumentParser, cls: type, skip: Sequence[str] = ()
) -> None:
    """One ``--option`` per leaf field of the options dataclass ``cls``, nested ones by their
    own names (booleans get ``--no-x``)."""
    from ..tools.options import flat_fields

    for _, f, default in flat_fields(cls):
        if f.name in skip:
            continue
        flag = "--" + f.name.replace("_", "-")
        doc = f"default: {default}"
        if isinstance(default, bool):
            parser.add_argument(
                flag,
                dest=f.name,
                action=argparse.BooleanOptionalAction,
                default=argparse.SUPPRESS,
                help=doc,
            )
        else:
            parser.add_argument(
                flag,
                dest=f.name,
                type=_field_type(f),
                default=argparse.SUPPRESS,
                help=doc,
                metavar=f.name.upper(),
            )


def options_from_args(cls: type, args: argparse.Namespace) -> Any:
    """``cls`` with the parsed values (nested fields by their own names)."""
    from ..tools.options import build, flat_fields

    names = {f.name for f in dataclasses.fields(cls)}
    names |= {path[-1] for path, _, _ in flat_fields(cls)}
    return build(cls, **{k: val for k, val in vars(args).items() if k in names})
