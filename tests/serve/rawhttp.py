"""A raw HTTP client for hostile requests: it writes exactly the bytes it is given (a
negative Content-Length, half a header block, an endless body) and reads the answer on
a thread of its own, so an answer the server sends while the client is still writing is
kept; and what /proc says about a server process (peak memory, threads)."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from pathlib import Path


class RawConnection:
    def __init__(self, port: int, timeout: float = 20.0) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.received = bytearray()
        self.closed = threading.Event()  # the server closed (EOF or reset)
        self.closed_at: float | None = None
        self._leaving = False
        self._changed = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        while not self._leaving:
            try:
                data = self.sock.recv(65536)
            except TimeoutError:
                continue
            except OSError:
                data = b""
            with self._changed:
                if not data:
                    self.closed_at = time.monotonic()
                    self.closed.set()
                    self._changed.notify_all()
                    return
                self.received += data
                self._changed.notify_all()

    def send(self, data: bytes) -> bool:
        """Write ``data``; False once the server no longer takes it."""
        try:
            self.sock.sendall(data)
        except OSError:
            return False
        return True

    def stream(self, chunk: bytes, most: int) -> int:
        """Write ``chunk`` again and again, up to ``most`` bytes or until the server
        closes; the bytes written."""
        sent = 0
        while sent < most and not self.closed.is_set() and self.send(chunk):
            sent += len(chunk)
        return sent

    def status(self, timeout: float = 20.0) -> int | None:
        """The status code of the answer, None if none came (or the line is not HTTP)."""
        with self._changed:
            self._changed.wait_for(
                lambda: b"\r\n" in self.received or self.closed.is_set(), timeout
            )
            line = bytes(self.received).split(b"\r\n", 1)[0].split()
        if len(line) >= 2 and line[0].startswith(b"HTTP/") and line[1].isdigit():
            return int(line[1])
        return None

    def wait_closed(self, timeout: float = 20.0) -> bool:
        return self.closed.wait(timeout)

    def close(self) -> None:
        self._leaving = True
        with contextlib.suppress(OSError):  # already closed by the server
            self.sock.shutdown(socket.SHUT_RDWR)
        self.sock.close()


def get(port: int, path: str, timeout: float = 20.0) -> int | None:
    """One GET on a connection of its own; the status, None if no answer came."""
    connection = RawConnection(port, timeout)
    try:
        connection.send(f"GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
        return connection.status(timeout)
    finally:
        connection.close()


def proc_status(pid: int, field: str) -> int:
    """A number from /proc/PID/status (``VmHWM``, the peak resident memory, in kB)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1])
    raise KeyError(field)


def thread_count(pid: int) -> int:
    return len(list(Path(f"/proc/{pid}/task").iterdir()))
