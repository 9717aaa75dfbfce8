"""What the real-network lab's fabric does, as typed results: BGP sessions per switch
(:func:`bgp_of`, :func:`wait_for_bgp`) and DF pings between namespaces (:func:`df_ping`).
A probe that cannot run returns its error in the result; it never raises for a device.
"""

from __future__ import annotations

import re
import subprocess
import time
from collections.abc import Mapping
from dataclasses import dataclass

from lab.realfabric.state import FabricState
from reconciler.drivers.linux_frr_sessions import ESTABLISHED, Session, parse_summary

_COUNTS = re.compile(r"(\d+) packets transmitted, (\d+) received")
_MTU = re.compile(r"(Frag needed[^\n]*|message too long[^\n]*)")


@dataclass(frozen=True)
class DeviceBgp:
    """One switch's sessions against the neighbours its intent expects."""

    device: str
    expected: frozenset[str]
    sessions: Mapping[str, Session]
    error: str | None = None

    @property
    def missing(self) -> frozenset[str]:
        """Expected peers without an Established session."""
        up = {p for p, s in self.sessions.items() if s.state == ESTABLISHED}
        return frozenset(self.expected - up)

    @property
    def established(self) -> bool:
        return self.error is None and not self.missing

    @property
    def converged(self) -> bool:
        """Every expected session Established and carrying routes (a session that just
        came up has received none yet, and may still be reset)."""
        return self.established and all(
            self.sessions[p].prefixes_received > 0 for p in self.expected
        )

    @property
    def prefixes_received(self) -> int:
        return sum(s.prefixes_received for s in self.sessions.values())


@dataclass(frozen=True)
class FabricBgp:
    devices: Mapping[str, DeviceBgp]
    elapsed_s: float  # how long the wait took

    @property
    def all_established(self) -> bool:
        return all(d.established for d in self.devices.values())

    @property
    def converged(self) -> bool:
        return all(d.converged for d in self.devices.values())

    def sessions_established(self) -> int:
        return sum(
            1 for d in self.devices.values() for s in d.sessions.values() if s.state == ESTABLISHED
        )


def _vtysh(state: FabricState, device: str, command: str) -> subprocess.CompletedProcess[str]:
    entry = state.devices[device]
    socket = ["--vty_socket", entry.vty_socket] if entry.vty_socket else []
    return subprocess.run(
        ["ip", "netns", "exec", entry.namespace, "vtysh", *socket, "-c", command],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )


def bgp_of(state: FabricState, device: str, expected: frozenset[str]) -> DeviceBgp:
    """One switch's BGP sessions now."""
    try:
        done = _vtysh(state, device, "show bgp summary json")
        if done.returncode != 0:
            return DeviceBgp(device, expected, {}, done.stderr.strip()[:200] or "vtysh failed")
        return DeviceBgp(device, expected, parse_summary(done.stdout))
    except (OSError, ValueError, subprocess.TimeoutExpired) as exc:
        return DeviceBgp(device, expected, {}, f"{type(exc).__name__}: {exc}")


def wait_for_bgp(
    state: FabricState,
    expected: Mapping[str, frozenset[str]],
    timeout: float = 60.0,
    poll: float = 0.5,
) -> FabricBgp:
    """Poll every switch until all expected sessions are Established with routes
    received (or ``timeout``); the result says which are not."""
    start = time.monotonic()
    pending = dict(expected)
    done: dict[str, DeviceBgp] = {}
    while True:
        for device, peers in list(pending.items()):
            seen = bgp_of(state, device, peers)
            done[device] = seen
            if seen.converged:
                del pending[device]
        if not pending or time.monotonic() - start > timeout:
            return FabricBgp(dict(sorted(done.items())), time.monotonic() - start)
        time.sleep(poll)


@dataclass(frozen=True)
class PingResult:
    """A DF ping: ``size`` bytes of ICMP payload (+ 28 of headers) with DF set."""

    source: str
    destination: str
    size: int
    sent: int
    received: int
    mtu_error: str | None  # "Frag needed ... (mtu = 1500)" or a local "message too long"
    error: str | None = None  # the ping could not run

    @property
    def ok(self) -> bool:
        return self.error is None and self.sent > 0 and self.received == self.sent

    @property
    def packet_bytes(self) -> int:
        return self.size + 28


def df_ping(
    state: FabricState,
    source: str,
    destination: str,
    size: int,
    *,
    count: int = 2,
    interval: float = 0.2,
    wait_s: float = 1.0,
    source_address: str | None = None,
) -> PingResult:
    """``ping -M do -s size`` from ``source``'s namespace to ``destination``."""
    argv = ["ping", "-n", "-M", "do", "-s", str(size), "-c", str(count)]
    argv += ["-i", f"{interval}", "-W", f"{wait_s}"]
    if source_address is not None:
        argv += ["-I", source_address]
    try:
        done = subprocess.run(
            ["ip", "netns", "exec", state.namespace(source), *argv, destination],
            capture_output=True,
            text=True,
            timeout=30 + count * (interval + wait_s),
            check=False,
        )
    except (OSError, KeyError, subprocess.TimeoutExpired) as exc:
        return PingResult(source, destination, size, 0, 0, None, f"{type(exc).__name__}: {exc}")
    output = done.stdout + done.stderr
    counts = _COUNTS.search(output)
    mtu = _MTU.search(output)
    if counts is None:
        reason = (done.stderr.strip() or done.stdout.strip())[:200]
        return PingResult(
            source, destination, size, 0, 0, mtu.group(1) if mtu else None, reason or "no output"
        )
    return PingResult(
        source,
        destination,
        size,
        int(counts.group(1)),
        int(counts.group(2)),
        mtu.group(1) if mtu else None,
    )
