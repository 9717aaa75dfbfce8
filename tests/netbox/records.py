"""NetBox REST records in the shapes NetBox 4.7 returns them (brief nested objects,
``{"value", "label"}`` choices, ``custom_fields``), for the mapping's unit tests."""

from __future__ import annotations

import itertools
from typing import Any

_ids = itertools.count(1)


def brief(name: str, **extra: Any) -> dict[str, Any]:
    return {"id": next(_ids), "name": name, "slug": name.lower(), **extra}


def rack(
    name: str,
    *,
    power: str | None = "pdu-1",
    cooling: str | None = "row-a",
    role: str | None = "gpu",
    location: str | None = "row-a",
) -> dict[str, Any]:
    return {
        "id": next(_ids),
        "name": name,
        "role": brief(role) if role else None,
        "location": brief(location) if location else None,
        "custom_fields": {"power_domain": power, "cooling_domain": cooling},
    }


def device(
    name: str,
    role: str,
    *,
    platform: str | None = "eos",
    rack_name: str = "r1",
    mgmt: str | None = "198.18.0.1/24",
    manufacturer: str = "arista",
    model: str = "7060DX5-64S",
    **custom: Any,
) -> dict[str, Any]:
    return {
        "id": next(_ids),
        "name": name,
        "role": brief(role),
        "platform": brief(platform) if platform else None,
        "device_type": {
            "id": next(_ids),
            "model": model,
            "slug": model.lower().replace(" ", "-"),
            "manufacturer": brief(manufacturer),
        },
        "rack": {"id": next(_ids), "name": rack_name},
        "primary_ip4": {"id": next(_ids), "address": mgmt} if mgmt else None,
        "custom_fields": {"rail": None, "pod": None, "gpus": None, "labels": None, **custom},
    }


def interface(
    owner: dict[str, Any],
    name: str,
    *,
    kind: str = "400gbase-x-osfp",
    speed: int | None = None,
    rail: int | None = None,
    mgmt_only: bool = False,
) -> dict[str, Any]:
    return {
        "id": next(_ids),
        "name": name,
        "device": {"id": owner["id"], "name": owner["name"]},
        "type": {"value": kind, "label": kind},
        "speed": speed,
        "mgmt_only": mgmt_only,
        "custom_fields": {"rail": rail},
    }


def end(termination: dict[str, Any], object_type: str = "dcim.interface") -> dict[str, Any]:
    return {"object_type": object_type, "object_id": termination["id"], "object": termination}


def cable(
    a: dict[str, Any],
    b: dict[str, Any],
    *,
    length: float | None = 3.5,
    unit: str | None = "m",
    status: str = "connected",
    a_type: str = "dcim.interface",
    b_type: str = "dcim.interface",
) -> dict[str, Any]:
    return {
        "id": next(_ids),
        "a_terminations": [end(a, a_type)],
        "b_terminations": [end(b, b_type)],
        "status": {"value": status, "label": status.title()},
        "length": length,
        "length_unit": {"value": unit, "label": unit} if unit else None,
    }
