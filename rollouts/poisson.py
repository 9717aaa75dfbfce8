"""Poisson tails and their inverse in the mean (pure): the arithmetic of bake sizing.

:mod:`rollouts.bake` sizes a wave's bake with a Poisson test on its failure count; a
review plans rollouts too, so this runs wherever ``plumb review`` runs, on the base
install, without scipy. Only whole counts occur, which keeps it short:

* ``upper_tail(c, mu) = P(X >= c)`` for X ~ Poisson(mu). It sums probabilities that all
  have one sign, never ``1 - (something close to 1)``: for ``mu < c`` it sums the upper
  tail itself, from ``P(X = c)`` upwards; for ``mu >= c`` the lower tail ``P(X <= c - 1)``
  is at most about one half, so one minus it loses nothing that matters.
* ``mean_with_upper_tail(q, c)``: the mean mu with ``P(X >= c) = q``, which is scipy's
  ``gamma.ppf(q, c)`` (``P(Poisson(mu) >= c) = P(Gamma(c) <= mu)``). The tail rises
  strictly with mu and its derivative is ``P(X = c - 1)``, so Newton's method inside a
  shrinking bracket finds it in a few steps.
"""

from __future__ import annotations

import math

_EPS = 1e-17  # a sum stops when its next term is below this share of it
_MAX_STEPS = 200


def probability(k: int, mu: float) -> float:
    """P(X = k) for X ~ Poisson(mu), from logarithms (no overflow for large k or mu)."""
    if k < 0:
        return 0.0
    if mu <= 0.0:
        return 1.0 if k == 0 else 0.0
    return math.exp(k * math.log(mu) - mu - math.lgamma(k + 1))


def _sum_upwards(c: int, mu: float) -> float:
    """P(X >= c) as P(X = c) + P(X = c + 1) + ..., for mu < c (the terms shrink)."""
    term = probability(c, mu)
    total = term
    k = c
    while term > total * _EPS:
        k += 1
        term *= mu / k
        total += term
    return total


def _sum_downwards(c: int, mu: float) -> float:
    """P(X <= c) as P(X = c) + P(X = c - 1) + ..., for mu >= c (the terms shrink)."""
    term = probability(c, mu)
    total = term
    k = c
    while k > 0 and term > total * _EPS:
        term *= k / mu
        k -= 1
        total += term
    return total


def upper_tail(c: int, mu: float) -> float:
    """P(X >= c) for X ~ Poisson(mu)."""
    if c <= 0:
        return 1.0
    if mu <= 0.0:
        return 0.0
    if mu < c:
        return min(_sum_upwards(c, mu), 1.0)
    return max(1.0 - _sum_downwards(c - 1, mu), 0.0)


def _excess(q: float, c: int, mu: float) -> float:
    """P(X >= c | mu) - q, from whichever tail is the small one (so that a q near 1
    keeps its precision: ``1 - q`` is exact there)."""
    if mu < c:
        return _sum_upwards(c, mu) - q
    return (1.0 - q) - _sum_downwards(c - 1, mu)


def mean_with_upper_tail(q: float, c: int) -> float:
    """The mean mu with P(X >= c) = q, for 0 < q < 1 and c >= 1."""
    if not 0.0 < q < 1.0 or c < 1:
        raise ValueError(f"need 0 < q < 1 and c >= 1, got q={q}, c={c}")
    low, high = 0.0, float(c)
    while _excess(q, c, high) < 0.0:
        low, high = high, 2.0 * high
    mu = 0.5 * (low + high)
    for _ in range(_MAX_STEPS):
        gap = _excess(q, c, mu)
        if gap == 0.0:
            return mu
        if gap < 0.0:
            low = mu
        else:
            high = mu
        slope = probability(c - 1, mu)
        step = gap / slope if slope > 0.0 else math.inf
        guess = mu - step
        if not low < guess < high:  # Newton left the bracket: halve it instead
            guess = 0.5 * (low + high)
        if abs(guess - mu) <= 4e-16 * mu or high - low <= 4e-16 * high:
            return guess
        mu = guess
    return mu
