"""Cron schedules and sync windows: when the controller may correct drift."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from pydantic import ValidationError

from intent.cron import CronError, parse_cron
from intent.serve import SyncWindow
from serve.windows import correction_allowed, window_open


def test_cron_fields_ranges_steps_and_names() -> None:
    """Lists, ranges, steps and names expand to the values cron means."""
    cron = parse_cron("*/15 2-4 * jan,jul mon-fri")
    assert cron.minutes == {0, 15, 30, 45}
    assert cron.hours == {2, 3, 4}
    assert cron.months == {1, 7}
    assert cron.weekdays == {1, 2, 3, 4, 5}


def test_cron_sunday_is_zero_and_seven() -> None:
    """Day of week 7 is Sunday, like 0."""
    sunday = datetime(2026, 12, 6, 3, 0, tzinfo=UTC)
    assert parse_cron("0 3 * * 7").matches(sunday)
    assert parse_cron("0 3 * * 0").matches(sunday)
    assert not parse_cron("0 3 * * 1").matches(sunday)


def test_cron_day_of_month_or_day_of_week_when_both_restricted() -> None:
    """With both day fields restricted a day matches if either does (Vixie cron)."""
    cron = parse_cron("0 0 1 * mon")
    assert cron.matches(datetime(2026, 12, 1, 0, 0, tzinfo=UTC))  # the 1st, a Tuesday
    assert cron.matches(datetime(2026, 12, 7, 0, 0, tzinfo=UTC))  # a Monday
    assert not cron.matches(datetime(2026, 12, 8, 0, 0, tzinfo=UTC))


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("0 3 * *", "five"),
        ("61 3 * * *", "outside 0-59"),
        ("0 5-2 * * *", "backwards"),
        ("*/0 * * * *", "step"),
        ("0 3 * foo *", "not a number"),
    ],
)
def test_cron_errors_name_the_problem(text: str, says: str) -> None:
    """A bad expression is refused with a message saying what is wrong."""
    with pytest.raises(CronError, match=says):
        parse_cron(text)


def test_a_window_is_open_for_its_duration_in_its_time_zone() -> None:
    """02:00-04:00 Paris time is 01:00-03:00 UTC in December."""
    window = SyncWindow(
        kind="allow", schedule="0 2 * * *", duration_minutes=120, timezone="Europe/Paris"
    )
    assert not window_open(window, datetime(2026, 12, 3, 0, 59, tzinfo=UTC))
    assert window_open(window, datetime(2026, 12, 3, 1, 0, tzinfo=UTC))
    assert window_open(window, datetime(2026, 12, 3, 2, 59, tzinfo=UTC))
    assert not window_open(window, datetime(2026, 12, 3, 3, 0, tzinfo=UTC))


def test_deny_wins_over_allow_and_allow_windows_close_the_rest() -> None:
    """No windows: allowed; allow windows: only inside; a deny window open: never."""
    now = datetime(2026, 12, 3, 1, 30, tzinfo=UTC)
    allow = SyncWindow(kind="allow", schedule="0 1 * * *", duration_minutes=60)
    deny = SyncWindow(kind="deny", schedule="15 1 * * *", duration_minutes=30)
    assert correction_allowed((), now).allowed
    assert correction_allowed((allow,), now).allowed
    verdict = correction_allowed((allow, deny), now)
    assert not verdict.allowed and "deny window open" in verdict.reason
    later = datetime(2026, 12, 3, 5, 0, tzinfo=UTC)
    assert correction_allowed((allow,), later).reason == "outside every allow window"


def test_the_model_refuses_a_bad_schedule_or_zone() -> None:
    """plumb.yaml's windows are checked when the fleet is loaded."""
    with pytest.raises(ValidationError, match="schedule"):
        SyncWindow(kind="allow", schedule="0 25 * * *", duration_minutes=5)
    with pytest.raises(ValidationError, match="time zone"):
        SyncWindow(kind="allow", schedule="0 2 * * *", duration_minutes=5, timezone="Mars/Base")
