"""Fill a live NetBox through pynetbox the way a team keeping its fabric there would:
the custom fields of plumb's convention, then site, rows, racks, device types, roles,
platforms, devices with management addresses, interfaces with rails and cables with
lengths. ``push_fleet`` writes a whole plumb fleet's inventory (bulk creates, so a
fleet of a few hundred interfaces takes seconds)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pynetbox

from intent.fleet import Fleet

CUSTOM_FIELDS = [
    {"name": "rail", "type": "integer", "object_types": ["dcim.device", "dcim.interface"]},
    {"name": "pod", "type": "text", "object_types": ["dcim.device"]},
    {"name": "gpus", "type": "integer", "object_types": ["dcim.device"]},
    {"name": "labels", "type": "json", "object_types": ["dcim.device"]},
    {"name": "power_domain", "type": "text", "object_types": ["dcim.rack"]},
    {"name": "cooling_domain", "type": "text", "object_types": ["dcim.rack"]},
]
INTERFACE_TYPES = {
    1: "1000base-t",
    100: "100gbase-x-qsfp28",
    200: "200gbase-x-qsfp56",
    400: "400gbase-x-osfp",
    800: "800gbase-x-osfp",
}


def client(url: str, token: str | None = None) -> Any:
    """An authenticated pynetbox client (a fresh v2 token for the superuser if none)."""
    from tests.nbserver import ADMIN

    api = pynetbox.api(url, token=token)
    if token is None:
        api.create_token(*ADMIN)
    return api


def add_custom_fields(api: Any) -> None:
    api.extras.custom_fields.create([dict(field) for field in CUSTOM_FIELDS])


def _by_slug(endpoint: Any, names: Iterable[str], **extra: Any) -> dict[str, Any]:
    """Create one object per name (slug = name lowercased) in one request."""
    names = sorted(set(names))
    made = endpoint.create([{"name": n, "slug": n.lower(), **extra} for n in names])
    return {n: obj for n, obj in zip(names, made, strict=True)}


def push_fleet(api: Any, fleet: Fleet, site_slug: str = "dc1") -> None:
    """The fleet's racks, devices, NICs and links into NetBox (lengths in metres)."""
    add_custom_fields(api)
    site = api.dcim.sites.create(name=site_slug, slug=site_slug, status="active")
    racks = fleet.racks.values()
    rows = _by_slug(api.dcim.locations, (r.row for r in racks if r.row), site=site.id)
    kinds = _by_slug(api.dcim.rack_roles, (r.kind for r in racks), color="9e9e9e")
    made = api.dcim.racks.create(
        [
            {
                "name": r.name,
                "site": site.id,
                "status": "active",
                "role": kinds[r.kind].id,
                "location": rows[r.row].id if r.row else None,
                "custom_fields": {
                    "power_domain": r.power_domain,
                    "cooling_domain": r.cooling_domain,
                },
            }
            for r in racks
        ]
    )
    rack_ids = {r.name: r.id for r in made}
    devices = list(fleet.devices.values())
    vendors = _by_slug(api.dcim.manufacturers, (d.vendor for d in devices))
    models = sorted({(d.vendor, d.model) for d in devices})
    types = api.dcim.device_types.create(
        [
            {"manufacturer": vendors[v].id, "model": m, "slug": m.lower(), "u_height": 1}
            for v, m in models
        ]
    )
    type_ids = {key: t.id for key, t in zip(models, types, strict=True)}
    roles = _by_slug(api.dcim.device_roles, (d.role.value for d in devices), color="2196f3")
    platforms = _by_slug(api.dcim.platforms, (d.platform.value for d in devices))
    made = api.dcim.devices.create(
        [
            {
                "name": d.name,
                "site": site.id,
                "rack": rack_ids[d.rack],
                "status": "active",
                "device_type": type_ids[(d.vendor, d.model)],
                "role": roles[d.role.value].id,
                "platform": platforms[d.platform.value].id,
                "custom_fields": {
                    "rail": d.rail,
                    "pod": d.pod,
                    "gpus": d.gpus or None,
                    "labels": dict(d.labels) or None,
                },
            }
            for d in devices
        ]
    )
    device_ids = {d.name: d.id for d in made}
    ports: dict[tuple[str, str], dict[str, Any]] = {}
    for d in devices:
        ports[(d.name, "mgmt0")] = {"type": "1000base-t", "mgmt_only": True}
        for nic in d.nics:
            ports[(d.name, nic.name)] = {
                "type": INTERFACE_TYPES[nic.speed_gbps],
                "custom_fields": {"rail": nic.rail},
            }
    default_speed = fleet.config.defaults.link_speed_gbps
    for link in fleet.links:
        speed = INTERFACE_TYPES[link.speed_gbps or default_speed]
        for name, port in ((link.a, link.a_port), (link.b, link.b_port)):
            ports.setdefault((name, port), {"type": speed})
    keys = sorted(ports)
    made = api.dcim.interfaces.create(
        [{"device": device_ids[n], "name": p, **ports[(n, p)]} for n, p in keys]
    )
    iface_ids = {key: i.id for key, i in zip(keys, made, strict=True)}
    addresses = api.ipam.ip_addresses.create(
        [
            {
                "address": f"{d.mgmt}/24",
                "status": "active",
                "assigned_object_type": "dcim.interface",
                "assigned_object_id": iface_ids[(d.name, "mgmt0")],
            }
            for d in devices
        ]
    )
    api.dcim.devices.update(
        [
            {"id": device_ids[d.name], "primary_ip4": ip.id}
            for d, ip in zip(devices, addresses, strict=True)
        ]
    )
    api.dcim.cables.create(
        [
            {
                "a_terminations": [
                    {"object_type": "dcim.interface", "object_id": iface_ids[(lk.a, lk.a_port)]}
                ],
                "b_terminations": [
                    {"object_type": "dcim.interface", "object_id": iface_ids[(lk.b, lk.b_port)]}
                ],
                "status": "connected",
                "length": lk.length_m,
                "length_unit": "m",
            }
            for lk in fleet.links
        ]
    )


