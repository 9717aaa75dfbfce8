"""Delivering the outbox over HTTP: what a receiver gets, and every way a try fails."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

from reconciler.state.db import StateDB, open_state_db
from serve.sender import NOTICE_ID_HEADER, deliver_due, sender_client
from tests.prometheus.server import free_port


@pytest.fixture
def db(tmp_path: Path) -> Iterator[StateDB]:
    opened = open_state_db(tmp_path / "plumb.db")
    try:
        yield opened
    finally:
        opened.close()


def _queue(db: StateDB, target: str = "URL", payload: dict[str, Any] | None = None) -> None:
    with db.transaction() as conn:
        db.outbox.add(conn, event="abort", target=target, format="json", payload=payload or {})


def _last_error(db: StateDB) -> str:
    with db.transaction() as conn:
        row = conn.execute("SELECT last_error FROM outbox").fetchone()
    return str(row[0])


class Recorder:
    """A loopback receiver answering ``status`` and keeping each request it got."""

    def __init__(self, status: int = 204) -> None:
        self.status = status
        self.requests: list[tuple[str, str, dict[str, str], bytes]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: object) -> None:
                return None

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                outer.requests.append(("POST", self.path, dict(self.headers), body))
                self.send_response(outer.status)
                self.send_header("Content-Length", "0")
                self.end_headers()

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def recorder() -> Iterator[Recorder]:
    started = Recorder()
    try:
        yield started
    finally:
        started.stop()


def test_a_notice_is_posted_as_json_with_its_id(db: StateDB, recorder: Recorder) -> None:
    """POST to the URL's path and query; JSON body with the outbox id, in a header too."""
    _queue(db, payload={"summary": "wave 2: abort"})
    assert deliver_due(db, {"URL": f"{recorder.url}/hooks/plumb?team=net"}) == (1, 0)
    [(method, path, headers, body)] = recorder.requests
    assert (method, path) == ("POST", "/hooks/plumb?team=net")
    assert headers["Content-Type"] == "application/json"
    sent = json.loads(body)
    assert sent == {"summary": "wave 2: abort", "id": sent["id"]}
    assert headers[NOTICE_ID_HEADER] == str(sent["id"])
    assert db.outbox.undelivered() == 0


def test_an_answer_other_than_2xx_is_a_failed_try(db: StateDB) -> None:
    """A 500, or a redirect (not followed), leaves the notice queued with the status."""
    for status, reason in ((500, "Internal Server Error"), (302, "Found")):
        refusing = Recorder(status)
        try:
            _queue(db, target=f"R{status}")
            assert deliver_due(db, {f"R{status}": refusing.url}) == (0, 1)
        finally:
            refusing.stop()
        with db.transaction() as conn:
            row = conn.execute(
                "SELECT last_error FROM outbox WHERE target = ?", (f"R{status}",)
            ).fetchone()
        assert row[0] == f"ValueError: answered {status} {reason}"


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("ftp://example.test/x", "ValueError: not an http(s) URL"),
        ("http:///no-host", "ValueError: not an http(s) URL"),
        ("http://[::1/x", "InvalidURL"),
    ],
)
def test_a_url_that_is_not_http_is_a_failed_try(db: StateDB, url: str, says: str) -> None:
    """Nothing is sent to a URL plumb cannot POST to; the notice waits for a fix."""
    _queue(db)
    assert deliver_due(db, {"URL": url}) == (0, 1)
    assert _last_error(db).startswith(says)


def test_a_refused_connection_is_a_failed_try(db: StateDB) -> None:
    """Nothing listening: httpx's ConnectError, recorded by name."""
    _queue(db)
    assert deliver_due(db, {"URL": f"http://127.0.0.1:{free_port()}/"}) == (0, 1)
    assert _last_error(db).startswith("ConnectError: ")


@contextmanager
def _silent() -> Iterator[str]:
    """A receiver that accepts one connection and never answers."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        done = threading.Event()

        def serve() -> None:
            conn, _ = listener.accept()
            with conn:
                done.wait(5)

        thread = threading.Thread(target=serve, daemon=True)
        thread.start()
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/"
        done.set()
        thread.join(timeout=5)


def test_no_answer_within_the_timeout_is_a_failed_try(db: StateDB) -> None:
    """A receiver that accepts and never answers: cut off at the sender's timeout."""
    _queue(db)
    with _silent() as url:
        assert deliver_due(db, {"URL": url}, lambda: sender_client(0.2)) == (0, 1)
    assert _last_error(db).startswith("ReadTimeout: ")


def test_environment_proxies_are_ignored(
    db: StateDB, recorder: Recorder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A proxy named in the environment is not used: the receiver is posted to directly."""
    for name in ("HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.setenv(name, f"http://127.0.0.1:{free_port()}")
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    _queue(db)
    assert deliver_due(db, {"URL": recorder.url}) == (1, 0)


def _request_errors() -> list[type[Exception]]:
    found: list[type[Exception]] = []
    pending: list[type[Exception]] = [httpx.RequestError]
    while pending:
        cls = pending.pop()
        found.append(cls)
        pending += cls.__subclasses__()
    return found


@pytest.mark.parametrize("error", _request_errors(), ids=lambda cls: cls.__name__)
def test_every_httpx_request_error_is_a_failed_try(db: StateDB, error: type[Exception]) -> None:
    """No error httpx raises while sending escapes the sender thread unmapped."""

    def handler(request: httpx.Request) -> httpx.Response:
        raise error("injected")

    _queue(db)
    mock = httpx.MockTransport(handler)
    connect = lambda: httpx.Client(transport=mock)  # noqa: E731
    assert deliver_due(db, {"URL": "http://receiver.test/"}, connect) == (0, 1)
    assert _last_error(db) == f"{error.__name__}: injected"
