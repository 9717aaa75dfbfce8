"""Where each cable was declared, found on request instead of stored per cable.

A 4,096-node fleet declares 69,632 cables; a :class:`~inventory.problems.Location`
object for each is built at load but read only for the few a finding or a problem
names. :class:`LinkLocations` keeps one (document, first index) pair per file and
asks the document for a cable's line and column when someone reads it;
:class:`RecordLocations` does the same for racks, devices and gangs by name. A bulk
file's location tree is then read from the parse cache only once a location in it
is asked for.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator, Mapping, Sequence
from typing import overload

from inventory.problems import Location
from inventory.source import Document


class LinkLocations(Sequence[Location]):
    """The location of every cable, in load order: ``links[i]`` of the fleet is at
    ``self[i]``, the ``links`` entry of the file that declares it."""

    def __init__(self) -> None:
        self._starts: list[int] = []
        self._docs: list[Document] = []
        self._count = 0

    def extend_from(self, doc: Document, count: int) -> None:
        """The next ``count`` cables are ``doc``'s ``links[0..count)``."""
        if count:
            self._starts.append(self._count)
            self._docs.append(doc)
            self._count += count

    def __len__(self) -> int:
        return self._count

    @overload
    def __getitem__(self, index: int) -> Location: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[Location]: ...

    def __getitem__(self, index: int | slice) -> Location | Sequence[Location]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(self._count))]
        if index < 0:
            index += self._count
        if not 0 <= index < self._count:
            raise IndexError(index)
        segment = bisect.bisect_right(self._starts, index) - 1
        return self._docs[segment].where("links", index - self._starts[segment])


class RecordLocations(Mapping[str, Location]):
    """Where each named record (a rack, a device, a gang) was declared: ``self[name]`` is
    the ``section[index]`` entry of the document that declares it, found when read."""

    def __init__(self) -> None:
        self._at: dict[str, tuple[Document, str, int]] = {}

    def add(self, name: str, doc: Document, section: str, index: int) -> None:
        self._at[name] = (doc, section, index)

    def __getitem__(self, name: str) -> Location:
        doc, section, index = self._at[name]
        return doc.where(section, index)

    def __contains__(self, name: object) -> bool:
        return name in self._at

    def __iter__(self) -> Iterator[str]:
        return iter(self._at)

    def __len__(self) -> int:
        return len(self._at)
