"""What may be shown of a URL or a server's answer: no credentials, bounded length.

A URL's userinfo (``http://user:pass@host``) is dropped from every URL plumb prints,
and a body a server echoed back (a proxy that repeats the request's headers puts the
API token there) has every known secret replaced and is cut to a bounded length, with
control characters removed, before it reaches a terminal or a CI log.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from urllib.parse import urlsplit, urlunsplit

SHOWN = 300  # characters of an echoed body that are shown
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_BEARER = re.compile(r"(?i)\b(token|bearer)\s+[A-Za-z0-9._~+/=-]{8,}")


def display_url(url: str) -> str:
    """``url`` without its userinfo (user and password), for messages."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<an unparsable URL>"
    if "@" not in parts.netloc:
        return url
    host = parts.netloc.rsplit("@", 1)[1]
    return urlunsplit((parts.scheme, host, parts.path, parts.query, parts.fragment))


def secrets_of(url: str) -> list[str]:
    """The password (and user) a URL carries, to be scrubbed from what is shown."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return []
    return [s for s in (parts.password, parts.username) if s]


def scrub(text: str, secrets: Iterable[str], limit: int = SHOWN) -> str:
    """``text`` with every secret (and anything that looks like an Authorization token)
    replaced by ``***``, control characters dropped, cut to ``limit`` characters."""
    text = _CONTROL.sub("", text)  # first: dropping one could join a secret's halves
    for secret in sorted({s for s in secrets if s}, key=len, reverse=True):
        text = text.replace(secret, "***")
    text = _BEARER.sub(lambda m: f"{m.group(1)} ***", text)
    return text if len(text) <= limit else text[:limit] + f"... ({len(text) - limit} more)"
