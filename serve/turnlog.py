"""The controller's last turns, kept in memory for the status page (``/``): when each
turn ran, what it did (the lines it logged) and whether it failed. A small ring: the
newest :data:`TURNS_KEPT` turns, idle turns in a row folded into one entry, so a
controller that looks at its rollouts every 2 s does not push what happened out of
sight with "nothing due"."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, replace

TURNS_KEPT = 20
LINES_KEPT = 6  # per turn; the rest is counted


@dataclass(frozen=True)
class TurnRecord:
    at: float  # time.time() the turn ended (the latest of folded idle turns)
    did: tuple[str, ...]  # the lines the turn logged; empty: nothing was due
    ok: bool
    error: str | None = None
    more: int = 0  # lines logged beyond LINES_KEPT
    repeats: int = 1  # idle turns folded into this entry

    def as_dict(self) -> dict[str, object]:
        return {
            "at": self.at,
            "did": list(self.did) or ["nothing due"],
            "more": self.more,
            "ok": self.ok,
            "error": self.error,
            "repeats": self.repeats,
        }


class TurnLog:
    """The ring of the last turns; the controller's thread writes, readers copy."""

    def __init__(self, kept: int = TURNS_KEPT) -> None:
        self._turns: deque[TurnRecord] = deque(maxlen=kept)

    def add(self, at: float, lines: list[str], error: str | None) -> None:
        record = TurnRecord(
            at, tuple(lines[:LINES_KEPT]), error is None, error, max(len(lines) - LINES_KEPT, 0)
        )
        last = self._turns[-1] if self._turns else None
        idle = not record.did and record.ok
        if idle and last is not None and not last.did and last.ok:
            self._turns[-1] = replace(last, at=at, repeats=last.repeats + 1)
            return
        self._turns.append(record)

    def newest_first(self) -> list[TurnRecord]:
        return list(reversed(self._turns))
