"""RFC 6902 JSON patches of a SONiC running configuration (pure).

:func:`json_patch` turns the difference between two running configurations into
``add`` / ``replace`` / ``remove`` operations at table, key or field level, in the
path convention of ``config apply-patch``: ``/TABLE/KEY/field`` on a single-ASIC
switch, ``/localhost/...`` and ``/asic<N>/...`` on a multi-ASIC one. The FRR text
(``bgpraw``) is output only and never patched. :func:`apply_json_patch` applies such a
patch locally, so compare can parse what the candidate would hold.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from reconciler.drivers.sonic_parse import namespaces

Patch = list[dict[str, Any]]
OUTPUT_ONLY = ("bgpraw",)


def pointer(*tokens: str) -> str:
    """An RFC 6901 JSON pointer (``~`` and ``/`` escaped)."""
    return "".join("/" + t.replace("~", "~0").replace("/", "~1") for t in tokens)


def _tables(prefix: tuple[str, ...], old: Mapping[str, Any], new: Mapping[str, Any]) -> Patch:
    ops: Patch = []
    for name in sorted((set(old) | set(new)) - set(OUTPUT_ONLY)):
        if name not in new:
            ops.append({"op": "remove", "path": pointer(*prefix, name)})
        elif name not in old:
            ops.append({"op": "add", "path": pointer(*prefix, name), "value": new[name]})
        else:
            ops += _keys((*prefix, name), old[name], new[name])
    return ops


def _keys(prefix: tuple[str, ...], old: Mapping[str, Any], new: Mapping[str, Any]) -> Patch:
    ops: Patch = []
    for key in sorted(set(old) | set(new)):
        was, now = old.get(key), new.get(key)
        path = pointer(*prefix, key)
        if now is None:
            ops.append({"op": "remove", "path": path})
        elif was is None:
            ops.append({"op": "add", "path": path, "value": now})
        else:
            for field in sorted(set(was) | set(now)):
                at = pointer(*prefix, key, field)
                if field not in now:
                    ops.append({"op": "remove", "path": at})
                elif field not in was:
                    ops.append({"op": "add", "path": at, "value": now[field]})
                elif was[field] != now[field]:
                    ops.append({"op": "replace", "path": at, "value": now[field]})
    return ops


def json_patch(old: Mapping[str, Any], new: Mapping[str, Any]) -> Patch:
    """Operations taking running configuration ``old`` to ``new`` (same shape)."""
    spaces_old, spaces_new = namespaces(old), namespaces(new)
    ops: Patch = []
    for space in sorted(set(spaces_old) | set(spaces_new)):
        prefix = (space,) if space else ()
        ops += _tables(prefix, spaces_old.get(space, {}), spaces_new.get(space, {}))
    return ops


def apply_json_patch(db: Mapping[str, Any], patch: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """``db`` with add/replace/remove operations on object members applied."""
    result: dict[str, Any] = copy.deepcopy(dict(db))
    for op in patch:
        tokens = [t.replace("~1", "/").replace("~0", "~") for t in op["path"].split("/")[1:]]
        parent: Any = result
        for token in tokens[:-1]:
            parent = parent[token]
        if op["op"] == "remove":
            del parent[tokens[-1]]
        elif op["op"] in ("add", "replace"):
            if op["op"] == "replace" and tokens[-1] not in parent:
                raise KeyError(op["path"])
            parent[tokens[-1]] = copy.deepcopy(op["value"])
        else:
            raise ValueError(f"unsupported patch operation {op['op']!r}")
    return result
