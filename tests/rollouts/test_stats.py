"""The statistics behind abort conditions: the pre-registered statistics, the exact and
Monte Carlo permutation tests and the bootstrap band, one-sided and seeded."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rollouts import spec, stats
from rollouts.spec import Direction, Statistic

HIGHER, LOWER = Direction.higher_is_worse, Direction.lower_is_worse
CONTROLS = [1.00, 1.01, 0.99, 1.02, 0.98, 1.00, 1.01, 0.99]


def rng(seed: int = 0) -> np.random.Generator:
    return stats.generator(seed, "step_time")


def test_median_ratio_is_wave_median_over_control_median() -> None:
    """median([2, 4, 6]) / median([1, 2, 3]) = 2."""
    got = stats.group_statistic(
        Statistic.median_ratio, np.array([2.0, 4, 6]), np.array([1.0, 2, 3])
    )
    assert float(got) == 2.0


def test_mean_ratio_and_rate_difference() -> None:
    """mean_ratio divides the means; rate_difference subtracts them (events per hour)."""
    wave, controls = np.array([1.0, 3.0]), np.array([1.0, 1.0])
    assert float(stats.group_statistic(Statistic.mean_ratio, wave, controls)) == 2.0
    assert float(stats.group_statistic(Statistic.rate_difference, wave, controls)) == 1.0


def test_statistics_are_vectorised_along_the_last_axis() -> None:
    """Rows of resamples give one statistic each, as scipy's resampling needs."""
    wave = np.array([[2.0, 2.0], [3.0, 3.0]])
    got = stats.group_statistic(Statistic.median_ratio, wave, np.ones((2, 2)))
    assert got.tolist() == [2.0, 3.0]


def test_neutral_values() -> None:
    """Ratios are neutral at 1, a rate difference at 0."""
    assert stats.neutral(Statistic.median_ratio) == stats.neutral(Statistic.mean_ratio) == 1.0
    assert stats.neutral(Statistic.rate_difference) == 0.0


def test_target_value_reduces_finite_samples_and_none_for_no_data() -> None:
    """A target is its median (or mean) over the window; NaN samples are ignored."""
    assert stats.target_value(Statistic.median_ratio, [1.0, math.nan, 3.0, 100.0]) == 3.0
    assert stats.target_value(Statistic.mean_ratio, [1.0, 3.0]) == 2.0
    assert stats.target_value(Statistic.median_ratio, [math.nan]) is None
    assert stats.target_value(Statistic.rate_difference, []) is None


def test_beyond_is_strict_and_follows_the_direction() -> None:
    """Past the limit on the worse side only; the limit itself is not past."""
    assert stats.beyond(HIGHER, 1.06, 1.05) and not stats.beyond(HIGHER, 1.05, 1.05)
    assert stats.beyond(LOWER, 0.9, 0.95) and not stats.beyond(LOWER, 1.0, 0.95)


def test_exact_permutation_test_enumerates_every_partition() -> None:
    """4 vs 8 targets: 495 partitions; a wave slower than every control gets p = 1/495."""
    wave = [1.10, 1.11, 1.12, 1.13]
    got = stats.permutation_test(
        Statistic.mean_ratio, HIGHER, wave, CONTROLS, alpha=0.05, rng=rng()
    )
    assert got.exact and got.resamples == 495 == stats.partitions(4, 8)
    assert got.p_value == pytest.approx(1 / 495)
    assert got.significant and got.test is spec.TestKind.permutation
    assert got.band[0] < 1.0 < got.band[1] < got.statistic


def test_permutation_test_is_one_sided_in_the_worse_direction() -> None:
    """A faster wave is no regression when higher is worse, and is one when lower is."""
    wave = [0.90, 0.91, 0.92, 0.93]
    higher = stats.permutation_test(
        Statistic.median_ratio, HIGHER, wave, CONTROLS, alpha=0.05, rng=rng()
    )
    lower = stats.permutation_test(
        Statistic.median_ratio, LOWER, wave, CONTROLS, alpha=0.05, rng=rng()
    )
    assert higher.p_value == 1.0 and not higher.significant
    assert lower.significant


def test_monte_carlo_above_the_exact_limit_is_seeded() -> None:
    """Past the limit: a fixed number of seeded resamples, the same p for the same seed."""
    wave = [1.03, 1.01, 1.04, 0.99]

    def run(seed: int) -> stats.TestOutcome:
        return stats.permutation_test(
            Statistic.median_ratio,
            HIGHER,
            wave,
            CONTROLS,
            alpha=0.05,
            rng=rng(seed),
            resamples=199,
            exact_limit=100,
        )

    first = run(1)
    assert not first.exact and first.resamples == 199
    assert run(1) == first
    assert {run(seed).p_value for seed in range(5)} != {first.p_value}


def test_bootstrap_band_excludes_neutral_for_a_clear_regression() -> None:
    """A 10 % slower wave: the one-sided band starts above 1, open on the worse side."""
    wave = [1.10, 1.11, 1.09, 1.12, 1.10]
    got = stats.bootstrap_test(
        Statistic.median_ratio, HIGHER, wave, CONTROLS, alpha=0.05, rng=rng(), resamples=499
    )
    assert got.test is spec.TestKind.bootstrap and not got.exact
    assert got.significant and got.band[0] > 1.0 and got.band[1] == math.inf
    assert got.p_value == 0.0


def test_bootstrap_of_a_healthy_wave_includes_neutral() -> None:
    """Wave and controls alike: the band reaches below 1 and the test is not significant."""
    got = stats.bootstrap_test(
        Statistic.median_ratio,
        HIGHER,
        CONTROLS[:5],
        CONTROLS,
        alpha=0.05,
        rng=rng(),
        resamples=499,
    )
    assert not got.significant and got.band[0] <= 1.0 and got.p_value > 0.05


def test_bootstrap_is_deterministic_for_a_seed() -> None:
    """Same seed, same band; another seed, another band."""
    wave = [1.02, 1.04, 0.99, 1.05, 1.00]

    def band(seed: int) -> tuple[float, float]:
        return stats.bootstrap_test(
            Statistic.mean_ratio, LOWER, wave, CONTROLS, alpha=0.05, rng=rng(seed), resamples=299
        ).band

    assert band(3) == band(3)
    assert band(3) != band(4)


def test_generator_mixes_seed_and_metric_name() -> None:
    """Each metric has its own stream; negative seeds are accepted."""
    a = stats.generator(-1, "a").random()
    assert a == stats.generator(-1, "a").random() != stats.generator(-1, "b").random()


@settings(max_examples=4, deadline=None, derandomize=True)
@given(seed=st.integers(0, 2**32 - 1), n_wave=st.integers(4, 6))
def test_permutation_false_positive_rate_stays_below_alpha(seed: int, n_wave: int) -> None:
    """Wave and controls from one log-normal population: p < 0.05 in at most ~5 % of
    200 trials (binomial tolerance 4.5 points, about 3 standard errors)."""
    generator = np.random.default_rng(seed)
    hits = 0
    for trial in range(200):
        values = np.exp(generator.normal(0.0, 0.015, n_wave + 8))
        got = stats.permutation_test(
            Statistic.median_ratio,
            HIGHER,
            values[:n_wave],
            values[n_wave:],
            alpha=0.05,
            rng=rng(trial),
            resamples=199,
            exact_limit=0,
        )
        hits += got.significant
    assert hits / 200 <= 0.05 + 0.045
