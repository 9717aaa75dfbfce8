"""RFC 6902 JSON Patch over plain JSON values, as SONiC's ``config apply-patch`` reads
it: with the ``jsonpatch`` and ``jsonpointer`` libraries, which its generic config
updater uses, so the simulated switch refuses what a real one refuses.

`apply_patch` works on a deep copy and either returns the whole patched
document or raises `PatchError`; the input is never modified, so a failed
patch changes nothing.
"""

from __future__ import annotations

from typing import Any

import jsonpatch
import jsonpointer


class PatchError(ValueError):
    """The patch is malformed or does not apply to the document."""


def parse_pointer(pointer: str) -> list[str]:
    """Split an RFC 6901 JSON pointer into unescaped reference tokens."""
    try:
        return list(jsonpointer.JsonPointer(pointer).parts)
    except jsonpointer.JsonPointerException as exc:
        raise PatchError(str(exc)) from exc


def apply_patch(doc: Any, patch: Any) -> Any:
    """Apply every operation of `patch` in order to a copy of `doc`."""
    if not isinstance(patch, list):
        raise PatchError("a JSON patch must be an array of operations")
    for op in patch:
        if not isinstance(op, dict) or not isinstance(op.get("path"), str):
            raise PatchError(f"malformed patch operation {op!r}")
    try:
        return jsonpatch.apply_patch(doc, patch, in_place=False)
    except (jsonpatch.JsonPatchException, jsonpointer.JsonPointerException) as exc:
        raise PatchError(str(exc)) from exc
