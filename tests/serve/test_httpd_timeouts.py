"""The controller's HTTP server started in-process on the controller's real endpoints
(a lab fleet's controller), with a short request timeout: half-sent requests and a
client trickling a header line at a time are dropped within a bound, threads stay
fixed, connections past the limit wait their turn, and stop releases everything.

Bounds are generous (dropped within 3x the timeout) and one-sided where the server
cannot be early (never dropped before the timeout): none depends on machine speed."""

from __future__ import annotations

import select
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from serve.controller import Controller
from serve.httpapp import Endpoints, controller_routes
from serve.httpd import ControllerHttp, HttpLimits
from tests.serve.rawhttp import RawConnection, get
from tests.serve.servefleet import make_repos

TIMEOUT = 2.0
SERVE = """
serve:
  poll_seconds: 30
"""


@dataclass
class Running:
    http: ControllerHttp
    lines: list[str]

    @property
    def port(self) -> int:
        return self.http.port


@pytest.fixture(scope="module")
def controller(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Controller]:
    repos = make_repos(tmp_path_factory.mktemp("timeouts"), SERVE)
    found = Controller(repos.controller, "controller@test")
    yield found
    found.close()


def _start(controller: Controller, limits: HttpLimits) -> Running:
    endpoints = Endpoints(
        secret=lambda: b"push-secret",
        on_push=controller.on_push,
        ready=controller.ready,
        metrics=controller.metrics.render,
    )
    lines: list[str] = []
    http = ControllerHttp(
        "127.0.0.1", 0, controller_routes(endpoints), log=lines.append, limits=limits
    )
    http.start()
    return Running(http, lines)


def _server_threads() -> list[str]:
    """The HTTP server's threads in this process: its loop and its workers."""
    return sorted(
        t.name
        for t in threading.enumerate()
        if t.name.startswith(("waitress-", "plumb-serve-http"))
    )


@pytest.fixture
def running(controller: Controller) -> Iterator[Running]:
    found = _start(controller, HttpLimits(request_timeout=TIMEOUT))
    yield found
    found.http.stop()


def test_the_real_endpoints_answer(running: Running) -> None:
    """/healthz 200, /readyz 200 (a standby before its first turn), /metrics 200, an
    unsigned push 401."""
    assert get(running.port, "/healthz") == 200
    assert get(running.port, "/readyz") == 200
    assert get(running.port, "/metrics") == 200
    push = RawConnection(running.port)
    try:
        push.send(b"POST /webhook HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}")
        assert push.status() == 401
    finally:
        push.close()


def test_half_sent_requests_are_dropped_within_the_timeout(running: Running) -> None:
    """40 connections holding half a request and 5 that send nothing: no thread is added,
    /healthz answers meanwhile, and every one is closed after the timeout and within 3x."""
    threads_before = _server_threads()
    assert len(threads_before) == HttpLimits().threads + 1
    sent_at = time.monotonic()
    held = [RawConnection(running.port) for _ in range(45)]
    try:
        for connection in held[:40]:
            assert connection.send(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ")
        assert get(running.port, "/healthz") == 200
        assert _server_threads() == threads_before
        assert all(c.wait_closed(3 * TIMEOUT) for c in held)
        closed = [c.closed_at - sent_at for c in held if c.closed_at is not None]
        assert min(closed) >= TIMEOUT, closed
        assert max(closed) <= 3 * TIMEOUT, closed
    finally:
        for connection in held:
            connection.close()
    dropped = [line for line in running.lines if "request not received whole" in line]
    assert len(dropped) == 40  # the silent ones are idle, not late: not logged


def test_a_header_trickled_line_by_line_is_dropped(running: Running) -> None:
    """A client sending one header line every 0.2 s (never idle for the timeout) is
    dropped once its request has taken longer than the timeout, within 3x."""
    sock = socket.create_connection(("127.0.0.1", running.port), timeout=10)
    started = time.monotonic()
    dropped_after = None
    try:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
        while time.monotonic() - started < 6 * TIMEOUT:
            readable, _, _ = select.select([sock], [], [], 0.2)
            if readable and sock.recv(1024) == b"":
                dropped_after = time.monotonic() - started
                break
            try:
                sock.sendall(b"X-Trickle: 1\r\n")
            except OSError:
                dropped_after = time.monotonic() - started
                break
    finally:
        sock.close()
    assert dropped_after is not None, "the trickling client was never dropped"
    assert TIMEOUT <= dropped_after <= 3 * TIMEOUT


def test_a_slow_body_counts_against_the_same_timeout(running: Running) -> None:
    """Headers in time but the declared body never finished: dropped, not waited for."""
    connection = RawConnection(running.port)
    try:
        connection.send(b"POST /webhook HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{")
        assert connection.wait_closed(3 * TIMEOUT)
        assert connection.status(0) is None  # closed without an answer
    finally:
        connection.close()


def test_connections_over_the_limit_wait_and_are_then_served(controller: Controller) -> None:
    """With room for 10 connections all held by half-sent requests, an 11th is neither
    refused nor served at once: it waits in the backlog and is answered after the held
    ones start being dropped."""
    running = _start(controller, HttpLimits(request_timeout=TIMEOUT, max_connections=10))
    held = [RawConnection(running.port) for _ in range(10)]
    try:
        for connection in held:
            connection.send(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
        time.sleep(0.5)  # let the server accept them all before the 11th comes
        assert get(running.port, "/healthz", timeout=6 * TIMEOUT) == 200
        # the server logs a drop before it closes the connection, which makes room
        assert any("request not received whole" in line for line in running.lines)
    finally:
        for connection in held:
            connection.close()
        running.http.stop()


def test_stop_releases_the_port_and_the_threads(controller: Controller) -> None:
    """After stop, with a connection still open, the port can be bound again and the
    server's threads are gone."""
    running = _start(controller, HttpLimits(request_timeout=TIMEOUT))
    port = running.port
    idle = RawConnection(port)
    assert get(port, "/healthz") == 200
    running.http.stop()
    try:
        assert idle.wait_closed(10)
        assert _server_threads() == []
        with socket.socket() as again:
            again.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            again.bind(("127.0.0.1", port))
    finally:
        idle.close()
