"""Bake time (pure): how long a wave soaks so that a real rise in failures shows above
the background ones.

With a baseline rate lambda (failures per target-hour), N targets and a bake of T
hours, the background failure count is Poisson with mean ``mu0 = lambda x N x T``.
The wave is flagged when it shows at least ``c`` failures, where ``c`` is the
*critical count*: the smallest ``c >= 1`` with

    P(X >= c | mu0) <= 1 - confidence                       (false alarm at most alpha).

A regression that multiplies the rate by ``ratio`` is caught when

    P(X >= c | ratio x mu0) >= confidence                   (power at least confidence).

``auto`` chooses the smallest T in [min_minutes, max_minutes] for which a rate of
``detect_rate_ratio`` x baseline is caught. Power is not monotone in T (``c`` steps up
as mu0 grows), so T is found per critical count: the mu0 with critical count ``c``
form the interval ``(g(alpha, c-1), g(alpha, c)]`` and the powered ones
``mu0 >= g(confidence, c) / ratio``, where ``g(q, c)`` is the mean with
``P(X >= c) = q`` (scipy's ``gamma.ppf(q, c)``; here the pure
:func:`rollouts.poisson.mean_with_upper_tail`). The first interval that meets the bounds
gives T. When none does before ``max_minutes``, T is ``max_minutes`` and the
wave is *underpowered*. Every wave reports the smallest ratio its T detects,
``g(confidence, c) / mu0``; a larger declared ratio never needs a longer T.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist

from rollouts.poisson import mean_with_upper_tail, upper_tail
from rollouts.spec import Bake, BakeMode

RELATIVE = 1e-9


@dataclass(frozen=True)
class BakeSizing:
    """The bake of one wave of ``targets`` targets."""

    targets: int
    minutes: float
    expected_background: float  # lambda x N x T
    critical_count: int  # flag the wave at this many failures or more
    false_alarm: float  # P(X >= critical_count | background)
    detectable_ratio: float  # smallest rate ratio caught with the declared confidence
    powered: bool  # detectable_ratio <= detect_rate_ratio
    bound: str | None  # "min_minutes" / "max_minutes" when T sits on a bound


def _g(q: float, count: int) -> float:
    """The mean mu with P(Poisson(mu) >= count) = q."""
    return 0.0 if count <= 0 else mean_with_upper_tail(q, count)


def critical_count(mu0: float, alpha: float) -> int:
    """Smallest c >= 1 with P(X >= c | mu0) <= alpha."""
    if mu0 <= 0.0:
        return 1
    z = NormalDist().inv_cdf(1.0 - alpha) if 0.0 < alpha < 1.0 else 0.0
    c = max(math.ceil(mu0 + z * math.sqrt(mu0)), 1)  # a start near the answer; then exact
    while c > 1 and upper_tail(c - 1, mu0) <= alpha:
        c -= 1
    while upper_tail(c, mu0) > alpha:
        c += 1
    return c


def detectable_ratio(mu0: float, confidence: float) -> float:
    """Smallest rate ratio caught with ``confidence`` at background mean ``mu0``."""
    return _g(confidence, critical_count(mu0, 1.0 - confidence)) / mu0


def _first_powered(ratio: float, confidence: float, mu_lo: float, mu_hi: float) -> float | None:
    """Smallest mu0 in [mu_lo, mu_hi] whose test catches ``ratio`` (None: no such mu0)."""
    alpha = 1.0 - confidence

    def powered(c: int) -> bool:
        return _g(confidence, c) <= ratio * _g(alpha, c)

    c_hi = critical_count(mu_hi, alpha)
    if not powered(c_hi):
        return None
    low, high = 1, c_hi  # powered() is monotone in c: find the first powered c
    while low < high:
        mid = (low + high) // 2
        if powered(mid):
            high = mid
        else:
            low = mid + 1
    for c in range(max(low, critical_count(mu_lo, alpha)), c_hi + 1):
        lower = max(_g(confidence, c) / ratio, mu_lo, _g(alpha, c - 1))
        if lower > mu_hi * (1 + RELATIVE):
            return None  # every later c needs a larger mu0 still
        if lower <= min(_g(alpha, c), mu_hi) * (1 + RELATIVE):
            return min(lower, mu_hi)
    return None


def sizing_at(bake: Bake, targets: int, minutes: float, bound: str | None) -> BakeSizing:
    """The test a bake of ``minutes`` gives a wave of ``targets`` targets."""
    mu0 = bake.baseline_failures_per_target_hour * targets * minutes / 60.0
    alpha = 1.0 - bake.confidence
    c = critical_count(mu0, alpha)
    ratio = _g(bake.confidence, c) / mu0
    return BakeSizing(
        targets=targets,
        minutes=minutes,
        expected_background=mu0,
        critical_count=c,
        false_alarm=upper_tail(c, mu0),
        detectable_ratio=ratio,
        powered=ratio <= bake.detect_rate_ratio * (1 + 1e-6),
        bound=bound,
    )


def size_bake(bake: Bake, targets: int) -> BakeSizing:
    """The bake of a wave of ``targets`` targets (see the module docstring)."""
    if bake.mode is BakeMode.fixed:
        assert bake.fixed_minutes is not None
        return sizing_at(bake, targets, bake.fixed_minutes, None)
    per_minute = bake.baseline_failures_per_target_hour * targets / 60.0
    mu_lo, mu_hi = per_minute * bake.min_minutes, per_minute * bake.max_minutes
    found = _first_powered(bake.detect_rate_ratio, bake.confidence, mu_lo, mu_hi)
    if found is None:
        return sizing_at(bake, targets, bake.max_minutes, "max_minutes")
    minutes = min(max(found / per_minute, bake.min_minutes), bake.max_minutes)
    bound = "min_minutes" if minutes <= bake.min_minutes else None
    return sizing_at(bake, targets, minutes, bound)
