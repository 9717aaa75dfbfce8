"""Resolve device settings from every scope into one owner per field.

Precedence, lowest to highest (documented in ``docs/fleet-repo.md``):

1. **fleet**: the top-level ``mtu``, ``qos``, ``bgp``, ``firmware`` sections;
2. **role**: ``bgp.spine_asn`` (the shared ASN of every spine), ``bgp.super_spine_asn``
   (of every super-spine) and, in a three-tier fabric, ``bgp.pod_spine_asns.<pod>`` (of the
   spines of one pod, over ``spine_asn``);
3. **group**: each ``groups[]`` entry whose ``match`` selects the device;
4. **device**: ``devices.<name>``, ``bgp.leaf_asns.<name>``, ``bgp.router_ids.<name>``.

A higher scope overrides a lower one. Two sources at the *same* scope setting the same
field of the same device is an error naming both places: every field has exactly one
owner, and the owner (file:line) travels with the value into policies and plans.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Any, Generic, TypeVar

from pydantic import BaseModel

from intent.models import Group, IntentFile, Selector
from inventory.models import Device, Role
from inventory.problems import Location, Problem
from inventory.source import Document

T = TypeVar("T")
SettingPath = tuple[str, ...]

FLEET, ROLE, GROUP, DEVICE = 0, 1, 2, 3
SCOPE_NAMES = {FLEET: "fleet", ROLE: "role", GROUP: "group", DEVICE: "device"}

_DEVICE_SECTIONS = ("mtu", "qos", "bgp", "firmware")
_PLAN_ONLY = {
    ("bgp", "spine_asn"),
    ("bgp", "pod_spine_asns"),
    ("bgp", "super_spine_asn"),
    ("bgp", "leaf_asns"),
    ("bgp", "router_ids"),
    ("firmware", "bundles"),
    ("firmware", "blocked"),
}


@dataclass(frozen=True, slots=True)
class Sourced(Generic[T]):
    """A value and the place in the fleet repo that owns it; a list value also keeps
    where each of its entries sits (``items``), so a finding about one entry (one ECN
    queue, one lossless priority) can point at that entry's own line."""

    value: T
    origin: Location
    scope: int = 0
    items: tuple[Location, ...] = ()


@dataclass
class _Layer:
    level: int
    label: str
    values: dict[SettingPath, Sourced[Any]] = field(default_factory=dict)
    selector: Selector | None = None


def dotted(path: SettingPath) -> str:
    return ".".join(path)


def _key(part: Any) -> str:
    return part.value if isinstance(part, Enum) else str(part)


def flatten_model(
    model: BaseModel, doc: Document, doc_prefix: tuple[Any, ...], prefix: SettingPath = ()
) -> Iterator[tuple[SettingPath, Sourced[Any]]]:
    """Yield every field explicitly set in ``model`` as (path, Sourced) with its location."""
    for name in sorted(model.model_fields_set):
        value = getattr(model, name)
        path = (*prefix, name)
        if path in _PLAN_ONLY:
            continue
        yield from _flatten_value(value, doc, (*doc_prefix, name), path)


def _flatten_value(
    value: Any, doc: Document, doc_path: tuple[Any, ...], path: SettingPath
) -> Iterator[tuple[SettingPath, Sourced[Any]]]:
    if isinstance(value, BaseModel):
        yield from flatten_model(value, doc, doc_path, path)
    elif isinstance(value, Mapping):
        for key, item in value.items():
            name = _key(key)
            yield from _flatten_value(item, doc, (*doc_path, name), (*path, name))
    elif isinstance(value, tuple) and value:
        items = tuple(doc.where(*doc_path, index) for index in range(len(value)))
        yield path, Sourced(value, doc.where(*doc_path), items=items)
    else:
        yield path, Sourced(value, doc.where(*doc_path))


def selector_matches(selector: Selector, device: Device) -> bool:
    """True when every condition of the selector holds for the device."""
    if selector.names is not None and not any(
        fnmatch.fnmatchcase(device.name, pattern) for pattern in selector.names
    ):
        return False
    checks: list[tuple[tuple[Any, ...] | None, Any]] = [
        (selector.roles, device.role),
        (selector.vendors, device.vendor),
        (selector.models, device.model),
        (selector.platforms, device.platform),
        (selector.racks, device.rack),
        (selector.rails, device.rail),
    ]
    if any(allowed is not None and actual not in allowed for allowed, actual in checks):
        return False
    if selector.labels is not None:
        return all(device.labels.get(k) == v for k, v in selector.labels.items())
    return True


@dataclass(frozen=True)
class DeviceIntent:
    """The resolved settings of one device: path -> value with its single owner."""

    name: str
    values: Mapping[SettingPath, Sourced[Any]]

    def get(self, *path: str) -> Sourced[Any] | None:
        return self.values.get(path)

    def value(self, *path: str, default: Any = None) -> Any:
        found = self.values.get(path)
        return default if found is None or found.value is None else found.value

    def under(self, *prefix: str) -> Iterator[tuple[SettingPath, Sourced[Any]]]:
        n = len(prefix)
        for path, sourced in self.values.items():
            if path[:n] == prefix:
                yield path, sourced


