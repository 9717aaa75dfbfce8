"""Where each cable was declared, found on request instead of stored per cable.

A 4,096-node fleet declares 69,632 cables; a :class:`~inventory.problems.Location`
object for each is built at load but read only for the few a finding or a problem
names. :class:`LinkLocations` keeps one (document, first index) pair per file and
asks the document for a cable's line and column when someone reads it.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
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
