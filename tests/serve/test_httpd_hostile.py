"""Hostile requests against a real ``plumb serve`` on a lab fleet, over raw sockets: a
body that declares a negative, non-numeric or huge length or is chunked without end, a
signed push nested 100,000 deep, a header block too large, many half-sent requests.
Each is answered (400, 413, 431) and logged as one line; the process's peak memory and
thread count stay bounded; SIGTERM still stops it cleanly."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from serve.httpapp import MAX_BODY
from serve.webhook import github_signature
from tests.serve.rawhttp import RawConnection, get, proc_status, thread_count
from tests.serve.servefleet import Served, make_repos, start_serve, wait_until

pytestmark = pytest.mark.slow

SECRET = "push-secret"
SERVE = """
serve:
  poll_seconds: 30
  interval_seconds: 300
"""
MB = 1024 * 1024


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    tmp = tmp_path_factory.mktemp("hostile")
    repos = make_repos(tmp, SERVE)
    found = start_serve(repos.controller, {"PLUMB_WEBHOOK_SECRET": SECRET}, tmp / "serve.log")
    # the first pass done, so its own work does not move the thread counts below
    wait_until(lambda: found.metric("plumb_reconcile_passes_total", result="ok"), 60, "a pass")
    yield found
    found.stop()


def _logged(served: Served, text: str) -> str:
    """The log line holding ``text``, once it is written."""

    def line() -> str | None:
        return next((x for x in served.log.read_text().splitlines() if text in x), None)

    return wait_until(line, 10, f"{text!r} in the log")


def _no_traceback(served: Served) -> None:
    assert "Traceback" not in served.log.read_text(), served.log.read_text()[-3000:]


def test_a_negative_length_with_an_endless_body_is_refused_in_bounded_memory(
    served: Served,
) -> None:
    """Content-Length: -1 and 200 MB streamed after it: 400 at once, the connection is
    closed, and the server's peak memory grows by far less than what was sent."""
    peak_before = proc_status(served.process.pid, "VmHWM")
    connection = RawConnection(served.port)
    try:
        connection.send(b"POST /webhook HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n")
        sent = connection.stream(b"[" * MB, 200 * MB)
        assert connection.status() == 400
        assert connection.wait_closed()
    finally:
        connection.close()
    grown_mb = (proc_status(served.process.pid, "VmHWM") - peak_before) / 1024
    assert grown_mb < 32, f"peak memory grew {grown_mb:.0f} MB ({sent // MB} MB sent)"
    assert "Content-Length" in _logged(served, "http: 400")
    _no_traceback(served)


def test_a_length_that_is_not_a_number_is_refused(served: Served) -> None:
    """Content-Length: abc is answered 400 (the old server gave no answer at all)."""
    connection = RawConnection(served.port)
    try:
        connection.send(b"POST /webhook HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n{}")
        assert connection.status() == 400
        assert connection.wait_closed()
    finally:
        connection.close()
    _no_traceback(served)


def test_a_declared_body_over_the_limit_is_refused_before_it_is_read(served: Served) -> None:
    """A Content-Length over 5 MB is answered 413 without waiting for the body."""
    connection = RawConnection(served.port)
    try:
        connection.send(
            f"POST /webhook HTTP/1.1\r\nHost: x\r\nContent-Length: {MAX_BODY + 1}\r\n\r\n".encode()
        )
        assert connection.status() == 413
    finally:
        connection.close()
    assert f"body over {MAX_BODY} bytes" in _logged(served, "http: 413")


def test_an_endless_chunked_body_is_cut_at_the_limit(served: Served) -> None:
    """A chunked body is counted as it arrives: 413 once it passes 5 MB, the connection
    closed, peak memory bounded."""
    peak_before = proc_status(served.process.pid, "VmHWM")
    connection = RawConnection(served.port)
    try:
        connection.send(b"POST /webhook HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
        sent = connection.stream(b"%x\r\n%s\r\n" % (MB, b"x" * MB), 100 * MB)
        assert connection.status() == 413
        assert connection.wait_closed()
    finally:
        connection.close()
    grown_mb = (proc_status(served.process.pid, "VmHWM") - peak_before) / 1024
    assert grown_mb < 32, f"peak memory grew {grown_mb:.0f} MB ({sent // MB} MB sent)"


def test_a_signed_push_nested_100000_deep_is_a_bad_request(served: Served) -> None:
    """A correctly signed array 100,000 levels deep is answered 400 and logged as one
    line; no RecursionError, no traceback."""
    body = b"[" * 100_000 + b"]" * 100_000
    head = (
        "POST /webhook HTTP/1.1\r\nHost: x\r\nX-GitHub-Event: push\r\n"
        f"X-Hub-Signature-256: {github_signature(SECRET.encode(), body)}\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    )
    connection = RawConnection(served.port)
    try:
        connection.send(head.encode() + body)
        assert connection.status() == 400
    finally:
        connection.close()
    assert "deeper than 64" in _logged(served, "http: 400 POST /webhook")
    _no_traceback(served)


def test_a_header_block_too_large_is_431(served: Served) -> None:
    """64 KB of headers is answered 431 and logged."""
    connection = RawConnection(served.port)
    try:
        connection.send(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 65536 + b"\r\n\r\n")
        assert connection.status() == 431
    finally:
        connection.close()
    _logged(served, "http: 431")


def test_half_sent_requests_hold_no_thread_and_probes_still_answer(served: Served) -> None:
    """While 40 connections each hold half a request, the process has no more threads
    than before and /healthz answers 200."""
    pid = served.process.pid
    threads_before = thread_count(pid)
    held = [RawConnection(served.port) for _ in range(40)]
    try:
        for connection in held:
            assert connection.send(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
        assert get(served.port, "/healthz") == 200
        # room for a transient thread of the controller's; http.server added one per client
        assert thread_count(pid) <= threads_before + 2
    finally:
        for connection in held:
            connection.close()


def test_sigterm_stops_the_server_with_connections_held_open(tmp_path: Path) -> None:
    """SIGTERM with a half-sent request and an idle connection open: the process exits 0,
    logs "stopped", and no traceback."""
    repos = make_repos(tmp_path, SERVE)
    served = start_serve(repos.controller, {"PLUMB_WEBHOOK_SECRET": SECRET}, tmp_path / "log")
    half, idle = RawConnection(served.port), RawConnection(served.port)
    try:
        half.send(b"POST /webhook HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{")
        served.process.send_signal(signal.SIGTERM)
        assert served.process.wait(timeout=30) == 0
        assert half.wait_closed() and idle.wait_closed()
    finally:
        half.close()
        idle.close()
        served.stop()
    assert served.log.read_text().rstrip().endswith("stopped")
    _no_traceback(served)
