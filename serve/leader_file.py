"""Leader election among ``plumb serve`` processes sharing one SQLite state file: an
exclusive ``flock`` on a lock file beside the database (``plumb.db.leader``), taken
without waiting and held for the life of the process.

The kernel drops the lock when the process dies, however it dies (SIGKILL included),
so a standby's next try wins. As on PostgreSQL (:mod:`serve.leader_pg`),
leadership only decides who *tries* to write: every device write still goes through
the fleet lease and its fencing token, and a new leader ends the lease a dead one left
(audited). The lock is held on an open file, not on a name: if the lock file is
removed or replaced (someone cleaning the state folder), another process can lock the
new file, so :meth:`FileLeaderLock.still_held` also checks that the name still points
at the file this process locked, and a leader that finds it does not stops leading.
``flock`` works between processes of one host (and on local file systems): a SQLite
state file is never shared across hosts anyway.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import socket
from pathlib import Path

SUFFIX = ".leader"


def lock_path(db_path: Path) -> Path:
    return db_path.with_name(db_path.name + SUFFIX)


class FileLeaderLock:
    """This process's claim to lead the controller of the state file ``db_path``."""

    def __init__(self, db_path: Path) -> None:
        self.path = lock_path(db_path)
        self._fd: int | None = None

    def try_acquire(self) -> bool:
        """Take the lock if it is free (never waits); True while this process holds it."""
        if self._fd is not None:
            if self.still_held():
                return True
            self.release()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:  # held by another process (EWOULDBLOCK)
            os.close(fd)
            return False
        if not _names(self.path, fd):  # replaced between open and lock: try next turn
            os.close(fd)
            return False
        self._fd = fd
        os.ftruncate(fd, 0)  # for people: who leads
        os.pwrite(fd, f"{os.getpid()} {socket.gethostname()}\n".encode(), 0)
        return True

    def still_held(self) -> bool:
        """Does this process hold the lock on the file the lock file's name points at?"""
        return self._fd is not None and _names(self.path, self._fd)

    def holder(self) -> str:
        """Who wrote the lock file last (``pid host``), for messages; empty if unknown."""
        try:
            return self.path.read_text(encoding="utf-8").strip()
        except OSError:
            return ""

    def release(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None


def _names(path: Path, fd: int) -> bool:
    """Is ``path`` still the file open as ``fd``?"""
    try:
        named = os.stat(path)
    except OSError:
        return False
    held = os.fstat(fd)
    return (named.st_dev, named.st_ino) == (held.st_dev, held.st_ino)
