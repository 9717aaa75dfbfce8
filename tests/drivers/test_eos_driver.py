"""The EOS driver over real SSH (netmiko ``arista_eos``) to the switch simulator:
observe, configuration sessions, commit timers, before-state, faults, NOS upgrade."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from intent.fleet import load_fleet
from inventory.problems import UNKNOWN
from reconciler.capabilities import inexpressible
from reconciler.drivers.base import DeviceRef, Outcome
from reconciler.drivers.eos_parse import UnexpectedOutput, text_tree
from reconciler.drivers.netmiko_eos import EosCandidate, EosDriver
from reconciler.drivers.switch_access import Credentials, parse_options
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
from tests.switchsim import Fault, SwitchState
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
    "bgp/asn": 65001,
    "bgp/maximum_paths": 8,
    "bgp/neighbors/10.0.0.0/remote_as": 65000,
    "bgp/neighbors/10.0.0.0/inbound_filter": "FABRIC-IN",
}


def routed(hostname: str = "x") -> SwitchState:
    """A small switch whose four ports are routed (each has an address)."""
    state = default_state(hostname, "eos")
    for index, port in enumerate(state.interfaces.values()):
        port.ipv4 = f"10.9.{index}.0/31"
    return state


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
    outbound = {p: observed.pop(p) for p in list(observed) if p.endswith("/outbound_filter")}
    assert observed == flat_from_state(state)
    assert set(outbound.values()) == {""}
    expressible = {p: v for p, v in desired.items() if inexpressible("eos", p, observed) is None}
    assert set(desired) - set(expressible) == {"qos/pfc_headroom_kb", "qos/pfc_xoff_kb"}
    assert diff({p: Owned(v, UNKNOWN) for p, v in expressible.items()}, observed) == []


def test_apply_with_commit_confirm_converges_and_saves(switches: Switches) -> None:
    """A timed commit, confirmed, leaves the change running and saved, no session pending."""
    ref = switches.add("eos", routed())
    driver = switches.driver("eos")
    result = driver.apply(ref, plan(driver, ref), dry_run=False, confirm_within=60)
    assert result.outcome is Outcome.applied, result.error
    assert plan(driver, ref) == []
    record = json.loads((switches.sim.state_dir / f"{ref.name}.json").read_text())
    assert "mtu 9000" in text_tree(record["startup_config"])["cmds"]["interface Ethernet1"]["cmds"]
    assert record["pending_revert"] is None
    assert "pending" not in set(sessions(driver, ref).values())


def test_an_unconfirmed_commit_reverts_by_itself(switches: Switches) -> None:
    """Without confirm the switch restores its old config when the timer runs out."""
    ref = switches.add("eos", routed())
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
    ref = switches.add("eos", routed())
    first = switches.driver("eos")
    candidate = first.stage(ref, plan(first, ref))
    first.commit(ref, candidate, confirm_within=2)
    switches.driver("eos").confirm(ref, None)
    time.sleep(2.3)
    assert first.observe(ref)["interfaces/Ethernet1/mtu"] == 9000


def test_the_candidate_keeps_the_before_state(switches: Switches) -> None:
    """stage reads the device just before writing and keeps that state for rollback."""
    ref = switches.add("eos", routed())
    driver = switches.driver("eos")
    before = driver.observe(ref)
    candidate = driver.stage(ref, plan(driver, ref))
    assert isinstance(candidate, EosCandidate) and candidate.before == before
    driver.discard(ref, candidate)
    assert "pending" not in set(sessions(driver, ref).values())


def test_dry_run_compares_and_writes_nothing(switches: Switches) -> None:
    """A dry run is planned, takes no write and leaves no session behind."""
    ref = switches.add("eos", routed())
    driver = switches.driver("eos")
    writes = switches.sim.write_count(ref.name)
    result = driver.apply(ref, plan(driver, ref), dry_run=True)
    assert result.outcome is Outcome.planned
    assert switches.sim.write_count(ref.name) == writes
    assert set(sessions(driver, ref).values()) <= {"aborted"}


def test_leftover_sessions_are_aborted_by_the_next_stage(switches: Switches) -> None:
    """Sessions a crashed run left pending never pile up to EOS's limit."""
    ref = switches.add("eos", routed())
    driver = switches.driver("eos")
    changes = plan(driver, ref)
    for _ in range(7):
        driver.stage(ref, changes)  # never discarded, like a controller that died
    assert list(sessions(driver, ref).values()).count("pending") == 1


