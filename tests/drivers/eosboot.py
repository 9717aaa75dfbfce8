"""Simulated EOS switches booted from a configuration text (a real switch's, or a test's),
reached by the real driver: the harness the BGP, QoS and corpus tests share."""

from __future__ import annotations

import itertools

from reconciler.drivers.base import DeviceRef
from tests.drivers.conftest import Switches
from tests.switchsim import DeviceSpec
from tests.switchsim.eos_device import write_boot_record
from tests.switchsim.eos_profiles import eos_profile

_names = itertools.count(1)


def boot_eos(switches: Switches, config: str, profile: str = "eos-4.32") -> DeviceRef:
    """A fresh EOS switch of ``profile`` running ``config``, its host key trusted."""
    name = f"eos-booted-{next(_names)}"
    chosen = eos_profile(profile)
    path = switches.sim.state_dir / f"{name}.json"
    write_boot_record(path, name, config, chosen.model, chosen.version, chosen.boot_image)
    spec = DeviceSpec(
        name=name,
        dialect="eos",
        username="plumb-ops",
        password=switches.password,
        profile=profile,
        reboot_seconds=0.3,
    )
    port = switches.sim.add_device(spec)
    with switches.known_hosts.open("a") as file:
        file.write(switches.sim.host_key_line(name) + "\n")
    return DeviceRef(name, "eos", "leaf", switches.sim.host, port)
