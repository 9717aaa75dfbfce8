"""Telling systemd how the controller is (the ``sd_notify`` protocol), at the edge of
the loop in :mod:`serve.controller`.

Under a unit with ``Type=notify`` systemd passes a unix datagram socket in
``$NOTIFY_SOCKET`` and waits for ``READY=1`` before it counts the service as started.
With ``WatchdogSec=`` it also passes ``$WATCHDOG_USEC`` (and ``$WATCHDOG_PID``) and
kills the service when no ``WATCHDOG=1`` arrives within that time. The controller
sends ``READY=1`` once its state is open and its HTTP endpoint serves, ``WATCHDOG=1``
after each turn of the loop (so a turn that hangs, on a git fetch or a database that
stopped answering, is what stops the pings), and ``STOPPING=1`` when the loop ends.

Outside systemd (no ``$NOTIFY_SOCKET``) every call does nothing. A message that cannot
be sent is dropped: telling systemd must never stop the controller.
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Callable, Mapping

PING_FRACTION = 4
"""Ping every ``WATCHDOG_USEC / PING_FRACTION`` at most: turns come every few tenths
of a second, and a few pings per watchdog period leave room for a slow turn."""


def socket_address(value: str) -> str | None:
    """The address to send to: a path, or ``@name`` for an abstract socket (the
    leading NUL byte); None for what this module does not speak (``vsock:``)."""
    if value.startswith("@"):
        return "\0" + value[1:]
    if value.startswith("/"):
        return value
    return None


class Notifier:
    """Messages to the service manager; the watchdog's pings are spaced by ``clock``."""

    def __init__(
        self,
        address: str | None,
        watchdog_seconds: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.address = address
        self.watchdog_seconds = watchdog_seconds
        self._clock = clock
        self._pinged_at: float | None = None

    @classmethod
    def from_environ(cls, environ: Mapping[str, str] = os.environ) -> Notifier:
        """The notifier systemd asked for; one that sends nothing outside systemd."""
        address = socket_address(environ.get("NOTIFY_SOCKET", ""))
        watchdog: float | None = None
        usec = environ.get("WATCHDOG_USEC", "")
        pid = environ.get("WATCHDOG_PID", "")
        for_us = not pid or (pid.isdigit() and int(pid) == os.getpid())
        if usec.isdigit() and int(usec) > 0 and for_us:
            watchdog = int(usec) / 1_000_000
        return cls(address, watchdog)

    def send(self, *assignments: str) -> bool:
        """Send ``KEY=VALUE`` lines in one datagram; whether it was sent."""
        if self.address is None:
            return False
        message = "\n".join(assignments).encode()
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
                sock.sendto(message, self.address)
        except OSError:
            return False
        return True

    def ready(self) -> bool:
        return self.send("READY=1")

    def stopping(self) -> bool:
        return self.send("STOPPING=1")

    def alive(self) -> bool:
        """``WATCHDOG=1`` when a watchdog is armed and the last ping is a quarter of
        its period old; whether a ping was sent."""
        if self.watchdog_seconds is None:
            return False
        now = self._clock()
        last = self._pinged_at
        if last is not None and now - last < self.watchdog_seconds / PING_FRACTION:
            return False
        sent = self.send("WATCHDOG=1")
        if sent:
            self._pinged_at = now
        return sent
