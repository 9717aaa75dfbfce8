"""Parsed YAML kept by content hash, so an unchanged bulk file is not parsed again.

Parsing is most of a large fleet's load (a 4,096-node fleet's 7 MB of cables takes
seconds; reading back its parsed form takes a tenth of that). :func:`parse_cached`
keys a file's parsed data and locations by the SHA-256 of its bytes together with the
parser's own source and the Python version, so an edited file, a changed parser or
another interpreter never sees a stale entry. Locations are part of what is kept:
a finding in a cached file still points at its line and column.

Entries live in ``$PLUMB_CACHE_DIR`` (``off`` turns the cache off), else
``$XDG_CACHE_HOME/plumb/parsed``, else ``~/.cache/plumb/parsed``; the folder belongs to
the user like the rest of their cache. Files under :data:`MIN_BYTES` are parsed every
time (reading an entry would cost as much). A cache that cannot be read or written
(read-only home, full disk, a damaged entry) is passed over: the file is parsed.
The folder keeps at most :data:`MAX_ENTRIES` entries, the oldest dropped first.

A document from the cache holds its data; its location tree stays in the entry until
a location is asked for (:class:`~inventory.source.Document`). A file parsed and kept
is returned as read back from its new entry, as the next run will read it.
"""

from __future__ import annotations

import hashlib
import marshal
import os
import sys
import tempfile
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

from inventory import source
from inventory.source import Document, LocEntry, Stored

Parse = Callable[[str, bytes], Document]

CACHE_ENV = "PLUMB_CACHE_DIR"
MIN_BYTES = 64 * 1024
MAX_ENTRIES = 512


def cache_dir() -> Path | None:
    """Where entries are kept, or None when the cache is off."""
    from inventory.envsettings import read_settings  # only once a file is large enough

    configured = read_settings().cache_dir
    if configured == "off":
        return None
    if configured:
        return Path(configured)
    base = os.environ.get("XDG_CACHE_HOME")
    return (Path(base) if base else Path.home() / ".cache") / "plumb" / "parsed"


@cache
def _salt() -> bytes:
    """What else decides a parse: the parser's source, the entry's layout (this module)
    and marshal's Python version."""
    parser = Path(source.__file__).read_bytes() + Path(__file__).read_bytes()
    return hashlib.sha256(parser + sys.version.encode()).digest()


def entry_path(folder: Path, raw: bytes) -> Path:
    """The entry of the file whose bytes are ``raw``."""
    return folder / f"{hashlib.sha256(_salt() + raw).hexdigest()}.marshal"


_HEADER = 8
"""An entry is the length of its data part (8 bytes, little-endian), the data, then the
location tree: each marshalled on its own, so the tree is read only when asked for."""
_LOCS_VERSION = 2
"""The location tree (tuples of numbers) is marshalled without the format's references
to objects written before: half the time to write, and little to share."""


def _part(entry: Path, which: int) -> Any:
    blob = memoryview(entry.read_bytes())
    split = _HEADER + int.from_bytes(blob[:_HEADER], "little")
    if len(blob) < split:
        raise ValueError("entry is cut short")
    return marshal.loads(blob[_HEADER:split] if which == 0 else blob[split:])


def _stored(entry: Path, path: str, raw: bytes, parse: Parse) -> Stored:
    """Reads the entry back; should it be gone or damaged by then, parses ``raw`` again."""

    def read_back() -> tuple[Any, LocEntry]:
        try:
            data, locs = _part(entry, 0), _part(entry, 1)
        except (OSError, EOFError, ValueError, TypeError):
            data, locs = None, None
        if not isinstance(locs, tuple) or len(locs) != 3:
            doc = parse(path, raw)
            return doc.data, doc.locs
        return data, locs

    return read_back


def _read(entry: Path, path: str, raw: bytes, parse: Parse) -> Document | None:
    try:
        data = _part(entry, 0)
    except (OSError, EOFError, ValueError, TypeError):
        return None
    return Document(path, data, None, stored=_stored(entry, path, raw, parse))


def _write(folder: Path, entry: Path, doc: Document) -> bool:
    """Keep ``doc`` at ``entry``; False when the cache cannot be written."""
    try:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        data = marshal.dumps(doc.data)
        locs = marshal.dumps(doc.locs, _LOCS_VERSION)
        fd, temporary = tempfile.mkstemp(dir=folder, prefix=".entry-")
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(len(data).to_bytes(_HEADER, "little"))
                out.write(data)
                out.write(locs)
            os.replace(temporary, entry)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
        _prune(folder)
    except (OSError, ValueError):
        return False  # no cache this time; the parse stands
    return True


def _prune(folder: Path) -> None:
    entries = list(folder.glob("*.marshal"))
    if len(entries) <= MAX_ENTRIES:
        return
    by_age = sorted(entries, key=lambda p: p.stat().st_mtime)
    for old in by_age[: len(entries) - MAX_ENTRIES]:
        old.unlink(missing_ok=True)


def parse_cached(path: str, raw: bytes, parse: Parse) -> Document:
    """``parse(path, raw)``, or its earlier result for the same bytes. Problems found
    while parsing are raised every time (a file that fails is never kept)."""
    if len(raw) < MIN_BYTES:
        return parse(path, raw)
    folder = cache_dir()
    if folder is None:
        return parse(path, raw)
    entry = entry_path(folder, raw)
    found = _read(entry, path, raw, parse)
    if found is not None:
        return found
    doc = parse(path, raw)
    if not _write(folder, entry, doc):
        return doc
    # The document a warm run gets: the data read back from the entry (compact in memory,
    # where the parser's objects sit among its location tree's: the policies walking a
    # 4,096-node fleet read from there 0.2 CPU s faster), the locations when asked.
    del doc
    kept = _read(entry, path, raw, parse)
    return kept if kept is not None else parse(path, raw)
