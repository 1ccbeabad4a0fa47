"""The one-line descriptions of options fields that --help shows, read from the docstrings."""

from __future__ import annotations

from dataclasses import dataclass, field

from collocnode.tools._options import field_docs


@dataclass(frozen=True)
class Inner:
    """Settings of the inside.

    Attributes:
        tol: the tolerance (e.g. 1e-8 for tight solves). More detail that --help leaves out.
        name: shadowed by the outer description.
    """

    tol: float = 1e-8
    name: str = ""


@dataclass(frozen=True)
class Outer:
    """Settings of the outside, with prose first.

    Args:
        name: the run's name, written
            on two lines.
        lo, hi: the bounds of :class:`~collocnode.Trajectory` ``t``.
    """

    name: str = ""
    lo: float = 0.0
    hi: float = 1.0
    undocumented: int = 0
    inner: Inner = field(default_factory=Inner)


def test_descriptions_come_from_args_and_attributes_of_nested_dataclasses():
    docs = field_docs(Outer)
    assert docs["name"] == "the run's name, written on two lines"  # the outer one wins
    assert docs["lo"] == docs["hi"] == "the bounds of Trajectory t"
    assert docs["tol"] == "the tolerance (e.g. 1e-8 for tight solves)"  # not cut at "e.g."
    assert "undocumented" not in docs and "inner" not in docs
