"""Poisson tails without scipy: they agree with scipy.stats, rise and fall the right way,
and the mean found for a tail gives that tail back."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rollouts.poisson import mean_with_upper_tail, probability, upper_tail

PROPERTIES = settings(max_examples=300, deadline=None)
means = st.floats(1e-4, 3000.0)
counts = st.integers(1, 4000)
tails = st.floats(1e-6, 1.0 - 1e-6)


@PROPERTIES
@given(means, counts)
def test_upper_tail_agrees_with_scipy(mu: float, c: int) -> None:
    """P(X >= c) equals scipy's poisson.sf(c - 1) to 1e-9, relative, wherever it is
    not vanishingly small."""
    poisson = pytest.importorskip("scipy.stats").poisson
    expected = float(poisson.sf(c - 1, mu))
    assert upper_tail(c, mu) == pytest.approx(expected, rel=1e-9, abs=1e-250)


@PROPERTIES
@given(tails, st.integers(1, 1000))
def test_mean_with_upper_tail_agrees_with_scipy(q: float, c: int) -> None:
    """The mean with P(X >= c) = q is scipy's gamma.ppf(q, c) to 1e-12, relative."""
    gamma = pytest.importorskip("scipy.stats").gamma
    assert mean_with_upper_tail(q, c) == pytest.approx(float(gamma.ppf(q, c)), rel=1e-12)


@PROPERTIES
@given(tails, st.integers(1, 1000))
def test_mean_with_upper_tail_inverts_upper_tail(q: float, c: int) -> None:
    """The tail at the mean found for q is q."""
    assert upper_tail(c, mean_with_upper_tail(q, c)) == pytest.approx(q, rel=1e-9)


@PROPERTIES
@given(means, st.floats(1.0001, 10.0), counts)
def test_upper_tail_rises_with_the_mean_and_falls_with_the_count(
    mu: float, factor: float, c: int
) -> None:
    """More expected failures never make c of them less likely; a higher count never
    more likely."""
    assert upper_tail(c, mu * factor) >= upper_tail(c, mu)
    assert upper_tail(c + 1, mu) <= upper_tail(c, mu)


@PROPERTIES
@given(means, counts)
def test_the_tails_and_the_point_add_up(mu: float, c: int) -> None:
    """P(X >= c) = P(X = c) + P(X >= c + 1), the two sides of mu summed differently."""
    assert upper_tail(c, mu) == pytest.approx(
        probability(c, mu) + upper_tail(c + 1, mu), rel=1e-9, abs=1e-250
    )


def test_hand_values() -> None:
    """P(X >= 1 | mu) = 1 - exp(-mu); the mean with P(X >= 1) = 0.95 is -ln 0.05."""
    assert upper_tail(1, 0.3) == pytest.approx(1.0 - math.exp(-0.3), rel=1e-15)
    assert upper_tail(0, 5.0) == 1.0 and upper_tail(3, 0.0) == 0.0
    assert mean_with_upper_tail(0.95, 1) == pytest.approx(-math.log(0.05), rel=1e-14)


def test_a_tail_outside_zero_to_one_is_refused() -> None:
    """q = 0 or 1 has no finite mean: a ValueError, not a loop."""
    with pytest.raises(ValueError, match="0 < q < 1"):
        mean_with_upper_tail(1.0, 3)
