"""The real-network lab's state file, ``<state_dir>/realfabric.json``: every namespace
(recorded before it is made, so a ``plumb`` killed mid-way leaves nothing
``plumb lab down`` cannot find), every veth, the daemons' pids, and per device its
namespace, FRR directory, vty socket and port -> interface name map.

The linux-frr driver of a real lab is built from it (:func:`fabric_driver`).
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path

from reconciler.drivers.base import DeviceRef
from reconciler.drivers.linux_exec import NetnsRunner
from reconciler.drivers.linux_frr import FrrAccess, LinuxFrrDriver

STATE_FILE = "realfabric.json"
COMMAND_TIMEOUT = 30.0


@dataclass
class DeviceEntry:
    namespace: str
    workdir: str
    vty_socket: str | None
    ports: dict[str, str]  # inventory port -> Linux interface name


@dataclass
class FabricState:
    fleet: str
    prefix: str
    namespaces: list[str]
    devices: dict[str, DeviceEntry]
    veths: list[list[str]] = field(default_factory=list)  # [device, ifname, device, ifname]
    pids: dict[str, list[int]] = field(default_factory=dict)
    complete: bool = False

    def namespace(self, device: str) -> str:
        entry = self.devices.get(device)
        if entry is None:
            raise KeyError(f"{device!r} is not a device of the real-network lab")
        return entry.namespace


def state_path(state_dir: Path) -> Path:
    return state_dir / STATE_FILE


def save_state(state_dir: Path, state: FabricState) -> None:
    """Write the state file atomically (a crash leaves the old or the new one)."""
    state_dir.mkdir(parents=True, exist_ok=True)
    path = state_path(state_dir)
    temporary = path.with_suffix(".tmp")
    temporary.write_text(json.dumps(asdict(state), indent=1, sort_keys=True))
    os.replace(temporary, path)


def load_state(state_dir: Path) -> FabricState | None:
    """The recorded fabric, or None when there is none."""
    path = state_path(state_dir)
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text())
        devices = {name: DeviceEntry(**entry) for name, entry in data.pop("devices").items()}
        return FabricState(devices=devices, **data)
    except (OSError, ValueError, TypeError, KeyError) as exc:
        raise ValueError(f"{path}: not a real-network lab state file ({exc})") from None


def fabric_runner(state: FabricState) -> NetnsRunner:
    """Commands in the namespaces of ``state``'s devices."""
    return NetnsRunner(
        {name: entry.namespace for name, entry in state.devices.items()}, COMMAND_TIMEOUT
    )


def fabric_driver(
    state: FabricState, runner: NetnsRunner | None = None, commit_timeout: float = 60.0
) -> LinuxFrrDriver:
    """The linux-frr driver over the namespaces of ``state``: switches get MTU, address
    and BGP changes, GPU nodes MTU and address changes, each in its namespace."""

    def access(ref: DeviceRef) -> FrrAccess:
        entry = state.devices[ref.name]
        # `write memory` saves each daemon's file in the device's own directory.
        return FrrAccess(entry.workdir, entry.vty_socket, entry.ports, config_dir=entry.workdir)

    return LinuxFrrDriver(runner or fabric_runner(state), access, commit_timeout)
