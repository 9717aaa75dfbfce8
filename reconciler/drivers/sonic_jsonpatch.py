"""RFC 6902 JSON patches of a SONiC running configuration (pure).

:func:`json_patch` turns the difference between two running configurations into
``add`` / ``replace`` / ``remove`` operations at table, key or field level, in the
path convention of ``config apply-patch``: ``/TABLE/KEY/field`` on a single-ASIC
switch, ``/localhost/...`` and ``/asic<N>/...`` on a multi-ASIC one; a config_db key
such as ``Ethernet0|10.0.0.0/31`` is one pointer token (its ``/`` escaped as ``~1``).
The FRR text (``bgpraw``) is output only and never patched. :func:`apply_json_patch`
applies such a patch locally, so compare can parse what the candidate would hold.

Pointers and patch application are the ``jsonpointer`` and ``jsonpatch`` libraries,
which SONiC's generic config updater itself uses; this module keeps SONiC's rules on
top (the levels patched, the namespaces, what is never patched) and maps the
libraries' errors once::

    PatchDoesNotApply (ValueError)
        from jsonpatch.JsonPatchException (a conflict, a missing member, a bad
        operation) and jsonpointer.JsonPointerException (a bad pointer)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from inventory.extras import optional_imports
from reconciler.drivers.sonic_parse import namespaces

with optional_imports():
    import jsonpatch
    import jsonpointer

Patch = list[dict[str, Any]]
OUTPUT_ONLY = ("bgpraw",)
OPERATIONS = ("add", "replace", "remove")  # all that json_patch writes
MESSAGE_CHARS = 200


class PatchDoesNotApply(ValueError):
    """A patch that does not apply to a running configuration."""


def pointer(*tokens: str) -> str:
    """An RFC 6901 JSON pointer (``~`` and ``/`` escaped)."""
    path: str = jsonpointer.JsonPointer.from_parts(tokens).path
    return path


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
    """``db`` with add/replace/remove operations on object members applied (``db``
    itself is left as it was); raises :class:`PatchDoesNotApply`."""
    for op in patch:
        if op.get("op") not in OPERATIONS:
            raise PatchDoesNotApply(f"unsupported patch operation {op.get('op')!r}")
    try:
        result = jsonpatch.apply_patch(dict(db), list(patch), in_place=False)
    except (jsonpatch.JsonPatchException, jsonpointer.JsonPointerException) as exc:
        # jsonpointer quotes the whole object it could not descend into: keep the start
        raise PatchDoesNotApply(f"{type(exc).__name__}: {str(exc)[:MESSAGE_CHARS]}") from exc
    if not isinstance(result, dict):
        raise PatchDoesNotApply("the patched configuration is not an object")
    return result
