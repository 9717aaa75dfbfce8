"""Addresses are text in YAML: an integer where an IPv4 address, interface or network
belongs is refused at its file:line, never read as ``0.0.0.N``."""

from __future__ import annotations

import contextlib

import pytest
from typer.testing import CliRunner

from plumb.cli import app
from tests.fleetcopy import FleetCopy


def _validate(fleet: FleetCopy) -> tuple[int, str]:
    with contextlib.chdir(fleet.path.parent):
        result = CliRunner().invoke(app, ["validate", fleet.path.name])
    return result.exit_code, result.stderr


@pytest.mark.parametrize(
    ("relative", "old", "new", "where"),
    [
        ("intent/bgp.yaml", "spine-1: 10.255.0.1", "spine-1: 10", "intent/bgp.yaml:18:14"),
        ("inventory/devices/nodes.yaml", "mgmt: 198.18.3.1\n", "mgmt: 17\n", "nodes.yaml:12:11"),
        (
            "intent/addressing.yaml",
            "leaf-spine: 10.0.0.0/16",
            "leaf-spine: 167772160",
            "intent/addressing.yaml:6:17",
        ),
        (
            "intent/addressing.yaml",
            "loopbacks: 10.255.0.0/22",
            "loopbacks: 42",
            "intent/addressing.yaml:8:14",
        ),
    ],
)
def test_an_integer_is_not_an_ipv4_address(
    orion: FleetCopy, relative: str, old: str, new: str, where: str
) -> None:
    """An integer in an address field exits 2 naming the file, line and column."""
    orion.replace(relative, old, new)
    code, stderr = _validate(orion)
    assert code == 2, stderr
    located = [line for line in stderr.splitlines() if where in line]
    assert located, stderr
    assert "an address is written as text (e.g. 10.0.0.1), not as a number" in located[0]


def test_a_router_id_given_as_text_still_loads(orion: FleetCopy) -> None:
    """Quoted or plain dotted-quad text is accepted as before."""
    orion.replace("intent/bgp.yaml", "spine-1: 10.255.0.1", 'spine-1: "10.255.0.1"')
    fleet = orion.load()
    assert str(fleet.addresses.router_ids["spine-1"].value) == "10.255.0.1"
