"""NetBox records -> plumb inventory records (pure: JSON in, plain dicts out).

This sits before the rest of the flow: ``inventory/netbox_fetch.py`` reads the REST
records, this module turns them into the racks, devices and links of
``inventory/*.yaml``, and ``inventory/netbox_write.py`` lays them out as files. Every
record is checked against plumb's own models here, so a value plumb would refuse is an
error naming the NetBox object (``dcim.cable 17: ...``), not a bad file later.

The conventions (docs/netbox.md):

* device role and platform slugs map to plumb roles and platforms; plumb's own names
  map to themselves, ``sources.netbox.roles`` / ``platforms`` in plumb.yaml add others,
  and a role mapped to ``null`` is not imported (PDUs, patch panels, console servers);
* custom fields: ``rail`` (integer, on interfaces and leaf devices), ``pod``, ``gpus``
  and ``labels`` (a JSON object) on devices, ``power_domain`` and ``cooling_domain`` on
  racks; a rack's role slug is its kind and its location slug its row;
* GPU nodes' physical, non-management interfaces are their NICs; a cable between
  interfaces of imported devices is a link, its class follows from the two roles and
  its length (m, cm, km, ft, in, mi) is converted to metres.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ValidationError

from inventory.models import Device, Link, Nic, Rack, Role

JsonRecord = Mapping[str, Any]

TO_METRES = {
    "km": 1000.0,
    "m": 1.0,
    "cm": 0.01,
    "mi": 1609.344,
    "ft": 0.3048,
    "in": 0.0254,
}
"""NetBox's cable length units (``dcim.choices.CableLengthUnitChoices``) in metres."""

DEFAULT_ROLES: dict[str, str | None] = {role.value: role.value for role in Role}
DEFAULT_PLATFORMS: dict[str, str | None] = {"eos": "eos", "sonic": "sonic", "linux": "linux"}

# The tier of each role: a link's ``a`` end is the lower one.
_TIER = {"gpu-node": 0, "leaf": 1, "frontend": 1, "spine": 2, "super-spine": 3}
_CLASS = {
    ("gpu-node", "leaf"): "host-leaf",
    ("gpu-node", "frontend"): "frontend",
    ("leaf", "spine"): "leaf-spine",
    ("spine", "super-spine"): "spine-superspine",
}
_NOT_NICS = {"virtual", "lag", "bridge"}
_INFINIBAND_GBPS = {"edr": 100, "hdr": 200, "ndr": 400, "xdr": 800}
_ETHERNET_TYPE = re.compile(r"^(\d+)(g?)base")


@dataclass(frozen=True)
class NetboxData:
    """The REST records one import reads, as NetBox returns them."""

    racks: tuple[JsonRecord, ...] = ()
    devices: tuple[JsonRecord, ...] = ()
    interfaces: tuple[JsonRecord, ...] = ()
    cables: tuple[JsonRecord, ...] = ()


@dataclass(frozen=True)
class NetboxMapping:
    """NetBox role and platform slugs -> plumb's names (``None``: not imported)."""

    roles: Mapping[str, str | None] = field(default_factory=lambda: dict(DEFAULT_ROLES))
    platforms: Mapping[str, str | None] = field(default_factory=lambda: dict(DEFAULT_PLATFORMS))

    @classmethod
    def with_overrides(
        cls, roles: Mapping[str, str | None], platforms: Mapping[str, str | None]
    ) -> NetboxMapping:
        return cls({**DEFAULT_ROLES, **roles}, {**DEFAULT_PLATFORMS, **platforms})


@dataclass(frozen=True)
class Imported:
    """What NetBox holds, as plumb inventory records (plain, YAML-ready dicts)."""

    racks: tuple[dict[str, Any], ...]
    devices: tuple[dict[str, Any], ...]
    links: tuple[dict[str, Any], ...]
    skipped: tuple[str, ...]  # NetBox objects deliberately left out, with the reason


class MappingError(Exception):
    """NetBox holds something plumb cannot import; every such object is listed."""

    def __init__(self, messages: list[str]) -> None:
        self.messages = sorted(set(messages), key=_object_order)
        super().__init__("\n".join(self.messages))


