from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.fleetcopy import FleetCopy, copy_orion
from tests.pgserver import PgServer, PgUnavailable
from tests.switchsim import SwitchSim

if TYPE_CHECKING:
    from tests.nbserver import NetboxServer


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


def _pg_server(*, durable: bool) -> Iterator[PgServer]:
    try:
        server = PgServer(durable=durable)
    except PgUnavailable as exc:
        if os.environ.get("CI") == "true":
            pytest.fail(f"PostgreSQL test server unavailable under CI: {exc}")
        pytest.skip(f"PostgreSQL test server unavailable: {exc}")
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PgServer]:
    """One PostgreSQL server for the whole run; skipped where it cannot run, except under
    CI=true, where a missing server fails the tests that need it. It runs with fsync
    off (speed), so plumb records to it only with PLUMB_STATE_NONDURABLE=accept, which
    the whole run (and every plumb it starts) then has."""
    os.environ["PLUMB_STATE_NONDURABLE"] = "accept"
    yield from _pg_server(durable=False)


@pytest.fixture
def halting_pg() -> Iterator[PgServer]:
    """A PostgreSQL server of the test's own, which it may halt and resume (an outage)
    without disturbing the suite's server; durable, so a crash keeps its commits."""
    yield from _pg_server(durable=True)


@pytest.fixture
def pg_url(pg_server: PgServer) -> str:
    """The URL of a fresh, empty database on the suite's PostgreSQL server."""
    return pg_server.new_database()


@pytest.fixture(scope="session")
def netbox_server(pg_server: PgServer) -> Iterator[NetboxServer]:
    """One real NetBox for the whole run (gunicorn and Redis, its databases on the suite's
    PostgreSQL server); skipped where it cannot run, except under CI=true."""
    from tests.nbserver import NetboxServer, NetboxUnavailable, check_available

    try:
        check_available()
    except NetboxUnavailable as exc:
        if os.environ.get("CI") == "true":
            pytest.fail(f"NetBox test server unavailable under CI: {exc}")
        pytest.skip(f"NetBox test server unavailable: {exc}")
    server = NetboxServer(pg_server)
    try:
        server.start()
        yield server
    finally:
        server.stop()


@pytest.fixture
def netbox_url(netbox_server: NetboxServer) -> str:
    """The suite's NetBox, reset to its just-migrated state (only the superuser exists)."""
    netbox_server.reset()
    return netbox_server.url
