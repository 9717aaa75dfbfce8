"""The ansible host driver's conformance harness: two ORION GPU nodes, each a real
network namespace with its inventory NICs (eth0..eth7 and fe0) as veths, reached
through ansible-runner in ``netns`` mode, with the vendor-tool shim's state seeded to
differ from ``render_device(fleet, name)`` (older firmware, RDMA MTU 1024, no PFC,
DSCP mapped to 0). The kernel side starts at MTU 1500 with no addresses.

Faults are real: "unreachable" deletes the host's namespace (``clear_faults``
recreates it), and "time out next commit" arms the shim's ``timeout_after_write``
fault, so the vendor write lands and then hangs past the task timeout.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from intent.fleet import Fleet, load_fleet
from intent.models import DriverRule
from reconciler.drivers import factories
from reconciler.drivers.ansible_host import AnsibleHostDriver
from reconciler.drivers.ansible_inventory import SHIM
from reconciler.drivers.base import DeviceRef
from reconciler.render import render_device
from reconciler.settings import Owned
from reconciler.targets import TargetContext, Targets
from tests.fleetcopy import copy_orion
from tests.netns import NetnsLab, NetnsUnavailable

NODES = ("gpu-n01", "gpu-n02")
TASK_TIMEOUT = 3  # seconds; every normal task takes well under 1 s, even under load
HANG = TASK_TIMEOUT + 3


def shim(state_dir: Path, *args: str) -> dict[str, object]:
    """Run the shipped vendor-tool shim directly (as the harness, not as ansible)."""
    done = subprocess.run(
        ["/usr/bin/python3", str(SHIM), "--state-dir", str(state_dir), *args],
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    )
    parsed: dict[str, object] = json.loads(done.stdout)
    return parsed


def stale_vendor_state(desired: dict[str, Owned]) -> dict[str, object]:
    """Vendor settings that differ from ``desired`` wherever the shim allows."""
    seeded: dict[str, object] = {}
    for path, owned in desired.items():
        if path.startswith("firmware/"):
            seeded[path] = f"{owned.value}-old"
        elif path.endswith("/rdma_mtu"):
            seeded[path] = 1024
        elif path.endswith("/pfc_priorities"):
            seeded[path] = ""
        elif path.startswith("qos/dscp/"):
            seeded[path] = 0
    return seeded


@dataclass
class AnsibleHarness:
    name: str
    driver: AnsibleHostDriver
    lab: NetnsLab
    fleet: Fleet
    targets: Targets

    def refs(self) -> list[DeviceRef]:
        return [self.targets.ref(name) for name in NODES]

    def desired(self, ref: DeviceRef) -> dict[str, Owned]:
        return render_device(self.fleet, ref.name)

    def vendor_dir(self, ref: DeviceRef) -> Path:
        return Path(self.driver.options.vendor_dir(ref, self.driver.private_dir))

    def write_count(self, ref: DeviceRef) -> int:
        """Writing ``set`` calls the vendor tool took (check mode never writes)."""
        return int(str(shim(self.vendor_dir(ref), "stats")["writes"]))

    def time_out_next_commit(self, ref: DeviceRef) -> None:
        faults = self.vendor_dir(ref) / "faults"
        faults.mkdir(parents=True, exist_ok=True)
        (faults / "timeout_after_write").write_text(str(HANG))

    def make_unreachable(self, ref: DeviceRef) -> None:
        self.lab.remove_host(ref.name)

    def clear_faults(self, ref: DeviceRef) -> None:
        (self.vendor_dir(ref) / "faults" / "timeout_after_write").unlink(missing_ok=True)
        self.lab.ensure_host(ref.name)


@contextmanager
def ansible_harness(tmp: Path) -> Iterator[AnsibleHarness]:
    copy = copy_orion(tmp)
    fleet = load_fleet(copy.path)
    try:
        lab = NetnsLab()
    except NetnsUnavailable as exc:
        pytest.skip(f"ansible harness needs network namespaces: {exc}")
    driver: AnsibleHostDriver | None = None
    try:
        for name in NODES:
            lab.add_host(name, [nic.name for nic in fleet.devices[name].nics])
        targets = Targets.for_fleet(fleet)
        rule = DriverRule(
            driver="ansible",
            options={
                "mode": "netns",
                "netns": f"{lab.prefix}{{name}}",
                "task_timeout": TASK_TIMEOUT,
            },
        )
        context = TargetContext(fleet.root, targets.context.state_dir, fleet)
        made = factories.ansible(context, rule)
        assert isinstance(made, AnsibleHostDriver)
        driver = made
        harness = AnsibleHarness("ansible", driver, lab, fleet, targets)
        for ref in harness.refs():
            seeded = stale_vendor_state(harness.desired(ref))
            shim(harness.vendor_dir(ref), "seed", json.dumps(seeded))
        yield harness
    finally:
        if driver is not None:
            driver.close()
        lab.close()