def _object_order(message: str) -> tuple[str, int, str]:
    kind, _, rest = message.partition(" ")
    number = rest.split(":", 1)[0].split(" ", 1)[0]
    return kind, int(number) if number.isdigit() else 0, message


def natural_key(text: str) -> tuple[tuple[int, str], ...]:
    """Sort ``Ethernet2`` before ``Ethernet10`` and ``gpu-n9`` before ``gpu-n10``."""
    return tuple(
        (1, f"{int(part):012d}") if part.isdigit() else (0, part)
        for part in re.split(r"(\d+)", text)
        if part
    )


def _slug(value: Any) -> str | None:
    return value.get("slug") if isinstance(value, Mapping) else None


def _custom(record: JsonRecord, name: str) -> Any:
    fields = record.get("custom_fields") or {}
    return fields.get(name) if isinstance(fields, Mapping) else None


def _choice(value: Any) -> Any:
    """NetBox choice fields read ``{"value": ..., "label": ...}``."""
    return value.get("value") if isinstance(value, Mapping) else value


class _Mapper:
    def __init__(self, mapping: NetboxMapping) -> None:
        self.mapping = mapping
        self.errors: list[str] = []
        self.skipped: list[str] = []
        self.roles: dict[int, str] = {}  # device id -> plumb role, imported devices only
        self.names: dict[int, str] = {}  # device id -> name, every device
        self.ignored: dict[int, str] = {}  # device id -> its NetBox role, not imported
        self.speeds: dict[int, int | None] = {}  # interface id -> Gb/s
        self.unmapped: set[int] = set()  # device ids whose role is already an error

    def checked(self, model: type[BaseModel], record: dict[str, Any], what: str) -> bool:
        try:
            model.model_validate(record)
        except ValidationError as exc:
            for error in exc.errors():
                where = ".".join(str(part) for part in error["loc"])
                self.errors.append(f"{what}: {where}: {error['msg']}")
            return False
        return True

    def rack(self, raw: JsonRecord) -> dict[str, Any] | None:
        what = f"dcim.rack {raw.get('id')} ({raw.get('name')})"
        record: dict[str, Any] = {"name": raw.get("name")}
        kind = _slug(raw.get("role"))
        if kind is not None:
            record["kind"] = kind
        for domain in ("power_domain", "cooling_domain"):
            value = _custom(raw, domain)
            if value in (None, ""):
                self.errors.append(
                    f"{what}: custom field {domain} is empty (plumb needs each rack's"
                    f" {domain.replace('_', ' ')})"
                )
                return None
            record[domain] = value
        row = _slug(raw.get("location"))
        if row is not None:
            record["row"] = row
        return record if self.checked(Rack, record, what) else None

    def device(self, raw: JsonRecord, nics: list[dict[str, Any]]) -> dict[str, Any] | None:
        name = raw.get("name")
        what = f"dcim.device {raw.get('id')} ({name})"
        if not name:
            self.errors.append(f"dcim.device {raw.get('id')}: has no name")
            return None
        role = self.roles[raw["id"]]
        platform_slug = _slug(raw.get("platform"))
        if platform_slug is None:
            self.errors.append(f"{what}: has no platform (plumb picks the driver by it)")
            return None
        if platform_slug not in self.mapping.platforms:
            self.errors.append(
                f"{what}: platform {platform_slug!r} has no plumb platform; map it under"
                " sources.netbox.platforms in plumb.yaml"
            )
            return None
        platform = self.mapping.platforms[platform_slug]
        if platform is None:
            self.errors.append(f"{what}: platform {platform_slug!r} is mapped to no platform")
            return None
        device_type = raw.get("device_type") or {}
        model = device_type.get("model") or ""
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,62}", model):
            model = device_type.get("slug")
        rack = raw.get("rack")
        primary = raw.get("primary_ip4")
        if not isinstance(rack, Mapping):
            self.errors.append(f"{what}: is in no rack")
            return None
        if not isinstance(primary, Mapping):
            self.errors.append(f"{what}: has no primary IPv4 address (plumb's management address)")
            return None
        record: dict[str, Any] = {
            "name": name,
            "role": role,
            "vendor": _slug(device_type.get("manufacturer")),
            "model": model,
            "platform": platform,
            "rack": rack.get("name"),
            "mgmt": str(primary.get("address", "")).split("/")[0],
        }
        for custom in ("rail", "pod", "gpus", "labels"):
            value = _custom(raw, custom)
            if value in (None, "", {}):
                continue
            if custom == "labels":
                if not isinstance(value, Mapping):
                    self.errors.append(f"{what}: custom field labels is not a JSON object")
                    return None
                value = dict(sorted(value.items()))
            record[custom] = value
        if nics:
            record["nics"] = sorted(nics, key=lambda nic: natural_key(nic["name"]))
        return record if self.checked(Device, record, what) else None

    def nic(self, raw: JsonRecord) -> dict[str, Any] | None:
        device = raw.get("device") or {}
        what = f"dcim.interface {raw.get('id')} ({device.get('name')} {raw.get('name')})"
        speed = interface_gbps(raw)
        if speed is None:
            self.errors.append(
                f"{what}: no speed (set its speed, or a type that has one such as 400gbase-x-osfp)"
            )
            return None
        record: dict[str, Any] = {"name": raw.get("name"), "speed_gbps": speed}
        rail = _custom(raw, "rail")
        if rail is not None:
            record["rail"] = rail
        return record if self.checked(Nic, record, what) else None

    def link(self, raw: JsonRecord) -> dict[str, Any] | None:
        what = f"dcim.cable {raw.get('id')}"
        sides = []
        for side in ("a", "b"):
            terminations = raw.get(f"{side}_terminations") or []
            if len(terminations) != 1:
                self.errors.append(
                    f"{what}: has {len(terminations)} terminations on side"
                    f" {side.upper()}; plumb models one port at each end of a cable"
                )
                return None
            sides.append(terminations[0])
        ends = [self._end(t) for t in sides]
        if any(end is not None and end[0] in self.unmapped for end in ends):
            return None  # the device's role is reported; its cables would only repeat it
        ours = [end for end in ends if end is not None and end[0] in self.roles]
        if not ours:
            return None  # power, console, or cabling between devices plumb does not import
        for termination, end in zip(sides, ends, strict=True):
            if end is None:
                self.errors.append(
                    f"{what}: ends on a {termination.get('object_type')}, not an interface;"
                    " plumb links connect interfaces"
                )
                return None
            if end[0] not in self.roles:
                self.errors.append(
                    f"{what}: {self.names.get(end[0], end[0])} {end[1]} is on a device"
                    f" plumb does not import (role {self.ignored.get(end[0])!r})"
                )
                return None
        status = _choice(raw.get("status"))
        if status != "connected":
            self.skipped.append(f"{what}: status {status}, not imported")
            return None
        (a_id, a_port, a_speed), (b_id, b_port, b_speed) = sorted(
            ours, key=lambda end: _TIER[self.roles[end[0]]]
        )
        pair = (self.roles[a_id], self.roles[b_id])
        link_class = _CLASS.get(pair)
        if link_class is None:
            self.errors.append(
                f"{what}: cables a {pair[0]} to a {pair[1]}; plumb knows host-leaf, frontend,"
                " leaf-spine and spine-superspine cables"
            )
            return None
        length = self._length(raw, what)
        if length is None:
            return None
        record: dict[str, Any] = {
            "a": self.names[a_id],
            "a_port": a_port,
            "b": self.names[b_id],
            "b_port": b_port,
            "class": link_class,
            "length_m": length,
        }
        speeds = [speed for speed in (a_speed, b_speed) if speed is not None]
        if speeds:
            record["speed_gbps"] = min(speeds)
        return record if self.checked(Link, record, what) else None

    def _end(self, termination: JsonRecord) -> tuple[int, str, int | None] | None:
        if termination.get("object_type") != "dcim.interface":
            return None
        interface = termination.get("object") or {}
        device = interface.get("device") or {}
        speed = self.speeds.get(int(interface.get("id") or 0))
        return int(device.get("id") or 0), str(interface.get("name")), speed

    def _length(self, raw: JsonRecord, what: str) -> float | None:
        length, unit = raw.get("length"), _choice(raw.get("length_unit"))
        if length is None:
            self.errors.append(f"{what}: has no length (plumb's PFC headroom depends on it)")
            return None
        if unit is None:
            self.errors.append(f"{what}: length {length} has no unit")
            return None
        if unit not in TO_METRES:
            self.errors.append(f"{what}: unknown length unit {unit!r}")
            return None
        return round(float(length) * TO_METRES[unit], 3)


