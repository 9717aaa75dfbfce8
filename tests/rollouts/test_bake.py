"""Bake: T within its bounds, the smallest T whose Poisson test catches the declared
ratio, never longer for a larger ratio, and the detectable ratio of any T."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import gamma, poisson

from rollouts.bake import critical_count, detectable_ratio, size_bake, sizing_at
from rollouts.spec import Bake

PROPERTIES = settings(max_examples=40, deadline=None)


@st.composite
def bakes(draw: st.DrawFn) -> Bake:
    low = draw(st.floats(1.0, 120.0))
    return Bake(
        baseline_failures_per_target_hour=draw(st.floats(1e-4, 0.2)),
        detect_rate_ratio=draw(st.floats(1.5, 20.0)),
        confidence=draw(st.sampled_from([0.8, 0.9, 0.95, 0.99])),
        min_minutes=low,
        max_minutes=low + draw(st.floats(0.0, 3000.0)),
    )


def catches(bake: Bake, targets: int, minutes: float, ratio: float) -> bool:
    """The declared test at ``minutes``, straight from scipy.stats.poisson."""
    mu0 = bake.baseline_failures_per_target_hour * targets * minutes / 60.0
    c = critical_count(mu0, 1.0 - bake.confidence)
    return bool(poisson.sf(c - 1, ratio * mu0) >= bake.confidence - 1e-9)


@PROPERTIES
@given(bakes(), st.integers(1, 64))
def test_bake_lies_within_its_bounds(bake: Bake, targets: int) -> None:
    """Auto T is never below min_minutes nor above max_minutes."""
    minutes = size_bake(bake, targets).minutes
    assert bake.min_minutes - 1e-9 <= minutes <= bake.max_minutes + 1e-9


@PROPERTIES
@given(bakes(), st.integers(1, 64), st.floats(1.01, 3.0))
def test_a_larger_ratio_never_needs_a_longer_bake(bake: Bake, targets: int, factor: float) -> None:
    """T is monotone (non-increasing) in the declared detect_rate_ratio."""
    larger = bake.model_copy(update={"detect_rate_ratio": bake.detect_rate_ratio * factor})
    assert size_bake(larger, targets).minutes <= size_bake(bake, targets).minutes + 1e-6


@PROPERTIES
@given(bakes(), st.integers(1, 64))
def test_bake_is_the_smallest_powered_time(bake: Bake, targets: int) -> None:
    """At T the test keeps its false-alarm bound and catches the ratio (or T is the
    maximum and even that does not); no T on a fine grid below it catches the ratio."""
    sized = size_bake(bake, targets)
    assert sized.false_alarm <= 1.0 - bake.confidence + 1e-12
    ratio = bake.detect_rate_ratio
    if sized.powered:
        assert catches(bake, targets, sized.minutes * (1 + 1e-9), ratio)
    else:
        assert sized.minutes == bake.max_minutes
        assert not catches(bake, targets, bake.max_minutes, ratio)
    span = sized.minutes - bake.min_minutes
    grid = [bake.min_minutes + span * i / 100 for i in range(100)]
    assert not any(catches(bake, targets, t, ratio) for t in grid if t < sized.minutes * (1 - 1e-6))


def test_hand_case_ten_failures_at_five_expected() -> None:
    """lambda 0.05/h, 8 targets, 3x at 95 %: flag at 10 failures over mu0 = g(0.95, 10)/3
    = 5.235 expected, a bake of 785.3 minutes."""
    bake = Bake(baseline_failures_per_target_hour=0.05, detect_rate_ratio=3.0, confidence=0.95)
    sized = size_bake(bake, 8)
    mu0 = gamma.ppf(0.95, 10) / 3.0
    assert sized.critical_count == 10
    assert sized.expected_background == pytest.approx(mu0)
    assert sized.minutes == pytest.approx(60.0 * mu0 / (0.05 * 8))
    assert sized.minutes == pytest.approx(785.26, abs=0.01)
    assert sized.detectable_ratio == pytest.approx(3.0)


def test_underpowered_wave_reports_its_detectable_ratio() -> None:
    """Two targets at 0.0005/h for at most a day only flag one failure (0.024 expected):
    the smallest ratio caught with 95 % is -ln(0.05) / 0.024 = 124.8x."""
    sized = size_bake(Bake(), 2)
    assert not sized.powered and sized.bound == "max_minutes"
    assert sized.critical_count == 1
    assert sized.detectable_ratio == pytest.approx(2.995732 / 0.024, rel=1e-6)


def test_fixed_bake_takes_its_minutes() -> None:
    """mode fixed bakes fixed_minutes and still says what it can detect."""
    bake = Bake(mode="fixed", fixed_minutes=90.0)
    sized = size_bake(bake, 16)
    assert sized.minutes == 90.0 and sized.bound is None
    assert sized == sizing_at(bake, 16, 90.0, None)


def test_critical_count_is_the_smallest_count_within_alpha() -> None:
    """c is the smallest count whose upper tail under the background is <= alpha."""
    for mu0 in (0.01, 0.3, 1.0, 5.0, 40.0):
        c = critical_count(mu0, 0.05)
        assert poisson.sf(c - 1, mu0) <= 0.05
        assert c == 1 or poisson.sf(c - 2, mu0) > 0.05
        assert detectable_ratio(mu0, 0.95) * mu0 == pytest.approx(gamma.ppf(0.95, c))
