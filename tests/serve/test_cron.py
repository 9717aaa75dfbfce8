"""Cron schedules of sync windows: what plumb accepts, when it fires, how it refuses."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, tzinfo
from itertools import pairwise
from zoneinfo import ZoneInfo

import pytest
from pydantic import ValidationError

from ci.schemas import FILE_KINDS
from intent.cron import NICKNAMES, CronError, parse_cron
from intent.serve import SyncWindow
from inventory.problems import InputError
from inventory.source import parse_text
from inventory.validation import validate_document

PARIS = ZoneInfo("Europe/Paris")


def fires(text: str, after: datetime, count: int, zone: tzinfo = UTC) -> list[datetime]:
    """The first ``count`` minutes after ``after`` at which ``text`` fires."""
    cron = parse_cron(text)
    found: list[datetime] = []
    while len(found) < count:
        fired = cron.first_fire_after(after, zone)
        assert fired is not None
        found.append(fired)
        after = fired
    return found


def test_ranges_steps_lists_and_names() -> None:
    """Lists, ranges, steps and names expand to the minutes cron means."""
    first = fires("*/15 2-4 * jan,jul mon-fri", datetime(2026, 1, 1, tzinfo=UTC), 13)
    assert {f.minute for f in first} == {0, 15, 30, 45}
    assert {f.hour for f in first} == {2, 3, 4}
    assert first[-1] == datetime(2026, 1, 2, 2, 0, tzinfo=UTC)  # 1 and 2 Jan: Thu, Fri
    later = fires("*/15 2-4 * jan,jul mon-fri", datetime(2026, 2, 1, tzinfo=UTC), 1)
    assert later == [datetime(2026, 7, 1, 2, 0, tzinfo=UTC)]


def test_names_are_read_in_any_case() -> None:
    """``JAN-Mar`` and ``SUN`` read like ``jan-mar`` and ``sun``."""
    start = datetime(2026, 1, 1, tzinfo=UTC)
    assert fires("0 0 * JAN-Mar SUN", start, 15) == fires("0 0 * 1-3 0", start, 15)


def test_sunday_is_zero_and_seven() -> None:
    """Day of week 7 is Sunday, like 0."""
    start = datetime(2026, 12, 1, tzinfo=UTC)
    sunday = datetime(2026, 12, 6, 3, 0, tzinfo=UTC)
    assert fires("0 3 * * 7", start, 1) == [sunday]
    assert fires("0 3 * * 0", start, 1) == [sunday]
    assert fires("0 3 * * 1", start, 1) != [sunday]


def test_day_of_month_or_day_of_week_when_both_restricted() -> None:
    """With both day fields restricted a day matches if either does (Vixie cron)."""
    start = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
    assert fires("0 0 1 * mon", start, 3) == [
        datetime(2026, 12, 1, tzinfo=UTC),  # the 1st, a Tuesday
        datetime(2026, 12, 7, tzinfo=UTC),  # a Monday
        datetime(2026, 12, 14, tzinfo=UTC),
    ]


@pytest.mark.parametrize("nickname", sorted(NICKNAMES))
def test_nicknames_fire_like_their_five_fields(nickname: str) -> None:
    """``@daily`` and the other nicknames fire when their expansion does."""
    start = datetime(2026, 5, 17, 13, 7, tzinfo=UTC)
    assert fires(nickname, start, 3) == fires(NICKNAMES[nickname], start, 3)
    assert fires(nickname.upper(), start, 3) == fires(NICKNAMES[nickname], start, 3)


def test_daily_fires_at_midnight_of_the_zone() -> None:
    """``@daily`` in Europe/Paris opens at local midnight, 23:00 UTC in winter."""
    fired = parse_cron("@daily").first_fire_after(datetime(2026, 12, 3, 12, tzinfo=UTC), PARIS)
    assert fired is not None
    assert fired.astimezone(UTC) == datetime(2026, 12, 3, 23, 0, tzinfo=UTC)


def test_last_day_and_nth_weekday() -> None:
    """``L`` is the month's last day; ``fri#2`` its second Friday."""
    start = datetime(2026, 2, 1, tzinfo=UTC)
    assert fires("0 4 L * *", start, 1) == [datetime(2026, 2, 28, 4, 0, tzinfo=UTC)]
    assert fires("0 4 * * fri#2", start, 1) == [datetime(2026, 2, 13, 4, 0, tzinfo=UTC)]


