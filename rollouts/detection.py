"""What the canary is sure to catch (pure).

A defect confined to one stratum (it hits every member of that stratum and nothing
else) is caught by the canary when the canary holds at least one member of it. A
stratified canary holds one of every stratum, so it catches such a defect with
probability 1. A *random* canary of the same size ``k`` over ``n`` targets catches a
defect confined to a stratum of ``m`` targets with probability

    1 - (1 - p)^k,  p = m / n             (draws with replacement: the usual formula)

or exactly ``1 - C(n - m, k) / C(n, k)`` when the ``k`` canaries are distinct targets
(hypergeometric). Both are reported; for a minority stratum both are far below 1.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from math import comb

from rollouts.strata import Stratification


def random_catch(p: float, k: int) -> float:
    """``1 - (1 - p)^k``: k independent random canaries meet a fraction p of targets."""
    return 1.0 - (1.0 - p) ** k


def random_catch_distinct(stratum: int, targets: int, k: int) -> float:
    """``1 - C(n - m, k) / C(n, k)``: k distinct random canaries out of n meet m."""
    if k > targets:
        raise ValueError(f"a canary of {k} out of {targets} targets")
    return 1.0 - comb(targets - stratum, k) / comb(targets, k)


@dataclass(frozen=True)
class Coverage:
    """One stratum's row of the coverage table."""

    stratum: str
    size: int
    canaries: tuple[str, ...]
    p: float  # stratum size / targets
    stratified: float  # 1.0 when the canary holds a member, else 0.0
    random: float  # 1 - (1 - p)^k
    random_distinct: float  # hypergeometric


def coverage(strata: Stratification, canary: Iterable[str]) -> tuple[Coverage, ...]:
    """Per stratum: the stratified canary's catch probability beside a random canary's."""
    chosen = set(canary)
    n = len(strata.targets)
    k = len(chosen)
    rows = []
    for stratum in strata.strata:
        m = len(stratum.members)
        mine = tuple(t for t in stratum.members if t in chosen)
        rows.append(
            Coverage(
                stratum=stratum.id,
                size=m,
                canaries=mine,
                p=m / n,
                stratified=1.0 if mine else 0.0,
                random=random_catch(m / n, k),
                random_distinct=random_catch_distinct(m, n, k),
            )
        )
    return tuple(rows)
