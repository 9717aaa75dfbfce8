"""Load a fleet repo (a git working tree) into one typed, located :class:`Fleet`.

Reads ``plumb.yaml``, every ``inventory/**/*.yaml`` and ``intent/**/*.yaml``, and
``policies/waivers.yaml``; validates each by schema; checks references (links to
devices, gangs to nodes, bundles by name); resolves settings per device with one
owner each; derives the addressing facts. All problems found are reported
together as one :class:`~inventory.problems.InputError`.
"""

from __future__ import annotations

import gc
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel

from intent.facts import AddressPlan, plan_addresses
from intent.models import (
    Addressing,
    BlockedCombination,
    Bundle,
    IntentFile,
    PlumbConfig,
    Waiver,
    WaiversFile,
)
from intent.resolve import DeviceIntent, SettingsResolver, Sourced
from inventory.gcpause import gc_paused
from inventory.index import CablingIndex
from inventory.loadfile import load_document
from inventory.locations import LinkLocations, RecordLocations
from inventory.models import Device, Gang, InventoryFile, Link, Rack, Role
from inventory.problems import InputError, Location, Problem
from inventory.source import Document
from inventory.validation import validate_document

CONFIG_FILE = "plumb.yaml"
WAIVERS_FILE = "policies/waivers.yaml"

M = TypeVar("M", bound=BaseModel)


@dataclass(frozen=True)
class Located:
    """Where each inventory record and catalogue entry was declared."""

    devices: RecordLocations = field(default_factory=RecordLocations)
    racks: RecordLocations = field(default_factory=RecordLocations)
    gangs: RecordLocations = field(default_factory=RecordLocations)
    links: LinkLocations = field(default_factory=LinkLocations)
    bundles: dict[str, Location] = field(default_factory=dict)
    blocked: list[Location] = field(default_factory=list)
    waivers: list[Location] = field(default_factory=list)
    docs: dict[str, Document] = field(default_factory=dict)


@dataclass(frozen=True)
class Fleet:
    """Everything policies, render and rollouts need, with a location for every value."""

    root: Path
    config: PlumbConfig
    racks: Mapping[str, Rack]
    devices: Mapping[str, Device]
    links: tuple[Link, ...]
    gangs: Mapping[str, Gang]
    cabling: CablingIndex
    intent: Mapping[str, DeviceIntent]
    bundles: Mapping[str, Bundle]
    blocked: tuple[BlockedCombination, ...]
    addresses: AddressPlan
    waivers: tuple[Waiver, ...]
    where: Located

    def of_role(self, role: Role) -> list[Device]:
        return [d for d in self.devices.values() if d.role is role]

    def setting(self, device: str, *path: str) -> Sourced[Any] | None:
        return self.intent[device].get(*path)


def _yaml_files(root: Path, folder: str) -> list[Path]:
    base = root / folder
    if not base.is_dir():
        return []
    # rglob does not descend into symlinked directories; list one that leaves the repo
    # so that loading it reports "points outside the fleet repo" instead of skipping it.
    found = [
        p for p in base.rglob("*") if p.suffix in (".yaml", ".yml") or _dir_link_leaving(root, p)
    ]
    return sorted(p.relative_to(root) for p in found)


def _dir_link_leaving(root: Path, path: Path) -> bool:
    if not (path.is_symlink() and path.is_dir()):
        return False
    target = path.resolve()
    return target != root and root not in target.parents


