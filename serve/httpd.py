"""The controller's HTTP server: waitress running the routes of ``serve/httpapp.py`` in
one thread of ``plumb serve``, with limits on every path (docs/serve.md, "HTTP").

waitress reads requests on one event-loop thread and hands only complete requests to a
fixed pool of worker threads, so a slow or hostile client costs a socket, never a
thread. It answers, before any route runs:

* 400 for a Content-Length that is not digits (negative, ``abc``) and for broken
  chunked framing; 413 for a declared or chunked body over ``max_body``;
* 431 for a request line and headers over ``max_header``.

What waitress does not bound, this module does: its own timeout counts from the last
byte received, so a client trickling a header line every few seconds would be kept
forever. Here a request must arrive whole (headers and body) within
``request_timeout`` of its first byte, and an idle connection is closed after the same
time. Connections past ``max_connections`` wait in the listen backlog.

This is the only module that imports waitress (tests/test_layering.py), which comes
with the ``serve`` extra (inventory/extras.py).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

from inventory.extras import optional_imports

with optional_imports():
    from waitress import wasyncore
    from waitress.adjustments import Adjustments
    from waitress.channel import HTTPChannel
    from waitress.server import TcpWSGIServer
    from waitress.task import ErrorTask, ThreadedTaskDispatcher

from serve.httpapp import MAX_BODY, Route, WsgiApp

if TYPE_CHECKING:
    from waitress.wasyncore import _SocketMap

Log = Callable[[str], None]
TICK = 0.25  # seconds between deadline checks; also the longest the loop sleeps


@dataclass(frozen=True)
class HttpLimits:
    max_body: int = MAX_BODY  # bytes of a request body
    max_header: int = 16 * 1024  # bytes of the request line and headers
    request_timeout: float = 10.0  # seconds from a request's first byte to its last
    threads: int = 4  # workers answering complete requests
    max_connections: int = 100  # open connections; more wait in the listen backlog


class _OneLineLog(logging.Handler):
    """waitress's own warnings, one line each through the controller's log."""

    def __init__(self, log: Log) -> None:
        super().__init__(logging.INFO)
        self._log = log

    def emit(self, record: logging.LogRecord) -> None:
        message = " ".join(record.getMessage().split())
        if record.exc_info and record.exc_info[1] is not None:
            message += f" ({type(record.exc_info[1]).__name__}: {record.exc_info[1]})"
        self._log(f"http: {message}")


class _LoggedErrorTask(ErrorTask):
    """A request waitress refuses (400, 413, 431) is logged as one line, then answered."""

    def execute(self) -> None:
        server = cast(_DeadlineServer, self.channel.server)
        error = self.request.error  # type: ignore[attr-defined]  # the request's parser
        why = {
            413: f"body over {server.limits.max_body} bytes",
            431: f"request line and headers over {server.limits.max_header} bytes",
        }.get(error.code, error.body)
        server.log_line(f"http: {error.code} {error.reason} from {_peer(self.channel)}: {why}")
        super().execute()


class _DeadlineChannel(HTTPChannel):
    """A connection that notes when its incomplete request started arriving."""

    error_task_class = _LoggedErrorTask
    request_started: float | None = None
    _timed: object = None

    def received(self, data: bytes) -> bool:
        waiting = super().received(data)
        if self.request is None:
            self.request_started = None
        elif self.request is not self._timed:
            self._timed, self.request_started = self.request, time.monotonic()
        return waiting


class _DeadlineServer(TcpWSGIServer):
    channel_class = _DeadlineChannel
    log_line: Log
    limits: HttpLimits

    def maintenance(self, now: float) -> None:
        """Close connections whose request is late or that sat idle too long; those
        being answered are left to their worker."""
        clock, wall = time.monotonic(), time.time()
        channels = cast(Mapping[int, _DeadlineChannel], self.active_channels)
        for channel in list(channels.values()):
            if channel.requests or channel.will_close:
                continue
            started = channel.request_started
            timeout = self.limits.request_timeout
            if started is not None and clock - started > timeout:
                channel.will_close = True
                self.log_line(
                    f"http: dropped {_peer(channel)}: request not received whole within "
                    f"{timeout:g}s"
                )
            elif started is None and wall - channel.last_activity > timeout:
                channel.will_close = True


def _peer(channel: HTTPChannel) -> str:
    addr = channel.addr
    return str(addr[0]) if isinstance(addr, tuple) else str(addr)


class ControllerHttp:
    """The routes served on HOST:PORT by a thread of their own, until :meth:`stop`."""

    def __init__(
        self,
        host: str,
        port: int,
        routes: Sequence[Route],
        *,
        log: Log,
        limits: HttpLimits = HttpLimits(),
    ) -> None:
        self.limits = limits
        self._log_handler = _OneLineLog(log)
        self._map: _SocketMap = {}  # every socket of this server, for its own loop
        self._dispatcher = ThreadedTaskDispatcher()
        adjustments = Adjustments(
            host=host,
            port=port,
            threads=limits.threads,
            # waitress refuses a body or header block of its limit or more
            max_request_body_size=limits.max_body + 1,
            max_request_header_size=limits.max_header + 1,
            expose_tracebacks=False,
            log_socket_errors=False,
            asyncore_use_poll=True,
            ident="plumb-serve",
        )
        # waitress counts its own sockets too: each listener and its wake-up pipe
        adjustments.connection_limit = limits.max_connections + 2 * len(adjustments.listen)
        app = WsgiApp(routes, log, limits.max_body)
        self._servers = [
            _DeadlineServer(
                app,
                map=self._map,
                dispatcher=self._dispatcher,
                adj=adjustments,
                sockinfo=sockinfo,  # type: ignore[arg-type]
            )
            for sockinfo in adjustments.listen
        ]
        for server in self._servers:
            server.log_line, server.limits = log, limits
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="plumb-serve-http", daemon=True)

    @property
    def port(self) -> int:
        sock = self._servers[0].socket
        assert sock is not None
        return int(sock.getsockname()[1])

    def start(self) -> None:
        for name in ("waitress", "waitress.queue"):
            logger = logging.getLogger(name)
            logger.addHandler(self._log_handler)
            logger.propagate = False
        self._dispatcher.set_thread_count(self.limits.threads)
        self._thread.start()

    def _loop(self) -> None:
        next_check = 0.0
        try:
            while not self._stopping.is_set():
                wasyncore.loop(TICK, True, self._map, count=1)
                if time.monotonic() >= next_check:
                    next_check = time.monotonic() + TICK
                    for server in self._servers:
                        server.maintenance(time.time())
        finally:
            wasyncore.close_all(self._map)

    def stop(self) -> None:
        """Stop listening, close every connection and let the workers finish."""
        self._stopping.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)
        else:
            wasyncore.close_all(self._map)
        self._dispatcher.shutdown(cancel_pending=True, timeout=5)
        for name in ("waitress", "waitress.queue"):
            logging.getLogger(name).removeHandler(self._log_handler)
