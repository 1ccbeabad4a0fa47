"""How many threads this process may use: one number that the node maps, BLAS and torch share.

A training started alone uses every core it is allowed to run on. A training that runs as one of
several tasks on a machine (`collocnode.tools.tasks`: a local process pool, a Dask worker) is
given its share by `limit_threads`, so that two tasks on a 2-core machine start two threads
in all rather than two each for the node maps plus two each for BLAS.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from contextvars import ContextVar

from .. import _validation as v

# the limit of the running task: a context variable, so that tasks running on the threads of one
# process (a thread pool, a Dask worker's threads) each see their own, not the last one set
_budget: ContextVar[int | None] = ContextVar("collocnode_thread_budget", default=None)


def cores() -> int:
    """The cores this process may run on (its CPU affinity where the platform has one)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # macOS and Windows have no affinity call
        return os.cpu_count() or 1


def available_threads() -> int:
    """Threads for parallel work in this process: the limit set by `limit_threads`, or
    every core (`cores`)."""
    budget = _budget.get()
    return cores() if budget is None else budget


@contextmanager
def limit_threads(n: int) -> Iterator[int]:
    """Run the body with at most ``n`` threads: collocnode's node maps
    (`available_threads`), the BLAS and OpenMP pools of loaded libraries (threadpoolctl)
    and torch's intra-op pool, also when torch is first imported inside the body (a task that
    imports it lazily would otherwise start one thread per core). Restores the previous limits
    on exit."""
    n = v.positive_int("threads", n)
    from threadpoolctl import threadpool_limits

    with ExitStack() as stack:
        stack.enter_context(threadpool_limits(limits=n))
        torch = sys.modules.get("torch")
        if torch is not None:
            torch_threads = torch.get_num_threads()
            torch.set_num_threads(n)
            stack.callback(torch.set_num_threads, torch_threads)
        else:
            # torch (and any OpenMP library loaded later) sizes its pool from this at import
            stack.enter_context(_environment("OMP_NUM_THREADS", str(n)))
        token = _budget.set(n)
        try:
            yield n
        finally:
            _budget.reset(token)


@contextmanager
def _environment(name: str, value: str) -> Iterator[None]:
    """Set environment variable ``name`` for the body; restore it (or its absence) after."""
    before = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = before
