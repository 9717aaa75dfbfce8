"""``show configuration sessions [detail]``: EOS's session table, per software version.

Up to 4.31 a session committed with a timer shows state
``pendingCommitTimer`` and the deadline in ``commitBy``.  From 4.32 every
committed session shows ``committed`` at once, and a pending timer appears
only as the top-level keys ``commitTimerSessionName`` and
``commitTimerExpireTime``.
"""

from __future__ import annotations

from typing import Any

from .eos_device import (
    COMPLETED,
    MAX_PENDING,
    MAX_SAVED,
    PENDING,
    PENDING_TIMER,
    EosDevice,
    EosSession,
)
from .eos_profiles import COMMITTED


def _state(session: EosSession, style: str) -> str:
    if style == COMMITTED and session.status in (COMPLETED, PENDING_TIMER):
        return "committed"
    return session.status


def sessions_json(device: EosDevice) -> dict[str, Any]:
    """``show configuration sessions detail | json``."""
    style = device.profile.timer_style
    sessions: dict[str, Any] = {}
    for name, session in device.sessions.items():
        entry: dict[str, Any] = {"state": _state(session, style)}
        if session.completed_time is not None:
            entry["completedTime"] = session.completed_time
        if session.commit_by is not None and style != COMMITTED:
            entry["commitBy"] = session.commit_by
        entry["commitUser"] = "" if session.status == PENDING else device.spec.username
        entry["description"] = ""
        entry["instances"] = {}
        sessions[name] = entry
    result: dict[str, Any] = {
        "sessions": sessions,
        "maxSavedSessions": MAX_SAVED,
        "maxOpenSessions": MAX_PENDING,
        "mergeOnCommit": False,
        "saveToStartupConfigOnCommit": False,
    }
    timed = [s for s in device.sessions.values() if s.status == PENDING_TIMER]
    if style == COMMITTED and timed:
        result["commitTimerSessionName"] = timed[0].name
        result["commitTimerExpireTime"] = timed[0].commit_by
    return result


def sessions_text(device: EosDevice) -> str:
    """``show configuration sessions``."""
    style = device.profile.timer_style
    rows = [
        f"Maximum number of completed sessions: {MAX_SAVED}",
        f"Maximum number of pending sessions: {MAX_PENDING}",
        "Merge on commit is disabled",
        "Save to startup-config on commit is disabled",
        "",
        "  Name         State              User      Terminal",
        "  ------------ ------------------ --------- --------",
    ]
    for name, session in device.sessions.items():
        user = "" if session.status == PENDING else device.spec.username
        rows.append(f"  {name:<12} {_state(session, style):<18} {user:<9}".rstrip())
    return "\n".join(rows)
