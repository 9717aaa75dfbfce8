"""Lay imported NetBox records out as the fleet repo's inventory files, and write them.

After :mod:`inventory.netbox_map`: ``render_files`` is pure (records -> file texts);
``read_owned`` and ``write_files`` are the disk edge. The import owns
``inventory/racks.yaml`` and every ``*.yaml`` under ``inventory/devices/`` and
``inventory/links/`` (the layout of examples/orion); any other inventory file (gangs,
records kept only in plumb) is never touched. Output is sorted and formatted one way
only, so importing an unchanged NetBox rewrites nothing.
"""

from __future__ import annotations

import io
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq

from inventory.netbox_map import Imported

RACKS_FILE = "inventory/racks.yaml"
OWNED_DIRS = ("inventory/devices", "inventory/links")

# devices/<file>.yaml by role, links/<file>.yaml by class (the names examples/orion uses)
DEVICE_FILES = {
    "gpu-node": "nodes",
    "leaf": "leaves",
    "frontend": "leaves",
    "spine": "spines",
    "super-spine": "spines",
}
LINK_FILES = {
    "host-leaf": "backend",
    "leaf-spine": "backend",
    "spine-superspine": "backend",
    "frontend": "frontend",
}
_ROLE_ORDER = ("gpu-node", "leaf", "frontend", "spine", "super-spine")
_CLASS_ORDER = ("host-leaf", "leaf-spine", "spine-superspine", "frontend")
ABOUT = {
    RACKS_FILE: "Racks that hold imported devices.",
    "inventory/devices/nodes.yaml": "GPU nodes and their NICs.",
    "inventory/devices/leaves.yaml": "Leaves and frontend switches.",
    "inventory/devices/spines.yaml": "Spines and super-spines.",
    "inventory/links/backend.yaml": "Backend cables (lengths in metres).",
    "inventory/links/frontend.yaml": "Frontend cables (lengths in metres).",
}


def _flow(record: Mapping[str, Any]) -> CommentedMap:
    mapping = CommentedMap(record)
    mapping.fa.set_flow_style()
    return mapping


def _device(record: Mapping[str, Any]) -> CommentedMap:
    device = CommentedMap()
    for key, value in record.items():
        if key == "labels":
            device[key] = _flow(value)
        elif key == "nics":
            device[key] = CommentedSeq(_flow(nic) for nic in value)
        else:
            device[key] = value
    return device


def _header(path: str) -> str:
    schema = "../" * path.count("/") + "schemas/inventory.schema.json"
    return (
        f"# yaml-language-server: $schema={schema}\n"
        f"# {ABOUT.get(path, 'Imported records.')} Imported from NetBox by"
        " `plumb inventory import netbox`:\n"
        "# change them in NetBox and import again; edits made here are overwritten.\n"
    )


def _dump(path: str, section: str, items: Iterable[CommentedMap]) -> str:
    yaml = YAML()
    yaml.width = 4096  # one record per line, never folded
    yaml.indent(mapping=2, sequence=4, offset=2)
    out = io.StringIO()
    out.write(_header(path))
    yaml.dump(CommentedMap({section: CommentedSeq(items)}), out)
    return out.getvalue()


def render_files(imported: Imported) -> dict[str, str]:
    """Repo-relative path -> file text, for every file the import writes."""
    files: dict[str, str] = {}
    if imported.racks:
        files[RACKS_FILE] = _dump(RACKS_FILE, "racks", (_flow(r) for r in imported.racks))
    by_file: dict[str, list[Mapping[str, Any]]] = {}
    for device in sorted(imported.devices, key=lambda d: _ROLE_ORDER.index(d["role"])):
        by_file.setdefault(f"inventory/devices/{DEVICE_FILES[device['role']]}.yaml", []).append(
            device
        )
    for path, devices in by_file.items():
        files[path] = _dump(path, "devices", (_device(d) for d in devices))
    by_file = {}
    for link in sorted(imported.links, key=lambda lk: _CLASS_ORDER.index(lk["class"])):
        by_file.setdefault(f"inventory/links/{LINK_FILES[link['class']]}.yaml", []).append(link)
    for path, links in by_file.items():
        files[path] = _dump(path, "links", (_flow(lk) for lk in links))
    return dict(sorted(files.items()))


def is_owned(path: str) -> bool:
    """Whether the import owns this repo-relative file (it rewrites or deletes it)."""
    return path == RACKS_FILE or (path.endswith(".yaml") and path.rpartition("/")[0] in OWNED_DIRS)


def read_owned(root: Path) -> dict[str, str]:
    """The owned files as they are on disk now."""
    found: dict[str, str] = {}
    candidates = [root / RACKS_FILE, *(p for d in OWNED_DIRS for p in (root / d).glob("*.yaml"))]
    for path in candidates:
        if path.is_file():
            found[path.relative_to(root).as_posix()] = path.read_text(encoding="utf-8")
    return dict(sorted(found.items()))


@dataclass(frozen=True)
class FileChange:
    path: str
    action: str  # create | update | delete


def file_changes(current: Mapping[str, str], rendered: Mapping[str, str]) -> list[FileChange]:
    """What writing ``rendered`` over ``current`` changes, file by file."""
    changes = [
        FileChange(path, "create" if path not in current else "update")
        for path, text in rendered.items()
        if current.get(path) != text
    ]
    changes += [FileChange(path, "delete") for path in current if path not in rendered]
    return sorted(changes, key=lambda c: c.path)


def write_files(root: Path, rendered: Mapping[str, str], changes: Iterable[FileChange]) -> None:
    """Apply ``changes``: each file is written beside and renamed into place."""
    for change in changes:
        target = root / change.path
        if change.action == "delete":
            target.unlink()
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_name(f".{target.name}.partial")
        partial.write_text(rendered[change.path], encoding="utf-8")
        os.replace(partial, target)
