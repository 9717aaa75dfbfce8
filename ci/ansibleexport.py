"""plumb's inventory as Ansible dynamic-inventory JSON (``plumb inventory export ansible``),
so ad-hoc playbooks run against the same devices, groups and addresses as plumb.

Pure: a loaded :class:`~intent.fleet.Fleet` in, the documents Ansible's script
inventory plugin reads out: ``--list`` (every group with its hosts and children, and
every host's variables under ``_meta.hostvars``, so Ansible never asks per host) and
``--host NAME`` (one host's variables). Documented in docs/inventory-export.md.

Groups: ``role_<role>``, ``platform_<platform>``, ``rack_<rack>``, ``rail_<n>`` (the
devices that serve rail n: leaves), ``pod_<pod>`` (three-tier fabrics) and
``label_<key>_<value>`` for every device label. A character Ansible does not allow in a
group name (anything but letters, digits and ``_``) becomes ``_``.
"""

from __future__ import annotations

import re
from typing import Any

from intent.fleet import Fleet
from inventory.models import Device, Platform

# How Ansible reaches each platform the way plumb does. EOS: the arista.eos collection
# over network_cli. SONiC: plumb works in the switch's Linux shell, so Ansible connects
# by plain ssh (the network OS plugins for SONiC drive Dell Enterprise SONiC's
# management-framework CLI, which community SONiC does not run). GPU nodes: ssh.
CONNECTION: dict[Platform, dict[str, str]] = {
    Platform.eos: {
        "ansible_connection": "ansible.netcommon.network_cli",
        "ansible_network_os": "arista.eos.eos",
    },
    Platform.sonic: {"ansible_connection": "ssh"},
    Platform.linux: {"ansible_connection": "ssh"},
    Platform.linux_frr: {"ansible_connection": "ssh"},
}

_NOT_IN_GROUP_NAME = re.compile(r"[^A-Za-z0-9_]")


def group_name(*parts: str) -> str:
    """An Ansible-valid group name from its parts: ``role_gpu_node``, ``rack_r01``."""
    return _NOT_IN_GROUP_NAME.sub("_", "_".join(parts))


def host_vars(device: Device) -> dict[str, Any]:
    """One host's variables: how to reach it and what plumb knows of it."""
    out: dict[str, Any] = {"ansible_host": str(device.mgmt), **CONNECTION[device.platform]}
    out |= {
        "plumb_role": device.role.value,
        "plumb_platform": device.platform.value,
        "plumb_vendor": device.vendor,
        "plumb_model": device.model,
        "plumb_rack": device.rack,
    }
    if device.rail is not None:
        out["plumb_rail"] = device.rail
    nic_rails = sorted({nic.rail for nic in device.nics if nic.rail is not None})
    if nic_rails:
        out["plumb_nic_rails"] = nic_rails
    if device.pod is not None:
        out["plumb_pod"] = device.pod
    if device.gpus:
        out["plumb_gpus"] = device.gpus
    if device.labels:
        out["plumb_labels"] = dict(sorted(device.labels.items()))
    return out


def device_groups(device: Device) -> list[str]:
    """The groups a device belongs to."""
    groups = [
        group_name("role", device.role.value),
        group_name("platform", device.platform.value),
        group_name("rack", device.rack),
    ]
    if device.rail is not None:
        groups.append(group_name("rail", str(device.rail)))
    if device.pod is not None:
        groups.append(group_name("pod", device.pod))
    groups += [group_name("label", key, value) for key, value in device.labels.items()]
    return groups


def ansible_list(fleet: Fleet) -> dict[str, Any]:
    """The ``--list`` document: groups sorted by name, hosts sorted within each."""
    members: dict[str, set[str]] = {}
    hostvars: dict[str, dict[str, Any]] = {}
    for name in sorted(fleet.devices):
        device = fleet.devices[name]
        hostvars[name] = host_vars(device)
        for group in device_groups(device):
            members.setdefault(group, set()).add(name)
    document: dict[str, Any] = {
        "_meta": {"hostvars": hostvars},
        "all": {"children": sorted(members)},
    }
    for group in sorted(members):
        document[group] = {"hosts": sorted(members[group])}
    return document


def ansible_host(fleet: Fleet, name: str) -> dict[str, Any]:
    """The ``--host NAME`` document: that host's variables (empty for an unknown host,
    as Ansible's script plugin expects)."""
    device = fleet.devices.get(name)
    return {} if device is None else host_vars(device)