def test_a_refused_line_rejects_the_candidate_and_aborts_it(switches: Switches) -> None:
    """A ``% Invalid input`` answer is ConfigRejected; nothing changes, no session stays."""
    ref = switches.add("eos", routed())
    driver = switches.driver("eos")
    switches.sim.set_fault(ref.name, Fault(reject=r"^mtu "))
    with pytest.raises(ConfigRejected, match="Invalid input"):
        driver.apply(ref, plan(driver, ref), dry_run=False)
    switches.sim.clear_faults(ref.name)
    assert driver.observe(ref)["interfaces/Ethernet1/mtu"] == 9214
    assert "pending" not in set(sessions(driver, ref).values())


def test_compare_sees_a_change_made_behind_its_back(switches: Switches) -> None:
    """If running config moves after stage, compare reports more than the plan (the
    session would put the operator's port back): mismatch."""
    ref = switches.add("eos", routed())
    driver, other = switches.driver("eos"), switches.driver("eos")
    candidate = driver.stage(ref, plan(driver, ref, {"interfaces/Ethernet1/mtu": 9000}))
    with other.pool.session(ref) as session:  # an operator's edit, outside any plumb session
        session.configure(["interface Ethernet3", "mtu 1600"], "configure terminal")
    staged = {c.path for c in driver.compare(ref, candidate)}
    assert staged == {"interfaces/Ethernet1/mtu", "interfaces/Ethernet3/mtu"}
    driver.discard(ref, candidate)


def test_a_timed_out_commit_is_unknown_then_settled(switches: Switches) -> None:
    """A commit with no answer is DeviceTimeout; re-observing finds it applied."""
    ref = switches.add("eos", routed())
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
    ref = switches.add("eos", routed())
    driver = switches.driver("eos")
    changes = plan(driver, ref)
    switches.sim.set_fault(ref.name, Fault(drop_mid_commit=True))
    with pytest.raises(ConnectionLost):
        driver.apply(ref, changes, dry_run=False)
    assert diff({c.path: Owned(c.after, UNKNOWN) for c in changes}, driver.observe(ref)) == []


def test_refused_login_is_terminal_and_a_dead_port_is_unreachable(switches: Switches) -> None:
    """Wrong credentials are DeviceAuthError (terminal); a closed port DeviceUnreachable."""
    ref = switches.add("eos", routed())
    with pytest.raises(DeviceAuthError) as caught:
        switches.driver("eos", password="wrong-password").observe(ref)
    assert classify(caught.value) is Handling.terminal
    switches.sim.set_fault(ref.name, Fault(unreachable=True))
    with pytest.raises(DeviceUnreachable):
        switches.driver("eos", connect_timeout=2).observe(ref)


def test_one_connection_per_device_serves_every_step(switches: Switches) -> None:
    """observe, stage, compare, commit and confirm reuse one SSH connection per device,
    also when threads share the driver."""
    refs = [switches.add("eos", routed(f"leaf-{n}")) for n in range(3)]
    driver = switches.driver("eos")
    with ThreadPoolExecutor(8) as pool:
        states = list(pool.map(driver.observe, refs * 4))
    assert [s["system/hostname"] for s in states] == ["leaf-0", "leaf-1", "leaf-2"] * 4
    assert driver.apply(refs[0], plan(driver, refs[0]), dry_run=False, confirm_within=30).outcome
    assert driver.pool.opened == 3


def test_nos_upgrade_reloads_and_waits_for_the_new_version(switches: Switches) -> None:
    """A NOS change sets the boot image, saves, reloads and returns once the new version runs."""
    ref = switches.add("eos", routed(), reboot_seconds=0.5)
    driver = switches.driver("eos")
    changes = plan(driver, ref, {"system/nos_version": "4.32.2F", "interfaces/Ethernet1/mtu": 9100})
    result = driver.apply(ref, changes, dry_run=False, confirm_within=60)
    assert result.outcome is Outcome.applied, result.error
    state = switches.sim.state(ref.name)
    assert (state.nos_version, state.boot_image) == ("4.32.2F", "flash:EOS-4.32.2F.swi")
    assert state.interfaces["Ethernet1"].mtu == 9100


