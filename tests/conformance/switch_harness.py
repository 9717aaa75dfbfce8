"""Conformance harnesses for the SSH switch drivers: one ORION leaf on the switch
simulator, reached through the real driver factory (``plumb.yaml`` ``drivers:`` rule,
``mgmt_map`` to the simulator's port, known_hosts from the simulator's host key,
credentials in the environment).

leaf-r0 runs EOS, leaf-r1 SONiC. Each starts at its rendered intent except for drift in MTU
(every port), QoS (ECN Kmin, PFC headroom, a DSCP mapping) and BGP (maximum-paths, a
neighbor's AS and another's inbound filter); its NOS version already matches, so no
test waits for a reload. What the platform cannot express (as observed) is left out
of the desired state, as the plan leaves it out.
"""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from intent.fleet import Fleet
from reconciler.drivers.base import DeviceRef, Driver
from reconciler.render import render_device
from reconciler.settings import Owned, Scalar, as_desired_state
from reconciler.targets import Targets
from tests.conformance.harness import expressible
from tests.drivers.simflat import state_from_flat
from tests.fleetcopy import copy_orion
from tests.switchsim import DeviceSpec, Fault, SwitchSim

USER_ENV, PASSWORD_ENV = "PLUMB_SWITCH_USERNAME", "PLUMB_SWITCH_PASSWORD"
USERNAME = "plumb-ops"
COMMIT_TIMEOUT = 2  # seconds; a commit the simulator holds longer times out
HANG = 4.0
DRIFTED_MTU = 9100  # where a drifted switch starts


def drifted(desired: dict[str, Scalar]) -> dict[str, Scalar]:
    """The desired state with drift in MTU, QoS and BGP (NOS version untouched)."""
    state = dict(desired)
    for path in state:
        if path.startswith("interfaces/") and path.endswith("/mtu"):
            state[path] = DRIFTED_MTU
    drift: dict[str, Scalar] = {
        "qos/ecn/3/kmin_kb": 150,
        "qos/pfc_headroom_kb": 96,
        "qos/dscp/48": None,
        "bgp/maximum_paths": 16,
    }
    peers = sorted({p.split("/")[2] for p in state if p.startswith("bgp/neighbors/")})
    if len(peers) > 1:
        drift[f"bgp/neighbors/{peers[0]}/inbound_filter"] = ""
        drift[f"bgp/neighbors/{peers[1]}/remote_as"] = 64699
    state.update({path: value for path, value in drift.items() if path in state})
    return state


@contextmanager
def environment(values: dict[str, str]) -> Iterator[None]:
    """Set environment variables for the block, then restore them."""
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def driver_rule(
    driver: str, platform: str, tmp: Path, extra: str = "", commit_timeout: int = COMMIT_TIMEOUT
) -> str:
    """A ``drivers:`` rule for plumb.yaml pointing at the simulator's files in ``tmp``."""
    return (
        f"  - driver: {driver}\n"
        f"    platforms: [{platform}]\n"
        "    options:\n"
        f"      known_hosts: {tmp / 'known_hosts'}\n"
        f"      mgmt_map: {tmp / 'mgmt.json'}\n"
        f"      commit_timeout: {commit_timeout}\n"
        '      reload_poll: "0.2"\n'
        "      reload_timeout: 20\n" + extra
    )


def write_access(sim: SwitchSim, names: list[str], tmp: Path) -> None:
    """known_hosts and mgmt_map files for the simulator's devices."""
    (tmp / "known_hosts").write_text("".join(sim.host_key_line(n) + "\n" for n in names))
    mapping = {n: {"host": sim.host, "port": sim.port(n)} for n in names}
    (tmp / "mgmt.json").write_text(json.dumps(mapping))


def simulated_leaf(fleet: Fleet, name: str, password: str, drift: bool = True) -> DeviceSpec:
    """A simulated switch for ORION device ``name``, drifted from its intent or not."""
    device = fleet.devices[name]
    dialect = device.platform.value
    desired = as_desired_state(render_device(fleet, name))
    start = drifted(desired) if drift else desired
    initial = state_from_flat(start, hostname=name, dialect=dialect, model=device.model)
    return DeviceSpec(
        name=name,
        dialect=dialect,
        username=USERNAME,
        password=password,
        initial=initial,
        reboot_seconds=0.3,
    )


@dataclass
class SwitchHarness:
    name: str
    driver: Driver
    sim: SwitchSim
    fleet: Fleet
    targets: Targets
    device: str
    password: str

    def refs(self) -> list[DeviceRef]:
        return [self.targets.ref(self.device)]

    def desired(self, ref: DeviceRef) -> dict[str, Owned]:
        """The rendered intent less what the device's platform cannot express."""
        desired = render_device(self.fleet, ref.name)
        return expressible(self.fleet, ref.name, desired, self.driver.observe(ref))

    def write_count(self, ref: DeviceRef) -> int:
        return self.sim.write_count(ref.name)

    def time_out_next_commit(self, ref: DeviceRef) -> None:
        self.sim.set_fault(ref.name, Fault(hang_commit=HANG))

    def make_unreachable(self, ref: DeviceRef) -> None:
        self.sim.set_fault(ref.name, Fault(unreachable=True))

    def clear_faults(self, ref: DeviceRef) -> None:
        self.sim.clear_faults(ref.name)


@contextmanager
def switch_harness(tmp: Path, driver: str, device: str, extra: str = "") -> Iterator[SwitchHarness]:
    """One simulated ORION leaf behind the named driver."""
    copy = copy_orion(tmp)
    password = "sw-" + secrets.token_hex(12)
    spec = simulated_leaf(copy.load(), device, password)
    sim = SwitchSim(tmp / "sim")
    sim.add_device(spec)
    sim.start()
    try:
        write_access(sim, [device], tmp)
        copy.set_drivers("drivers:\n" + driver_rule(driver, spec.dialect, tmp, extra))
        with environment({USER_ENV: USERNAME, PASSWORD_ENV: password}):
            fleet = copy.load()
            targets = Targets.for_fleet(fleet)
            try:
                made = targets.driver(device)
                yield SwitchHarness(driver, made, sim, fleet, targets, device, password)
            finally:
                targets.close()
    finally:
        sim.stop()


@contextmanager
def eos_harness(tmp: Path) -> Iterator[SwitchHarness]:
    with switch_harness(tmp, "eos", "leaf-r0") as made:
        yield made


@contextmanager
def sonic_harness(tmp: Path) -> Iterator[SwitchHarness]:
    with switch_harness(tmp, "sonic", "leaf-r1") as made:
        yield made
