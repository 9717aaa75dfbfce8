"""Harness fixtures for the driver conformance suite: one parameter per driver.

Each harness is a context manager; drivers whose real peer cannot start on this
machine are skipped with the reason (never silently passed)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path

import pytest

from tests.conformance.frr_harness import frr_harness
from tests.conformance.harness import Harness, lab_harness
from tests.conformance.host_harness import ansible_harness
from tests.conformance.switch_harness import eos_harness, sonic_harness

HARNESSES: dict[str, Callable[[Path], AbstractContextManager[Harness]]] = {
    "lab": lab_harness,
    "ansible": ansible_harness,
    "eos": eos_harness,
    "sonic": sonic_harness,
    "linux-frr": frr_harness,
}


@pytest.fixture(params=sorted(HARNESSES))
def harness(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Harness]:
    with HARNESSES[request.param](tmp_path) as made:
        yield made
