from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fleetcopy import FleetCopy, copy_orion
from tests.pgserver import PgServer, PgUnavailable
from tests.switchsim import SwitchSim


@pytest.fixture
def orion(tmp_path: Path) -> FleetCopy:
    """A fresh, writable copy of examples/orion."""
    return copy_orion(tmp_path)


@pytest.fixture(scope="module")
def sim(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SwitchSim]:
    """An SSH switch simulator for one test module (each module adds its own devices)."""
    simulator = SwitchSim(tmp_path_factory.mktemp("switchsim"))
    simulator.start()
    yield simulator
    simulator.stop()


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PgServer]:
    """One PostgreSQL server for the whole run; skipped where it cannot run, except under
    CI=true, where a missing server fails the tests that need it."""
    try:
        server = PgServer()
    except PgUnavailable as exc:
        if os.environ.get("CI") == "true":
            pytest.fail(f"PostgreSQL test server unavailable under CI: {exc}")
        pytest.skip(f"PostgreSQL test server unavailable: {exc}")
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def pg_url(pg_server: PgServer) -> str:
    """The URL of a fresh, empty database on the suite's PostgreSQL server."""
    return pg_server.new_database()
