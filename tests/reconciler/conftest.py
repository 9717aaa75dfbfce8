from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fleetcopy import FleetCopy
from tests.reconciler.labfleet import LabFleet


@pytest.fixture
def lab(orion: FleetCopy) -> Iterator[LabFleet]:
    """A fresh ORION lab: older firmware and six drifted fields (seed 0)."""
    fleet = LabFleet.create(orion)
    yield fleet
    fleet.close()


@pytest.fixture
def clean_lab(orion: FleetCopy) -> Iterator[LabFleet]:
    """An ORION lab already at intent: intended firmware, no drift."""
    fleet = LabFleet.create(orion, drift=0, older_firmware=False)
    yield fleet
    fleet.close()