def small_fabric(api: Any) -> dict[str, Any]:
    """Two GPU nodes on two rails, two rail leaves and a spine, cabled with lengths in
    m, cm and ft (one host cable entered leaf-first); returns the objects by name.
    Objects of one kind go in one request, as a bulk load into NetBox would."""
    add_custom_fields(api)
    site = api.dcim.sites.create(name="dc1", slug="dc1", status="active")
    row = api.dcim.locations.create(name="row-a", slug="row-a", site=site.id)
    kinds = _by_slug(api.dcim.rack_roles, ["gpu", "network"], color="9e9e9e")
    rack_plan = [("gpu-r01", "gpu"), ("net-01", "network")]
    made = api.dcim.racks.create(
        [
            {
                "name": name,
                "site": site.id,
                "status": "active",
                "role": kinds[kind].id,
                "location": row.id,
                "custom_fields": {"power_domain": f"pdu-{name}", "cooling_domain": "row-a"},
            }
            for name, kind in rack_plan
        ]
    )
    racks = {r.name: r for r in made}
    vendors = _by_slug(api.dcim.manufacturers, ["halcyon", "arista"])
    hx8, switch = api.dcim.device_types.create(
        [
            {"manufacturer": vendors["halcyon"].id, "model": "HX8", "slug": "hx8", "u_height": 8},
            {"manufacturer": vendors["arista"].id, "model": "7060DX5-64S", "slug": "7060dx5-64s"},
        ]
    )
    roles = _by_slug(api.dcim.device_roles, ["gpu-node", "leaf", "spine"], color="2196f3")
    platforms = _by_slug(api.dcim.platforms, ["linux", "eos"])
    plan = [
        ("gpu-n01", hx8, "gpu-node", "linux", "gpu-r01", "198.18.3.1", {"gpus": 8}),
        ("gpu-n02", hx8, "gpu-node", "linux", "gpu-r01", "198.18.3.2", {"gpus": 8}),
        ("leaf-r0", switch, "leaf", "eos", "net-01", "198.18.1.1", {"rail": 0}),
        ("leaf-r1", switch, "leaf", "eos", "net-01", "198.18.1.2", {"rail": 1}),
        ("spine-1", switch, "spine", "eos", "net-01", "198.18.0.1", {}),
    ]
    made = api.dcim.devices.create(
        [
            {
                "name": name,
                "device_type": dtype.id,
                "role": roles[role].id,
                "site": site.id,
                "platform": platforms[platform].id,
                "rack": racks[rack].id,
                "status": "active",
                "custom_fields": custom,
            }
            for name, dtype, role, platform, rack, _, custom in plan
        ]
    )
    objects: dict[str, Any] = {d.name: d for d in made}
    ports = [(n, "mgmt0", {"type": "1000base-t", "mgmt_only": True}) for n, *_ in plan]
    ports += [
        (n, f"eth{r}", {"custom_fields": {"rail": r}})
        for n in ("gpu-n01", "gpu-n02")
        for r in (0, 1)
    ]
    ports += [
        (n, p, {}) for n in ("leaf-r0", "leaf-r1") for p in ("Ethernet1", "Ethernet2", "Ethernet33")
    ]
    ports += [("spine-1", p, {}) for p in ("Ethernet1", "Ethernet2")]
    made = api.dcim.interfaces.create(
        [
            {"device": objects[n].id, "name": p, "type": "400gbase-x-osfp", **extra}
            for n, p, extra in ports
        ]
    )
    for (n, p, _), interface in zip(ports, made, strict=True):
        objects[f"{n}:{p}"] = interface
    addresses = api.ipam.ip_addresses.create(
        [
            {
                "address": f"{mgmt}/24",
                "assigned_object_type": "dcim.interface",
                "assigned_object_id": objects[f"{name}:mgmt0"].id,
            }
            for name, _, _, _, _, mgmt, _ in plan
        ]
    )
    api.dcim.devices.update(
        [
            {"id": objects[name].id, "primary_ip4": ip.id}
            for (name, *_), ip in zip(plan, addresses, strict=True)
        ]
    )
    cable_plan = [
        ("gpu-n01:eth0", "leaf-r0:Ethernet1", 3.5, "m"),
        ("gpu-n02:eth0", "leaf-r0:Ethernet2", 250, "cm"),
        ("gpu-n01:eth1", "leaf-r1:Ethernet1", 10, "ft"),
        ("leaf-r1:Ethernet2", "gpu-n02:eth1", 4, "m"),
        ("leaf-r0:Ethernet33", "spine-1:Ethernet1", 22, "m"),
        ("leaf-r1:Ethernet33", "spine-1:Ethernet2", 20.5, "m"),
    ]
    made = api.dcim.cables.create(
        [
            {
                "a_terminations": [{"object_type": "dcim.interface", "object_id": objects[a].id}],
                "b_terminations": [{"object_type": "dcim.interface", "object_id": objects[b].id}],
                "status": "connected",
                "length": length,
                "length_unit": unit,
            }
            for a, b, length, unit in cable_plan
        ]
    )
    for (a, b, _, _), made_cable in zip(cable_plan, made, strict=True):
        objects[f"{a}--{b}"] = made_cable
    objects["site"] = site
    objects["racks"] = racks
    objects["types"] = {"hx8": hx8, "switch": switch}
    objects["roles"] = roles
    objects["platforms"] = platforms
    return objects
