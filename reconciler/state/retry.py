"""How often a lost state database is tried again (pure: no database driver here, so
the controller imports it without the ``postgres`` extra)."""

from __future__ import annotations

RETRY_FIRST_S = 1.0
RETRY_MAX_S = 10.0


def retry_after(failures: int) -> float:
    """Seconds before the next reconnect once ``failures`` attempts failed in a row: 1,
    2, 4, 8, then every 10 (a server that is restarting is not hammered)."""
    return float(min(RETRY_MAX_S, RETRY_FIRST_S * 2 ** max(0, failures - 1)))
