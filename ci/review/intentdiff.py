"""What a change moves in intent (pure): per-device effective settings base vs head,
each moved value attributed to its owner at head; devices, links and bundles added or
removed; and the rendered settings that move per device.

Every comparison walks each device's own settings once (a dict lookup per setting), so
the work grows with devices x settings, never with pairs of devices.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import date
from enum import Enum
from typing import Any

from pydantic import BaseModel

from ci.review.model import CatalogueChange, IntentDelta, JsonValue, SettingChange
from intent.fleet import Fleet
from intent.resolve import Sourced, dotted
from inventory.models import Link
from inventory.problems import Location
from reconciler.render import DesiredFleet
from reconciler.settings import Change, as_desired_state, diff


def plain(value: Any) -> JsonValue:
    """A setting value as JSON has it (models as objects, tuples as lists)."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", by_alias=True, exclude_none=True)
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if isinstance(value, Mapping):
        return {str(plain(k)): plain(v) for k, v in value.items()}
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, date):
        return value.isoformat()
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return str(value)


def _value(sourced: Sourced[Any] | None) -> Any:
    return None if sourced is None else sourced.value


def setting_changes(base: Fleet, head: Fleet) -> tuple[SettingChange, ...]:
    """Every effective setting that differs on a device present at both revisions,
    grouped by (setting, before, after, owner at head)."""
    groups: dict[tuple[str, Location | None, str, str], list[Any]] = {}
    for name, now in head.intent.items():
        then = base.intent.get(name)
        if then is None:
            continue  # a new device: listed among the devices added
        for path in then.values.keys() | now.values.keys():
            old, new = then.values.get(path), now.values.get(path)
            before, after = _value(old), _value(new)
            if before == after:
                continue
            where = new.origin if new is not None else None
            key = (dotted(path), where, repr(before), repr(after))
            group = groups.get(key)
            if group is None:
                base_where = old.origin if old is not None else None
                group = groups[key] = [before, after, base_where, []]
            group[3].append(name)
    found = [
        SettingChange(setting, plain(b), plain(a), where, base_where, tuple(sorted(names)))
        for (setting, where, _, _), (b, a, base_where, names) in groups.items()
    ]
    missing = Location("~", 0, 0)
    found.sort(key=lambda c: (c.location or missing, c.setting, json.dumps(c.after, default=str)))
    return tuple(found)


def _link_key(link: Link) -> str:
    return (
        f"{link.a}:{link.a_port} <-> {link.b}:{link.b_port} "
        f"({link.link_class.value}, {link.length_m:g} m)"
    )


def _catalogue(
    before: Mapping[str, Any], after: Mapping[str, Any], where: Mapping[str, Location]
) -> tuple[CatalogueChange, ...]:
    found = [CatalogueChange(n, "added", where.get(n)) for n in after if n not in before]
    found += [CatalogueChange(n, "removed", None) for n in before if n not in after]
    found += [
        CatalogueChange(n, "changed", where.get(n))
        for n, item in after.items()
        if n in before and before[n] != item
    ]
    return tuple(sorted(found, key=lambda c: (c.change, c.name)))


def intent_delta(base: Fleet, head: Fleet) -> IntentDelta:
    """Settings, devices, cables and bundles that differ between the revisions."""
    old_links = {_link_key(link) for link in base.links}
    new_links = {_link_key(link) for link in head.links}
    return IntentDelta(
        settings=setting_changes(base, head),
        devices=_catalogue(base.devices, head.devices, head.where.devices),
        bundles=_catalogue(base.bundles, head.bundles, head.where.bundles),
        links_added=tuple(sorted(new_links - old_links)),
        links_removed=tuple(sorted(old_links - new_links)),
    )


def rendered_delta(base: DesiredFleet, head: DesiredFleet) -> dict[str, tuple[Change, ...]]:
    """Per device, the rendered settings whose desired value moves (a device new at head
    moves every setting); each change carries its owner at head."""
    moved: dict[str, tuple[Change, ...]] = {}
    for name, wanted in head.items():
        changes = diff(wanted, as_desired_state(base.get(name, {})))
        if changes:
            moved[name] = tuple(changes)
    return moved
