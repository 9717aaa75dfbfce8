from __future__ import annotations

from pathlib import Path

import pytest

from tests.fleetcopy import FleetCopy, copy_orion


@pytest.fixture
def orion(tmp_path: Path) -> FleetCopy:
    """A fresh, writable copy of examples/orion."""
    return copy_orion(tmp_path)
