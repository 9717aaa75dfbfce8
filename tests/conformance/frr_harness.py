"""The linux-frr driver's conformance harness: leaf-r0 of the shared real-network lab
(:mod:`tests.realfabric.fabric`), a namespace running FRR with veths to its spines and
hosts, drifted on entry (two uplinks at MTU 9100, ``maximum-paths 16``).

Faults are real: "unreachable" removes the namespace's name (``ip netns del``; the
daemons keep it alive, ``clear_faults`` attaches the name again), and "time out next
commit" stops bgpd (SIGSTOP) as the commit's ``frr-reload.py --reload`` starts, for
longer than the driver's commit timeout, then lets it run on.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path

from lab.realfabric.state import fabric_driver, fabric_runner
from reconciler.drivers.base import DeviceRef
from reconciler.drivers.linux_exec import NetnsRunner, Ran
from reconciler.render import render_device
from reconciler.settings import Owned
from tests.conformance.harness import expressible
from tests.realfabric.fabric import Fabric, shared_fabric

DEVICE = "leaf-r0"
COMMIT_TIMEOUT = 2.0
HANG = 4.0


class StallingRunner(NetnsRunner):
    """The fabric's runner; armed, it stops bgpd as the next reload starts."""

    def __init__(self, base: NetnsRunner, pid_of_bgpd: int) -> None:
        super().__init__(base.namespaces, base.timeout)
        self.bgpd = pid_of_bgpd
        self.armed = False
        self.timer: threading.Timer | None = None

    def run(
        self,
        device: DeviceRef,
        argv: Sequence[str],
        *,
        stdin: str | None = None,
        timeout: float | None = None,
        write: bool = False,
    ) -> Ran:
        if self.armed and write and "--reload" in argv:
            self.armed = False
            os.kill(self.bgpd, signal.SIGSTOP)
            self.timer = threading.Timer(HANG, self.resume)
            self.timer.start()
        return super().run(device, argv, stdin=stdin, timeout=timeout, write=write)

    def resume(self) -> None:
        if self.timer is not None:
            self.timer.cancel()  # a later stall must not be ended by this one's timer
        with suppress(ProcessLookupError):
            os.kill(self.bgpd, signal.SIGCONT)


def drift(fabric: Fabric, device: str) -> None:
    """Two uplinks at MTU 9100 and ``maximum-paths 16``, written behind plumb's back."""
    entry = fabric.state.devices[device]
    uplinks = [name for port, name in entry.ports.items() if port >= "Ethernet33"][:2]
    ns = ["ip", "netns", "exec", entry.namespace]
    for name in uplinks:
        subprocess.run([*ns, "ip", "link", "set", "dev", name, "mtu", "9100"], check=True)
    vtysh = [*ns, "vtysh", "--vty_socket", str(entry.vty_socket)]
    asn = fabric.fleet.intent[device].get("bgp", "asn")
    assert asn is not None
    configure = ["-c", "configure terminal", "-c", f"router bgp {asn.value}"]
    configure += ["-c", "address-family ipv4 unicast", "-c", "maximum-paths 16"]
    subprocess.run([*vtysh, *configure], check=True, capture_output=True)


@dataclass
class FrrHarness:
    fabric: Fabric
    runner: StallingRunner
    name: str = "linux-frr"
    device: str = DEVICE
    driver: object = field(init=False)

    def __post_init__(self) -> None:
        self.driver = fabric_driver(self.fabric.state, self.runner, COMMIT_TIMEOUT)

    def refs(self) -> list[DeviceRef]:
        return [self.fabric.ref(self.device)]

    def desired(self, ref: DeviceRef) -> dict[str, Owned]:
        fleet = self.fabric.fleet
        observed = self.driver.observe(ref)  # type: ignore[attr-defined]
        return expressible(fleet, ref.name, render_device(fleet, ref.name), observed)

    def write_count(self, ref: DeviceRef) -> int:
        """When the commit's saved files were last written (only a commit writes them)."""
        folder = Path(self.fabric.state.devices[ref.name].workdir)
        stamps = [
            (folder / f).stat().st_mtime_ns
            for f in ("before.conf", "revert.ip")
            if (folder / f).exists()
        ]
        return max(stamps, default=0)

    def time_out_next_commit(self, ref: DeviceRef) -> None:
        self.runner.armed = True

    def make_unreachable(self, ref: DeviceRef) -> None:
        namespace = self.fabric.state.devices[ref.name].namespace
        subprocess.run(["ip", "netns", "del", namespace], check=True)

    def clear_faults(self, ref: DeviceRef) -> None:
        self.runner.armed = False
        self.runner.resume()
        namespace = self.fabric.state.devices[ref.name].namespace
        if not os.path.exists(f"/run/netns/{namespace}"):
            zebra = self.fabric.state.pids[ref.name][0]
            subprocess.run(["ip", "netns", "attach", namespace, str(zebra)], check=True)


@contextmanager
def frr_harness(tmp: Path) -> Iterator[FrrHarness]:
    fabric = shared_fabric()
    drift(fabric, DEVICE)
    bgpd = fabric.state.pids[DEVICE][1]
    harness = FrrHarness(fabric, StallingRunner(fabric_runner(fabric.state), bgpd))
    try:
        yield harness
    finally:
        harness.clear_faults(harness.refs()[0])
