"""Reading a SQLite state without opening it as a writer would (no schema upgrade, no
file created, no lock waited for): what shell completion asks of it."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from reconciler.state.dbfile import connect_read_only


def rollout_ids_of(path: Path) -> list[str]:
    """The rollout ids journaled in the state file at ``path``, newest first; nothing
    when there is no file or it cannot be read."""
    if not path.is_file():
        return []
    try:
        conn = connect_read_only(path, timeout=1)
        try:
            rows = conn.execute("SELECT id FROM rollout ORDER BY created_at DESC").fetchall()
        finally:
            conn.close()
    except sqlite3.Error:
        return []
    return [str(row[0]) for row in rows]
