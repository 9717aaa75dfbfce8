"""What the driver conformance suite needs from a target: a driver, its devices, their
desired settings, and ways to count writes and to make a device time out.

Every driver (the lab fleet, EOS and SONiC over SSH to the switch simulator, hosts
through ansible-runner on network namespaces) provides one ``Harness``; the same
tests in ``test_conformance.py`` run against each.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from intent.fleet import Fleet
from reconciler.capabilities import inexpressible
from reconciler.drivers.base import DeviceRef, Driver
from reconciler.settings import Owned, Scalar


class Harness(Protocol):
    name: str
    driver: Driver

    def refs(self) -> list[DeviceRef]:
        """Devices to exercise (one or two are enough)."""

    def desired(self, ref: DeviceRef) -> dict[str, Owned]:
        """Desired settings for the device that differ from its starting state."""

    def write_count(self, ref: DeviceRef) -> int:
        """How many writes the target has taken (a dry run must not move it)."""

    def time_out_next_commit(self, ref: DeviceRef) -> None:
        """Make the next commit time out (the outcome must be unknown to the driver)."""

    def make_unreachable(self, ref: DeviceRef) -> None:
        """Make the device unreachable until cleared."""

    def clear_faults(self, ref: DeviceRef) -> None:
        """Remove every injected fault."""


def expressible(
    fleet: Fleet, device: str, desired: Mapping[str, Owned], observed: Mapping[str, Scalar]
) -> dict[str, Owned]:
    """``desired`` less the paths the device's platform cannot express, decided on its
    observed state exactly as the plan decides them (such paths are never sent)."""
    platform = fleet.devices[device].platform.value
    return {
        path: owned
        for path, owned in desired.items()
        if inexpressible(platform, path, observed) is None
    }


@dataclass
class LabHarness:
    """The lab fleet built from ORION: a leaf and a GPU node with real work to do."""

    name: str
    driver: Driver
    fleet_root: Path

    def refs(self) -> list[DeviceRef]:
        from reconciler.targets import Targets

        targets = Targets.for_fleet(self._fleet())
        return [targets.ref("leaf-r0"), targets.ref("gpu-n01")]

    def _fleet(self) -> Fleet:
        from intent.fleet import load_fleet

        return load_fleet(self.fleet_root)

    def desired(self, ref: DeviceRef) -> dict[str, Owned]:
        """The rendered intent less what the device's platform cannot express."""
        from reconciler.render import render_device

        fleet = self._fleet()
        return expressible(
            fleet, ref.name, render_device(fleet, ref.name), self.driver.observe(ref)
        )

    @property
    def store(self):  # type: ignore[no-untyped-def]
        return self.driver.store  # type: ignore[attr-defined]

    def write_count(self, ref: DeviceRef) -> int:
        return int(self.store.write_count())

    def time_out_next_commit(self, ref: DeviceRef) -> None:
        from lab.fleet import Fault, FaultKind

        self.store.add_fault(Fault(ref.name, FaultKind.timeout_after_write, count=1))

    def make_unreachable(self, ref: DeviceRef) -> None:
        from lab.fleet import Fault, FaultKind

        self.store.add_fault(Fault(ref.name, FaultKind.unreachable))

    def clear_faults(self, ref: DeviceRef) -> None:
        self.store.clear_faults(ref.name)


@contextmanager
def lab_harness(tmp: Path) -> Iterator[LabHarness]:
    from intent.fleet import load_fleet
    from lab.driver import LabDriver, create_lab
    from lab.fleet import lab_db_path
    from lab.store import LabStore
    from tests.fleetcopy import copy_orion

    copy = copy_orion(tmp)
    fleet = load_fleet(copy.path)
    store = LabStore(lab_db_path(fleet))
    create_lab(store, fleet, seed=3, drift=6)
    try:
        yield LabHarness("lab", LabDriver(store), copy.path)
    finally:
        store.close()
