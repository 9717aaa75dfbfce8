"""Push webhooks (pure): is the request from the forge that shares our secret, and does
it push the branch the controller follows?

* GitHub signs the raw body with HMAC-SHA256 under the shared secret and sends
  ``X-Hub-Signature-256: sha256=<hex>``; the event name is in ``X-GitHub-Event``.
* GitLab sends the secret itself in ``X-Gitlab-Token``; the event is in
  ``X-Gitlab-Event`` (``Push Hook``).

Both push payloads carry ``ref`` (``refs/heads/<branch>``) and ``after`` (the new
head commit). Comparisons run in constant time. A push only wakes the controller: it
fetches from its remote and never trusts the commit named in the payload. A payload whose
arrays and objects nest deeper than :data:`MAX_DEPTH` is refused before it is parsed (a
push payload nests a few levels; the parser recurses once per level).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass

MAX_DEPTH = 64
_JSON_SPECIAL = re.compile(rb'[][{}"\\]')


@dataclass(frozen=True)
class Push:
    forge: str  # github | gitlab
    branch: str
    commit: str


class WebhookRefused(Exception):
    """The request is not a verified push; ``status`` is the HTTP status to answer."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def _header(headers: Mapping[str, str], name: str) -> str | None:
    for key, value in headers.items():
        if key.lower() == name.lower():
            return value
    return None


def github_signature(secret: bytes, body: bytes) -> str:
    """The ``X-Hub-Signature-256`` value GitHub sends for ``body``."""
    return "sha256=" + hmac.new(secret, body, hashlib.sha256).hexdigest()


def json_depth(text: bytes, give_up_above: int | None = None) -> int:
    """How deep the arrays and objects of JSON ``text`` nest (0 for a scalar), brackets
    inside strings not counted; the scan stops at the first level above ``give_up_above``.
    Linear in the text, with no recursion, so it is safe on any bytes."""
    depth = deepest = 0
    in_string = escaped = False
    for match in _JSON_SPECIAL.finditer(text):
        char = match.group()
        if in_string:
            if escaped:
                escaped = False
            elif char == b"\\":
                escaped = match.end() < len(text) and text[match.end()] in b'"\\'
            elif char == b'"':
                in_string = False
        elif char == b'"':
            in_string = True
        elif char in (b"[", b"{"):
            depth += 1
            deepest = max(deepest, depth)
            if give_up_above is not None and deepest > give_up_above:
                break
        elif char in (b"]", b"}"):
            depth = max(depth - 1, 0)
    return deepest


def verify_push(headers: Mapping[str, str], body: bytes, secret: bytes) -> Push | None:
    """The push the request announces; None for a verified event that is not a push
    (a ping). Raises :class:`WebhookRefused` for an unsigned or mis-signed request."""
    if not secret:
        raise WebhookRefused(503, "no webhook secret is configured: pushes are refused")
    signature = _header(headers, "X-Hub-Signature-256")
    token = _header(headers, "X-Gitlab-Token")
    if signature is not None:
        if not hmac.compare_digest(signature.encode(), github_signature(secret, body).encode()):
            raise WebhookRefused(401, "X-Hub-Signature-256 does not match the body")
        forge, event = "github", _header(headers, "X-GitHub-Event") or ""
        is_push = event == "push"
    elif token is not None:
        if not hmac.compare_digest(token.encode(), secret):
            raise WebhookRefused(401, "X-Gitlab-Token does not match")
        forge, event = "gitlab", _header(headers, "X-Gitlab-Event") or ""
        is_push = event == "Push Hook"
    else:
        raise WebhookRefused(401, "neither X-Hub-Signature-256 nor X-Gitlab-Token is present")
    if not is_push:
        return None
    if json_depth(body, MAX_DEPTH) > MAX_DEPTH:
        raise WebhookRefused(400, f"the payload nests deeper than {MAX_DEPTH} levels")
    try:
        payload = json.loads(body)
        ref, after = payload["ref"], payload["after"]
    except (ValueError, KeyError, TypeError):
        raise WebhookRefused(400, "a push payload needs 'ref' and 'after'") from None
    if not isinstance(ref, str) or not isinstance(after, str):
        raise WebhookRefused(400, "'ref' and 'after' must be strings")
    return Push(forge, ref.removeprefix("refs/heads/"), after)
