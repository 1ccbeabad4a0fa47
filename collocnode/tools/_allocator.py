"""The C allocator's policy for a process that solves large NLPs: keep freed memory.

MUMPS allocates and frees its factors at every KKT factorization (the quarter vehicle's full
problem: 9.8 million entries, several factorizations per IPOPT iteration). glibc serves blocks
that large with ``mmap`` and returns them to the system on ``free``, so every factorization
faults its pages in again. `keep_freed_memory` asks glibc (``mallopt``) to serve them from the
heap and to keep what is freed, so the pages are reused: on the quarter vehicle's default with
4 IPOPT iterations on one core (`python scripts/train_collocation.py qvm --max-iter 4
--stagnation-window 0 --settle-rtol 0`, two runs each), IPOPT took 13.7 and 12.7 s against
15.5 and 15.8 s, and the process's system time 4.4–4.6 s against 8.0–8.3 s.

The price is that the process holds its peak memory until it ends, so ``train_collocation.py``
asks for it and the library does not. A program that calls the library can have the same from
glibc's environment: ``MALLOC_MMAP_MAX_=0 MALLOC_TRIM_THRESHOLD_=2147483647``.
"""

from __future__ import annotations

import ctypes
import logging
import os

# glibc's mallopt parameters (malloc.h)
_M_TRIM_THRESHOLD, _M_TOP_PAD, _M_MMAP_MAX = -1, -2, -4
_POLICY = ((_M_MMAP_MAX, 0), (_M_TRIM_THRESHOLD, 2**31 - 1), (_M_TOP_PAD, 512 * 2**20))

_log = logging.getLogger(__name__)


def keep_freed_memory() -> bool:
    """Ask glibc to serve large blocks from the heap and keep freed memory in the process;
    True where it did, False where the C library is not glibc or refused (no error)."""
    try:
        if not os.confstr("CS_GNU_LIBC_VERSION"):
            return False
        libc = ctypes.CDLL("libc.so.6")
    except (ValueError, OSError, AttributeError):  # no such confstr name, no glibc
        return False
    done = all(libc.mallopt(option, value) == 1 for option, value in _POLICY)
    _log.debug("glibc keeps freed memory: %s", done)
    return done
