"""An inventory document whose ``topology:`` section has been expanded into records.

:class:`ExpandedDocument` holds the file's hand-written records followed by the
generated ones, so schema checks, reference checks and policies see one list of
ordinary records. Asked where a generated record (or one of its values) sits, it
answers with the rule's place in the file, or the exception's for a value an exception
set, as a :class:`GeneratedLocation` that also names the record: every problem
reported there reads ``file:line:col: cable a:p -> b:q (from rule 'rails'): ...``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from inventory.problems import Location
from inventory.source import Document, Key

SECTIONS = ("racks", "devices", "links")
KINDS = {"racks": "rack", "devices": "device", "links": "cable"}


class GeneratedLocation(Location):
    """A place in a topology section plus the generated record it is about (``about``).

    Compares, sorts and hashes as the plain :class:`Location` it extends, so problems
    from hand-written and generated records sort together; :class:`Problem` puts
    ``about`` in front of its message."""

    about: str

    def __init__(self, file: str, line: int, col: int, about: str = "") -> None:
        super().__init__(file, line, col)
        object.__setattr__(self, "about", about)

    def _key(self) -> tuple[str, int, int]:
        return (self.file, self.line, self.col)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Location):
            return NotImplemented
        return self._key() == (other.file, other.line, other.col)

    def __hash__(self) -> int:
        return hash(self._key())

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, Location):
            return NotImplemented
        return self._key() < (other.file, other.line, other.col)

    def __le__(self, other: object) -> bool:
        if not isinstance(other, Location):
            return NotImplemented
        return self._key() <= (other.file, other.line, other.col)

    def __gt__(self, other: object) -> bool:
        if not isinstance(other, Location):
            return NotImplemented
        return self._key() > (other.file, other.line, other.col)

    def __ge__(self, other: object) -> bool:
        if not isinstance(other, Location):
            return NotImplemented
        return self._key() >= (other.file, other.line, other.col)


@dataclass(frozen=True, slots=True)
class RuleRef:
    """The rule a generated record comes from: its name and where it is written."""

    section: str
    name: str
    keys: tuple[Key, ...]
    nic_templates: tuple[int, ...] = ()
    table: bool = False


@dataclass(frozen=True, slots=True)
class Change:
    """An exception that set fields of a generated record."""

    keys: tuple[Key, ...]
    fields: Mapping[str, tuple[Key, ...]]
    """Each field set, and the exception that set it."""


@dataclass(frozen=True)
class ExpandedDocument(Document):
    """A document plus, for each generated record, its rule and any exception."""

    hand: Mapping[str, int]
    rules: Mapping[str, Sequence[RuleRef]]
    changes: Mapping[tuple[str, int], Change]

    def generated(self, section: Key, index: Key) -> tuple[RuleRef, Change | None] | None:
        """The rule (and change) of the record at ``section[index]``, if generated."""
        if not isinstance(index, int) or not isinstance(section, str):
            return None
        refs = self.rules.get(section)
        start = self.hand.get(section, 0)
        if refs is None or not start <= index < start + len(refs):
            return None
        return refs[index - start], self.changes.get((section, index - start))

    def about(self, section: str, index: int) -> str:
        """``cable a:p -> b:q (from rule 'rails')``: the record as a message names it."""
        found = self.generated(section, index)
        if found is None:
            return ""
        ref, change = found
        record: Any = self.data[section][index]
        if section == "links":
            what = (
                f"cable {record.get('a')}:{record.get('a_port')} -> "
                f"{record.get('b')}:{record.get('b_port')}"
            )
        else:
            what = f"{KINDS[section]} {record.get('name')}"
        if change is None:
            return f"{what} (from rule '{ref.name}')"
        line = Document.where(self, *change.keys).line
        return f"{what} (from rule '{ref.name}', changed by the exception at line {line})"

    def where(self, *keys: Key) -> Location:
        found = self.generated(*keys[:2]) if len(keys) >= 2 else None
        if found is None:
            return Document.where(self, *keys)
        return self._generated_where(keys, found, Document.where)

    def key_where(self, *keys: Key) -> Location:
        found = self.generated(*keys[:2]) if len(keys) >= 2 else None
        if found is None:
            return Document.key_where(self, *keys)
        return self._generated_where(keys, found, Document.key_where)

    def _generated_where(
        self, keys: tuple[Key, ...], found: tuple[RuleRef, Change | None], locate: Any
    ) -> Location:
        ref, change = found
        section, index, rest = keys[0], keys[1], keys[2:]
        assert isinstance(section, str) and isinstance(index, int)
        if change is not None and not rest:
            place: Location = locate(self, *change.keys)
        elif change is not None and rest[0] in change.fields:
            place = locate(self, *change.fields[str(rest[0])], "set", *rest)
        else:
            place = locate(self, *ref.keys, *self._template_path(ref, rest))
        return GeneratedLocation(place.file, place.line, place.col, self.about(section, index))

    @staticmethod
    def _template_path(ref: RuleRef, rest: tuple[Key, ...]) -> tuple[Key, ...]:
        """The path inside the rule that produced the value at ``rest`` of a record."""
        if not rest:
            return ()
        head = rest[0]
        if head == "length_m" and ref.table:
            return ("lengths_m",)
        if head == "nics" and len(rest) >= 2 and isinstance(rest[1], int):
            if rest[1] < len(ref.nic_templates):
                return ("nics", ref.nic_templates[rest[1]], *rest[2:])
            return ("nics",)
        return rest