class _Loader:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.problems: list[Problem] = []
        self.where = Located()

    def read(self, relative: Path, model: type[M]) -> tuple[Document, M] | None:
        try:
            doc = load_document(self.root, relative)
            # kept without the parsed data of a bulk file: once validated, it is read
            # again only to place a finding
            kept = self.where.docs[doc.path] = doc.without_data()
            return kept, validate_document(doc, model)
        except InputError as exc:
            self.problems.extend(exc.problems)
            return None

    def record(
        self, kind: str, name: str, at: tuple[Document, str, int], seen: RecordLocations
    ) -> bool:
        """Note where record ``name`` is declared; False (a problem) when it already is."""
        if name in seen:
            self.problems.append(
                Problem(at[0].where(*at[1:]), f"{kind} {name} is already defined at {seen[name]}")
            )
            return False
        seen.add(name, *at)
        return True

    def unique(self, kind: str, name: str, where: Location, seen: dict[str, Location]) -> bool:
        if name in seen:
            self.problems.append(
                Problem(where, f"{kind} {name} is already defined at {seen[name]}")
            )
            return False
        seen[name] = where
        return True


@gc_paused()  # nearly every object built here lives as long as the Fleet
def load_fleet(root: Path) -> Fleet:
    """Load and check the fleet repo at ``root``; raise InputError listing every problem."""
    root = root.resolve()
    if not (root / CONFIG_FILE).is_file():
        why = (
            ": no such directory"
            if not root.is_dir()
            else f" is not a fleet repo: no {CONFIG_FILE}"
        )
        # line 0: the problem has no place in a file (none exists to point at)
        raise InputError([Problem(Location(CONFIG_FILE, 0, 0), f"{root}{why}")])
    loader = _Loader(root)
    config_read = loader.read(Path(CONFIG_FILE), PlumbConfig)
    racks: dict[str, Rack] = {}
    devices: dict[str, Device] = {}
    links: list[Link] = []
    gangs: dict[str, Gang] = {}
    where = loader.where
    for relative in _yaml_files(root, "inventory"):
        read = loader.read(relative, InventoryFile)
        if read is None:
            continue
        doc, inv = read
        for i, rack in enumerate(inv.racks):
            if loader.record("rack", rack.name, (doc, "racks", i), where.racks):
                racks[rack.name] = rack
        for i, device in enumerate(inv.devices):
            if loader.record("device", device.name, (doc, "devices", i), where.devices):
                devices[device.name] = device
        links.extend(inv.links)
        where.links.extend_from(doc, len(inv.links))
        for i, gang in enumerate(inv.gangs):
            if loader.record("gang", gang.name, (doc, "gangs", i), where.gangs):
                gangs[gang.name] = gang
    # A file that failed its schema is missing whole: checking references against the
    # rest would bury its one real error under hundreds of "no such device" lines.
    if not loader.problems:
        _check_references(loader, racks, devices, gangs)
        cabling = CablingIndex(links, where.links, devices)
        loader.problems.extend(cabling.problems)
        _check_host_ports(loader, devices, links)
    else:
        cabling = CablingIndex((), (), {})

    resolver = SettingsResolver()
    bundles: dict[str, Bundle] = {}
    blocked: list[BlockedCombination] = []
    addressing: list[tuple[Document, Addressing]] = []
    for relative in _yaml_files(root, "intent"):
        intent_read = loader.read(relative, IntentFile)
        if intent_read is None:
            continue
        doc, intent_file = intent_read
        resolver.add(doc, intent_file)
        if intent_file.firmware is not None:
            for i, bundle in enumerate(intent_file.firmware.bundles):
                at = doc.where("firmware", "bundles", i)
                if loader.unique("bundle", bundle.name, at, where.bundles):
                    bundles[bundle.name] = bundle
            for i, combo in enumerate(intent_file.firmware.blocked):
                blocked.append(combo)
                where.blocked.append(doc.where("firmware", "blocked", i))
        if intent_file.addressing is not None:
            addressing.append((doc, intent_file.addressing))
    waivers: tuple[Waiver, ...] = ()
    if (root / WAIVERS_FILE).exists():
        read_waivers = loader.read(Path(WAIVERS_FILE), WaiversFile)
        if read_waivers is not None:
            doc, waivers_file = read_waivers
            waivers = waivers_file.waivers
            where.waivers.extend(doc.where("waivers", i) for i in range(len(waivers)))

    if loader.problems or config_read is None:
        raise InputError(loader.problems)
    intent = _resolve_all(loader, resolver, devices, bundles)
    addresses = plan_addresses(addressing, devices, cabling, intent)
    loader.problems.extend(addresses.problems)
    if loader.problems:
        raise InputError(loader.problems)
    # Everything built here lives as long as the fleet and holds no reference cycle:
    # moved out of the collector's sight, so that no later collection scans the
    # million-odd objects again (freed by reference counting like any other).
    gc.freeze()
    return Fleet(
        root=root,
        config=config_read[1],
        racks=racks,
        devices=devices,
        links=tuple(links),
        gangs=gangs,
        cabling=cabling,
        intent=intent,
        bundles=bundles,
        blocked=tuple(blocked),
        addresses=addresses,
        waivers=waivers,
        where=where,
    )


