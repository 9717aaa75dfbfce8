"""Sync windows (pure): is correction allowed at a given instant?

A window opens at each minute its cron schedule fires, on its own time zone's wall
clock (:mod:`intent.cron` says how a schedule reads and what happens when the clocks
change), and stays open for ``duration_minutes``. Correction is allowed when no
``deny`` window is open and, if the fleet declares any ``allow`` window, at least one
is open; with no windows at all it is always allowed (Argo CD's rule).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

from intent.cron import parse_cron
from intent.serve import SyncWindow


@dataclass(frozen=True)
class WindowVerdict:
    allowed: bool
    reason: str


def window_open(window: SyncWindow, now: datetime) -> bool:
    """Did ``window``'s schedule fire within its duration before ``now``'s minute
    (inclusive): at a minute ``m`` with ``now - duration < m <= now``?"""
    minute = now.astimezone(UTC).replace(second=0, microsecond=0)
    since = minute - timedelta(minutes=window.duration_minutes)
    opened = parse_cron(window.schedule).first_fire_after(since, ZoneInfo(window.timezone))
    return opened is not None and opened.astimezone(UTC) <= minute


def _describe(window: SyncWindow) -> str:
    return f"{window.kind} {window.schedule!r} {window.timezone} for {window.duration_minutes}m"


def correction_allowed(windows: Sequence[SyncWindow], now: datetime) -> WindowVerdict:
    """Whether the windows let the controller correct drift at ``now``, and why."""
    for window in windows:
        if window.kind == "deny" and window_open(window, now):
            return WindowVerdict(False, f"deny window open ({_describe(window)})")
    allows = [w for w in windows if w.kind == "allow"]
    if not allows:
        return WindowVerdict(True, "no allow window declared")
    for window in allows:
        if window_open(window, now):
            return WindowVerdict(True, f"allow window open ({_describe(window)})")
    return WindowVerdict(False, "outside every allow window")
