"""The controller's HTTP endpoint (stdlib ``http.server`` in a thread): ``POST /webhook``
for push events, ``GET /healthz`` (the process serves), ``GET /readyz`` (the last pass
or leadership check succeeded recently) and ``GET /metrics``."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from serve.webhook import Push, WebhookRefused, verify_push

MAX_BODY = 5 * 1024 * 1024


@dataclass
class Endpoints:
    secret: Callable[[], bytes]
    on_push: Callable[[Push], bool]  # True if the push is for the followed branch
    ready: Callable[[], tuple[bool, str]]
    metrics: Callable[[], bytes]


def _handler(endpoints: Endpoints) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        server_version = "plumb-serve"

        def log_message(self, format: str, *args: object) -> None:
            return None  # the controller logs what matters itself

        def _reply(self, status: int, body: bytes, kind: str = "text/plain") -> None:
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            if self.path == "/healthz":
                self._reply(200, b"ok\n")
            elif self.path == "/readyz":
                ok, why = endpoints.ready()
                self._reply(200 if ok else 503, f"{why}\n".encode())
            elif self.path == "/metrics":
                self._reply(200, endpoints.metrics(), "text/plain; version=0.0.4")
            else:
                self._reply(404, b"not found\n")

        def do_POST(self) -> None:
            if self.path != "/webhook":
                self._reply(404, b"not found\n")
                return
            length = int(self.headers.get("Content-Length") or 0)
            if length > MAX_BODY:
                self._reply(413, b"payload too large\n")
                return
            body = self.rfile.read(length)
            try:
                push = verify_push(dict(self.headers.items()), body, endpoints.secret())
            except WebhookRefused as exc:
                self._reply(exc.status, f"{exc}\n".encode())
                return
            if push is None:
                self._reply(204, b"")
            elif endpoints.on_push(push):
                self._reply(202, b"fetching\n")
            else:
                self._reply(200, f"branch {push.branch} is not followed\n".encode())

    return Handler


class ControllerHttp:
    def __init__(self, host: str, port: int, endpoints: Endpoints) -> None:
        self.server = ThreadingHTTPServer((host, port), _handler(endpoints))
        self.server.daemon_threads = True
        self._thread = threading.Thread(
            target=self.server.serve_forever, name="plumb-serve-http", daemon=True
        )

    @property
    def port(self) -> int:
        return int(self.server.server_address[1])

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
