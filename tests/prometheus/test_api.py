"""The HTTP edge maps every way a request can fail to one PrometheusError, over real
loopback sockets: nothing listening, a server that never answers, one that hangs up,
one that speaks something other than HTTP."""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from urllib.parse import parse_qsl

import httpx
import pytest

from rollouts.sources import prometheus
from rollouts.sources.prometheus import (
    MalformedResponse,
    PrometheusApi,
    PrometheusError,
    QueryRejected,
    QueryTimeout,
    Unreachable,
)
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
                request = b""  # the whole request, or a close with data unread resets
                while b"\r\n\r\n" not in request and (chunk := conn.recv(65536)):
                    request += chunk
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
    """A banner that is not an HTTP status line, then the connection closes (after the
    request was read: closing with it unread would reset the connection instead)."""

    def ssh(conn: socket.socket) -> None:
        conn.sendall(b"SSH-2.0-OpenSSH\r\n")
        conn.shutdown(socket.SHUT_WR)  # end of the banner, then read to the client's close:
        conn.settimeout(5)  # closing with its request body unread would reset the connection
        while conn.recv(65536):
            pass

    banner = one_connection(ssh)
    with banner as url, pytest.raises(Unreachable, match="RemoteProtocolError"):
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


def _answer(status: int, body: bytes) -> Callable[[socket.socket], None]:
    def send(conn: socket.socket) -> None:
        head = f"HTTP/1.1 {status} X\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n"
        conn.sendall(head.encode() + body)

    return send


VECTOR = b'{"status":"success","data":{"resultType":"vector","result":[]}}'


def test_environment_proxies_are_ignored(monkeypatch: pytest.MonkeyPatch) -> None:
    """A proxy named in the environment is not used: Prometheus is asked directly."""
    dead = f"http://127.0.0.1:{free_port()}"
    for name in ("HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.setenv(name, dead)
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    with one_connection(_answer(200, VECTOR)) as url:
        assert PrometheusApi(url, 2.0).query("up", 0.0) == []


def _mock(handler: Callable[[httpx.Request], httpx.Response]) -> PrometheusApi:
    return PrometheusApi("http://prometheus.test:9090/", 7.0, httpx.MockTransport(handler))


def test_a_query_is_a_form_encoded_post() -> None:
    """POST /api/v1/query with the query, time and timeout as form fields."""
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, content=VECTOR)

    assert _mock(handler).query('up{job="x"}', 12.5) == []
    [request] = seen
    assert (request.method, str(request.url)) == (
        "POST",
        "http://prometheus.test:9090/api/v1/query",
    )
    assert request.headers["Content-Type"] == "application/x-www-form-urlencoded"
    assert request.headers["Accept"] == "application/json"
    assert dict(parse_qsl(request.content.decode())) == {
        "query": 'up{job="x"}',
        "time": "12.5",
        "timeout": "7.0",
    }


@pytest.mark.parametrize(
    ("status", "body", "raised", "says"),
    [
        (400, b'{"errorType":"bad_data","error":"x"}', QueryRejected, "HTTP 400: bad_data: x"),
        (503, b'{"errorType":"timeout","error":"x"}', QueryTimeout, "HTTP 503: timeout: x"),
        (503, b"overloaded", QueryRejected, "HTTP 503: overloaded"),
        (302, b"", QueryRejected, "HTTP 302: no message"),
        (200, b"<html>", MalformedResponse, "not JSON"),
    ],
)
def test_answers_other_than_a_result_are_mapped(
    status: int, body: bytes, raised: type[PrometheusError], says: str
) -> None:
    """Each answer that is not a query result is its own PrometheusError."""
    api = _mock(lambda request: httpx.Response(status, content=body))
    with pytest.raises(raised, match=says):
        api.query("up", 0.0)


def test_an_answer_too_large_is_malformed(monkeypatch: pytest.MonkeyPatch) -> None:
    """A body beyond the limit is refused, not parsed."""
    monkeypatch.setattr(prometheus, "MAX_RESPONSE_BYTES", len(VECTOR) - 1)
    with pytest.raises(MalformedResponse, match="larger than"):
        _mock(lambda request: httpx.Response(200, content=VECTOR)).query("up", 0.0)


def _request_errors() -> list[type[Exception]]:
    found: list[type[Exception]] = [httpx.InvalidURL]
    pending: list[type[Exception]] = [httpx.RequestError]
    while pending:
        cls = pending.pop()
        found.append(cls)
        pending += cls.__subclasses__()
    return found


@pytest.mark.parametrize("error", _request_errors(), ids=lambda cls: cls.__name__)
def test_every_httpx_request_error_is_a_prometheus_error(error: type[Exception]) -> None:
    """No error httpx raises while sending escapes unmapped (the wave would crash)."""

    def handler(request: httpx.Request) -> httpx.Response:
        raise error("injected")

    with pytest.raises(PrometheusError) as caught:
        _mock(handler).query("up", 0.0)
    assert type(caught.value.__cause__) is error
