"""The EOS driver over real SSH (netmiko ``arista_eos``) to the switch simulator:
observe, configuration sessions, commit timers, before-state, faults, NOS upgrade."""

from __future__ import annotations

import json
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from intent.fleet import load_fleet
from inventory.problems import UNKNOWN
from reconciler.drivers.base import DeviceRef, Outcome
from reconciler.drivers.netmiko_eos import EosCandidate, EosDriver
from reconciler.errors import (
    ConfigRejected,
    ConnectionLost,
    DeviceAuthError,
    DeviceTimeout,
    DeviceUnreachable,
    Handling,
    classify,
)
from reconciler.loop import _settle_unknown
from reconciler.settings import Change, Owned, Scalar, diff
from tests.drivers.conftest import Switches
from tests.drivers.simflat import flat_from_state, state_from_flat
from tests.switchsim import Fault
from tests.switchsim.model import default_state

ORION = Path(__file__).resolve().parent.parent.parent / "examples" / "orion"
WANT: dict[str, Scalar] = {
    "interfaces/Ethernet1/mtu": 9000,
    "interfaces/Ethernet2/address": "10.0.0.1/31",
    "interfaces/Ethernet2/pfc_priorities": "3",
    "qos/dscp/26": 3,
    "qos/ecn/3/kmin_kb": 200,
    "qos/ecn/3/kmax_kb": 800,
    "qos/ecn/3/pmax_percent": 20,
    "qos/pfc_headroom_kb": 128,
    "bgp/asn": 65001,
    "bgp/maximum_paths": 8,
    "bgp/neighbors/10.0.0.0/remote_as": 65000,
    "bgp/neighbors/10.0.0.0/inbound_filter": "FABRIC-IN",
}


def plan(driver: EosDriver, ref: DeviceRef, want: dict[str, Scalar] = WANT) -> list[Change]:
    desired = {p: Owned(v, UNKNOWN) for p, v in want.items()}
    return diff(desired, driver.observe(ref))


def sessions(driver: EosDriver, ref: DeviceRef) -> dict[str, Any]:
    with driver.pool.session(ref) as session:
        found: dict[str, Any] = json.loads(session.run("show configuration sessions | json"))
    return {n: s["state"] for n, s in found["sessions"].items()}


def test_observe_reads_what_the_switch_holds(switches: Switches) -> None:
    """observe() of an ORION leaf equals the simulator's own model of it, path by path."""
    fleet = load_fleet(ORION)
    from reconciler.render import render_device
    from reconciler.settings import as_desired_state

    desired = as_desired_state(render_device(fleet, "leaf-r0"))
    state = state_from_flat(desired, hostname="leaf-r0", dialect="eos", model="7060DX5-64S")
    ref = switches.add("eos", state)
    observed = switches.driver("eos").observe(ref)
    observed.pop("system/serial")
    assert observed == flat_from_state(state)
    assert diff({p: Owned(v, UNKNOWN) for p, v in desired.items()}, observed) == []


def test_apply_with_commit_confirm_converges_and_saves(switches: Switches) -> None:
    """A timed commit, confirmed, leaves the change running and saved, no session pending."""
    ref = switches.add("eos")
    driver = switches.driver("eos")
    result = driver.apply(ref, plan(driver, ref), dry_run=False, confirm_within=60)
    assert result.outcome is Outcome.applied, result.error
    assert plan(driver, ref) == []
    record = json.loads((switches.sim.state_dir / f"{ref.name}.json").read_text())
    assert record["startup"]["interfaces"]["Ethernet1"]["mtu"] == 9000
    assert record["pending_revert"] is None
    assert "pending" not in set(sessions(driver, ref).values())


def test_an_unconfirmed_commit_reverts_by_itself(switches: Switches) -> None:
    """Without confirm the switch restores its old config when the timer runs out."""
    ref = switches.add("eos")
    driver = switches.driver("eos")
    changes = plan(driver, ref)
    candidate = driver.stage(ref, changes)
    driver.commit(ref, candidate, confirm_within=1)
    assert driver.observe(ref)["interfaces/Ethernet1/mtu"] == 9000
    time.sleep(1.6)
    assert driver.observe(ref)["interfaces/Ethernet1/mtu"] == 9214
    with pytest.raises(ConfigRejected, match="timer may have expired"):
        driver.confirm(ref, candidate)


def test_confirm_after_a_restart_finds_the_pending_commit(switches: Switches) -> None:
    """A new driver (a restarted controller) confirms the timed commit it finds on the switch."""
    ref = switches.add("eos")
    first = switches.driver("eos")
    candidate = first.stage(ref, plan(first, ref))
    first.commit(ref, candidate, confirm_within=2)
    switches.driver("eos").confirm(ref, None)
    time.sleep(2.3)
    assert first.observe(ref)["interfaces/Ethernet1/mtu"] == 9000


def test_the_candidate_keeps_the_before_state(switches: Switches) -> None:
    """stage reads the device just before writing and keeps that state for rollback."""
    ref = switches.add("eos")
    driver = switches.driver("eos")
    before = driver.observe(ref)
    candidate = driver.stage(ref, plan(driver, ref))
    assert isinstance(candidate, EosCandidate) and candidate.before == before
    driver.discard(ref, candidate)
    assert "pending" not in set(sessions(driver, ref).values())


def test_dry_run_compares_and_writes_nothing(switches: Switches) -> None:
    """A dry run is planned, takes no write and leaves no session behind."""
    ref = switches.add("eos")
    driver = switches.driver("eos")
    writes = switches.sim.write_count(ref.name)
    result = driver.apply(ref, plan(driver, ref), dry_run=True)
    assert result.outcome is Outcome.planned
    assert switches.sim.write_count(ref.name) == writes
    assert set(sessions(driver, ref).values()) <= {"aborted"}


