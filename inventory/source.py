"""Parse one YAML file of a fleet repo into plain data plus the location of every value.

This is the first step of the flow: bytes -> (data, locations); reading the bytes from
disk is :mod:`inventory.loadfile`. Everything above it (schemas, policies, plans)
reports problems as ``file:line:col`` by asking the :class:`Document` where a value
came from.

The builder runs on ruamel.yaml's C event parser rather than its composer: events
carry line and column, and skipping the node graph makes a 4,096-node fleet load
several times faster. Building values from events also lets us enforce limits the
composer does not: duplicate keys, alias expansion (billion laughs), nesting depth,
explicit tags and multi-document files are all refused with a location.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Union

from ruamel.yaml import YAML
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.events import (
    AliasEvent,
    DocumentStartEvent,
    Event,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
    StreamEndEvent,
)
from ruamel.yaml.reader import ReaderError

from inventory.problems import InputError, Location, Problem

MAX_FILE_BYTES = 32 * 1024 * 1024
MAX_DEPTH = 64
MAX_ALIAS_EXPANSION = 100_000
MAX_INT_BITS = 4096

Scalar = str | int | float | bool | None
Key = str | int

# A location tree mirrors the data: each entry is (packed position of the value,
# subtree, packed position of its mapping key; the value's own for list items).
# Packed position = line << 16 | column, both 0-based, to keep 4,096-node
# fleets (hundreds of thousands of values) small in memory.
LocTree = Union[dict[Any, "LocEntry"], list["LocEntry"], None]  # noqa: UP007
LocEntry = tuple[int, LocTree, int]

_STANDARD_TAGS = {
    "tag:yaml.org,2002:str",
    "tag:yaml.org,2002:int",
    "tag:yaml.org,2002:float",
    "tag:yaml.org,2002:bool",
    "tag:yaml.org,2002:null",
    "tag:yaml.org,2002:map",
    "tag:yaml.org,2002:seq",
}
_NULL = re.compile(r"^(?:~|null|Null|NULL|)$")
_BOOL = {"true": True, "True": True, "TRUE": True, "false": False, "False": False, "FALSE": False}
_INT = re.compile(r"^[-+]?[0-9]+$")
_OCT = re.compile(r"^0o[0-7]+$")
_HEX = re.compile(r"^0x[0-9a-fA-F]+$")
_FLOAT = re.compile(r"^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?$")
_INF = re.compile(r"^[-+]?\.(?:inf|Inf|INF)$")
_NAN = re.compile(r"^\.(?:nan|NaN|NAN)$")


def _pack(line: int, col: int) -> int:
    return (line << 16) | (col if col < 0xFFFF else 0xFFFF)


Stored = Callable[[], tuple[Any, LocEntry]]
"""Reads a document's (data, location tree) back from where it was kept."""

_ON_REQUEST: Any = object()
"""The data of a document that left it in its store (:meth:`Document.without_data`)."""


