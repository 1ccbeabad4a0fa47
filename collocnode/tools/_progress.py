"""Where a run is, told to whoever watches it: the phases of a solve and its IPOPT iterations.

The library announces its phases with `phase` ("build", "compile", "solve", "check", and
an experiment's own: "data", "training", "evaluation", "plots") and asks `iteration_callback`
for a callback of the IPOPT iterations before each solve. Both do nothing unless a watcher is
installed with `watching` (``solve(..., progress=True)`` and the command lines install
[`collocnode.PhaseProgress`][collocnode.PhaseProgress]), so a run that nobody watches pays nothing.
`labelled` names the phases of a part of a run ("pretraining: build", "full problem:
solve"). The watcher is per context (a ``contextvars`` variable), so threads and tasks that do
not inherit the context, e.g. other runs in the same process, are not watched.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Protocol

__all__ = ["Watcher", "current", "iteration_callback", "labelled", "phase", "watching"]


class Watcher(Protocol):
    """What a watcher of a run implements."""

    def phase(self, name: str) -> None:
        """The run enters phase ``name`` (the previous phase has ended)."""
        ...

    def iterations(self) -> Callable[[Any], Any] | None:
        """A callback for the IPOPT iterations of the solve about to start (the protocol of
        `collocnode.transcription._ipopt.iteration`; it never asks to stop), or None."""
        ...


_WATCHER: contextvars.ContextVar[Watcher | None] = contextvars.ContextVar(
    "collocnode_watcher", default=None
)
_LABEL: contextvars.ContextVar[str] = contextvars.ContextVar("collocnode_phase_label", default="")


def current() -> Watcher | None:
    """The watcher of this context, or None."""
    return _WATCHER.get()


@contextmanager
def watching(watcher: Watcher) -> Iterator[Watcher]:
    """Install ``watcher`` for the calls made inside the ``with`` block."""
    token = _WATCHER.set(watcher)
    try:
        yield watcher
    finally:
        _WATCHER.reset(token)


@contextmanager
def labelled(label: str) -> Iterator[None]:
    """Name the phases told inside the ``with`` block "``label``: phase" (e.g. "pretraining:
    build"); nested labels are joined by ", "."""
    outer = _LABEL.get()
    token = _LABEL.set(f"{outer}, {label}" if outer else label)
    try:
        yield
    finally:
        _LABEL.reset(token)


def phase(name: str) -> None:
    """Tell the watcher, if any, that the run enters phase ``name`` (under the current label)."""
    watcher = _WATCHER.get()
    if watcher is not None:
        label = _LABEL.get()
        watcher.phase(f"{label}: {name}" if label and name != "done" else name)


def iteration_callback() -> Callable[[Any], Any] | None:
    """The watcher's callback of the IPOPT iterations of the solve about to start, or None."""
    watcher = _WATCHER.get()
    return None if watcher is None else watcher.iterations()
