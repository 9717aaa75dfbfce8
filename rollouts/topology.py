"""Where each rollout target sits: its rack, power and cooling domain, training gang and
data-parallel replica (pure).

Wave planning, strata and price read these facts through :class:`FleetShape`, the
three inventory mappings they need. A loaded :class:`~intent.fleet.Fleet` is one; tests
build small ones from pydantic models directly.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Protocol

from inventory.models import Device, Gang, Link, LinkClass, Rack


class FleetShape(Protocol):
    """The inventory facts rollout planning reads (a Fleet satisfies it)."""

    @property
    def devices(self) -> Mapping[str, Device]: ...

    @property
    def racks(self) -> Mapping[str, Rack]: ...

    @property
    def gangs(self) -> Mapping[str, Gang]: ...

    @property
    def links(self) -> Sequence[Link]: ...


@dataclass(frozen=True)
class Inventory:
    """A plain FleetShape, for callers (and tests) that have no loaded fleet."""

    devices: Mapping[str, Device]
    racks: Mapping[str, Rack]
    gangs: Mapping[str, Gang]
    links: Sequence[Link] = ()


class Domain(StrEnum):
    """A failure domain a cap counts targets in; the value is the cap's field name."""

    rack = "per_rack"
    power_domain = "per_power_domain"
    cooling_domain = "per_cooling_domain"
    dp_replica = "per_dp_replica"


@dataclass(frozen=True)
class Seat:
    """One target's failure domains and training gang (``None``: it runs no gang).

    ``stalls``: the gangs draining this target stops, with their GPUs (a node's own
    gang; for a switch, every gang with a node cabled to it). ``hosts``: for a switch,
    the hosts cabled to it (two switches sharing a host are that host's ToR pair).
    ``role``: the device's role (its tier), counted by ``caps.per_role``."""

    domains: Mapping[Domain, str]
    gang: str | None
    gang_gpus: int
    stalls: Mapping[str, int] = field(default_factory=dict)
    hosts: frozenset[str] = frozenset()
    role: str = ""


ATTRIBUTES = (
    "name",
    "model",
    "vendor",
    "platform",
    "role",
    "rack",
    "row",
    "power_domain",
    "cooling_domain",
    "rail",
    "gang",
    "dp_replica",
)
"""Extra stratum attributes a spec may name, besides ``label.<key>``."""


def replica_name(gang: str, index: int) -> str:
    return f"{gang}/dp{index + 1}"


def seats(fleet: FleetShape, targets: list[str] | tuple[str, ...]) -> dict[str, Seat]:
    """The seat of every target (all targets must be devices of the fleet)."""
    gang_of: dict[str, Gang] = {}
    replica_of: dict[str, str] = {}
    for gang in fleet.gangs.values():
        for node in gang.nodes:
            gang_of[node] = gang
        for index, replica in enumerate(gang.dp_replicas):
            for node in replica:
                replica_of[node] = replica_name(gang.name, index)
    hosts_of: dict[str, set[str]] = {}
    for link in fleet.links:
        if link.link_class is LinkClass.host_leaf:
            hosts_of.setdefault(link.b, set()).add(link.a)
    found: dict[str, Seat] = {}
    for name in targets:
        device = fleet.devices[name]
        rack = fleet.racks[device.rack]
        domains = {
            Domain.rack: rack.name,
            Domain.power_domain: rack.power_domain,
            Domain.cooling_domain: rack.cooling_domain,
        }
        if name in replica_of:
            domains[Domain.dp_replica] = replica_of[name]
        runs = gang_of.get(name)
        hosts = frozenset(hosts_of.get(name, ()))
        behind = [gang_of[h] for h in sorted(hosts) if h in gang_of]
        if runs is not None:
            behind.append(runs)
        found[name] = Seat(
            domains,
            runs.name if runs is not None else None,
            gang_gpus(runs) if runs is not None else 0,
            {g.name: gang_gpus(g) for g in behind},
            hosts,
            device.role.value,
        )
    return found


def gang_gpus(gang: Gang) -> int:
    return len(gang.nodes) * gang.gpus_per_node


def stalled_gangs(fleet: FleetShape, targets: Sequence[str]) -> dict[str, int]:
    """The gangs draining ``targets`` stops (a node's gang, the gangs behind a switch),
    with their GPUs."""
    found: dict[str, int] = {}
    for seat in seats(fleet, [t for t in targets if t in fleet.devices]).values():
        found.update(seat.stalls)
    return found


def attribute(fleet: FleetShape, seat: Seat, name: str, key: str) -> str:
    """The value of one stratum attribute for one device ("" when it has none)."""
    device = fleet.devices[name]
    if key.startswith("label."):
        return device.labels.get(key[len("label.") :], "")
    rack = fleet.racks[device.rack]
    simple: dict[str, str | None] = {
        "name": device.name,
        "model": device.model,
        "vendor": device.vendor,
        "platform": device.platform.value,
        "role": device.role.value,
        "rack": rack.name,
        "row": rack.row,
        "power_domain": rack.power_domain,
        "cooling_domain": rack.cooling_domain,
        "rail": None if device.rail is None else str(device.rail),
    }
    if key in simple:
        return simple[key] or ""
    if key == "gang":
        return seat.gang or ""
    if key == "dp_replica":
        return seat.domains.get(Domain.dp_replica, "")
    raise KeyError(f"unknown stratum attribute {key!r}")