def test_spring_forward_fires_when_the_clock_jumps() -> None:
    """Paris skips 02:00-03:00 on 29 March 2026: a 02:30 schedule fires at 03:00 local."""
    fired = fires("30 2 * * *", datetime(2026, 3, 28, 12, tzinfo=UTC), 1, PARIS)
    assert [f.astimezone(UTC) for f in fired] == [datetime(2026, 3, 29, 1, 0, tzinfo=UTC)]


def test_autumn_repeated_hour_fires_once() -> None:
    """Paris lives 02:00-03:00 twice on 25 October 2026: a 02:30 schedule fires the
    first time only, then the next day."""
    fired = fires("30 2 * * *", datetime(2026, 10, 24, 12, tzinfo=UTC), 2, PARIS)
    assert [f.astimezone(UTC) for f in fired] == [
        datetime(2026, 10, 25, 0, 30, tzinfo=UTC),
        datetime(2026, 10, 26, 1, 30, tzinfo=UTC),
    ]


def test_a_start_inside_the_repeated_hour_is_not_fired_before() -> None:
    """Asked from 02:20 the second time round, the 02:30 of the first time round is
    already past: the next firing is the next day's."""
    second_round = datetime(2026, 10, 25, 1, 20, tzinfo=UTC)  # 02:20 local, again
    fired = parse_cron("30 2 * * *").first_fire_after(second_round, PARIS)
    assert fired is not None
    assert fired.astimezone(UTC) == datetime(2026, 10, 26, 1, 30, tzinfo=UTC)


def test_every_minute_fires_through_both_repeated_hours() -> None:
    """A schedule not at a fixed hour follows real minutes: the repeated hour twice."""
    start = datetime(2026, 10, 24, 23, 59, tzinfo=UTC)
    fired = fires("*/30 * * * *", start, 5, PARIS)
    gaps = {b.astimezone(UTC) - a.astimezone(UTC) for a, b in pairwise(fired)}
    assert gaps == {timedelta(minutes=30)}


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("0 3 * *", "has 4 field.s.; a schedule has five"),
        ("0 0 3 * * *", "has 6 field.s.; a schedule has five"),
        ("61 3 * * *", r"minute '61' is not valid: 0-59"),
        ("0 5-2 * * *", r"hour '5-2' is not valid: 0-23"),
        ("*/0 * * * *", r"minute '\*/0' is not valid"),
        ("0 3 * foo *", r"month 'foo' is not valid: 1-12 or jan-dec"),
        ("0 3 * * 8", r"day-of-week '8' is not valid: 0-7 or sun-sat"),
        ("0 0 31 4,6 *", r"day-of-month '31' never falls in month '4,6'"),
        ("@reboot", r"'@reboot' is not a schedule plumb knows; the nicknames are @yearly"),
    ],
)
def test_errors_name_the_field_and_what_it_holds(text: str, says: str) -> None:
    """A bad expression is refused with a message naming the field and its values."""
    with pytest.raises(CronError, match=says):
        parse_cron(text)


def test_the_model_refuses_a_bad_schedule_and_takes_a_nickname() -> None:
    """plumb.yaml's windows are checked when the fleet is loaded; @daily is a schedule."""
    with pytest.raises(ValidationError, match="schedule: hour '25' is not valid"):
        SyncWindow(kind="allow", schedule="0 25 * * *", duration_minutes=5)
    assert SyncWindow(kind="deny", schedule="@daily", duration_minutes=5).schedule == "@daily"


def test_a_bad_schedule_in_plumb_yaml_points_at_its_line() -> None:
    """The loader's message names plumb.yaml's line and column, the key and the field."""
    text = (
        "fleet: orion\n"
        "serve:\n"
        "  windows:\n"
        "    - kind: allow\n"
        '      schedule: "0 25 * * *"\n'
        "      duration_minutes: 60\n"
    )
    with pytest.raises(InputError) as caught:
        validate_document(parse_text("plumb.yaml", text.encode()), FILE_KINDS["plumb"])
    assert str(caught.value).startswith(
        "plumb.yaml:5:17: serve.windows.0.schedule: Value error, schedule: hour '25' is not"
        " valid: 0-23;"
    )
