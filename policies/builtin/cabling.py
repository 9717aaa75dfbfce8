"""Cabling policy over observed state: the cables in inventory are the ones on the wire.

Switches report their LLDP neighbours as ``lldp/<port>/system`` (the neighbour's system
name, possibly an FQDN) and ``lldp/<port>/port`` (its port: an interface name, a host's
NIC name, or a MAC when the host names no interface). For every switch in the observed
states, each cabled port must hear the cable's far end, and a port with no cable must
hear nobody. Every look-up is an index hit (:meth:`CablingIndex.at`), never a scan of
pairs.

Matching: the system name matches a device on its first label (``leaf-r0.example.net``
is ``leaf-r0``), case-insensitively; a port id that is one of the neighbour's observed
port aliases (SONiC advertises ``etp1`` for ``Ethernet0``) stands for that port; the
port matches exactly, except that a host port
reported as a MAC cannot be told apart and matches on the system alone. Management
ports (``Management1``, ``eth0`` on a switch) are out of scope.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from intent.fleet import Fleet
from inventory.index import Endpoint, PortLink
from inventory.models import Role
from policies.engine import Finding, ObservedStates, observed_policy

_MANAGEMENT = re.compile(r"Management\d+(?:/\d+)*|eth\d+|mgmt\d*", re.IGNORECASE)
_MAC = re.compile(r"(?:[0-9a-f]{2}[:-]){5}[0-9a-f]{2}|(?:[0-9a-f]{4}\.){2}[0-9a-f]{4}")
_PREFIX = "lldp/"
_FIELDS = ("/system", "/port")


@dataclass(frozen=True)
class Heard:
    """The neighbour one local port reports."""

    system: str
    port: str

    @property
    def device(self) -> str:
        """The inventory name the system name stands for: its first DNS label."""
        return self.system.split(".", 1)[0].casefold()

    def __str__(self) -> str:
        return f"{self.system or '(no system name)'} {self.port}".strip()


def heard_on(state: Mapping[str, object]) -> dict[str, Heard] | None:
    """Local port -> the neighbour it hears; None when the device reports no LLDP at all."""
    fields: dict[str, dict[str, str]] = {}
    for path, value in state.items():
        if not path.startswith(_PREFIX):
            continue
        for suffix in _FIELDS:
            if path.endswith(suffix):
                port = path[len(_PREFIX) : -len(suffix)]
                fields.setdefault(port, {})[suffix[1:]] = "" if value is None else str(value)
    if not fields:
        return None
    return {port: Heard(got.get("system", ""), got.get("port", "")) for port, got in fields.items()}


def _matches(fleet: Fleet, heard: Heard, peer: Endpoint) -> bool:
    if heard.device != peer.device.casefold():
        return False
    if heard.port == peer.port:
        return True
    host = fleet.devices[peer.device].role is Role.gpu_node
    return host and _MAC.fullmatch(heard.port.lower()) is not None


def _their_cable(fleet: Fleet, heard: Heard) -> PortLink | None:
    """The inventory cable on the endpoint the neighbour claims to be, if there is one."""
    for name in (heard.system, heard.device):
        if name in fleet.devices:
            return fleet.cabling.at(name, heard.port)
    return None


def _wrong_end(fleet: Fleet, pl: PortLink, heard: Heard | None) -> Finding | None:
    expected = f"cabled to {pl.peer} in inventory"
    if heard is None:
        message = f"{pl.local} is {expected}, but LLDP sees no neighbour"
    elif _matches(fleet, heard, pl.peer):
        return None
    elif heard.device == pl.peer.device.casefold():
        message = f"{pl.local} is {expected}, but LLDP sees {pl.peer.device} on {heard.port}"
    else:
        message = f"{pl.local} is {expected}, but LLDP sees {heard}"
    locations = [fleet.where.links[pl.index]]
    other = _their_cable(fleet, heard) if heard is not None else None
    if other is not None and other.index != pl.index:
        locations.append(fleet.where.links[other.index])
    return Finding(str(pl.local), message, tuple(locations), (pl.local.device, pl.peer.device))


def _uncabled(fleet: Fleet, name: str, port: str, heard: Heard) -> Finding:
    locations = [fleet.where.devices[name]]
    other = _their_cable(fleet, heard)
    if other is not None:
        locations.append(fleet.where.links[other.index])
    return Finding(
        f"{name}:{port}",
        f"{name}:{port} has no cable in inventory, but LLDP sees {heard}",
        tuple(locations),
        (name,),
    )


def port_aliases(observed: ObservedStates) -> dict[str, dict[str, str]]:
    """Per device, alias -> port name, from ``interfaces/<port>/alias``: SONiC's LLDP
    agent advertises a port's alias (``etp1``) as its port id, not its name."""
    aliases: dict[str, dict[str, str]] = {}
    for name, state in observed.items():
        for path, value in state.items():
            if path.startswith("interfaces/") and path.endswith("/alias") and value:
                port = path[len("interfaces/") : -len("/alias")]
                aliases.setdefault(name.casefold(), {})[str(value)] = port
    return aliases


def _resolved(heard: Heard, aliases: Mapping[str, Mapping[str, str]]) -> Heard:
    port = aliases.get(heard.device, {}).get(heard.port)
    return heard if port is None else Heard(heard.system, port)


def _check_switch(
    fleet: Fleet,
    name: str,
    state: Mapping[str, object],
    aliases: Mapping[str, Mapping[str, str]],
) -> Iterator[Finding]:
    cabled = fleet.cabling.ports(name)
    heard = heard_on(state)
    if heard is not None:
        heard = {port: _resolved(h, aliases) for port, h in heard.items()}
    if heard is None:
        if cabled:
            yield Finding(
                name,
                f"{name} reports no LLDP neighbour on any of its {len(cabled)} cabled ports "
                "(LLDP off, or observed without LLDP)",
                (fleet.where.devices[name],),
                (name,),
            )
        return
    for pl in cabled:
        finding = _wrong_end(fleet, pl, heard.pop(pl.local.port, None))
        if finding is not None:
            yield finding
    for port, neighbour in sorted(heard.items()):
        if _MANAGEMENT.fullmatch(port) is None:
            yield _uncabled(fleet, name, port, neighbour)


@observed_policy(
    "cabling.lldp-mismatch",
    title="Every cable in inventory is the one LLDP sees on the wire",
    rationale="A cable plugged into the wrong port breaks rails, ECMP and the lossless path "
    "in ways no configuration shows; every per-port value is then set on the wrong link.",
    remediation="Re-cable to match inventory/links, or fix the inventory line if the wire is "
    "right.",
)
def lldp_mismatch(fleet: Fleet, observed: ObservedStates) -> Iterator[Finding]:
    aliases = port_aliases(observed)
    for name in sorted(observed):
        device = fleet.devices.get(name)
        if device is not None and device.role.is_switch:
            yield from _check_switch(fleet, name, observed[name], aliases)