def interface_gbps(raw: JsonRecord) -> int | None:
    """An interface's speed in Gb/s: its ``speed`` (kb/s) if set, else its type's."""
    speed = raw.get("speed")
    if isinstance(speed, int) and speed > 0 and speed % 1_000_000 == 0:
        return speed // 1_000_000
    kind = str(_choice(raw.get("type")) or "")
    if kind.startswith("infiniband-"):
        return _INFINIBAND_GBPS.get(kind.removeprefix("infiniband-"))
    match = _ETHERNET_TYPE.match(kind)
    if match is None:
        return None
    number = int(match.group(1))
    if match.group(2):
        return number
    return number // 1000 if number >= 1000 and number % 1000 == 0 else None


def map_netbox(data: NetboxData, mapping: NetboxMapping) -> Imported:
    """Every rack, device and link NetBox holds, as plumb records; raise MappingError
    listing every object that cannot be imported."""
    mapper = _Mapper(mapping)
    for raw in data.devices:
        mapper.names[raw["id"]] = raw.get("name") or f"#{raw['id']}"
        slug = _slug(raw.get("role"))
        if slug is None or slug not in mapping.roles:
            mapper.errors.append(
                f"dcim.device {raw['id']} ({raw.get('name')}): role {slug!r} has no plumb"
                " role; map it under sources.netbox.roles in plumb.yaml (null: not imported)"
            )
            mapper.unmapped.add(raw["id"])
            continue
        role = mapping.roles[slug]
        if role is None:
            mapper.ignored[raw["id"]] = slug
        else:
            mapper.roles[raw["id"]] = role
    mapper.speeds = {raw["id"]: interface_gbps(raw) for raw in data.interfaces}
    nics: dict[int, list[dict[str, Any]]] = {}
    for raw in data.interfaces:
        device_id = int((raw.get("device") or {}).get("id") or 0)
        if mapper.roles.get(device_id) != Role.gpu_node.value:
            continue
        if raw.get("mgmt_only") or _choice(raw.get("type")) in _NOT_NICS:
            continue
        nic = mapper.nic(raw)
        if nic is not None:
            nics.setdefault(device_id, []).append(nic)
    devices = [
        mapper.device(raw, nics.get(raw["id"], []))
        for raw in data.devices
        if raw["id"] in mapper.roles
    ]
    # only the racks that hold an imported device: NetBox also racks what plumb ignores
    used = {device["rack"] for device in devices if device}
    racks = [mapper.rack(raw) for raw in data.racks if raw.get("name") in used]
    links = [mapper.link(raw) for raw in data.cables]
    mapper.errors += _repeated_names("dcim.device", data.devices, devices)
    mapper.errors += _repeated_names("dcim.rack", data.racks, racks)
    if mapper.errors:
        raise MappingError(mapper.errors)
    return Imported(
        racks=tuple(sorted((r for r in racks if r), key=lambda r: natural_key(r["name"]))),
        devices=tuple(sorted((d for d in devices if d), key=lambda d: natural_key(d["name"]))),
        links=tuple(sorted((lk for lk in links if lk), key=link_order)),
        skipped=tuple(sorted(mapper.skipped, key=_object_order)),
    )


def _repeated_names(
    kind: str, raws: Iterable[JsonRecord], records: Iterable[dict[str, Any] | None]
) -> list[str]:
    """NetBox names devices and racks per site; plumb names them once per fleet."""
    wanted = {r["name"] for r in records if r}
    first: dict[str, Any] = {}
    errors = []
    for raw in raws:
        name = str(raw.get("name"))
        if name not in wanted:
            continue
        if name in first:
            errors.append(
                f"{kind} {raw.get('id')} ({name}): {kind} {first[name]} has the same name;"
                " plumb needs unique names (import one site with sources.netbox.site)"
            )
        else:
            first[name] = raw.get("id")
    return errors


def link_order(link: Mapping[str, Any]) -> tuple[Any, ...]:
    return (
        natural_key(str(link["a"])),
        natural_key(str(link["a_port"])),
        natural_key(str(link["b"])),
        natural_key(str(link["b_port"])),
    )