def test_unsafe_values_are_refused_before_any_connection(switches: Switches) -> None:
    """An injection attempt fails validation: no SSH connection is even opened."""
    ref = switches.add("eos", routed())
    driver = switches.driver("eos")
    bad = [Change("interfaces/Ethernet1; reload/mtu", 9214, 9000)]
    with pytest.raises(ConfigRejected, match="unsafe"):
        driver.apply(ref, bad, dry_run=False)
    assert driver.pool.opened == 0


def test_inexpressible_paths_are_refused_at_stage_before_any_write(switches: Switches) -> None:
    """PFC headroom reaching stage is ConfigRejected with EOS's reason; nothing is written."""
    ref = switches.add("eos", routed())
    driver = switches.driver("eos")
    writes = switches.sim.write_count(ref.name)
    with pytest.raises(ConfigRejected, match="no command for PFC headroom"):
        driver.stage(ref, [Change("qos/pfc_headroom_kb", None, 128)])
    assert switches.sim.write_count(ref.name) == writes
    assert "pending" not in set(sessions(driver, ref).values())


# -- output of an unexpected shape: that device's error, never the batch's --------------


class ScriptedSession:
    """A device session answering each command from a script (no SSH)."""

    def __init__(self, name: str, answers: dict[str, str]) -> None:
        self.name = name
        self.answers = answers

    def run(self, command: str, **_: Any) -> str:
        return self.answers[command]

    def refused(self, output: str, what: str, pasted: bool = False) -> None:
        if output.startswith("% "):
            raise ConfigRejected(self.name, f"{what}: {output}")


class ScriptedPool:
    def __init__(self, answers: dict[str, dict[str, str]]) -> None:
        self.answers = answers

    @contextmanager
    def session(self, ref: DeviceRef) -> Iterator[ScriptedSession]:
        yield ScriptedSession(ref.name, self.answers[ref.name])


GOOD = {
    "show version | json": json.dumps({"version": "4.31.2F", "modelName": "DCS-7060DX5-64S"}),
    "show interfaces | json": json.dumps(
        {"interfaces": {"Ethernet1": {"forwardingModel": "routed", "mtu": 9214}}}
    ),
    "show running-config | json": json.dumps(
        {"cmds": {"interface Ethernet1": {"cmds": {"no switchport": None, "mtu 9214": None}}}}
    ),
    "show lldp neighbors detail | json": json.dumps({"lldpNeighbors": {}}),
}


def scripted(answers: dict[str, dict[str, str]]) -> EosDriver:
    driver = EosDriver(parse_options({}), Credentials("plumb-ops", "unused"))
    driver.pool = ScriptedPool(answers)  # type: ignore[assignment]
    return driver


@pytest.mark.parametrize(
    ("command", "answer", "message"),
    [
        ("show interfaces | json", '{"interfaces": {"Ethernet1": ', "not JSON"),
        ("show interfaces | json", "[]", "not a JSON object"),
        ("show interfaces | json", json.dumps({"interfaces": {"Ethernet1": {}}}), "KeyError"),
        ("show version | json", json.dumps({"modelName": "x"}), "KeyError"),
        ("show version | json", json.dumps({"version": "beta"}), "release number"),
        (
            "show running-config | json",
            json.dumps({"cmds": {"interface Ethernet1": {"cmds": {"mtu x": None}}}}),
            "Value",
        ),
        ("show lldp neighbors detail | json", "{", "not JSON"),
    ],
)
def test_unexpected_output_fails_only_that_device(command: str, answer: str, message: str) -> None:
    """Malformed JSON or missing keys on one switch mark it failed; the others observe."""
    driver = scripted({"good": GOOD, "bad": GOOD | {command: answer}})
    refs = [DeviceRef(n, "eos", "leaf", "127.0.0.1", 22) for n in ("good", "bad")]
    seen = driver.observe_many(refs)
    assert isinstance(seen["good"], dict) and seen["good"]["interfaces/Ethernet1/mtu"] == 9214
    error = seen["bad"]
    assert isinstance(error, UnexpectedOutput) and message in error.detail
    assert classify(error) is Handling.failed


def test_a_switch_without_lldp_still_observes() -> None:
    """``show lldp neighbors detail`` refused (LLDP off) means no neighbours, not a failure."""
    driver = scripted({"s": GOOD | {"show lldp neighbors detail | json": "% LLDP is disabled"}})
    state = driver.observe(DeviceRef("s", "eos", "leaf", "127.0.0.1", 22))
    assert not any(p.startswith("lldp/") for p in state)
    assert state["system/nos_version"] == "4.31.2F"
