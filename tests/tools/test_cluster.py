"""collocnode.tools._cluster: a wrong scheduler address is one clear error, within the time
allowed, that says what answers there (nothing, an HTTP server, a Dask dashboard)."""

from __future__ import annotations

import time

import pytest

from collocnode.tools._cluster import dask_executor, what_answers
from tests.helpers import http_server, silent_server

pytest.importorskip("distributed")


def refused(port: int, timeout: float, match: str) -> float:
    start = time.monotonic()
    with pytest.raises(ValueError, match=match) as info:
        dask_executor(f"tcp://127.0.0.1:{port}", timeout=timeout)
    assert "\n" not in str(info.value)
    return time.monotonic() - start


def test_a_server_that_says_nothing_is_refused_at_the_time_limit():
    with silent_server() as port:
        took = refused(
            port,
            2.0,
            rf"scheduler = 'tcp://127.0.0.1:{port}' is not a Dask scheduler: something accepts "
            r"connections there but does not answer \(did not answer Dask's handshake within 2 s\)",
        )
    assert took < 10  # Dask's own client waits for the handshake without a limit


def test_an_http_server_is_named_without_waiting_for_the_limit():
    with http_server() as port:
        took = refused(port, 30.0, r"is not a Dask scheduler: an HTTP server answers there \(HTTP/")
    assert took < 10  # asked over HTTP after 2 s of silence


def test_an_http_answer_is_not_read_as_a_dask_message():
    # Dask reads "HTTP/1.1" as a frame count: "Unable to allocate 3.07 EiB", a MemoryError
    with http_server(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n") as port:
        refused(port, 10.0, r"an HTTP server answers there \(HTTP/1\.1 400 Bad Request\)$")


def test_a_dashboard_port_names_its_scheduler():
    from distributed import LocalCluster

    with LocalCluster(
        n_workers=0, processes=False, protocol="tcp", dashboard_address="127.0.0.1:0"
    ) as cluster:
        port = int(cluster.dashboard_link.split(":")[-1].split("/")[0])
        answer = what_answers("127.0.0.1", port)
        assert answer == (
            "a Dask dashboard (HTTP) answers there; its scheduler is at "
            f"{cluster.scheduler_address}"
        )
        refused(port, 10.0, "a Dask dashboard")


def test_nothing_listening_is_known_at_once():
    with silent_server() as port:
        pass  # closed again: nothing listens on the port now
    took = refused(port, 10.0, r"cannot be reached: nothing listens there \(connection refused\)")
    assert took < 2  # Dask retries a refused connection until its timeout
    assert what_answers("127.0.0.1", port) == "nothing listens there (connection refused)"
