"""A Dask cluster as a ``concurrent.futures.Executor``, reached within one wall-clock limit.

`dask_executor` checks, before any task is submitted and all within ``timeout`` seconds,
that something listens at the address, that it answers Dask's handshake, that the scheduler has
workers and that every worker can import the task modules. Dask's own client waits for the
handshake without a limit (a server that accepts the connection and says nothing holds it
forever) and reads an HTTP answer as the length of a message (``Unable to allocate 3.07 EiB``),
so the handshake is made first, cancelled at the deadline, and when it fails the address is
asked over HTTP what it is (`what_answers`): nothing, a Dask scheduler's dashboard (which
names its scheduler's address), another HTTP server, or something that speaks neither.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import socket
import threading
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import Executor, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from importlib.util import find_spec
from typing import Any

from .. import _validation as v

#: seconds for the HTTP question put to an address that did not answer Dask's handshake
_PROBE_S = 3.0
#: seconds of silence after which an address is asked over HTTP what it is
_EARLY_S = 2.0
#: how `what_answers` begins when an HTTP server answers
_HTTP_ANSWERS = ("an HTTP server", "a Dask dashboard")


class _Unreachable(Exception):
    """The address did not answer Dask's handshake; the message says how it failed."""


def dask_executor(
    address: str, *, timeout: float = 10.0, modules: Sequence[str] = ("collocnode",)
) -> Executor:
    """A ``concurrent.futures.Executor`` on the Dask scheduler at ``address`` (e.g.
    ``"tcp://host:8786"``), after checking, all within ``timeout`` seconds, that it answers
    Dask's handshake, that it has workers, and that every worker can import ``modules`` (add
    the module of your task function: workers import it by name).

    Raises:
        ValueError: one line naming the address and what went wrong: nothing listens there, it
            answers as an HTTP server or a Dask dashboard (naming the scheduler's address when
            the dashboard says it), it does not answer within ``timeout``, it has no workers, or
            workers cannot import a module.

    The executor's ``client`` attribute is the ``distributed.Client``; ``shutdown()`` closes
    it.
    """
    if not isinstance(address, str) or not address.strip():
        raise ValueError(f"scheduler must be an address such as 'tcp://host:8786', got {address!r}")
    timeout = v.positive_float("timeout", timeout)
    if isinstance(modules, str) or not all(isinstance(m, str) and m for m in modules):
        raise TypeError(f"modules must be a sequence of module names, got {modules!r:.80}")
    try:
        import distributed  # noqa: F401
    except ImportError:
        raise ValueError(
            f"scheduler = {address!r} needs Dask's 'distributed' package: pip install distributed"
        ) from None
    deadline = time.monotonic() + timeout
    try:
        _handshake(address, deadline, timeout)
    except _Unreachable as exc:
        raise ValueError(f"scheduler = {address!r} {exc}") from None
    client, found = _client_and_workers(address, modules, deadline, timeout)
    if not found:
        client.close()
        raise ValueError(f"scheduler = {address!r} has no workers")
    missing = {w: names for w, names in sorted(found.items()) if names}
    if missing:
        client.close()
        worker, names = next(iter(missing.items()))
        raise ValueError(
            f"scheduler = {address!r}: {len(missing)} of {len(found)} workers cannot import "
            f"{', '.join(names)} (e.g. {worker}); install it where the workers run"
        )
    return _executor(client)


def _left(deadline: float) -> float:
    return max(deadline - time.monotonic(), 0.0)


def _host_port(address: str) -> tuple[str, int] | None:
    """(host, port) of a TCP-based address (``tcp://``, ``tls://`` or none), else None."""
    from distributed.comm import parse_address
    from distributed.comm.addressing import parse_host_port

    try:
        scheme, location = parse_address(address)
        if scheme not in ("tcp", "tls"):
            return None
        host, port = parse_host_port(location)
    except (ValueError, TypeError):
        return None
    return (host, int(port)) if port else None


def _handshake(address: str, deadline: float, timeout: float) -> None:
    """Connect and make Dask's handshake with ``address``, cancelled at ``deadline`` (which is
    ``timeout`` seconds after the start).

    Raises:
        _Unreachable: refused, no answer in time, or an answer that is not Dask's (saying what
            answers there).
    """
    from distributed.comm import connect

    where = _host_port(address)
    if where is not None:  # a refused connection is known at once; Dask retries until timeout
        try:
            socket.create_connection(where, timeout=max(_left(deadline), 0.1)).close()
        except ConnectionRefusedError:
            raise _Unreachable(
                "cannot be reached: nothing listens there (connection refused)"
            ) from None
        except TimeoutError:
            raise _Unreachable(f"cannot be reached: no answer within {timeout:g} s") from None
        except OSError as exc:
            raise _Unreachable(f"cannot be reached: {exc.strerror or exc}") from None

    async def shake() -> None:
        seconds = max(_left(deadline), 0.1)
        comm = await asyncio.wait_for(connect(address, timeout=seconds), seconds)
        await comm.close()

    # in a thread of its own (the caller may be running an event loop: a notebook), which ends
    # with the handshake, at the latest at the deadline
    pool = ThreadPoolExecutor(1, thread_name_prefix="collocnode-handshake")
    future = pool.submit(asyncio.run, shake())
    pool.shutdown(wait=False)
    answer = None
    try:
        try:
            # a scheduler answers in milliseconds; an address silent after _EARLY_S is asked
            # over HTTP what it is, and an HTTP server is named without waiting any longer
            future.result(timeout=min(_EARLY_S, _left(deadline)))
            return
        except FutureTimeout:
            if where is not None:
                answer = what_answers(*where)
                if answer.startswith(_HTTP_ANSWERS):
                    raise _Unreachable(f"is not a Dask scheduler: {answer}") from None
        future.result(timeout=_left(deadline) + 5.0)
        return
    except (asyncio.TimeoutError, FutureTimeout):
        failure = f"did not answer Dask's handshake within {timeout:g} s"
    except _Unreachable:
        raise
    except Exception as exc:  # an HTTP answer read as frame lengths, a closed stream, ...
        failure = f"did not answer Dask's handshake ({type(exc).__name__})"
    if where is None:
        raise _Unreachable(failure)
    answer = answer or what_answers(*where)
    if answer.startswith(_HTTP_ANSWERS):  # says it all
        raise _Unreachable(f"is not a Dask scheduler: {answer}")
    raise _Unreachable(f"is not a Dask scheduler: {answer} ({failure})")


