"""GPU nodes as real Linux network namespaces, for the host driver's tests and benchmark.

Each host is a namespace named ``plumb-<pid>-<lab>-<device>`` holding one veth end per
NIC (``eth0``..``ethN``, or the device's own NIC names); the peer ends sit in the lab's
``sw`` namespace, standing in for the leaf ports. The kernel enforces MTU limits, so a
write the hardware would refuse is refused here too.

Names carry the process id and a per-process counter, so parallel test runs never
collide. Every namespace created is deleted by the lab's ``close`` (pytest finalizer or
context manager), and by an ``atexit`` hook if the process ends first. If namespaces
cannot be made (not root, no iproute2), :class:`NetnsUnavailable` says why; test
fixtures turn it into a skip with that reason.
"""

from __future__ import annotations

import atexit
import itertools
import json
import os
import shutil
import subprocess
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

_COUNTER = itertools.count(1)
_LIVE: set[str] = set()
_LIVE_LOCK = threading.Lock()


class NetnsUnavailable(Exception):
    """This machine cannot make network namespaces; the message says why."""


def _ip(
    *args: str, stdin: str | None = None, check: bool = True
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["ip", *args], input=stdin, capture_output=True, text=True, check=check, timeout=30
    )


def _delete(namespace: str) -> None:
    _ip("netns", "del", namespace, check=False)
    with _LIVE_LOCK:
        _LIVE.discard(namespace)


@atexit.register
def _delete_leftovers() -> None:
    for namespace in sorted(_LIVE):
        _delete(namespace)


def netns_unavailable() -> str | None:
    """Why namespaces cannot be used here, or None if they can (probes once)."""
    if shutil.which("ip") is None:
        return "iproute2 `ip` is not installed"
    probe = f"plumb-{os.getpid()}-probe"
    made = _ip("netns", "add", probe, check=False)
    if made.returncode != 0:
        who = "root" if os.geteuid() == 0 else f"uid {os.geteuid()} (not root)"
        return f"`ip netns add` failed as {who}: {made.stderr.strip()}"
    _ip("netns", "del", probe, check=False)
    return None


class NetnsLab:
    """A set of host namespaces plus one ``sw`` namespace holding the peer ends."""

    def __init__(self) -> None:
        reason = netns_unavailable()
        if reason is not None:
            raise NetnsUnavailable(reason)
        self.prefix = f"plumb-{os.getpid()}-{next(_COUNTER)}-"
        self.sw = f"{self.prefix}sw"
        self.nics: dict[str, tuple[str, ...]] = {}
        self._index: dict[str, int] = {}
        self._add_namespace(self.sw)

    def _add_namespace(self, namespace: str) -> None:
        with _LIVE_LOCK:
            _LIVE.add(namespace)
        _ip("netns", "add", namespace)

    def namespace(self, device: str) -> str:
        return f"{self.prefix}{device}"

    def add_host(self, device: str, nics: Sequence[str]) -> str:
        """Create ``device``'s namespace with one veth per NIC (MTU 1500, no address)."""
        index = self._index.setdefault(device, len(self._index))
        self.nics[device] = tuple(nics)
        namespace = self.namespace(device)
        self._add_namespace(namespace)
        lines, peers = [], []
        for n, nic in enumerate(nics):
            peer = f"h{index}n{n}"
            peers.append(f"link set dev {peer} up")
            lines.append(f"link add {nic} type veth peer name {peer} netns {self.sw}")
            lines.append(f"link set dev {nic} up")
        _ip("-n", namespace, "-batch", "-", stdin="\n".join(lines) + "\n")
        _ip("-n", self.sw, "-batch", "-", stdin="\n".join(peers) + "\n")
        return namespace

    def exists(self, device: str) -> bool:
        return os.path.exists(f"/run/netns/{self.namespace(device)}")

    def remove_host(self, device: str) -> None:
        """Delete the host's namespace (its NICs vanish with it): the host is gone."""
        _delete(self.namespace(device))

    def ensure_host(self, device: str) -> None:
        """Recreate a removed host (fresh NICs) under the same name."""
        if not self.exists(device):
            self.add_host(device, self.nics[device])

    def link(self, device: str, nic: str) -> dict[str, Any]:
        shown = _ip("-n", self.namespace(device), "-j", "link", "show", "dev", nic)
        found: list[dict[str, Any]] = json.loads(shown.stdout)
        return found[0]

    def mtu(self, device: str, nic: str) -> int:
        return int(self.link(device, nic)["mtu"])

    def address(self, device: str, nic: str) -> str | None:
        shown = _ip("-n", self.namespace(device), "-j", "-4", "address", "show", "dev", nic)
        for link in json.loads(shown.stdout):  # empty when the NIC has no IPv4 address
            for info in link.get("addr_info", []):
                if info.get("scope") == "global":
                    return f"{info['local']}/{info['prefixlen']}"
        return None

    def set_mtu(self, device: str, nic: str, mtu: int) -> None:
        _ip("-n", self.namespace(device), "link", "set", "dev", nic, "mtu", str(mtu))

    def close(self) -> None:
        for device in list(self.nics):
            self.remove_host(device)
        _delete(self.sw)


@contextmanager
def netns_lab(hosts: Mapping[str, Sequence[str]]) -> Iterator[NetnsLab]:
    """A lab with ``hosts`` (device -> NIC names), deleted on exit whatever happens."""
    lab = NetnsLab()
    try:
        for device, nics in hosts.items():
            lab.add_host(device, nics)
        yield lab
    finally:
        lab.close()
