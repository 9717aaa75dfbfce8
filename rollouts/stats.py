"""Pure statistics for abort conditions: the pre-registered statistic of a wave against
its controls, and the test that says whether chance could explain it.

The unit of observation is the **target**: each target's samples over the window are
reduced to one value first (:func:`target_value`), because samples from one node are
correlated in time and share that node's baseline; testing raw samples would count
one slow node many times over.

* statistics (``wave`` first, ``controls`` second; vectorised over the last axis):
  ``median_ratio`` = median / median, ``mean_ratio`` = mean / mean (neutral 1),
  ``rate_difference`` = mean rate - mean rate in events per target-hour (neutral 0);
* :func:`permutation_test`: exact over every partition of the pooled targets when
  there are at most :data:`EXACT_LIMIT` of them (4 vs 8 targets: 495; 8 vs 8:
  12,870), else Monte Carlo with a seeded generator and a fixed number of resamples;
* :func:`bootstrap_test`: a percentile bootstrap band of the statistic
  (``scipy.stats.bootstrap``, seeded).

Both are one-sided in the metric's worse direction and repeat exactly for a seed.
"""

from __future__ import annotations

import math
import warnings
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from inventory.extras import optional_imports

with optional_imports():
    import numpy as np
    from numpy.typing import NDArray
    from scipy import stats as scipy_stats

from rollouts.spec import Direction, Statistic, TestKind

EXACT_LIMIT = 20_000
"""Enumerate every partition up to this many (Monte Carlo above)."""
RESAMPLES = 9_999
"""Default Monte Carlo permutations and bootstrap resamples."""

Floats = NDArray[np.float64]
Alternative = Literal["greater", "less"]
_NEUTRAL = {Statistic.median_ratio: 1.0, Statistic.mean_ratio: 1.0, Statistic.rate_difference: 0.0}


def neutral(statistic: Statistic) -> float:
    """The value of ``statistic`` when the wave behaves exactly like its controls."""
    return _NEUTRAL[statistic]


def beyond(direction: Direction, value: float, limit: float) -> bool:
    """Whether ``value`` lies strictly past ``limit`` on the worse side."""
    return value > limit if direction is Direction.higher_is_worse else value < limit


def alternative(direction: Direction) -> Alternative:
    return "greater" if direction is Direction.higher_is_worse else "less"


def target_value(statistic: Statistic, values: Sequence[float]) -> float | None:
    """One target's value over the window (median or mean of its finite samples)."""
    finite = [v for v in values if math.isfinite(v)]
    if not finite:
        return None
    reduce = np.median if statistic is Statistic.median_ratio else np.mean
    return float(reduce(np.asarray(finite, dtype=np.float64)))


def group_statistic(statistic: Statistic, wave: Floats, controls: Floats, axis: int = -1) -> Floats:
    """The statistic of ``wave`` against ``controls`` (vectorised along ``axis``; a
    0-d array for 1-d groups)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        if statistic is Statistic.median_ratio:
            out: Any = np.median(wave, axis=axis) / np.median(controls, axis=axis)
        elif statistic is Statistic.mean_ratio:
            out = np.mean(wave, axis=axis) / np.mean(controls, axis=axis)
        else:
            out = np.mean(wave, axis=axis) - np.mean(controls, axis=axis)
    return np.asarray(out, dtype=np.float64)


def generator(seed: int, name: str) -> np.random.Generator:
    """A generator for one metric: the rollout seed and the metric's name, stably mixed."""
    return np.random.default_rng([seed & 0xFFFF_FFFF_FFFF_FFFF, zlib.crc32(name.encode())])


@dataclass(frozen=True)
class TestOutcome:
    """One test of the wave against its controls.

    ``band``: for a permutation test the [alpha, 1 - alpha] quantiles of the null
    distribution (what chance alone produces); for a bootstrap the one-sided
    confidence band of the statistic, open on the worse side."""

    test: TestKind
    statistic: float
    p_value: float
    band: tuple[float, float]
    significant: bool
    exact: bool
    resamples: int