def what_answers(host: str, port: int, seconds: float = _PROBE_S) -> str:
    """What listens at ``host:port``, asked with one HTTP request (for an address that did not
    answer Dask's handshake): "nothing listens there (connection refused)", "a Dask dashboard
    (HTTP) answers there; its scheduler is at tcp://...", "an HTTP server answers there
    (<status line>)", "something accepts connections there but does not answer", or
    "something that speaks neither Dask's protocol nor HTTP answers there"."""
    try:
        sock = socket.create_connection((host, port), timeout=seconds)
    except ConnectionRefusedError:
        return "nothing listens there (connection refused)"
    except TimeoutError:
        return f"nothing answers there within {seconds:g} s"
    except OSError as exc:
        return f"it cannot be reached ({exc.strerror or exc})"
    reply = b""
    with sock:
        try:
            sock.sendall(
                f"GET /json/identity.json HTTP/1.0\r\nHost: {host}:{port}\r\n\r\n".encode()
            )
            while len(reply) < 65536:
                chunk = sock.recv(65536)
                if not chunk:
                    break
                reply += chunk
        except OSError:  # a timeout or a reset: judge what came back
            pass
    if not reply:
        return "something accepts connections there but does not answer"
    if not reply.startswith(b"HTTP/"):
        return "something that speaks neither Dask's protocol nor HTTP answers there"
    head, _, body = reply.partition(b"\r\n\r\n")
    status = head.split(b"\r\n", 1)[0].decode("latin-1").strip()
    try:
        identity = json.loads(body.decode())
    except (UnicodeDecodeError, ValueError):
        identity = None
    if isinstance(identity, dict) and identity.get("type") == "Scheduler":
        return (
            "a Dask dashboard (HTTP) answers there; its scheduler is at "
            f"{identity.get('address', 'another port')}"
        )
    return f"an HTTP server answers there ({status[:80]})"


def _client_and_workers(
    address: str, modules: Sequence[str], deadline: float, timeout: float
) -> tuple[Any, dict[str, list[str]]]:
    """The connected ``distributed.Client`` and, per worker, the modules it cannot import;
    made in a thread joined with the time left (a client finished after the deadline is
    closed by that thread)."""
    from distributed import Client

    state: dict[str, Any] = {}
    abandoned = threading.Event()

    def set_up() -> None:
        client = None
        try:
            client = Client(address, timeout=max(_left(deadline), 1.0))
            found: dict[str, list[str]] = {}
            # find_spec travels by reference to a module every Python has; a function of ours
            # would not even unpickle on a worker without collocnode
            for name in modules:
                for worker, spec in client.run(find_spec, name).items():
                    found.setdefault(worker, [])
                    if spec is None:
                        found[worker].append(name)
            state.update(client=client, found=found)
        except Exception as exc:
            state["error"] = exc
            if client is not None:
                client.close()
        finally:
            if abandoned.is_set() and client is not None:
                client.close()

    thread = threading.Thread(target=set_up, name="collocnode-dask-setup", daemon=True)
    thread.start()
    thread.join(_left(deadline))
    if thread.is_alive():
        abandoned.set()
        raise ValueError(
            f"scheduler = {address!r} answered but its client and workers were not ready "
            f"within {timeout:g} s"
        )
    if "error" in state:
        exc = state["error"]
        text = str(exc).strip().splitlines()
        detail = f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__
        raise ValueError(f"scheduler = {address!r}: its workers cannot run tasks: {detail}")
    return state["client"], state["found"]


def _executor(client: Any) -> Executor:
    """``client``'s executor, whose ``shutdown()`` also closes the client."""
    executor = client.get_executor()
    executor.client = client  # type: ignore[attr-defined]
    shutdown = executor.shutdown

    def shutdown_and_close(wait: bool = True, **kwargs: Any) -> None:
        # a client whose scheduler is gone is still trying to reconnect; closing it cancels
        # that attempt, which Dask logs as an error with a traceback: the loss has already
        # been reported (ExecutorLost), once
        lost = getattr(client, "status", "running") != "running"
        with _quiet(("distributed.client", "distributed.utils") if lost else ()):
            shutdown(wait=wait, **kwargs)
            client.close()

    executor.shutdown = shutdown_and_close  # type: ignore[method-assign]
    return executor


@contextlib.contextmanager
def _quiet(names: Sequence[str]) -> Iterator[None]:
    """The loggers ``names`` silenced below CRITICAL for the duration."""
    loggers = [logging.getLogger(name) for name in names]
    levels = [log.level for log in loggers]
    for log in loggers:
        log.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        for log, level in zip(loggers, levels, strict=True):
            log.setLevel(level)
