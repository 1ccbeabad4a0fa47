"""Exit codes of the command lines, and how a failure is reported: one ``prog: error: message``
line on stderr (a traceback only with ``--debug``)."""

from __future__ import annotations

import sys

#: bad input: a bad option, a refused ``--out``, an unknown problem (argparse's own code)
EXIT_USAGE = 2
#: the run ended but failed: an error, a solve that did not converge, an inconsistent model, a
#: failed method of a comparison, a stale document
EXIT_FAILED = 1
#: Ctrl-C or SIGTERM (128 + SIGINT, the shell's convention)
EXIT_INTERRUPTED = 130


def fail(prog: str, message: str, debug: bool, code: int = EXIT_USAGE) -> int:
    """Report the exception being handled as one line and return ``code``; with ``debug``
    re-raise it (call this only inside an ``except`` block)."""
    if debug:
        raise
    print(f"{prog}: error: {message}", file=sys.stderr)
    return code


def first_line(exc: BaseException) -> str:
    """The first line of an exception's message, or its type's name when it has none."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
