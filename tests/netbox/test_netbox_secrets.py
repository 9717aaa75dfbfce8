"""No credential reaches a terminal or a CI log: a password in a NetBox URL is never
printed (failures and success lines alike), and a body a proxy echoed back (with the
request's Authorization header in it) is scrubbed of the token and bounded."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from hypothesis import given
from hypothesis import strategies as st

from inventory.netbox_fetch import NetboxApiError, NetboxError, fetch_netbox
from inventory.redact import SHOWN, display_url, scrub

TOKEN = "0123456789abcdef0123456789abcdef01234567"
PASSWORD = "hunter2-very-secret"


class _EchoingProxy(BaseHTTPRequestHandler):
    """A misconfigured proxy: answers 400 with every request header in the body."""

    def do_GET(self) -> None:
        body = json.dumps({"detail": "bad request", "headers": dict(self.headers)}).encode()
        self.send_response(400)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def proxy() -> Iterator[int]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _EchoingProxy)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


def test_an_echoed_token_is_scrubbed_from_the_400_message(proxy: int) -> None:
    """The proxy puts `Authorization: Token <token>` in its answer: not in the message."""
    with pytest.raises(NetboxApiError) as raised:
        fetch_netbox(f"http://admin:{PASSWORD}@127.0.0.1:{proxy}", TOKEN)
    message = str(raised.value)
    assert "refused the query (HTTP 400)" in message
    assert TOKEN not in message and PASSWORD not in message
    assert "admin" not in message.split("refused")[0]  # no userinfo in the shown URL
    assert len(message) < SHOWN + 200


def test_an_unreachable_netbox_with_a_password_in_its_url() -> None:
    """Even the can't-connect message shows the URL without its userinfo."""
    with pytest.raises(NetboxError) as raised:
        fetch_netbox(f"http://admin:{PASSWORD}@127.0.0.1:9/", TOKEN)
    assert PASSWORD not in str(raised.value)
    assert "http://127.0.0.1:9" in str(raised.value)


def test_display_url_drops_userinfo_only() -> None:
    assert display_url("https://u:p@nb.example.com:8443/api/?x=1") == (
        "https://nb.example.com:8443/api/?x=1"
    )
    assert display_url("https://nb.example.com/") == "https://nb.example.com/"


@given(
    before=st.text(max_size=400),
    secret=st.text(alphabet="abcdefXYZ0123456789-_", min_size=6, max_size=40),
    after=st.text(max_size=400),
)
def test_scrub_never_shows_a_secret_and_is_bounded(before: str, secret: str, after: str) -> None:
    """Whatever surrounds it, a scrubbed text holds no secret and is bounded."""
    shown = scrub(before + secret + after, [secret])
    assert secret not in shown
    assert len(shown) <= SHOWN + 40
