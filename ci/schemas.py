"""JSON Schema for every file kind, generated from the pydantic models."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from intent.models import IntentFile, PlumbConfig, WaiversFile
from inventory.models import InventoryFile
from rollouts.spec import RolloutFile

FILE_KINDS: dict[str, type[BaseModel]] = {
    "plumb": PlumbConfig,
    "inventory": InventoryFile,
    "intent": IntentFile,
    "waivers": WaiversFile,
    "rollout": RolloutFile,
}


def _close_pattern_maps(node: Any) -> None:
    """A mapping keyed by a pattern (device names, labels) refuses keys plumb refuses.

    pydantic emits ``patternProperties`` for ``dict[Name, X]`` without
    ``additionalProperties``, which JSON Schema reads as "any other key is fine".
    """
    if isinstance(node, dict):
        if "patternProperties" in node and "additionalProperties" not in node:
            node["additionalProperties"] = False
        for value in node.values():
            _close_pattern_maps(value)
    elif isinstance(node, list):
        for item in node:
            _close_pattern_maps(item)


def schema_for(kind: str) -> dict[str, Any]:
    model = FILE_KINDS[kind]
    schema = model.model_json_schema(by_alias=True)
    _close_pattern_maps(schema)
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = f"https://plumb.invalid/schemas/{kind}.schema.json"
    return schema


def write_schemas(out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for kind in FILE_KINDS:
        path = out / f"{kind}.schema.json"
        path.write_text(json.dumps(schema_for(kind), indent=2, sort_keys=True) + "\n")
        written.append(path)
    return written
