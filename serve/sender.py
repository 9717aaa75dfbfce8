"""Delivers the outbox: a thread that POSTs each due notice to its target's URL (read
from the environment at send time) with ``httpx``; a 2xx marks it delivered, anything
else (or no answer within the timeout) schedules the next try with backoff.

httpx's errors are mapped once, in :func:`deliver_due`: any ``httpx.RequestError``
(refused, reset, not HTTP, a timeout) or ``httpx.InvalidURL``, like a URL that is not
http(s) or an answer other than 2xx (``ValueError``), is a failed try recorded on the
notice as ``<class>: <message>``."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping

from inventory.envsettings import named_secret
from inventory.extras import optional_imports
from reconciler.state.db import StateDB
from reconciler.state.dbfile import StateError
from reconciler.state.outbox import Pending

with optional_imports():
    import httpx

TIMEOUT_SECONDS = 10.0
DELIVERY_ERRORS = (ValueError, httpx.RequestError, httpx.InvalidURL)


def sender_client(timeout: float = TIMEOUT_SECONDS) -> httpx.Client:
    """One timeout for connect, each read and each write; environment proxies ignored
    and redirects not followed (a 3xx is not a delivery)."""
    return httpx.Client(timeout=httpx.Timeout(timeout), trust_env=False)


def post_json(
    client: httpx.Client,
    url: str,
    payload: object,
    headers: Mapping[str, str] | None = None,
) -> None:
    """POST ``payload`` as JSON; raises one of :data:`DELIVERY_ERRORS` unless answered 2xx."""
    target = httpx.URL(url)
    if target.scheme not in ("http", "https") or not target.host:
        raise ValueError("not an http(s) URL")
    body = json.dumps(payload).encode()
    response = client.post(
        target, content=body, headers={"Content-Type": "application/json", **(headers or {})}
    )
    if not response.is_success:
        raise ValueError(f"answered {response.status_code} {response.reason_phrase}")


NOTICE_ID_HEADER = "X-Plumb-Notice-Id"


def with_id(notice: Pending) -> dict[str, object]:
    """The payload as sent. Delivery is at least once: a controller killed between a
    receiver's 2xx and marking the notice delivered sends it again after restart, with
    the same outbox id (header ``X-Plumb-Notice-Id``, and ``id`` in JSON payloads) so a
    receiver can drop the repeat. Slack payloads keep Slack's own shape."""
    if notice.format == "slack":
        return dict(notice.payload)
    return {**notice.payload, "id": notice.id}


def deliver_due(
    db: StateDB,
    environ: Mapping[str, str] | None = None,
    connect: Callable[[], httpx.Client] = sender_client,
) -> tuple[int, int]:
    """Try every due notice once; returns (delivered, failed)."""
    due = db.outbox.due()
    if not due:
        return 0, 0
    sent = failed = 0
    with connect() as http:
        for notice in due:
            url = named_secret(notice.target, environ)
            try:
                if url is None:
                    raise ValueError(f"${notice.target} is not set")
                headers = {NOTICE_ID_HEADER: str(notice.id)}
                post_json(http, url.get_secret_value(), with_id(notice), headers=headers)
            except DELIVERY_ERRORS as exc:
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
