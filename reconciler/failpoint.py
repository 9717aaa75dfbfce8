"""Fault injection for crash-safety drills: ``PLUMB_FAILPOINT=SITE:N`` makes the process
kill itself with SIGKILL the N-th time it passes the named site (``journal``: after a
journal transaction commits; ``write``: after a device write returns, before the
journal records its outcome). No site fires unless the variable names it; the check
reads the environment each time, at the cost of a few dictionary lookups
(:func:`inventory.envsettings.read_settings`). Used to prove that a rollout resumed
after any crash loses no before-state and writes no target twice.
"""

from __future__ import annotations

import os
import signal
import threading

_counts: dict[str, int] = {}
_lock = threading.Lock()


def _armed() -> tuple[str, int] | None:
    from inventory.envsettings import read_settings  # pydantic-settings once a site is passed

    spec = read_settings().failpoint or ""
    site, sep, count = spec.partition(":")
    if not sep or not count.isdigit():
        return None
    return site, int(count)


def hit(site: str) -> None:
    """Count a pass through ``site``; SIGKILL this process on the armed pass."""
    armed = _armed()
    if armed is None or armed[0] != site:
        return
    with _lock:
        _counts[site] = _counts.get(site, 0) + 1
        if _counts[site] == armed[1]:
            os.kill(os.getpid(), signal.SIGKILL)
