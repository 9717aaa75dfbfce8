"""Sync windows: when the controller may correct drift."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from cronsim import CronSim
from hypothesis import example, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from intent.cron import NICKNAMES, CronError, parse_cron
from intent.serve import SyncWindow
from serve.windows import correction_allowed, window_open


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


def test_the_model_refuses_an_unknown_zone() -> None:
    """plumb.yaml's windows are checked when the fleet is loaded."""
    with pytest.raises(ValidationError, match="time zone"):
        SyncWindow(kind="allow", schedule="0 2 * * *", duration_minutes=5, timezone="Mars/Base")


def test_a_window_in_the_skipped_hour_opens_when_the_clock_jumps() -> None:
    """A 02:30 Paris window on 29 March 2026 (02:00-03:00 does not exist) opens at 03:00."""
    window = SyncWindow(
        kind="allow", schedule="30 2 * * *", duration_minutes=30, timezone="Europe/Paris"
    )
    assert not window_open(window, datetime(2026, 3, 29, 0, 59, tzinfo=UTC))
    assert window_open(window, datetime(2026, 3, 29, 1, 0, tzinfo=UTC))
    assert window_open(window, datetime(2026, 3, 29, 1, 29, tzinfo=UTC))
    assert not window_open(window, datetime(2026, 3, 29, 1, 30, tzinfo=UTC))


def test_a_window_in_the_repeated_hour_opens_once() -> None:
    """A 02:30 Paris window on 25 October 2026 opens at the first 02:30 and stays open
    for its duration of real minutes, not again at the second 02:30."""
    window = SyncWindow(
        kind="allow", schedule="30 2 * * *", duration_minutes=60, timezone="Europe/Paris"
    )
    first = datetime(2026, 10, 25, 0, 30, tzinfo=UTC)
    assert window_open(window, first)
    assert window_open(window, first + timedelta(minutes=50))  # 02:20 local, again
    assert not window_open(window, first + timedelta(minutes=60))  # 02:30 local, again
    assert not window_open(window, first + timedelta(minutes=89))


ZONES = ("UTC", "Europe/Paris", "America/New_York", "Australia/Lord_Howe", "Asia/Kolkata")
FIXED_OFFSET = ("UTC", "Asia/Kolkata")  # no daylight saving time in the years drawn
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_DAYS = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")


@st.composite
def cron_field(draw: st.DrawFn, low: int, high: int, names: tuple[str, ...] = ()) -> str:
    """One field: *, values, ranges, steps and names, as a comma-separated list."""

    def value(number: int) -> str:
        by_name = draw(st.booleans())
        if names and by_name:
            return names[(number - 1) % 12] if len(names) == 12 else names[number % 7]
        return str(number)

    parts = []
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(("*", "value", "range", "step", "range-step", "from-step")))
        a, b = sorted(draw(st.lists(st.integers(low, high), min_size=2, max_size=2)))
        step = draw(st.integers(1, max(1, high - low)))
        parts.append(
            {
                "*": "*",
                "value": value(a),
                "range": f"{value(a)}-{value(b)}",
                "step": f"*/{step}",
                "range-step": f"{value(a)}-{value(b)}/{step}",
                "from-step": f"{value(a)}/{step}",
            }[kind]
        )
    return ",".join(parts)


@st.composite
def schedules(draw: st.DrawFn) -> str:
    """A schedule as users write them: five fields or a nickname."""
    if draw(st.integers(0, 9)) == 0:
        return draw(st.sampled_from(sorted(NICKNAMES)))
    return " ".join(
        (
            draw(cron_field(0, 59)),
            draw(cron_field(0, 23)),
            draw(st.one_of(st.just("*"), cron_field(1, 28))),
            draw(st.one_of(st.just("*"), cron_field(1, 12, _MONTHS))),
            draw(st.one_of(st.just("*"), cron_field(0, 7, _DAYS[:7]))),
        )
    )


def _fired_within(expression: str, zone: ZoneInfo, since: datetime, until: datetime) -> bool:
    """cronsim's forward iteration from a day before: did it fire in (since, until]?"""
    for fired in CronSim(expression, (since - timedelta(days=1)).astimezone(zone)):
        instant = fired.astimezone(UTC)
        if instant > until:
            return False
        if instant > since:
            return True
    return False


def _last_fired(expression: str, zone: ZoneInfo, until: datetime) -> datetime | None:
    """cronsim's backward iteration: the last firing at or before ``until``."""
    start = (until + timedelta(seconds=1)).astimezone(zone)
    return next(iter(CronSim(expression, start, reverse=True)), None)


@settings(max_examples=300, deadline=None)
@given(
    text=schedules(),
    zone=st.sampled_from(ZONES),
    now=st.datetimes(datetime(2024, 1, 1), datetime(2027, 12, 31)),
    duration=st.one_of(st.integers(1, 120), st.integers(1, 10080)),
)
@example(text="30 2 * * *", zone="Europe/Paris", now=datetime(2026, 10, 25, 1, 20), duration=60)
@example(text="30 2 * * *", zone="Europe/Paris", now=datetime(2026, 3, 29, 1, 0), duration=1)
@example(text="0 0 1 * mon", zone="UTC", now=datetime(2026, 12, 7, 0, 0), duration=1)
def test_window_open_agrees_with_cronsim_iteration(
    text: str, zone: str, now: datetime, duration: int
) -> None:
    """For random schedules, zones, instants and durations, a window is open exactly
    when cronsim's own iteration fires within its duration before the instant."""
    try:
        expression = parse_cron(text).expression
    except CronError:
        return  # a random day-of-month that no drawn month has: refused at load
    window = SyncWindow(kind="allow", schedule=text, duration_minutes=duration, timezone=zone)
    until = now.replace(tzinfo=UTC, second=0, microsecond=0)
    since = until - timedelta(minutes=duration)
    expected = _fired_within(expression, ZoneInfo(zone), since, until)
    assert window_open(window, now.replace(tzinfo=UTC)) == expected
    if zone in FIXED_OFFSET:
        last = _last_fired(expression, ZoneInfo(zone), until)
        assert expected == (last is not None and last.astimezone(UTC) > since)