@dataclass(frozen=True)
class Document:
    """One parsed file: its repo-relative path, its data and where each value sits.

    A document read from the parse cache (:mod:`inventory.parsecache`) reads its
    location tree back from there when first asked: a clean fleet asks for few
    locations in its bulk files, and the tree is larger than the data. A long-lived
    holder keeps it :meth:`without_data`.
    """

    path: str
    held_data: Any = field(repr=False)
    held_locs: LocEntry | None = field(repr=False)
    stored: Stored | None = field(default=None, repr=False, compare=False, kw_only=True)

    @property
    def data(self) -> Any:
        """The parsed data (read back from the store each time when not held)."""
        if self.held_data is _ON_REQUEST:
            assert self.stored is not None
            return self.stored()[0]
        return self.held_data

    @property
    def locs(self) -> LocEntry:
        """The location tree: (packed position, subtree, packed key position)."""
        if self.held_locs is None:
            assert self.stored is not None, "a document holds its locations or a store"
            object.__setattr__(self, "held_locs", self.stored()[1])
        assert self.held_locs is not None
        return self.held_locs

    def without_data(self) -> Document:
        """This document as a long-lived holder keeps it: a stored document leaves its
        data in the store (its locations too, until asked for); any other is itself."""
        if self.stored is None:
            return self
        return Document(self.path, _ON_REQUEST, self.held_locs, stored=self.stored)

    def where(self, *keys: Key) -> Location:
        """Location of the value at ``keys`` (or of its deepest existing ancestor)."""
        packed, tree, _ = self.locs
        for key in keys:
            entry: LocEntry | None = None
            if isinstance(tree, dict):
                entry = tree.get(key)
            elif isinstance(tree, list) and isinstance(key, int) and 0 <= key < len(tree):
                entry = tree[key]
            if entry is None:
                break
            packed, tree, _ = entry
        return Location(self.path, (packed >> 16) + 1, (packed & 0xFFFF) + 1)

    def key_where(self, *keys: Key) -> Location:
        """Location of the mapping key at ``keys`` (used for duplicate and unknown keys)."""
        if not keys:
            return self.where()
        parent = self._subtree(keys[:-1])
        if isinstance(parent, dict):
            entry = parent.get(keys[-1])
            if entry is not None:
                return Location(self.path, (entry[2] >> 16) + 1, (entry[2] & 0xFFFF) + 1)
        return self.where(*keys)

    def _subtree(self, keys: Sequence[Key]) -> LocTree:
        _, tree, _ = self.locs
        for key in keys:
            if isinstance(tree, dict) and key in tree:
                tree = tree[key][1]
            elif isinstance(tree, list) and isinstance(key, int) and 0 <= key < len(tree):
                tree = tree[key][1]
            else:
                return None
        return tree


_STRING_START = frozenset("abcdeghijklmopqrsuvwxyzABCDEGHIJKLMOPQRSUVWXYZ_/:@%&*!?`'\"<>|=,;#^$")


_DIGITS = frozenset("0123456789")
_SHORT_NUMBER = 1000  # digits: an integer this short is far below MAX_INT_BITS


def resolve_plain(text: str) -> Scalar:
    """Resolve an unquoted scalar by the YAML 1.2 core schema (``yes``/``on`` stay strings)."""
    if text and text[0] in _STRING_START:
        return text
    if text and text[0] in _DIGITS:
        # A digit first (counts, lengths, addresses): null, a bool, an infinity or a NaN
        # starts otherwise, so only the number forms are tried.
        number = _number(text)
        return text if number is None else number
    if _NULL.match(text):
        return None
    if text in _BOOL:
        return _BOOL[text]
    number = _number(text)
    if number is not None:
        return number
    if _INF.match(text):
        return float("-inf") if text.startswith("-") else float("inf")
    if _NAN.match(text):
        return float("nan")
    return text


def _number(text: str) -> int | float | None:
    """The integer (decimal, octal, hex) or float ``text`` writes, or None."""
    if _INT.match(text):
        return int(text, 10)
    if _OCT.match(text):
        return int(text[2:], 8)
    if _HEX.match(text):
        return int(text[2:], 16)
    if _FLOAT.match(text):
        return float(text)
    return None


