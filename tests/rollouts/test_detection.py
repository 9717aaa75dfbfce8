"""Detection: a stratified canary catches a defect confined to any stratum for sure; a
random canary of the same size catches it with 1 - (1 - p)^k."""

from __future__ import annotations

import pytest

from rollouts.detection import coverage, random_catch, random_catch_distinct
from rollouts.planning import plan_changes
from rollouts.strata import stratify
from tests.rollouts.fleets import firmware, orion_like, spec


def test_four_b0_nodes_of_32_with_eight_random_canaries() -> None:
    """p = 4/32 = 0.125; k = 8 random canaries: 1 - (7/8)^8 = 0.6564."""
    assert random_catch(4 / 32, 8) == pytest.approx(1 - (7 / 8) ** 8)
    assert round(random_catch(0.125, 8), 4) == 0.6564


def test_distinct_random_canaries_use_the_hypergeometric() -> None:
    """8 distinct canaries out of 32 miss all 4 B0 nodes with C(28, 8) / C(32, 8)."""
    assert random_catch_distinct(4, 32, 8) == pytest.approx(1 - 3108105 / 10518300)
    assert random_catch_distinct(4, 32, 8) > random_catch(0.125, 8)


def test_orion_coverage_table() -> None:
    """ORION: the canary holds one A1 and one B0 node; a random canary of 2 meets the B0
    stratum with 1 - (7/8)^2 = 0.2344 and the A1 one with 1 - (1/8)^2 = 0.9844."""
    fleet = orion_like()
    changes = {n: firmware("1") for n in fleet.devices}
    result = plan_changes(fleet, spec(strata={"extra_attributes": ["label.nic_revision"]}), changes)
    rows = {
        dict(result.strata.of(r.canaries[0]).key)["label.nic_revision"]: r for r in result.coverage
    }
    assert rows["B0"].size == 4 and rows["B0"].p == 0.125
    assert rows["B0"].stratified == 1.0
    assert rows["B0"].random == pytest.approx(0.234375)
    assert rows["A1"].random == pytest.approx(0.984375)


def test_a_stratum_without_canary_scores_zero() -> None:
    """coverage() reports 0 for a stratum the given canary misses (never for a plan's)."""
    fleet = orion_like()
    changes = {n: firmware("1" if fleet.devices[n].rack != "r8" else "2") for n in fleet.devices}
    strata = stratify(fleet, changes)
    rows = coverage(strata, ["n01"])
    assert [r.stratified for r in rows] == [1.0, 0.0]
