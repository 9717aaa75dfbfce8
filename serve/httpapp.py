"""The controller's HTTP routes as a plain WSGI application, independent of the server
that runs it (``serve/httpd.py``): ``POST /webhook`` for push events, ``GET /healthz``
(the process serves), ``GET /readyz`` (the last pass or leadership check succeeded
recently) and ``GET /metrics``.

A route maps a :class:`Request` (method, path, headers, the whole body, already bounded
by the server) to a :class:`Response`. A route may demand a bearer token
(``Authorization: Bearer ...``, compared in constant time); a route whose token source
returns nothing is open. A refused request (4xx but 404) is logged as one line; whatever
a route raises is answered 500 and logged as one line, never a traceback: the client
never sees the exception, and the log never grows a stack per hostile request. A route's
own 5xx answer (``/readyz`` not ready) is a state, not an error, and is not logged.
"""

from __future__ import annotations

import hmac
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from http import HTTPStatus
from typing import TYPE_CHECKING

from serve.webhook import Push, WebhookRefused, verify_push

if TYPE_CHECKING:
    from wsgiref.types import StartResponse, WSGIEnvironment

MAX_BODY = 5 * 1024 * 1024  # the webhook's payload; GitHub caps its own at 25 MB


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    headers: Mapping[str, str]  # names in lower case
    body: bytes = b""


@dataclass(frozen=True)
class Response:
    status: int
    body: bytes = b""
    content_type: str = "text/plain"
    headers: tuple[tuple[str, str], ...] = ()

    @classmethod
    def text(cls, status: int, message: str) -> Response:
        return cls(status, f"{message}\n".encode())


@dataclass(frozen=True)
class Route:
    method: str
    path: str
    answer: Callable[[Request], Response]
    token: Callable[[], bytes] | None = None  # a bearer token the request must carry


@dataclass
class Endpoints:
    secret: Callable[[], bytes]
    on_push: Callable[[Push], bool]  # True if the push is for the followed branch
    ready: Callable[[], tuple[bool, str]]
    metrics: Callable[[], bytes]


def controller_routes(endpoints: Endpoints) -> list[Route]:
    """The controller's routes over its endpoints."""

    def webhook(request: Request) -> Response:
        try:
            push = verify_push(request.headers, request.body, endpoints.secret())
        except WebhookRefused as exc:
            return Response.text(exc.status, str(exc))
        if push is None:
            return Response(204)
        if endpoints.on_push(push):
            return Response.text(202, "fetching")
        return Response.text(200, f"branch {push.branch} is not followed")

    def readyz(request: Request) -> Response:
        ok, why = endpoints.ready()
        return Response.text(200 if ok else 503, why)

    def metrics(request: Request) -> Response:
        return Response(200, endpoints.metrics(), "text/plain; version=0.0.4")

    return [
        Route("POST", "/webhook", webhook),
        Route("GET", "/healthz", lambda request: Response.text(200, "ok")),
        Route("GET", "/readyz", readyz),
        Route("GET", "/metrics", metrics),
    ]


def _authorized(route: Route, request: Request) -> bool:
    expected = route.token() if route.token is not None else b""
    if not expected:
        return True
    scheme, _, given = request.headers.get("authorization", "").partition(" ")
    return scheme.lower() == "bearer" and hmac.compare_digest(given.strip().encode(), expected)


def dispatch(routes: Sequence[Route], request: Request) -> Response:
    """The answer of the route for the request's path and method (404, 405, 401)."""
    on_path = [route for route in routes if route.path == request.path]
    if not on_path:
        return Response.text(404, "not found")
    for route in on_path:
        if route.method == request.method:
            if not _authorized(route, request):
                return Response(
                    401, b"a bearer token is required\n", headers=(("WWW-Authenticate", "Bearer"),)
                )
            return route.answer(request)
    allowed = ", ".join(sorted({route.method for route in on_path}))
    return Response(405, b"method not allowed\n", headers=(("Allow", allowed),))


def _request(environ: WSGIEnvironment, max_body: int) -> Request | Response:
    """The request from the WSGI environ, or the answer refusing it: the server has
    bounded the body already; this holds even behind a server that did not."""
    length_text = environ.get("CONTENT_LENGTH") or "0"
    if not length_text.isdigit() or not length_text.isascii():
        return Response.text(400, "Content-Length is not a number")
    length = int(length_text)
    if length > max_body:
        return Response.text(413, f"payload over {max_body} bytes")
    body = environ["wsgi.input"].read(length) if length else b""
    headers = {
        key[5:].replace("_", "-").lower(): value
        for key, value in environ.items()
        if key.startswith("HTTP_")
    }
    if "CONTENT_TYPE" in environ:
        headers["content-type"] = environ["CONTENT_TYPE"]
    return Request(environ["REQUEST_METHOD"], environ.get("PATH_INFO") or "/", headers, body)


@dataclass
class WsgiApp:
    """The routes as a WSGI application; errors are answered and logged as one line."""

    routes: Sequence[Route]
    log: Callable[[str], None]
    max_body: int = MAX_BODY

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        method, path = environ.get("REQUEST_METHOD", "?"), environ.get("PATH_INFO", "?")
        try:
            parsed = _request(environ, self.max_body)
            response = parsed if isinstance(parsed, Response) else dispatch(self.routes, parsed)
        except Exception as exc:  # answered 500, logged as one line
            self.log(f"http: 500 {method} {path}: {type(exc).__name__}: {_one_line(exc)}")
            response = Response.text(500, "internal error")
        else:
            if 400 <= response.status < 500 and response.status != 404:
                self.log(f"http: {response.status} {method} {path}: {_first_line(response)}")
        reason = HTTPStatus(response.status).phrase
        start_response(
            f"{response.status} {reason}",
            [
                ("Content-Type", response.content_type),
                ("Content-Length", str(len(response.body))),
                *response.headers,
            ],
        )
        return [response.body]


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:300]


def _first_line(response: Response) -> str:
    lines = response.body.decode(errors="replace").strip().splitlines()
    return lines[0][:300] if lines else ""
