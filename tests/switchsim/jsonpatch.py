"""RFC 6902 JSON Patch over plain JSON values, as SONiC's ``config apply-patch`` reads it.

`apply_patch` works on a deep copy and either returns the whole patched
document or raises `PatchError`; the input is never modified, so a failed
patch changes nothing.
"""

from __future__ import annotations

import copy
from typing import Any

OPERATIONS = ("add", "remove", "replace", "move", "copy", "test")


class PatchError(ValueError):
    """The patch is malformed or does not apply to the document."""


def parse_pointer(pointer: str) -> list[str]:
    """Split an RFC 6901 JSON pointer into unescaped reference tokens."""
    if pointer == "":
        return []
    if not pointer.startswith("/"):
        raise PatchError(f"JSON pointer {pointer!r} must start with '/'")
    return [token.replace("~1", "/").replace("~0", "~") for token in pointer[1:].split("/")]


def _index(container: list[Any], token: str, allow_end: bool) -> int:
    if allow_end and token == "-":
        return len(container)
    if not token.isdigit() or (token != "0" and token.startswith("0")):
        raise PatchError(f"invalid array index {token!r}")
    index = int(token)
    if index > len(container) or (index == len(container) and not allow_end):
        raise PatchError(f"array index {index} out of range")
    return index


def _parent(doc: Any, tokens: list[str]) -> tuple[Any, str]:
    node = doc
    for token in tokens[:-1]:
        node = _child(node, token)
    return node, tokens[-1]


def _child(node: Any, token: str) -> Any:
    if isinstance(node, dict):
        if token not in node:
            raise PatchError(f"path member {token!r} does not exist")
        return node[token]
    if isinstance(node, list):
        return node[_index(node, token, allow_end=False)]
    raise PatchError(f"cannot descend into a scalar at {token!r}")


def get_value(doc: Any, pointer: str) -> Any:
    """The value `pointer` names in `doc`; PatchError if absent."""
    node = doc
    for token in parse_pointer(pointer):
        node = _child(node, token)
    return node


def _add(doc: Any, tokens: list[str], value: Any) -> Any:
    if not tokens:
        return value
    parent, last = _parent(doc, tokens)
    if isinstance(parent, dict):
        parent[last] = value
    elif isinstance(parent, list):
        parent.insert(_index(parent, last, allow_end=True), value)
    else:
        raise PatchError("cannot add a member to a scalar")
    return doc


def _remove(doc: Any, tokens: list[str]) -> tuple[Any, Any]:
    if not tokens:
        raise PatchError("cannot remove the whole document")
    parent, last = _parent(doc, tokens)
    if isinstance(parent, dict):
        if last not in parent:
            raise PatchError(f"path member {last!r} does not exist")
        return doc, parent.pop(last)
    if isinstance(parent, list):
        return doc, parent.pop(_index(parent, last, allow_end=False))
    raise PatchError("cannot remove a member of a scalar")


def _operation(doc: Any, op: Any) -> Any:
    if (
        not isinstance(op, dict)
        or op.get("op") not in OPERATIONS
        or not isinstance(op.get("path"), str)
    ):
        raise PatchError(f"malformed patch operation {op!r}")
    kind, tokens = op["op"], parse_pointer(op["path"])
    if kind in ("add", "replace", "test") and "value" not in op:
        raise PatchError(f"'{kind}' operation at {op['path']!r} lacks a value")
    if kind == "add":
        return _add(doc, tokens, copy.deepcopy(op["value"]))
    if kind == "remove":
        return _remove(doc, tokens)[0]
    if kind == "replace":
        doc, _old = _remove(doc, tokens) if tokens else (doc, None)
        return _add(doc, tokens, copy.deepcopy(op["value"]))
    if kind == "test":
        if get_value(doc, op["path"]) != op["value"]:
            raise PatchError(f"test failed at {op['path']!r}")
        return doc
    source = op.get("from")
    if not isinstance(source, str):
        raise PatchError(f"'{kind}' operation lacks 'from'")
    if kind == "move":
        if op["path"].startswith(source + "/"):
            raise PatchError("cannot move a value into one of its own children")
        doc, value = _remove(doc, parse_pointer(source))
        return _add(doc, tokens, value)
    return _add(doc, tokens, copy.deepcopy(get_value(doc, source)))


def apply_patch(doc: Any, patch: Any) -> Any:
    """Apply every operation of `patch` in order to a copy of `doc`."""
    if not isinstance(patch, list):
        raise PatchError("a JSON patch must be an array of operations")
    result = copy.deepcopy(doc)
    for op in patch:
        result = _operation(result, op)
    return result