class _Builder:
    """Turns one document's events into (data, LocTree), enforcing the limits."""

    def __init__(self, path: str, events: Iterator[Event]) -> None:
        self.path = path
        self.events = events
        self.anchors: dict[str, tuple[Any, LocTree, int]] = {}
        self.expanded = 0

    def fail(self, event: Event, message: str) -> InputError:
        mark = event.start_mark
        return InputError([Problem(Location(self.path, mark.line + 1, mark.column + 1), message)])

    def node(self, event: Event, depth: int) -> tuple[Any, LocEntry, int]:
        """Build the value that starts at ``event``; returns (value, loc entry, weight)."""
        mark = event.start_mark
        column = mark.column
        pos = (mark.line << 16) | (column if column < 0xFFFF else 0xFFFF)
        if type(event) is ScalarEvent and event.anchor is None and event.tag is None:
            # Fast path for the bulk of a fleet: untagged plain words and quoted strings.
            text: str = event.value
            if not event.implicit[0]:
                return text, (pos, None, pos), 1
            if text and text[0] in _STRING_START:
                return text, (pos, None, pos), 1
            if text and text[0] in _DIGITS and len(text) < _SHORT_NUMBER:
                number = _number(text)
                return text if number is None else number, (pos, None, pos), 1
        if depth > MAX_DEPTH:
            raise self.fail(event, f"nesting deeper than {MAX_DEPTH} levels")
        if isinstance(event, AliasEvent):
            if event.anchor not in self.anchors:
                raise self.fail(event, f"alias *{event.anchor} has no anchor")
            value, tree, weight = self.anchors[event.anchor]
            self.expanded += weight
            if self.expanded > MAX_ALIAS_EXPANSION:
                raise self.fail(
                    event,
                    f"aliases expand to more than {MAX_ALIAS_EXPANSION} values "
                    "(an alias bomb?); write the values out instead",
                )
            return value, (pos, tree, pos), weight
        tag = getattr(event, "tag", None)
        if tag is not None and tag not in _STANDARD_TAGS and tag != "!":
            raise self.fail(event, f"tag {tag} is not allowed; plumb files hold plain data")
        if isinstance(event, ScalarEvent):
            value = self.scalar(event)
            result: tuple[Any, LocEntry, int] = (value, (pos, None, pos), 1)
        elif isinstance(event, MappingStartEvent):
            result = self.mapping(event, pos, depth)
        elif isinstance(event, SequenceStartEvent):
            result = self.sequence(pos, depth)
        else:
            raise self.fail(event, f"unexpected {type(event).__name__}")
        anchor = getattr(event, "anchor", None)
        if anchor:
            self.anchors[anchor] = (result[0], result[1][1], result[2])
        return result

    def scalar(self, event: ScalarEvent) -> Scalar:
        # Python refuses to print (and int() to parse) integers past a few thousand
        # digits; refuse them here so no later message can fail on one.
        try:
            value = self._resolve(event)
        except ValueError:
            value = None
            oversize = True
        else:
            oversize = isinstance(value, int) and value.bit_length() > MAX_INT_BITS
        if oversize:
            raise self.fail(event, f"integer is too large (more than {MAX_INT_BITS} bits)")
        return value

    def _resolve(self, event: ScalarEvent) -> Scalar:
        text: str = event.value
        tag = event.tag
        if tag == "tag:yaml.org,2002:str" or (not event.implicit[0] and tag is None):
            return text
        if tag in (None, "!"):
            return resolve_plain(text) if event.implicit[0] else text
        value = resolve_plain(text)
        expected = tag.rsplit(":", 1)[-1]
        kinds = {"int": int, "float": float, "bool": bool, "null": type(None)}
        kind = kinds.get(expected)
        if kind is not None and not isinstance(value, kind):
            raise self.fail(event, f"{text!r} is not a valid !!{expected}")
        return value

    def mapping(self, start: Event, pos: int, depth: int) -> tuple[Any, LocEntry, int]:
        data: dict[Any, Any] = {}
        tree: dict[Any, Any] = {}
        weight = 1
        while True:
            event = next(self.events)
            if type(event) is MappingEndEvent:
                return data, (pos, tree, pos), weight
            if not isinstance(event, ScalarEvent):
                raise self.fail(event, "mapping keys must be plain scalars")
            text = event.value
            if text and text[0] in _STRING_START and event.implicit[0] and event.tag is None:
                key: Any = text  # a plain word: a string
            else:
                key = self.scalar(event)
                if not isinstance(key, (str, int)) or isinstance(key, bool):
                    raise self.fail(event, f"mapping key {event.value!r} must be a string")
            mark = event.start_mark
            column = mark.column
            key_pos = (mark.line << 16) | (column if column < 0xFFFF else 0xFFFF)
            if key in data:
                first = tree[key][2]
                raise self.fail(
                    event,
                    f"duplicate key {key!r} (first defined at line {(first >> 16) + 1})",
                )
            value, entry, child_weight = self.node(next(self.events), depth + 1)
            data[key] = value
            tree[key] = (entry[0], entry[1], key_pos)
            weight += child_weight

    def sequence(self, pos: int, depth: int) -> tuple[Any, LocEntry, int]:
        data: list[Any] = []
        tree: list[LocEntry] = []
        weight = 1
        while True:
            event = next(self.events)
            if type(event) is SequenceEndEvent:
                return data, (pos, tree, pos), weight
            value, entry, child_weight = self.node(event, depth + 1)
            data.append(value)
            tree.append(entry)
            weight += child_weight


