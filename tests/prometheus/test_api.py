"""The HTTP edge maps every way a request can fail to one PrometheusError, over real
loopback sockets: nothing listening, a server that never answers, one that hangs up,
one that speaks something other than HTTP."""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest

from rollouts.sources.prometheus import PrometheusApi, QueryTimeout, Unreachable
from tests.prometheus.server import free_port


@contextmanager
def one_connection(handle: Callable[[socket.socket], None]) -> Iterator[str]:
    """A loopback server that accepts one connection and hands it to ``handle``."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)

        def serve() -> None:
            conn, _ = listener.accept()
            with conn:
                conn.recv(65536)
                handle(conn)

        thread = threading.Thread(target=serve, daemon=True)
        thread.start()
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"
        thread.join(timeout=5)


def test_nothing_listening_is_unreachable() -> None:
    """Connection refused names the server."""
    url = f"http://127.0.0.1:{free_port()}"
    with pytest.raises(Unreachable, match="Connection refused"):
        PrometheusApi(url, 1.0).query("up", 0.0)


def test_a_server_that_hangs_up_is_unreachable() -> None:
    """The connection closes without an answer."""
    with one_connection(lambda conn: None) as url, pytest.raises(Unreachable):
        PrometheusApi(url, 2.0).query("up", 0.0)


def test_a_server_that_does_not_speak_http_is_unreachable() -> None:
    """A status line that is not HTTP."""
    banner = one_connection(lambda conn: conn.sendall(b"SSH-2.0-OpenSSH\r\n"))
    with banner as url, pytest.raises(Unreachable, match="BadStatusLine"):
        PrometheusApi(url, 2.0).query("up", 0.0)


def test_a_server_that_never_answers_times_out() -> None:
    """Headers that never come: the request gives up after the timeout."""
    done = threading.Event()
    with one_connection(lambda conn: done.wait(5)) as url:
        with pytest.raises(QueryTimeout, match=r"no answer within 0\.2s"):
            PrometheusApi(url, 0.2).query("up", 0.0)
        done.set()


def test_a_body_that_stops_halfway_times_out() -> None:
    """Headers arrive, the body does not finish: still a timeout, not a parse of half."""
    done = threading.Event()

    def half(conn: socket.socket) -> None:
        conn.sendall(b'HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{"status"')
        done.wait(5)

    with one_connection(half) as url:
        with pytest.raises(QueryTimeout):
            PrometheusApi(url, 0.2).query("up", 0.0)
        done.set()
