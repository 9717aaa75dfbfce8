"""The controller's routes without a server: what each path answers, bearer tokens, and
how the WSGI side turns a bad request or a failing route into one answer and one line."""

from __future__ import annotations

import io
import json
from collections.abc import Iterable
from wsgiref.util import setup_testing_defaults

from serve.httpapp import (
    Endpoints,
    Request,
    Response,
    Route,
    WsgiApp,
    controller_routes,
    dispatch,
)
from serve.webhook import Push, github_signature

SECRET = b"s3cret"
PUSH = json.dumps({"ref": "refs/heads/main", "after": "c" * 40}).encode()


def _endpoints(pushes: list[Push], secret: bytes = SECRET) -> Endpoints:
    def on_push(push: Push) -> bool:
        pushes.append(push)
        return push.branch == "main"

    return Endpoints(
        secret=lambda: secret,
        on_push=on_push,
        ready=lambda: (False, "no reconcile pass completed yet"),
        metrics=lambda: b"plumb_up 1\n",
    )


def _webhook(body: bytes, event: str, secret: bytes = SECRET) -> Request:
    headers = {"x-hub-signature-256": github_signature(SECRET, body), "x-github-event": event}
    return Request("POST", "/webhook", headers, body)


def test_webhook_answers_by_what_the_push_is() -> None:
    """A followed push 202, another branch 200, a ping 204, a forged body 401, no secret 503."""
    pushes: list[Push] = []
    routes = controller_routes(_endpoints(pushes))
    other = json.dumps({"ref": "refs/heads/dev", "after": "d" * 40}).encode()
    forged = Request("POST", "/webhook", _webhook(PUSH, "push").headers, other)
    assert dispatch(routes, _webhook(PUSH, "push")).status == 202
    assert dispatch(routes, _webhook(other, "push")).status == 200
    assert dispatch(routes, _webhook(b"{}", "ping")).status == 204
    assert dispatch(routes, forged).status == 401
    assert [p.branch for p in pushes] == ["main", "dev"]
    secretless = controller_routes(_endpoints([], secret=b""))
    assert dispatch(secretless, _webhook(PUSH, "push")).status == 503


def test_probes_and_metrics() -> None:
    """/healthz is 200, /readyz carries the controller's reason, /metrics the exposition."""
    routes = controller_routes(_endpoints([]))
    assert dispatch(routes, Request("GET", "/healthz", {})) == Response(200, b"ok\n")
    ready = dispatch(routes, Request("GET", "/readyz", {}))
    assert (ready.status, ready.body) == (503, b"no reconcile pass completed yet\n")
    metrics = dispatch(routes, Request("GET", "/metrics", {}))
    assert metrics.body == b"plumb_up 1\n" and metrics.content_type.endswith("version=0.0.4")


def test_unknown_path_is_404_and_wrong_method_405() -> None:
    """A path no route serves is 404; a known path with another method is 405 with Allow."""
    routes = controller_routes(_endpoints([]))
    assert dispatch(routes, Request("GET", "/nope", {})).status == 404
    refused = dispatch(routes, Request("GET", "/webhook", {}))
    assert refused.status == 405 and ("Allow", "POST") in refused.headers


def test_a_route_with_a_token_needs_the_bearer() -> None:
    """Without the bearer token, or with another, the answer is 401; with it, the route's."""
    page = Route("GET", "/", lambda request: Response(200, b"<html/>", "text/html"), lambda: b"t0k")
    assert dispatch([page], Request("GET", "/", {})).status == 401
    wrong = Request("GET", "/", {"authorization": "Bearer guess"})
    assert dispatch([page], wrong).status == 401
    basic = Request("GET", "/", {"authorization": "Basic dDBr"})
    assert dispatch([page], basic).status == 401
    right = Request("GET", "/", {"authorization": "Bearer t0k"})
    assert dispatch([page], right).body == b"<html/>"