def test_leftover_sessions_are_aborted_by_the_next_stage(switches: Switches) -> None:
    """Sessions a crashed run left pending never pile up to EOS's limit."""
    ref = switches.add("eos")
    driver = switches.driver("eos")
    changes = plan(driver, ref)
    for _ in range(7):
        driver.stage(ref, changes)  # never discarded, like a controller that died
    assert list(sessions(driver, ref).values()).count("pending") == 1


def test_a_refused_line_rejects_the_candidate_and_aborts_it(switches: Switches) -> None:
    """A ``% Invalid input`` answer is ConfigRejected; nothing changes, no session stays."""
    ref = switches.add("eos")
    driver = switches.driver("eos")
    switches.sim.set_fault(ref.name, Fault(reject=r"^mtu "))
    with pytest.raises(ConfigRejected, match="Invalid input"):
        driver.apply(ref, plan(driver, ref), dry_run=False)
    switches.sim.clear_faults(ref.name)
    assert driver.observe(ref)["interfaces/Ethernet1/mtu"] == 9214
    assert "pending" not in set(sessions(driver, ref).values())


def test_compare_sees_a_change_made_behind_its_back(switches: Switches) -> None:
    """If running config moves after stage, compare reports more than the plan: mismatch."""
    ref = switches.add("eos")
    driver, other = switches.driver("eos"), switches.driver("eos")
    candidate = driver.stage(ref, plan(driver, ref, {"interfaces/Ethernet1/mtu": 9000}))
    other.apply(ref, plan(other, ref, {"interfaces/Ethernet3/mtu": 1600}), dry_run=False)
    staged = {c.path for c in driver.compare(ref, candidate)}
    assert staged == {"interfaces/Ethernet1/mtu", "interfaces/Ethernet3/mtu"}
    driver.discard(ref, candidate)


def test_a_timed_out_commit_is_unknown_then_settled(switches: Switches) -> None:
    """A commit with no answer is DeviceTimeout; re-observing finds it applied."""
    ref = switches.add("eos")
    driver = switches.driver("eos", commit_timeout=1)
    changes = plan(driver, ref)
    switches.sim.set_fault(ref.name, Fault(hang_commit=2.5))
    with pytest.raises(DeviceTimeout) as caught:
        driver.apply(ref, changes, dry_run=False)
    assert classify(caught.value) is Handling.reobserve
    switches.sim.clear_faults(ref.name)
    outcome, _ = _settle_unknown(driver, ref, changes, caught.value, None)
    assert outcome is Outcome.applied


def test_a_dropped_commit_is_connection_lost(switches: Switches) -> None:
    """The connection cut mid-commit is ConnectionLost; the next call reconnects."""
    ref = switches.add("eos")
    driver = switches.driver("eos")
    changes = plan(driver, ref)
    switches.sim.set_fault(ref.name, Fault(drop_mid_commit=True))
    with pytest.raises(ConnectionLost):
        driver.apply(ref, changes, dry_run=False)
    assert diff({c.path: Owned(c.after, UNKNOWN) for c in changes}, driver.observe(ref)) == []


def test_refused_login_is_terminal_and_a_dead_port_is_unreachable(switches: Switches) -> None:
    """Wrong credentials are DeviceAuthError (terminal); a closed port DeviceUnreachable."""
    ref = switches.add("eos")
    with pytest.raises(DeviceAuthError) as caught:
        switches.driver("eos", password="wrong-password").observe(ref)
    assert classify(caught.value) is Handling.terminal
    switches.sim.set_fault(ref.name, Fault(unreachable=True))
    with pytest.raises(DeviceUnreachable):
        switches.driver("eos", connect_timeout=2).observe(ref)


def test_one_connection_per_device_serves_every_step(switches: Switches) -> None:
    """observe, stage, compare, commit and confirm reuse one SSH connection per device,
    also when threads share the driver."""
    refs = [switches.add("eos") for _ in range(3)]
    driver = switches.driver("eos")
    with ThreadPoolExecutor(8) as pool:
        states = list(pool.map(driver.observe, refs * 4))
    assert all(s["system/hostname"] in {r.name for r in refs} for s in states)
    assert driver.apply(refs[0], plan(driver, refs[0]), dry_run=False, confirm_within=30).outcome
    assert driver.pool.opened == 3


def test_nos_upgrade_reloads_and_waits_for_the_new_version(switches: Switches) -> None:
    """A NOS change sets the boot image, saves, reloads and returns once the new version runs."""
    ref = switches.add("eos", default_state("x", "eos"), reboot_seconds=0.5)
    driver = switches.driver("eos")
    changes = plan(driver, ref, {"system/nos_version": "4.32.2F", "interfaces/Ethernet1/mtu": 9100})
    result = driver.apply(ref, changes, dry_run=False, confirm_within=60)
    assert result.outcome is Outcome.applied, result.error
    state = switches.sim.state(ref.name)
    assert (state.nos_version, state.boot_image) == ("4.32.2F", "flash:EOS-4.32.2F.swi")
    assert state.interfaces["Ethernet1"].mtu == 9100


def test_unsafe_values_are_refused_before_any_connection(switches: Switches) -> None:
    """An injection attempt fails validation: no SSH connection is even opened."""
    ref = switches.add("eos")
    driver = switches.driver("eos")
    bad = [Change("interfaces/Ethernet1; reload/mtu", 9214, 9000)]
    with pytest.raises(ConfigRejected, match="unsafe"):
        driver.apply(ref, bad, dry_run=False)
    assert driver.pool.opened == 0
