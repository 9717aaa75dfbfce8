from __future__ import annotations

import pytest

from policies.engine import PolicyReport
from tests.fleetcopy import copy_orion


@pytest.fixture(scope="package")
def clean_report(tmp_path_factory: pytest.TempPathFactory) -> PolicyReport:
    """Every built-in policy evaluated once on an unchanged copy of ORION."""
    return copy_orion(tmp_path_factory.mktemp("clean")).evaluate()
