"""Cron schedules of ``plumb.yaml``'s sync windows: checked when the fleet is loaded
(:func:`parse_cron`, whose message the loader reports at the schedule's line), then
asked by the controller when they next fire (:meth:`Cron.first_fire_after`).

Parsing and iteration are cronsim's, which follows Debian's cron:

* five fields, minute hour day-of-month month day-of-week, each ``*``, a number, a
  range ``a-b``, a step ``*/n``, ``a-b/n`` or ``a/n``, or a comma-separated list of
  these; months and weekdays also by English name (``jan``, ``mon-fri``), in any case;
  day of week runs 0-7, both 0 and 7 being Sunday; ``L`` (last day of the month),
  ``LW`` (its last weekday), ``5L`` (last Friday) and ``mon#2`` (second Monday);
* when both day fields are restricted (neither starts with ``*``), a day matches if
  either does; otherwise both must;
* in a time zone with daylight saving time, a schedule at a fixed hour and minute
  fires once a day: in the hour skipped in spring it fires when the clock jumps, in
  the hour repeated in autumn only the first time round.

plumb adds the nicknames users paste (:data:`NICKNAMES`), refuses what is not a
five-field minute schedule (cronsim also reads a sixth, seconds field) or never fires,
and words the errors so that they say which field is wrong and what it may hold.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, tzinfo

from cronsim import CronSim, CronSimError

NICKNAMES = {
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
    "@monthly": "0 0 1 * *",
    "@weekly": "0 0 * * 0",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@hourly": "0 * * * *",
}

# cronsim's field names, in the order of a five-field expression, with what each holds
_FIELDS = (
    ("minute", "0-59"),
    ("hour", "0-23"),
    ("day-of-month", "1-31, L or LW"),
    ("month", "1-12 or jan-dec"),
    ("day-of-week", "0-7 or sun-sat, 0 and 7 being Sunday; 5L, mon#2"),
)
_FORMS = "*, a-b, */n, a-b/n, or a list of these separated by commas"
_ANCHOR = datetime(2000, 1, 1, tzinfo=UTC)  # any instant: a schedule is checked from it


class CronError(ValueError):
    """A cron expression plumb cannot read; the message names the field."""


@dataclass(frozen=True)
class Cron:
    """A schedule that parsed: as written, and as the five fields cronsim reads."""

    text: str
    expression: str

    def first_fire_after(self, after: datetime, zone: tzinfo) -> datetime | None:
        """The first minute strictly after the instant ``after`` at which the schedule
        fires on ``zone``'s wall clock, as an aware time in ``zone``; None if it does not
        fire within fifty years."""
        start = after.astimezone(UTC)
        # At a fixed hour and minute cronsim steps along the wall clock, which loses
        # which of an autumn's repeated hours ``after`` was in: it may give a minute of
        # the first one, before ``after``; the next one it gives is a day later.
        for fired in CronSim(self.expression, start.astimezone(zone)):
            if fired.astimezone(UTC) > start:
                return fired
        return None


def _expand(text: str) -> str:
    stripped = text.strip()
    if not stripped.startswith("@"):
        return stripped
    expression = NICKNAMES.get(stripped.lower())
    if expression is None:
        raise CronError(
            f"{stripped!r} is not a schedule plumb knows; the nicknames are " + ", ".join(NICKNAMES)
        )
    return expression


def _wrong_field(parts: list[str], message: str) -> CronError:
    """cronsim's ``Bad <field>`` made to say which text is wrong and what may stand there."""
    for index, (name, values) in enumerate(_FIELDS):
        if message == f"Bad {name}":
            token = parts[index]
            if name == "day-of-month" and _parses(f"0 0 {token} * *"):
                return CronError(
                    f"day-of-month {token!r} never falls in month {parts[3]!r}: "
                    "the schedule would never fire"
                )
            return CronError(f"{name} {token!r} is not valid: {values}; {_FORMS}")
    return CronError(message)


def _parses(expression: str) -> bool:
    try:
        CronSim(expression, _ANCHOR)
    except CronSimError:
        return False
    return True


def parse_cron(text: str) -> Cron:
    """Check a schedule; raises :class:`CronError` saying what is wrong."""
    expression = _expand(text)
    parts = expression.split()
    if len(parts) != 5:
        raise CronError(
            f"{text!r} has {len(parts)} field(s); a schedule has five:"
            " minute hour day-of-month month day-of-week (or a nickname such as @daily)"
        )
    try:
        schedule = CronSim(expression, _ANCHOR)
    except CronSimError as exc:
        raise _wrong_field(parts, str(exc)) from None
    if next(schedule, None) is None:
        raise CronError(f"{text!r} never fires")
    return Cron(text=text, expression=expression)
