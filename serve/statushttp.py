"""The status page's routes, ``GET /`` (HTML) and ``GET /status.json``, and its bearer
token (``serve.status_token_file``).

The data is what the controller gathered after its last turn (:mod:`serve.statusdata`);
these routes only render it, so a request never touches the state database and never
waits for a turn. ``/status.json`` answers 503 with the reason when the state database
could not be read; the page still renders and says why. Both are read-only (GET only:
any other method is 405) and, with a token configured, answer 401 without
``Authorization: Bearer TOKEN``.
"""

from __future__ import annotations

import hashlib
import json
import stat
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from intent.fleet import CONFIG_FILE, Fleet
from serve.httpapp import Request, Response, Route
from serve.statuspage import CSP, render_page

PAGE_HEADERS = (
    ("Cache-Control", "no-store"),
    ("X-Content-Type-Options", "nosniff"),
    ("Referrer-Policy", "no-referrer"),
)


class StatusTokenError(Exception):
    """``serve.status_token_file`` names a file that is missing, empty or readable by others."""


def status_token(fleet: Fleet) -> bytes:
    """The token ``serve.status_token_file`` names (empty when unset): a file only its owner
    may read or write (mode 0600 or stricter), refused otherwise with plumb.yaml:line."""
    name = fleet.config.serve.status_token_file
    if name is None:
        return b""
    doc = fleet.where.docs.get(CONFIG_FILE)
    at = f"{doc.where('serve', 'status_token_file')}: " if doc is not None else f"{CONFIG_FILE}: "
    path = fleet.root / Path(name).expanduser()
    try:
        mode = path.stat().st_mode
        if mode & 0o077:
            raise StatusTokenError(
                f"{at}serve.status_token_file {path} has mode {stat.S_IMODE(mode):04o}:"
                f" run `chmod 600 {path}`"
            )
        token = path.read_text(encoding="utf-8").strip()
    except OSError as exc:
        raise StatusTokenError(
            f"{at}cannot read serve.status_token_file {path}: {exc.strerror or exc}"
        ) from None
    if not token or any(c.isspace() for c in token):
        raise StatusTokenError(f"{at}serve.status_token_file {path} holds no single token")
    return token.encode()


def with_digest(data: Mapping[str, Any]) -> dict[str, Any]:
    """``data`` with ``digest``: a hash of everything but the time it was made, which the
    page compares to know when to redraw."""
    stable = {k: v for k, v in data.items() if k not in ("generated_at", "digest")}
    text = json.dumps(stable, sort_keys=True, default=str).encode()
    return {**data, "digest": hashlib.sha256(text).hexdigest()[:16]}


def status_routes(snapshot: Callable[[], Mapping[str, Any]], token: bytes) -> list[Route]:
    """``/`` and ``/status.json`` over ``snapshot`` (the data of the last turn)."""

    def page(request: Request) -> Response:
        html = render_page(with_digest(snapshot()), token_required=bool(token))
        return Response(
            200,
            html.encode(),
            "text/html; charset=utf-8",
            (*PAGE_HEADERS, ("Content-Security-Policy", CSP)),
        )

    def status_json(request: Request) -> Response:
        data = with_digest(snapshot())
        if not data["state"]["up"]:
            data["reason"] = f"state database unreachable: {data['state']['reason']}"
        body = json.dumps(data, indent=1, sort_keys=True, default=str).encode() + b"\n"
        status = 200 if data["state"]["up"] else 503
        return Response(status, body, "application/json", PAGE_HEADERS)

    def bearer() -> bytes:
        return token

    return [
        Route("GET", "/", page, token=bearer),
        Route("GET", "/status.json", status_json, token=bearer),
    ]
