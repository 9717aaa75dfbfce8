"""The ansible inventory for one run, generated from plumb's own inventory (DeviceRef)
and the driver rule's options; nothing is read from an ansible inventory file.

Two connection modes, chosen by the rule's ``mode`` option; the playbooks are the same:

``ssh`` (real GPU nodes)
    ``ansible_host``/``ansible_port`` from the device's management address and the
    rule's port; tasks run ``ip`` and the vendor tool on the host (``become`` to root
    if the rule says so).
``netns`` (test fleets on one machine)
    ``connection: local``; ``ip`` runs as ``ip -n <namespace>``, and the Python
    interpreter is a wrapper script doing ``exec ip netns exec <ns> python3 "$@"``, so
    any module task also runs inside the host's namespace. The vendor tool runs on the
    controller with a per-host state directory.

Rule options (all optional): ``mode`` (``ssh``), ``netns`` (``{name}``), ``user``,
``private_key_file``, ``become`` (false), ``python`` (``/usr/bin/python3``),
``nictool`` (``plumb-nictool`` over ssh; the shipped shim in netns mode),
``nictool_dir`` (``/var/lib/plumb-nictool`` over ssh; ``<private dir>/nictool/{name}``
in netns mode), ``forks`` (10), ``task_timeout`` (60 s), ``run_timeout`` (900 s), and
``mgmt_map`` (per-device address overrides, read by :mod:`reconciler.targets`).
``{name}`` in a template is the device name. No option may hold a secret: ssh keys
are referenced by path and passwords are not supported.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reconciler.drivers.base import DeviceRef

PLAYBOOKS = Path(__file__).resolve().parent / "playbooks"
SHIM = PLAYBOOKS / "files" / "plumb-nictool"
MODES = ("ssh", "netns")
_OPTIONS = {
    "mode": str,
    "netns": str,
    "user": str,
    "private_key_file": str,
    "become": bool,
    "python": str,
    "nictool": str,
    "nictool_dir": str,
    "forks": int,
    "task_timeout": int,
    "run_timeout": int,
    "mgmt_map": str,
}


@dataclass(frozen=True)
class HostOptions:
    mode: str = "ssh"
    netns: str = "{name}"
    user: str | None = None
    private_key_file: str | None = None
    become: bool = False
    python: str = "/usr/bin/python3"
    nictool: str | None = None
    nictool_dir: str | None = None
    forks: int = 10
    task_timeout: int = 60
    run_timeout: int = 900
    mgmt_map: str | None = None  # read by reconciler.targets (per-device host/port)

    @classmethod
    def parse(cls, options: Mapping[str, str | int | bool]) -> HostOptions:
        """Options of a ``drivers`` rule; raises ValueError naming the bad option."""
        for key, value in options.items():
            kind = _OPTIONS.get(key)
            if kind is None:
                raise ValueError(f"unknown option {key!r} (known: {', '.join(sorted(_OPTIONS))})")
            if type(value) is not kind:
                raise ValueError(f"option {key}: expected {kind.__name__}, got {value!r}")
        made = cls(**options)  # type: ignore[arg-type]
        if made.mode not in MODES:
            raise ValueError(f"option mode: {made.mode!r} is not one of {', '.join(MODES)}")
        if made.forks < 1 or made.task_timeout < 1 or made.run_timeout < made.task_timeout:
            raise ValueError("forks and task_timeout must be >= 1, run_timeout >= task_timeout")
        return made

    def namespace(self, device: DeviceRef) -> str:
        return self.netns.format(name=device.name)

    def vendor_dir(self, device: DeviceRef, private_dir: Path) -> str:
        if self.nictool_dir is not None:
            return self.nictool_dir.format(name=device.name)
        if self.mode == "netns":
            return str(private_dir / "nictool" / device.name)
        return "/var/lib/plumb-nictool"


def interpreter_wrapper(bin_dir: Path, namespace: str, python: str) -> Path:
    """The script ansible uses as the host's Python: it enters the namespace first.

    ansible splits ``ansible_python_interpreter`` on spaces, so the path must have none.
    """
    path = bin_dir / f"python-in-{namespace}"
    if any(ch.isspace() for ch in str(path)):
        raise ValueError(f"interpreter path {path} contains whitespace; ansible cannot run it")
    body = (
        "#!/bin/sh\n"
        f"# plumb: run ansible modules inside network namespace {namespace}\n"
        f"ns={shlex.quote(namespace)}\n"
        f'exec ip netns exec "$ns" {shlex.quote(python)} "$@"\n'
    )
    if not path.exists() or path.read_text() != body:
        bin_dir.mkdir(parents=True, exist_ok=True)
        temporary = path.with_suffix(".tmp")
        temporary.write_text(body)
        temporary.chmod(0o755)
        os.replace(temporary, path)
    return path


def host_vars(device: DeviceRef, options: HostOptions, private_dir: Path) -> dict[str, Any]:
    """Connection and tool variables of one host (no per-run data, no secret)."""
    vendor_dir = options.vendor_dir(device, private_dir)
    if options.mode == "netns":
        namespace = options.namespace(device)
        tool = options.nictool or f"{shlex.quote(options.python)} {shlex.quote(str(SHIM))}"
        return {
            "ansible_connection": "local",
            "ansible_python_interpreter": str(
                interpreter_wrapper(private_dir / "bin", namespace, options.python)
            ),
            "plumb_ip": f"ip -n {shlex.quote(namespace)}",
            "plumb_exec": f"nsenter --net=/run/netns/{shlex.quote(namespace)} --",
            "plumb_nictool": tool,
            "plumb_nictool_dir": vendor_dir,
            "plumb_task_timeout": options.task_timeout,
        }
    out: dict[str, Any] = {
        "ansible_connection": "ssh",
        "ansible_host": device.host,
        "ansible_port": device.port,
        "ansible_python_interpreter": options.python,
        "ansible_become": options.become,
        "plumb_ip": "ip",
        "plumb_exec": "",
        "plumb_nictool": options.nictool or "plumb-nictool",
        "plumb_nictool_dir": vendor_dir,
        "plumb_task_timeout": options.task_timeout,
    }
    if options.user is not None:
        out["ansible_user"] = options.user
    if options.private_key_file is not None:
        out["ansible_ssh_private_key_file"] = options.private_key_file
    return out


def inventory(
    devices: Mapping[str, DeviceRef],
    options: HostOptions,
    private_dir: Path,
    run_vars: Mapping[str, Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    """A YAML/JSON inventory: every device under ``all``, with per-run variables merged."""
    hosts: dict[str, Any] = {}
    for name, device in devices.items():
        hosts[name] = host_vars(device, options, private_dir) | dict((run_vars or {}).get(name, {}))
    return {"all": {"hosts": hosts}}