def _line_of_offset(raw: bytes, offset: int) -> tuple[int, int]:
    line = raw.count(b"\n", 0, offset) + 1
    col = offset - (raw.rfind(b"\n", 0, offset) + 1) + 1
    return line, col


# Characters outside YAML 1.2's c-printable set (the reader refuses them anywhere).
_NOT_PRINTABLE = re.compile(
    "[^\x09\x0a\x0d\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]"
)


def _forbidden_character(path: str, text: str, fallback: str) -> Problem:
    """Where the first character YAML forbids is, by line and column of characters (the
    reader's own offset counts bytes or characters depending on the parser)."""
    found = _NOT_PRINTABLE.search(text)
    if found is None:
        return Problem(Location(path, 1, 1), f"YAML syntax: {fallback}")
    at = found.start()
    line = text.count("\n", 0, at) + 1
    col = at - (text.rfind("\n", 0, at) + 1) + 1
    return Problem(
        Location(path, line, col),
        f"YAML syntax: control character U+{ord(found.group()):04X} is not allowed"
        " (write it as an escape in a double-quoted string)",
    )


def parse_text(path: str, raw: bytes) -> Document:
    """Parse bytes already read from ``path`` (display path) into a Document."""
    if len(raw) > MAX_FILE_BYTES:
        raise InputError(
            [
                Problem(
                    Location(path, 1, 1),
                    f"file is {len(raw):,} bytes; the limit is "
                    f"{MAX_FILE_BYTES:,} (split it into several files)",
                )
            ]
        )
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line, col = _line_of_offset(raw, exc.start)
        raise InputError(
            [Problem(Location(path, line, col), f"not UTF-8: byte 0x{raw[exc.start]:02x}")]
        ) from None
    if text.startswith("\ufeff"):
        text = text[1:]
    yaml = YAML(typ="safe", pure=False)
    try:
        events = iter(yaml.parse(text))
        next(events)  # StreamStartEvent
        first = next(events)
        if isinstance(first, StreamEndEvent):
            return Document(path, None, (0, None, 0))
        if not isinstance(first, DocumentStartEvent):
            raise InputError([Problem(Location(path, 1, 1), "not a YAML document")])
        builder = _Builder(path, events)
        data, locs, _ = builder.node(next(events), 0)
        next(events)  # DocumentEndEvent
        trailing = next(events)
        if not isinstance(trailing, StreamEndEvent):
            raise builder.fail(trailing, "more than one YAML document in one file")
        return Document(path, data, locs)
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)
        message = " ".join(part for part in (exc.context, exc.problem) if part)
        raise InputError([Problem(Location(path, line, col), f"YAML syntax: {message}")]) from None
    except ReaderError as exc:  # a character YAML forbids: no mark, only an offset
        raise InputError([_forbidden_character(path, text, str(exc))]) from None
    except YAMLError as exc:
        raise InputError([Problem(Location(path, 1, 1), f"YAML syntax: {exc}")]) from None
    except RecursionError:
        raise InputError([Problem(Location(path, 1, 1), "nesting too deep")]) from None


def walk(data: Any, prefix: tuple[Key, ...] = ()) -> Iterator[tuple[tuple[Key, ...], Any]]:
    """Yield (key path, leaf value) for every scalar or list leaf under ``data``."""
    if isinstance(data, Mapping):
        for key, value in data.items():
            yield from walk(value, (*prefix, key))
    else:
        yield prefix, data