@dataclass(frozen=True)
class Resampling:
    """How hard the tests work: Monte Carlo resamples, and the largest exact enumeration."""

    resamples: int = RESAMPLES
    exact_limit: int = EXACT_LIMIT


def partitions(n_wave: int, n_controls: int) -> int:
    return math.comb(n_wave + n_controls, n_wave)


def permutation_test(
    statistic: Statistic,
    direction: Direction,
    wave: Sequence[float],
    controls: Sequence[float],
    *,
    alpha: float,
    rng: np.random.Generator,
    resamples: int = RESAMPLES,
    exact_limit: int = EXACT_LIMIT,
) -> TestOutcome:
    """One-sided two-sample permutation test of ``statistic``; significant at p < alpha."""
    count = partitions(len(wave), len(controls))
    exact = count <= exact_limit

    def stat(x: Floats, y: Floats, axis: int = -1) -> Floats:
        return group_statistic(statistic, x, y, axis)

    result = scipy_stats.permutation_test(
        (np.asarray(wave, dtype=np.float64), np.asarray(controls, dtype=np.float64)),
        stat,
        permutation_type="independent",
        vectorized=True,
        n_resamples=np.inf if exact else resamples,
        alternative=alternative(direction),
        rng=rng,
    )
    null = np.asarray(result.null_distribution, dtype=np.float64)
    low, high = np.quantile(null, [alpha, 1.0 - alpha])
    p_value = float(result.pvalue)
    return TestOutcome(
        test=TestKind.permutation,
        statistic=float(result.statistic),
        p_value=p_value,
        band=(float(low), float(high)),
        significant=p_value < alpha,
        exact=exact,
        resamples=count if exact else resamples,
    )


def bootstrap_band(
    statistic: Statistic,
    wave: Sequence[float],
    controls: Sequence[float],
    *,
    confidence: float,
    side: Literal["greater", "less", "two-sided"],
    rng: np.random.Generator,
    resamples: int = RESAMPLES,
) -> tuple[float, float, Floats]:
    """Percentile bootstrap band of ``statistic`` (resampling each group's targets)."""

    def stat(x: Floats, y: Floats, axis: int = -1) -> Floats:
        return group_statistic(statistic, x, y, axis)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # degenerate (all-equal) data: the band is a point
        result = scipy_stats.bootstrap(
            (np.asarray(wave, dtype=np.float64), np.asarray(controls, dtype=np.float64)),
            stat,
            n_resamples=resamples,
            vectorized=True,
            paired=False,
            confidence_level=confidence,
            alternative=side,
            method="percentile",
            rng=rng,
        )
    interval = result.confidence_interval
    distribution = np.asarray(result.bootstrap_distribution, dtype=np.float64)
    return float(interval.low), float(interval.high), distribution


def bootstrap_test(
    statistic: Statistic,
    direction: Direction,
    wave: Sequence[float],
    controls: Sequence[float],
    *,
    alpha: float,
    rng: np.random.Generator,
    resamples: int = RESAMPLES,
) -> TestOutcome:
    """One-sided bootstrap band at 1 - alpha; significant when it excludes neutral.

    ``p_value`` is the share of the bootstrap distribution on the neutral-or-better
    side (the achieved significance level), reported alongside the band."""
    low, high, distribution = bootstrap_band(
        statistic,
        wave,
        controls,
        confidence=1.0 - alpha,
        side=alternative(direction),
        rng=rng,
        resamples=resamples,
    )
    middle = neutral(statistic)
    observed = group_statistic(
        statistic, np.asarray(wave, dtype=np.float64), np.asarray(controls, dtype=np.float64)
    )
    if direction is Direction.higher_is_worse:
        significant, p_value = low > middle, float(np.mean(distribution <= middle))
    else:
        significant, p_value = high < middle, float(np.mean(distribution >= middle))
    return TestOutcome(
        test=TestKind.bootstrap,
        statistic=float(observed),
        p_value=p_value,
        band=(low, high),
        significant=bool(significant),
        exact=False,
        resamples=resamples,
    )