def test_a_token_source_that_gives_nothing_leaves_the_route_open() -> None:
    """No token configured: the route answers without Authorization."""
    page = Route("GET", "/", lambda request: Response(200, b"open"), lambda: b"")
    assert dispatch([page], Request("GET", "/", {})).body == b"open"


class _Unreadable(io.RawIOBase):
    def read(self, size: int = -1) -> bytes:
        raise AssertionError("the body was read")


def _call(app: WsgiApp, environ: dict[str, object]) -> tuple[str, bytes]:
    started: list[str] = []

    def start_response(status: str, headers: object, exc_info: object = None) -> object:
        started.append(status)
        return None

    setup_testing_defaults(environ)
    body: Iterable[bytes] = app(environ, start_response)  # type: ignore[arg-type]
    return started[0], b"".join(body)


def test_a_route_that_raises_is_answered_500_and_logged_as_one_line() -> None:
    """The exception never reaches the server: 500, and one log line naming it."""

    def broken(request: Request) -> Response:
        raise RecursionError("maximum recursion depth exceeded\nwhile decoding")

    lines: list[str] = []
    app = WsgiApp([Route("GET", "/boom", broken)], lines.append)
    status, _ = _call(app, {"REQUEST_METHOD": "GET", "PATH_INFO": "/boom"})
    assert status.startswith("500 ")
    assert lines == [
        "http: 500 GET /boom: RecursionError: maximum recursion depth exceeded while decoding"
    ]


def test_a_length_that_is_not_digits_is_refused_without_reading() -> None:
    """Behind a server that did not check it, Content-Length -1 or abc is still a 400 and
    the body stream is never read; a length over the limit is a 413."""
    lines: list[str] = []
    app = WsgiApp(controller_routes(_endpoints([])), lines.append, max_body=1000)
    for length, expected in (("-1", "400 "), ("abc", "400 "), ("1001", "413 ")):
        environ = {
            "REQUEST_METHOD": "POST",
            "PATH_INFO": "/webhook",
            "CONTENT_LENGTH": length,
            "wsgi.input": _Unreadable(),
        }
        status, _ = _call(app, environ)
        assert status.startswith(expected), (length, status)
    assert len(lines) == 3 and all("\n" not in line for line in lines)


def test_the_body_and_headers_reach_the_route() -> None:
    """A signed push through the WSGI side is verified from the environ's headers and body."""
    pushes: list[Push] = []
    app = WsgiApp(controller_routes(_endpoints(pushes)), print)
    environ = {
        "REQUEST_METHOD": "POST",
        "PATH_INFO": "/webhook",
        "CONTENT_LENGTH": str(len(PUSH)),
        "HTTP_X_HUB_SIGNATURE_256": github_signature(SECRET, PUSH),
        "HTTP_X_GITHUB_EVENT": "push",
        "wsgi.input": io.BytesIO(PUSH),
    }
    status, body = _call(app, environ)
    assert (status, body) == ("202 Accepted", b"fetching\n")
    assert pushes == [Push("github", "main", "c" * 40)]


def test_refusals_are_logged_and_a_probe_s_answer_is_not() -> None:
    """An unsigned push (401) is logged as one line; /readyz answering 503 and an unknown
    path (404) are not."""
    lines: list[str] = []
    app = WsgiApp(controller_routes(_endpoints([])), lines.append)
    unsigned = {
        "REQUEST_METHOD": "POST",
        "PATH_INFO": "/webhook",
        "CONTENT_LENGTH": "2",
        "wsgi.input": io.BytesIO(b"{}"),
    }
    assert _call(app, unsigned)[0].startswith("401 ")
    assert _call(app, {"REQUEST_METHOD": "GET", "PATH_INFO": "/readyz"})[0].startswith("503 ")
    assert _call(app, {"REQUEST_METHOD": "GET", "PATH_INFO": "/nope"})[0].startswith("404 ")
    assert lines == [
        "http: 401 POST /webhook: neither X-Hub-Signature-256 nor X-Gitlab-Token is present"
    ]
