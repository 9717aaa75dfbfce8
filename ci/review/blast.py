"""Blast radius and drain of a change (pure).

The blast radius counts what the change touches directly: every device whose
effective intent or rendered settings move, the ports whose own settings move, the
GPUs, racks, rails and gangs of those devices. A change to the lossless class (the
RoCE priority, the PFC priorities or the buffer settings: Xoff, headroom, switch
buffer) re-provisions queues that RDMA traffic is using, so the GPU nodes on the
lossless path through a touched device must be drained first; so must GPU nodes
whose firmware changes (they reboot).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace

from ci.review.model import BlastRadius, CatalogueChange, Drain, SettingChange
from intent.fleet import Fleet
from inventory.models import Role
from inventory.problems import Location
from policies.views import is_lossless
from reconciler.settings import Change

LOSSLESS_SETTINGS = (
    "qos.roce_priority",
    "qos.pfc_priorities",
    "qos.pfc_xoff_kb",
    "qos.pfc_headroom_kb",
    "qos.switch_buffer_kb",
)
"""Intent settings whose change forces a drain of the GPU nodes behind a device."""

Rendered = Mapping[str, Sequence[Change]]


def port_of(path: str) -> str | None:
    """The port a setting path belongs to (``interfaces/<port>/...``, ``nics/<nic>/...``);
    ports may themselves contain ``/``."""
    for prefix in ("interfaces/", "nics/"):
        if path.startswith(prefix):
            return path[len(prefix) :].rsplit("/", 1)[0]
    return None


def applies_to(
    head: Fleet, settings: Sequence[SettingChange], rendered: Rendered
) -> tuple[SettingChange, ...]:
    """Each moved value with the devices it takes effect on (in inventory order).

    A value that renders somewhere takes effect on the devices whose rendered settings
    it owns, neighbours included (a spine's ASN moves its leaves' remote-as): a host
    MTU set fleet-wide takes effect on the GPU nodes, not on the switches it is also
    set on. When one owner holds several moved values (different base values on
    different devices), each keeps only its own devices. A value that renders nowhere
    (``qos.roce_priority``: it only shapes what the policies check) takes effect on
    every device whose effective value moves."""
    owned: dict[Location, set[str]] = {}
    for name, changes in rendered.items():
        for c in changes:
            if c.owner is not None:
                owned.setdefault(c.owner, set()).add(name)
    sharing = Counter(c.location for c in settings)
    found = []
    for change in settings:
        renders_on = owned.get(change.location) if change.location is not None else None
        if renders_on is None:
            chosen = set(change.devices)
        elif sharing[change.location] > 1:
            chosen = renders_on & set(change.devices)
        else:
            chosen = renders_on
        found.append(replace(change, applies_to=tuple(n for n in head.devices if n in chosen)))
    return tuple(found)


def touched_devices(
    head: Fleet,
    settings: Sequence[SettingChange],
    rendered: Rendered,
    devices: Iterable[CatalogueChange] = (),
) -> tuple[str, ...]:
    """Devices (in inventory order) whose rendered settings move, that are new, or that a
    moved value takes effect on (:func:`applies_to`)."""
    names = set(rendered)
    for change in applies_to(head, settings, rendered):
        names.update(change.applies_to)
    names.update(c.name for c in devices if c.change != "removed")
    return tuple(n for n in head.devices if n in names)


def _gang_of(fleet: Fleet) -> dict[str, str]:
    return {node: gang.name for gang in fleet.gangs.values() for node in gang.nodes}


def _host_rails(fleet: Fleet, name: str, changes: Sequence[Change]) -> set[int]:
    """Rails of the NICs a host change touches; every rail when it is device-wide."""
    rail_of = {nic.name: nic.rail for nic in fleet.devices[name].nics}
    ports = [port_of(c.path) for c in changes]
    device_wide = not changes or any(p is None for p in ports)
    chosen = rail_of.values() if device_wide else (rail_of.get(p) for p in ports if p)
    return {r for r in chosen if r is not None}


def blast_radius(head: Fleet, devices: Sequence[str], rendered: Rendered) -> BlastRadius:
    gang_of = _gang_of(head)
    switches: list[str] = []
    hosts: list[str] = []
    ports: set[str] = set()
    racks: set[str] = set()
    rails: set[int] = set()
    gangs: set[str] = set()
    gpus = 0
    for name in devices:
        device = head.devices[name]
        changes = rendered.get(name, ())
        racks.add(device.rack)
        ports.update(f"{name}:{p}" for c in changes if (p := port_of(c.path)) is not None)
        if device.role is Role.gpu_node:
            hosts.append(name)
            gpus += device.gpus
            rails |= _host_rails(head, name, changes)
            if name in gang_of:
                gangs.add(gang_of[name])
        else:
            switches.append(name)
            if device.rail is not None:
                rails.add(device.rail)
    return BlastRadius(
        devices=tuple(devices),
        switches=tuple(switches),
        hosts=tuple(hosts),
        ports=tuple(sorted(ports)),
        gpus=gpus,
        racks=tuple(sorted(racks)),
        rails=tuple(sorted(rails)),
        gangs=tuple(sorted(gangs)),
    )


def _lossless_peers(fleet: Fleet, name: str) -> Iterable[str]:
    return (pl.peer.device for pl in fleet.cabling.ports(name) if is_lossless(fleet, name, pl))


def hosts_behind(fleet: Fleet, names: Iterable[str]) -> set[str]:
    """GPU nodes on the lossless path through any of ``names``: a node itself, a leaf's
    nodes, a spine's leaves' nodes. Each switch's ports are read at most twice."""
    devices = fleet.devices
    hosts: set[str] = set()
    switches: set[str] = set()
    for name in names:
        role = devices[name].role
        if role is Role.gpu_node:
            hosts.add(name)
            continue
        switches.add(name)
        if role is Role.spine:
            switches.update(p for p in _lossless_peers(fleet, name) if devices[p].role is Role.leaf)
    for switch in switches:
        hosts.update(p for p in _lossless_peers(fleet, switch) if devices[p].role is Role.gpu_node)
    return hosts


def drain(head: Fleet, settings: Sequence[SettingChange], rendered: Rendered) -> Drain:
    """Why the change needs a drain (empty: it does not), and what it drains."""
    lossless = [c for c in settings if c.setting in LOSSLESS_SETTINGS]
    reasons = [
        f"{setting} changes on {len(names)} device(s): the lossless class is re-provisioned"
        for setting, names in _devices_by_setting(lossless).items()
    ]
    hosts = hosts_behind(head, {d for c in lossless for d in c.devices})
    flashed = [
        n
        for n, changes in rendered.items()
        if head.devices[n].role is Role.gpu_node
        and any(c.path.startswith("firmware/") for c in changes)
    ]
    if flashed:
        reasons.append(f"firmware changes on {len(flashed)} GPU node(s): they reboot")
        hosts.update(flashed)
    ordered = tuple(n for n in head.devices if n in hosts)
    gang_of = _gang_of(head)
    return Drain(
        reasons=tuple(reasons),
        lossless_settings=tuple(sorted({c.setting for c in lossless})),
        hosts=ordered,
        gangs=tuple(sorted({gang_of[n] for n in ordered if n in gang_of})),
        gpus=sum(head.devices[n].gpus for n in ordered),
    )


def _devices_by_setting(changes: Sequence[SettingChange]) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for change in changes:
        found.setdefault(change.setting, set()).update(change.devices)
    return dict(sorted(found.items()))
