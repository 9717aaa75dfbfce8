"""The SONiC parsers and the JSON-patch builder, against golden fixtures captured from
the switch simulator (``tests/fixtures/sonic/<command>/<case>/``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reconciler.drivers.safevalues import SafeValues
from reconciler.drivers.sonic_parse import parse_config_db, parse_version
from reconciler.drivers.sonic_patch import apply_json_patch, edit_config_db, json_patch, pointer
from reconciler.errors import ConfigRejected

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "sonic"
ORION = FIXTURES / "show_runningconfiguration_all" / "orion-leaf" / "output.json"


def cases(command: str) -> list[Path]:
    return sorted(p for p in (FIXTURES / command).iterdir() if p.is_dir())


def load(folder: Path, name: str) -> Any:
    return json.loads((folder / name).read_text())


@pytest.mark.parametrize("case", cases("show_runningconfiguration_all"), ids=lambda p: p.name)
def test_config_db(case: Path) -> None:
    """config_db JSON gives ports, QoS (aggregated over ports) and BGP."""
    assert parse_config_db(load(case, "output.json")) == load(case, "expected.json")


@pytest.mark.parametrize("case", cases("show_version"), ids=lambda p: p.name)
def test_show_version(case: Path) -> None:
    """``show version`` text gives the version without its ``SONiC.`` prefix."""
    assert parse_version((case / "output.txt").read_text()) == load(case, "expected.json")


def edit(db: dict[str, Any], changes: dict[str, Any]) -> dict[str, Any]:
    values = SafeValues("leaf-r1")
    settings_ = [values.setting(p, v) for p, v in changes.items()]
    return edit_config_db("leaf-r1", db, parse_config_db(db), settings_)


def test_a_patch_changes_exactly_the_requested_paths() -> None:
    """edit -> json_patch -> apply_json_patch -> parse differs from before only as asked."""
    db = json.loads(ORION.read_text())
    changes = {
        "interfaces/Ethernet3/mtu": 9000,
        "interfaces/Ethernet4/address": "192.0.2.0/31",
        "interfaces/Ethernet5/pfc_priorities": "3,4",
        "qos/dscp/48": 5,
        "qos/ecn/3/kmin_kb": 180,
        "qos/pfc_xoff_kb": 380,
        "bgp/maximum_paths": 32,
        "bgp/neighbors/10.0.0.144/inbound_filter": "",
        "bgp/neighbors/10.9.9.9/remote_as": 65123,
    }
    patch = json_patch(db, edit(db, changes))
    before = parse_config_db(db)
    after = parse_config_db(apply_json_patch(db, patch))
    moved = {p: after.get(p) for p in set(before) | set(after) if before.get(p) != after.get(p)}
    assert moved == changes | {"bgp/neighbors/10.9.9.9/inbound_filter": ""}


def test_nothing_to_change_is_an_empty_patch() -> None:
    """Writing the values a switch already holds produces no operation."""
    db = json.loads(ORION.read_text())
    state = parse_config_db(db)
    assert json_patch(db, edit(db, {"bgp/maximum_paths": state["bgp/maximum_paths"]})) == []


def test_changing_the_as_of_running_bgp_is_refused() -> None:
    """The AS number of a running BGP instance is never changed in place."""
    with pytest.raises(ConfigRejected, match="bgp/asn"):
        edit(json.loads(ORION.read_text()), {"bgp/asn": 65999})


def test_pointers_escape_slashes() -> None:
    """Keys such as ``Ethernet0|10.0.0.0/31`` become valid JSON pointers."""
    assert pointer("INTERFACE", "Ethernet0|10.0.0.0/31") == "/INTERFACE/Ethernet0|10.0.0.0~131"


@settings(max_examples=40, deadline=None)
@given(
    mtu=st.integers(68, 9216),
    kmin=st.integers(1, 500),
    span=st.integers(0, 500),
    pmax=st.integers(1, 100),
    headroom=st.none() | st.integers(1, 4096),
)
def test_applying_the_patch_gives_the_desired_values(
    mtu: int, kmin: int, span: int, pmax: int, headroom: int | None
) -> None:
    """For any valid values, the patched config_db parses back to exactly them."""
    db = json.loads(
        (FIXTURES / "show_runningconfiguration_all" / "mixed-qos" / "output.json").read_text()
    )
    changes = {
        "interfaces/Ethernet0/mtu": mtu,
        "qos/ecn/3/kmin_kb": kmin,
        "qos/ecn/3/kmax_kb": kmin + span,
        "qos/ecn/3/pmax_percent": pmax,
        "qos/pfc_headroom_kb": headroom,
    }
    after = parse_config_db(apply_json_patch(db, json_patch(db, edit(db, changes))))
    assert {p: after[p] for p in changes} == changes
