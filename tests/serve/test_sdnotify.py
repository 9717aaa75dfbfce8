"""The controller tells systemd it is ready, alive and stopping over a real unix
datagram socket, as a ``Type=notify`` unit with ``WatchdogSec=`` expects."""

from __future__ import annotations

import os
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from itertools import pairwise
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from serve.sdnotify import PING_FRACTION, Notifier, socket_address
from tests.serve.servefleet import PLUMB, make_repos

SERVE = """
serve:
  poll_seconds: 30
  interval_seconds: 1
  drift:
    - mode: warn
"""


class Listener:
    """The service manager's end: a bound datagram socket in a short temporary path
    (a unix socket path has room for about 100 bytes)."""

    def __init__(self) -> None:
        self._dir = tempfile.TemporaryDirectory(prefix="sd", dir="/tmp")
        self.path = str(Path(self._dir.name) / "notify")
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(self.path)

    def messages(self, timeout: float = 0.0) -> list[str]:
        """Every datagram waiting (after up to ``timeout`` seconds for the first)."""
        found: list[str] = []
        self.sock.settimeout(timeout)  # 0.0: only what is already there
        try:
            while True:
                found.append(self.sock.recv(4096).decode())
                self.sock.settimeout(0.0)
        except (BlockingIOError, TimeoutError):
            return found

    def close(self) -> None:
        self.sock.close()
        self._dir.cleanup()


@pytest.fixture
def listener() -> Iterator[Listener]:
    opened = Listener()
    yield opened
    opened.close()


def test_ready_and_stopping_reach_the_socket(listener: Listener) -> None:
    """READY=1 and STOPPING=1 arrive as datagrams on $NOTIFY_SOCKET."""
    notifier = Notifier.from_environ({"NOTIFY_SOCKET": listener.path})
    assert notifier.ready() and notifier.stopping()
    assert listener.messages(timeout=2) == ["READY=1", "STOPPING=1"]


def test_an_abstract_socket_is_reached_through_its_at_sign() -> None:
    """``@name`` names a socket in the abstract namespace (a leading NUL byte)."""
    name = f"plumb-sdnotify-test-{os.getpid()}"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.bind("\0" + name)
        sock.settimeout(2)
        assert Notifier.from_environ({"NOTIFY_SOCKET": f"@{name}"}).ready()
        assert sock.recv(64) == b"READY=1"


def test_without_systemd_nothing_is_sent() -> None:
    """No $NOTIFY_SOCKET: every call is a no-op that says so."""
    notifier = Notifier.from_environ({})
    assert not notifier.ready()
    assert not notifier.alive()
    assert not notifier.stopping()


def test_a_socket_that_went_away_does_not_raise(tmp_path: Path) -> None:
    """A message that cannot be sent is dropped, never an exception in the loop."""
    assert not Notifier(str(tmp_path / "gone")).ready()


def test_unspoken_addresses_are_ignored() -> None:
    """Only paths and abstract names are spoken; a vsock address sends nothing."""
    assert socket_address("vsock:2:1234") is None
    assert Notifier.from_environ({"NOTIFY_SOCKET": "vsock:2:1234"}).address is None


def test_the_watchdog_is_armed_only_for_this_process(listener: Listener) -> None:
    """$WATCHDOG_PID naming another process leaves the watchdog unarmed."""
    env = {"NOTIFY_SOCKET": listener.path, "WATCHDOG_USEC": "10000000"}
    assert Notifier.from_environ(env).watchdog_seconds == 10
    mine = Notifier.from_environ({**env, "WATCHDOG_PID": str(os.getpid())})
    assert mine.watchdog_seconds == 10
    other = Notifier.from_environ({**env, "WATCHDOG_PID": str(os.getpid() + 1)})
    assert other.watchdog_seconds is None
    assert not other.alive()
    assert listener.messages() == []


def test_pings_are_spaced_by_a_quarter_of_the_period(listener: Listener) -> None:
    """A turn every tenth of a period pings once per quarter period, not every turn."""
    now = [0.0]
    notifier = Notifier(listener.path, watchdog_seconds=10.0, clock=lambda: now[0])
    sent = []
    for tick in range(25):  # 0.0 .. 24.0 seconds, one turn a second
        now[0] = float(tick)
        sent.append(notifier.alive())
    assert [t for t, s in enumerate(sent) if s] == [0, 3, 6, 9, 12, 15, 18, 21, 24]
    assert listener.messages(timeout=2) == ["WATCHDOG=1"] * 9


@settings(max_examples=60, deadline=None)
@given(
    period=st.floats(min_value=1.0, max_value=3600.0),
    steps=st.lists(st.floats(min_value=0.0, max_value=1.0), min_size=1, max_size=40),
)
def test_turns_often_enough_never_let_the_watchdog_starve(
    period: float, steps: list[float]
) -> None:
    """Turns at most a quarter period apart keep every silence under half a period,
    and pings are never closer than a quarter period."""
    with tempfile.TemporaryDirectory(prefix="sd", dir="/tmp") as folder:
        path = str(Path(folder) / "n")
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
            sock.bind(path)
            now = [0.0]
            notifier = Notifier(path, watchdog_seconds=period, clock=lambda: now[0])
            pings = []
            for step in [0.0, *steps]:
                now[0] += step * period / PING_FRACTION
                if notifier.alive():
                    pings.append(now[0])
                    assert sock.recv(64) == b"WATCHDOG=1"
    quarter = period / PING_FRACTION
    gaps = [b - a for a, b in pairwise(pings)]
    assert pings[0] == 0.0
    assert all(gap >= quarter * (1 - 1e-9) for gap in gaps)
    assert all(gap <= 2 * quarter * (1 + 1e-9) for gap in gaps)
    assert now[0] - pings[-1] < quarter * (1 + 1e-9)


def test_plumb_serve_tells_systemd_ready_alive_and_stopping(
    tmp_path: Path, listener: Listener
) -> None:
    """A real ``plumb serve --once`` sends READY=1, a watchdog ping after its turn, and
    STOPPING=1, in that order."""
    repos = make_repos(tmp_path, SERVE)
    done = subprocess.run(
        [str(PLUMB), "serve", str(repos.controller), "--once", "--listen", "127.0.0.1:0"],
        env={
            **os.environ,
            "PLUMB_ACTOR": "controller@test",
            "NOTIFY_SOCKET": listener.path,
            "WATCHDOG_USEC": str(600 * 1_000_000),
        },
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert listener.messages(timeout=2) == ["READY=1", "WATCHDOG=1", "STOPPING=1"]
