"""Delivers the outbox: a thread that POSTs each due notice to its target's URL (read
from the environment at send time) with ``http.client``; a 2xx marks it delivered,
anything else (or no answer within the timeout) schedules the next try with backoff."""

from __future__ import annotations

import http.client
import json
import os
import threading
from collections.abc import Callable, Mapping
from urllib.parse import urlsplit

from reconciler.state.db import StateDB
from reconciler.state.dbfile import StateError
from reconciler.state.outbox import Pending

TIMEOUT_SECONDS = 10.0


def post_json(
    url: str,
    payload: object,
    timeout: float = TIMEOUT_SECONDS,
    headers: Mapping[str, str] | None = None,
) -> None:
    """POST ``payload`` as JSON; raises OSError or ValueError unless answered 2xx."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError("not an http(s) URL")
    kind = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    conn = kind(parts.hostname, parts.port, timeout=timeout)
    try:
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        body = json.dumps(payload).encode()
        conn.request("POST", path, body, {"Content-Type": "application/json", **(headers or {})})
        response = conn.getresponse()
        response.read()
        if not 200 <= response.status < 300:
            raise ValueError(f"answered {response.status} {response.reason}")
    finally:
        conn.close()


NOTICE_ID_HEADER = "X-Plumb-Notice-Id"


def with_id(notice: Pending) -> dict[str, object]:
    """The payload as sent. Delivery is at least once: a controller killed between a
    receiver's 2xx and marking the notice delivered sends it again after restart, with
    the same outbox id (header ``X-Plumb-Notice-Id``, and ``id`` in JSON payloads) so a
    receiver can drop the repeat. Slack payloads keep Slack's own shape."""
    if notice.format == "slack":
        return dict(notice.payload)
    return {**notice.payload, "id": notice.id}


def deliver_due(db: StateDB, environ: Mapping[str, str] = os.environ) -> tuple[int, int]:
    """Try every due notice once; returns (delivered, failed)."""
    sent = failed = 0
    for notice in db.outbox.due():
        url = environ.get(notice.target, "").strip()
        try:
            if not url:
                raise ValueError(f"${notice.target} is not set")
            post_json(url, with_id(notice), headers={NOTICE_ID_HEADER: str(notice.id)})
        except (OSError, ValueError, http.client.HTTPException) as exc:
            db.outbox.failed(notice.id, notice.attempts, f"{type(exc).__name__}: {exc}")
            failed += 1
        else:
            db.outbox.delivered(notice.id)
            sent += 1
    return sent, failed


class Sender:
    """Runs :func:`deliver_due` every ``every`` seconds while ``active()`` (the leader)."""

    def __init__(self, db: StateDB, active: Callable[[], bool], every: float = 1.0) -> None:
        self._db = db
        self._active = active
        self._every = every
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="plumb-serve-sender", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=TIMEOUT_SECONDS + 2)

    def _run(self) -> None:
        while not self._stop.wait(self._every):
            if self._active():
                try:
                    deliver_due(self._db)
                except StateError:
                    continue  # the state is unreachable: try again on the next tick
