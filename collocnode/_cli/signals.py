"""SIGTERM handled as Ctrl-C while a command runs."""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Iterator
from typing import Any


@contextlib.contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """While a command runs, SIGTERM (a scheduler's stop, ``timeout``, ``kill``) ends it the way
    Ctrl-C does: the finished part is written and the output directory renamed. Where SIGINT is
    ignored (a background job of a non-interactive shell) SIGTERM keeps its default action."""

    def on_sigterm(signum: int, frame: Any) -> None:
        if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)  # no Ctrl-C path: end as before
            os.kill(os.getpid(), signal.SIGTERM)
        else:
            os.kill(os.getpid(), signal.SIGINT)

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, on_sigterm)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
