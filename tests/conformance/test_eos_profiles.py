"""The EOS driver against every EOS profile of the switch simulator: observe -> plan ->
apply -> observe shows no change, and nothing outside plumb's fields moved on the
device (qos profiles but their ECN lines, peer groups, IPv6 neighbours, switchport
ports, every other global line)."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from inventory.problems import UNKNOWN
from reconciler.capabilities import inexpressible
from reconciler.drivers.base import DeviceRef, Outcome
from reconciler.drivers.eos_parse import text_tree
from reconciler.drivers.netmiko_eos import EosDriver
from reconciler.settings import Owned, Scalar, diff
from tests.conformance.switch_harness import drifted
from tests.drivers.conftest import Switches
from tests.drivers.simflat import state_from_flat
from tests.fleetcopy import copy_orion
from tests.switchsim import SwitchSim
from tests.switchsim.eos_profiles import PROFILES


@pytest.fixture
def switches(sim: SwitchSim, tmp_path: Path) -> Iterator[Switches]:
    made = Switches(sim, tmp_path)
    yield made
    made.close()


OWNED_GLOBAL = ("interface Ethernet", "qos map dscp", "router bgp")


def _is_ipv4(word: str) -> bool:
    try:
        return ipaddress.ip_address(word).version == 4
    except ValueError:
        return False


def _cmds(block: Any) -> dict[str, Any]:
    return dict(block.get("cmds") or {}) if isinstance(block, dict) else {}


def untouched(text: str) -> dict[str, Any]:
    """The parts of a running config plumb must never change."""
    tree = _cmds(text_tree(text))
    kept: dict[str, Any] = {k: v for k, v in tree.items() if not k.startswith(OWNED_GLOBAL)}
    for key, block in tree.items():
        if key.startswith("qos profile "):
            kept[key] = {
                line: sorted(_cmds(sub)) if not line.endswith(tuple("01234567")) else None
                for line, sub in _cmds(block).items()
            }
        elif key.startswith("interface Ethernet") and "no switchport" not in _cmds(block):
            kept[key] = sorted(k for k in _cmds(block) if "tx-queue" not in k)
        elif key.startswith("router bgp"):
            kept[key] = sorted(
                line
                for line in _cmds(block)
                if not (line.startswith("neighbor ") and _is_ipv4(line.split()[1]))
                and not line.startswith(("maximum-paths", "router-id"))
            )
    return kept


def running(driver: EosDriver, ref: DeviceRef) -> str:
    with driver.pool.session(ref) as session:
        return session.run("show running-config")


def desired_for(profile: str, observed: dict[str, Scalar], tmp: Path) -> dict[str, Scalar]:
    """What plumb should hold: ORION's leaf-r0 intent, or for a profile that boots its
    own hand-built config, changes of every owned kind on it."""
    if PROFILES[profile].initial_config is None:
        fleet = copy_orion(tmp).load()
        from reconciler.render import render_device

        intent = {p: o.value for p, o in render_device(fleet, "leaf-r0").items()}
        # ORION's 9216 is beyond EOS's L3 MTU range (68-9214): an EOS leaf holds 9214
        return {p: 9214 if p.endswith("/mtu") else v for p, v in intent.items()}
    routed = [
        p.split("/")[1]
        for p, v in sorted(observed.items())
        if p.endswith("/mode") and v == "routed"
    ]
    peers = [p.split("/")[2] for p in observed if p.endswith("/inbound_filter")]
    want: dict[str, Scalar] = {
        f"interfaces/{routed[0]}/mtu": 9000,
        f"interfaces/{routed[0]}/pfc_priorities": "3,4",
        "qos/ecn/3/kmin_kb": 200,
        "qos/ecn/3/kmax_kb": 800,
        "qos/ecn/3/pmax_percent": 20,
        "qos/dscp/46": 5,
        "bgp/maximum_paths": 128,
        "qos/pfc_headroom_kb": 128,
    }
    want |= {
        f"bgp/neighbors/{p}/remote_as": observed[f"bgp/neighbors/{p}/remote_as"] for p in peers
    }
    want[f"bgp/neighbors/{peers[0]}/inbound_filter"] = "OTHER-IN"
    return want


@pytest.mark.parametrize("profile", sorted(PROFILES), ids=lambda p: p or "default")
def test_apply_converges_and_touches_nothing_else(
    profile: str, switches: Switches, tmp_path: Path
) -> None:
    """One apply takes every expressible owned field to intent; the rest stays as it was."""
    initial = None
    if PROFILES[profile].initial_config is None:
        fleet = copy_orion(tmp_path / "fleet").load()
        from reconciler.render import render_device
        from reconciler.settings import as_desired_state

        start = drifted(as_desired_state(render_device(fleet, "leaf-r0")))
        initial = state_from_flat(start, hostname="leaf-r0", dialect="eos", model="DCS-7280CR3")
    ref = switches.add("eos", initial, profile=profile)
    driver: EosDriver = switches.driver("eos")
    observed = driver.observe(ref)
    want = desired_for(profile, observed, tmp_path / "intent")
    refused = {p for p in want if inexpressible("eos", p, observed) is not None}
    assert "qos/pfc_headroom_kb" in refused
    desired = {p: Owned(v, UNKNOWN) for p, v in want.items() if p not in refused}
    changes = diff(desired, observed)
    assert changes, "the device starts away from intent"
    before = running(driver, ref)
    result = driver.apply(ref, changes, dry_run=False, confirm_within=30)
    assert result.outcome is Outcome.applied, result.error
    assert diff(desired, driver.observe(ref)) == []
    assert untouched(running(driver, ref)) == untouched(before)
