"""Five-field cron expressions (minute hour day-of-month month day-of-week), as
``plumb.yaml``'s sync windows write them: parsed once when the fleet is loaded, then
matched against wall-clock minutes.

Each field takes ``*``, a number, a range ``a-b``, a step ``*/n`` or ``a-b/n``, and
comma-separated lists of these; months and weekdays also take their three-letter
English names (``jan``, ``mon``). Day of week runs 0-7 with both 0 and 7 for Sunday.
As in Vixie cron, when both day-of-month and day-of-week are restricted (neither is
``*``), a day matches if either does.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_DAYS = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")

# name, lowest, highest, names (index + offset = value)
_FIELDS: tuple[tuple[str, int, int, dict[str, int]], ...] = (
    ("minute", 0, 59, {}),
    ("hour", 0, 23, {}),
    ("day of month", 1, 31, {}),
    ("month", 1, 12, {name: i + 1 for i, name in enumerate(_MONTHS)}),
    ("day of week", 0, 7, {name: i for i, name in enumerate(_DAYS)}),
)


class CronError(ValueError):
    """A cron expression plumb cannot read; the message names the field."""


@dataclass(frozen=True)
class Cron:
    """A parsed expression: the allowed values of each field."""

    text: str
    minutes: frozenset[int]
    hours: frozenset[int]
    days: frozenset[int]
    months: frozenset[int]
    weekdays: frozenset[int]  # 0 = Sunday (a 7 is folded onto 0)
    any_day: bool  # day of month is *
    any_weekday: bool  # day of week is *

    def matches(self, when: datetime) -> bool:
        """Does the minute ``when`` (in the time zone it carries) fire?"""
        if when.minute not in self.minutes or when.hour not in self.hours:
            return False
        if when.month not in self.months:
            return False
        day = when.day in self.days
        weekday = (when.isoweekday() % 7) in self.weekdays
        if self.any_day or self.any_weekday:
            return day and weekday
        return day or weekday


def _value(token: str, name: str, low: int, high: int, names: dict[str, int]) -> int:
    lowered = token.lower()
    if lowered in names:
        return names[lowered]
    if not token.isdigit():
        raise CronError(f"{name}: {token!r} is not a number")
    value = int(token)
    if not low <= value <= high:
        raise CronError(f"{name}: {value} is outside {low}-{high}")
    return value


def _field(text: str, name: str, low: int, high: int, names: dict[str, int]) -> set[int]:
    values: set[int] = set()
    for part in text.split(","):
        body, _, step_text = part.partition("/")
        step = 1
        if step_text:
            if not step_text.isdigit() or int(step_text) == 0:
                raise CronError(f"{name}: step {step_text!r} is not a positive number")
            step = int(step_text)
        if body == "*":
            start, end = low, high
        elif "-" in body:
            first, _, last = body.partition("-")
            start = _value(first, name, low, high, names)
            end = _value(last, name, low, high, names)
            if start > end:
                raise CronError(f"{name}: range {body!r} runs backwards")
        else:
            start = _value(body, name, low, high, names)
            end = high if step_text else start
        values.update(range(start, end + 1, step))
    return values


def parse_cron(text: str) -> Cron:
    """Parse a five-field expression; raises :class:`CronError` saying what is wrong."""
    parts = text.split()
    if len(parts) != 5:
        raise CronError(
            f"{text!r} has {len(parts)} field(s); a schedule has five:"
            " minute hour day-of-month month day-of-week"
        )
    sets = [
        _field(part, name, low, high, names)
        for part, (name, low, high, names) in zip(parts, _FIELDS, strict=True)
    ]
    weekdays = frozenset(0 if d == 7 else d for d in sets[4])
    return Cron(
        text=text,
        minutes=frozenset(sets[0]),
        hours=frozenset(sets[1]),
        days=frozenset(sets[2]),
        months=frozenset(sets[3]),
        weekdays=weekdays,
        any_day=parts[2] == "*",
        any_weekday=parts[4] == "*",
    )
