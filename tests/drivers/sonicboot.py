"""Simulated SONiC switches booted from a config_db.json document (a real switch's, or a
test's), reached by the real driver: the harness the corpus tests use."""

from __future__ import annotations

import itertools
from typing import Any

from reconciler.drivers.base import DeviceRef
from tests.drivers.conftest import Switches
from tests.switchsim import DeviceSpec
from tests.switchsim.sonic_device import write_boot_record
from tests.switchsim.sonic_profiles import profile_named

_names = itertools.count(1)


def boot_sonic(switches: Switches, doc: Any, profile: str) -> DeviceRef:
    """A fresh SONiC switch of ``profile`` that booted ``doc`` (``config load``), its host
    key trusted."""
    name = f"sonic-booted-{next(_names)}"
    write_boot_record(switches.sim.state_dir / f"{name}.json", name, doc, profile_named(profile))
    spec = DeviceSpec(
        name=name,
        dialect="sonic",
        username="plumb-ops",
        password=switches.password,
        profile=profile,
        reboot_seconds=0.3,
    )
    port = switches.sim.add_device(spec)
    with switches.known_hosts.open("a") as file:
        file.write(switches.sim.host_key_line(name) + "\n")
    return DeviceRef(name, "sonic", "leaf", switches.sim.host, port)