class SettingsResolver:
    """Collects setting layers from intent documents, then resolves per device."""

    def __init__(self) -> None:
        self.fleet = _Layer(FLEET, "fleet")
        self.spine = _Layer(ROLE, "role spine")
        self.super_spine = _Layer(ROLE, "role super-spine")
        self.pod_spines: dict[str, _Layer] = {}
        self.groups: list[_Layer] = []
        self.devices: dict[str, _Layer] = {}
        self.problems: list[Problem] = []
        self._group_names: dict[str, Location] = {}

    def _put(self, layer: _Layer, path: SettingPath, sourced: Sourced[Any], subject: str) -> None:
        previous = layer.values.get(path)
        if previous is not None:
            self.problems.append(
                Problem(
                    sourced.origin,
                    f"{dotted(path)} of {subject} is already set at {previous.origin} "
                    f"(same {SCOPE_NAMES[layer.level]} scope): every field has exactly one source",
                )
            )
            return
        layer.values[path] = replace(sourced, scope=layer.level)

    def _device_layer(self, name: str) -> _Layer:
        layer = self.devices.get(name)
        if layer is None:
            layer = self.devices[name] = _Layer(DEVICE, f"device {name}")
        return layer

    def add(self, doc: Document, intent: IntentFile) -> None:
        """Add every setting of one intent file to its layer."""
        for section in _DEVICE_SECTIONS:
            model = getattr(intent, section)
            if model is None:
                continue
            if isinstance(model, Mapping):  # mtu: per link class
                for path, sourced in _flatten_value(model, doc, (section,), (section,)):
                    self._put(self.fleet, path, sourced, "the fleet")
            else:
                for path, sourced in flatten_model(model, doc, (section,), (section,)):
                    self._put(self.fleet, path, sourced, "the fleet")
        if intent.bgp is not None:
            self._add_bgp_plan(doc, intent)
        for index, group in enumerate(intent.groups):
            self._add_group(doc, index, group)
        for name, settings in intent.devices.items():
            layer = self._device_layer(name)
            for path, sourced in flatten_model(settings, doc, ("devices", name)):
                self._put(layer, path, sourced, name)

    def _add_bgp_plan(self, doc: Document, intent: IntentFile) -> None:
        bgp = intent.bgp
        assert bgp is not None
        if bgp.spine_asn is not None:
            self._put(
                self.spine,
                ("bgp", "asn"),
                Sourced(bgp.spine_asn, doc.where("bgp", "spine_asn")),
                "every spine",
            )
        if bgp.super_spine_asn is not None:
            self._put(
                self.super_spine,
                ("bgp", "asn"),
                Sourced(bgp.super_spine_asn, doc.where("bgp", "super_spine_asn")),
                "every super-spine",
            )
        for pod, asn in bgp.pod_spine_asns.items():
            layer = self.pod_spines.setdefault(pod, _Layer(ROLE, f"spines of pod {pod}"))
            self._put(
                layer,
                ("bgp", "asn"),
                Sourced(asn, doc.where("bgp", "pod_spine_asns", pod)),
                f"the spines of pod {pod}",
            )
        for name, asn in bgp.leaf_asns.items():
            self._put(
                self._device_layer(name),
                ("bgp", "asn"),
                Sourced(asn, doc.where("bgp", "leaf_asns", name)),
                name,
            )
        for name, router_id in bgp.router_ids.items():
            self._put(
                self._device_layer(name),
                ("bgp", "router_id"),
                Sourced(router_id, doc.where("bgp", "router_ids", name)),
                name,
            )

    def _add_group(self, doc: Document, index: int, group: Group) -> None:
        where = doc.where("groups", index, "name")
        if group.name in self._group_names:
            self.problems.append(
                Problem(
                    where,
                    f"group {group.name} is already defined at {self._group_names[group.name]}",
                )
            )
            return
        self._group_names[group.name] = where
        layer = _Layer(GROUP, f"group {group.name}", selector=group.match)
        for path, sourced in flatten_model(group.set, doc, ("groups", index, "set")):
            layer.values[path] = replace(sourced, scope=GROUP)
        self.groups.append(layer)

    def device_names(self) -> Iterable[str]:
        return self.devices.keys()

    def resolve(self, device: Device, reported: set[tuple[str, str, SettingPath]]) -> DeviceIntent:
        """Merge the layers for one device; same-scope group clashes become problems."""
        values: dict[SettingPath, Sourced[Any]] = dict(self.fleet.values)
        if device.role is Role.spine:
            values.update(self.spine.values)
            pod = self.pod_spines.get(device.pod) if device.pod is not None else None
            if pod is not None:
                values.update(pod.values)
        elif device.role is Role.super_spine:
            values.update(self.super_spine.values)
        owners: dict[SettingPath, _Layer] = {}
        for layer in self.groups:
            assert layer.selector is not None
            if not selector_matches(layer.selector, device):
                continue
            for path, sourced in layer.values.items():
                clash = owners.get(path)
                if clash is not None:
                    key = (clash.label, layer.label, path)
                    if key not in reported:
                        reported.add(key)
                        self.problems.append(
                            Problem(
                                sourced.origin,
                                f"{dotted(path)} of {device.name} is set by both {clash.label} "
                                f"({clash.values[path].origin}) and {layer.label}: "
                                "two groups select the same device for the same field",
                            )
                        )
                    continue
                owners[path] = layer
                values[path] = sourced
        own = self.devices.get(device.name)
        if own is not None:
            values.update(own.values)
        return DeviceIntent(device.name, values)