def _check_references(
    loader: _Loader,
    racks: Mapping[str, Rack],
    devices: Mapping[str, Device],
    gangs: Mapping[str, Gang],
) -> None:
    where = loader.where
    for name, dev in devices.items():
        if dev.rack not in racks:
            loader.problems.append(
                Problem(where.devices[name], f"device {name}: no rack {dev.rack!r}")
            )
    member_of: dict[str, str] = {}
    for name, gang in gangs.items():
        for node in gang.nodes:
            device = devices.get(node)
            if device is None or device.role is not Role.gpu_node:
                loader.problems.append(
                    Problem(where.gangs[name], f"gang {name}: {node!r} is not a GPU node")
                )
            elif node in member_of:
                loader.problems.append(
                    Problem(
                        where.gangs[name],
                        f"gang {name}: {node} already runs gang {member_of[node]}",
                    )
                )
            else:
                member_of[node] = name


def _check_host_ports(
    loader: _Loader, devices: Mapping[str, Device], links: Iterable[Link]
) -> None:
    nic_names = {
        name: {nic.name for nic in d.nics} for name, d in devices.items() if d.role is Role.gpu_node
    }
    for index, link in enumerate(links):
        names = nic_names.get(link.a)
        if names is not None and link.a_port not in names:
            loader.problems.append(_no_nic(loader, index, link.a, link.a_port, names))
        names = nic_names.get(link.b)
        if names is not None and link.b_port not in names:
            loader.problems.append(_no_nic(loader, index, link.b, link.b_port, names))


def _no_nic(loader: _Loader, index: int, device: str, port: str, names: set[str]) -> Problem:
    return Problem(
        loader.where.links[index],
        f"{device} has no NIC {port!r} (its NICs: {', '.join(sorted(names))})",
    )


def _resolve_all(
    loader: _Loader,
    resolver: SettingsResolver,
    devices: Mapping[str, Device],
    bundles: Mapping[str, Bundle],
) -> dict[str, DeviceIntent]:
    for name in resolver.device_names():
        if name not in devices:
            layer = resolver.devices[name]
            first = min(s.origin for s in layer.values.values()) if layer.values else None
            if first is not None:
                loader.problems.append(Problem(first, f"settings for unknown device {name!r}"))
    reported: set[Any] = set()
    intent = {name: resolver.resolve(device, reported) for name, device in devices.items()}
    loader.problems.extend(resolver.problems)
    # One problem per line naming an unknown bundle, not one per device it selects.
    unknown: dict[tuple[Location, str], list[str]] = {}
    for name, device_intent in intent.items():
        bundle = device_intent.get("firmware", "bundle")
        if bundle is not None and bundle.value is not None and bundle.value not in bundles:
            unknown.setdefault((bundle.origin, bundle.value), []).append(name)
    for (origin, value), names in unknown.items():
        shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
        loader.problems.append(
            Problem(
                origin,
                f"no bundle {value!r} (known: {', '.join(sorted(bundles))}); used by {shown}",
            )
        )
    return intent
