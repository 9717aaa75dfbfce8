"""Write expanded inventory records back as ordinary YAML (``plumb inventory expand``).

The reverse of nothing: this is for review and for tools that want records. Each record
is one flow mapping on one line, as in a hand-written file; a string is written bare
only when YAML 1.2 reads it back as the same string, otherwise double-quoted. Reading
the text back gives the same records, so a fleet loads the same from either form.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from inventory.source import resolve_plain

SECTIONS = ("racks", "devices", "links", "gangs")
_BARE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_./-]*$")


def scalar_text(value: object) -> str:
    """``value`` as a YAML scalar that reads back as ``value``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    text = str(value)
    if _BARE.match(text) and resolve_plain(text) == text:
        return text
    return json.dumps(text, ensure_ascii=False)


def flow_text(value: Any) -> str:
    """A value (mapping, list or scalar) in YAML flow style on one line."""
    if isinstance(value, Mapping):
        items = ", ".join(f"{scalar_text(k)}: {flow_text(v)}" for k, v in value.items())
        return "{" + items + "}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(flow_text(v) for v in value) + "]"
    return scalar_text(value)


def records_text(data: Mapping[str, Any], header: str = "") -> str:
    """The inventory sections of ``data`` (``topology`` left out) as YAML text."""
    out = [header]
    for section in SECTIONS:
        records = data.get(section)
        if records is None:
            continue
        if not records:
            out.append(f"{section}: []\n")
            continue
        out.append(f"{section}:\n")
        out.extend(f"  - {flow_text(record)}\n" for record in records)
    return "".join(out)
