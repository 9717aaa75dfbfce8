"""Who holds a lease, precisely enough to tell later whether it is gone: the holder's
process on a SQLite state (host, pid and the process's start time, so a reused pid is
not mistaken for it) or its database session on PostgreSQL (see
:meth:`reconciler.state.pgdb.PgStateDB.session`). Pure but for reading ``/proc``."""

from __future__ import annotations

import os
import socket
from pathlib import Path

PROC = Path("/proc")


def _start_ticks(pid: int) -> str | None:
    """The process's start time in clock ticks since boot (``/proc/PID/stat`` field
    22), or None when there is no such process (or no ``/proc``)."""
    try:
        stat = (PROC / str(pid) / "stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    fields = stat[stat.rfind(")") + 2 :].split()  # after "pid (comm) "
    return fields[19] if len(fields) > 19 else None


def process_session(pid: int | None = None) -> str:
    """``proc HOST PID START`` of this process (or ``pid``)."""
    pid = os.getpid() if pid is None else pid
    return f"proc {socket.gethostname()} {pid} {_start_ticks(pid) or '?'}"


def process_alive(session: str) -> bool | None:
    """Is the process ``session`` names still running? None when this host cannot tell
    (another host's process, or not a process session)."""
    parts = session.split(" ")
    if len(parts) != 4 or parts[0] != "proc" or not parts[2].isdigit():
        return None
    _, host, pid, start = parts
    if host != socket.gethostname() or start == "?":
        return None
    return _start_ticks(int(pid)) == start
