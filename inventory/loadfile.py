"""Load one file of a fleet repo from disk: the entry to the flow for every YAML file.

:func:`load_document` refuses a path that leaves the repo and an oversize file, parses
the bytes with :func:`inventory.source.parse_text` (through the parse cache of
:mod:`inventory.parsecache`), and expands an inventory file's compact ``topology:``
section into records (:mod:`inventory.topology`), so every reader above gets plain
records with their locations.
"""

from __future__ import annotations

from pathlib import Path

from inventory.parsecache import parse_cached
from inventory.problems import InputError, Location, Problem
from inventory.source import MAX_FILE_BYTES, Document, parse_text


def load_document(root: Path, relative: Path) -> Document:
    """Read ``root/relative``; refuse symlinks that leave the repo, and oversize files."""
    display = relative.as_posix()
    full = root / relative
    try:
        resolved = full.resolve(strict=True)
    except (OSError, RuntimeError) as exc:
        raise InputError([Problem(Location(display, 1, 1), f"cannot open: {exc}")]) from None
    root_resolved = root.resolve()
    if resolved != root_resolved and root_resolved not in resolved.parents:
        raise InputError(
            [Problem(Location(display, 1, 1), f"points outside the fleet repo (to {resolved})")]
        )
    if not resolved.is_file():
        raise InputError([Problem(Location(display, 1, 1), "not a regular file")])
    size = resolved.stat().st_size
    if size > MAX_FILE_BYTES:
        raise InputError(
            [
                Problem(
                    Location(display, 1, 1),
                    f"file is {size:,} bytes; the limit is "
                    f"{MAX_FILE_BYTES:,} (split it into several files)",
                )
            ]
        )
    try:
        raw = resolved.read_bytes()
    except OSError as exc:
        raise InputError([Problem(Location(display, 1, 1), f"cannot read: {exc}")]) from None
    doc = parse_cached(display, raw, parse_text)
    if display.startswith("inventory/") and isinstance(doc.data, dict) and "topology" in doc.data:
        # imported here: most fleets write records, and the expander's modules add
        # about 11 ms to every load
        from inventory.topology import expand_document

        return expand_document(doc)
    return doc
