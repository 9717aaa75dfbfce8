"""Reading a SQLite state without opening it as a writer would (no schema upgrade, no
file created, no lock waited for): what shell completion asks of it."""

from __future__ import annotations

import sqlite3
from pathlib import Path


def rollout_ids_of(path: Path) -> list[str]:
    """The rollout ids journaled in the state file at ``path``, newest first; nothing
    when there is no file or it cannot be read."""
    if not path.is_file():
        return []
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=1)
        try:
            rows = conn.execute("SELECT id FROM rollout ORDER BY created_at DESC").fetchall()
        finally:
            conn.close()
    except sqlite3.Error:
        return []
    return [str(row[0]) for row in rows]
