"""Argument parsing shared by the command lines: a parser whose errors are one line, and one
``--option`` per field of an options dataclass (nested ones by their flat field names)."""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

from .exits import EXIT_USAGE


class DefaultsFormatter(argparse.HelpFormatter):
    """``--help`` with every option's default: "(default: X)" after its description unless the
    description gives it ("off" for a flag, "none" for an unset value)."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        if (
            "default" in text
            or not action.option_strings
            or action.default is argparse.SUPPRESS
            or isinstance(action, (argparse._HelpAction, argparse._VersionAction))
        ):
            return text
        shown = _shown(action.default).replace("%", "%%")  # argparse formats help with %
        return f"{text} (default: {shown})"


def _shown(value: Any) -> str:
    """A default as ``--help`` shows it: flags on/off, None as "none", widths as 16,16."""
    if isinstance(value, bool):
        return "on" if value else "off"
    if value is None:
        return "none"
    if isinstance(value, tuple):
        return ",".join(str(v) for v in value)
    if isinstance(value, str) and not value:
        return '""'
    return str(value)


class OneLineParser(argparse.ArgumentParser):
    """argparse with a single ``prog: error: message`` line on bad arguments (exit code 2) and
    every option's default in ``--help`` (`DefaultsFormatter`)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", DefaultsFormatter)
        super().__init__(*args, **kwargs)

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
    parser: argparse.ArgumentParser,
    cls: type,
    skip: Sequence[str] = (),
    shown_defaults: dict[str, str] | None = None,
) -> None:
    """One ``--option`` per leaf field of the options dataclass ``cls``, nested ones by their
    own names (booleans get ``--no-x``), described by the first sentence of the field's entry
    in the dataclasses' docstrings and with its default (``shown_defaults``: the words shown
    instead, by field name, where the command line decides the default)."""
    from ..tools._options import field_docs, flat_fields

    docs = field_docs(cls)
    for _, f, default in flat_fields(cls):
        if f.name in skip:
            continue
        flag = "--" + f.name.replace("_", "-")
        shown = (shown_defaults or {}).get(f.name, _shown(default))
        doc = f"{_one_line(docs.get(f.name, ''))} (default: {shown})".lstrip()
        doc = doc.replace("%", "%%")  # argparse formats help strings with %
        # a switch also where a field may be a word besides True and False (jit: "auto"): the
        # word is the default, the switch sets either boolean
        if isinstance(default, bool) or str(f.type).startswith("bool |"):
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


def _one_line(text: str, width: int = 110) -> str:
    """A description cut to its first clause (at "; ") when it is longer than ``width``."""
    if len(text) <= width:
        return text
    return text.split("; ")[0]


def options_from_args(cls: type, args: argparse.Namespace) -> Any:
    """``cls`` with the parsed values (nested fields by their own names)."""
    from ..tools._options import build, flat_fields

    names = {f.name for f in dataclasses.fields(cls)}
    names |= {path[-1] for path, _, _ in flat_fields(cls)}
    return build(cls, **{k: val for k, val in vars(args).items() if k in names})
