"""JSON Schema for every file kind, generated from the pydantic models."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from intent.models import IntentFile, PlumbConfig, WaiversFile
from inventory.models import InventoryFile

FILE_KINDS: dict[str, type[BaseModel]] = {
    "plumb": PlumbConfig,
    "inventory": InventoryFile,
    "intent": IntentFile,
    "waivers": WaiversFile,
}


def schema_for(kind: str) -> dict[str, Any]:
    model = FILE_KINDS[kind]
    schema = model.model_json_schema(by_alias=True)
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
