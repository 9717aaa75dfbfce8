"""The SONiC driver over real SSH exec channels to the switch simulator: config_db
patches, checkpoints, the systemd rollback timer, exit statuses, faults, upgrade."""

from __future__ import annotations

import json
import time
from typing import Any, cast

import pytest

from inventory.problems import UNKNOWN
from reconciler.drivers.base import DeviceRef, Outcome
from reconciler.drivers.netmiko_sonic import SonicCandidate, SonicDriver
from reconciler.drivers.ssh_exec import ExecSession, Result
from reconciler.errors import ConfigRejected, ConnectionLost, DeviceTimeout
from reconciler.loop import _settle_unknown
from reconciler.settings import Change, Owned, Scalar, diff
from tests.drivers.conftest import Switches
from tests.drivers.simflat import flat_from_state
from tests.switchsim import Fault
from tests.switchsim.model import default_state

# What default (bgpcfgd-mode) SONiC expresses through config_db on any platform; ECN,
# headroom, router-id, maximum-paths and route-maps are refused per sonic_caps.
WANT: dict[str, Scalar] = {
    "interfaces/Ethernet0/mtu": 9000,
    "interfaces/Ethernet4/address": "10.0.0.1/31",
    "interfaces/Ethernet4/pfc_priorities": "3",
    "qos/dscp/26": 3,
    "bgp/asn": 65001,
    "bgp/neighbors/10.0.0.0/remote_as": 65000,
}


def plan(driver: SonicDriver, ref: DeviceRef, want: dict[str, Scalar] = WANT) -> list[Change]:
    return diff({p: Owned(v, UNKNOWN) for p, v in want.items()}, driver.observe(ref))


def shell(driver: SonicDriver, ref: DeviceRef, command: str) -> str:
    with driver.exec.session(ref) as session:
        result = session.run(command)
        return result.stdout + result.stderr


def record(switches: Switches, ref: DeviceRef) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((switches.sim.state_dir / f"{ref.name}.json").read_text())
    return data


def test_observe_reads_what_the_switch_holds(switches: Switches) -> None:
    """observe() equals the simulator's model of the switch, path by path."""
    state = default_state("leaf-9", "sonic")
    ref = switches.add("sonic", state)
    observed = switches.driver("sonic").observe(ref)
    model = flat_from_state(switches.sim.state(ref.name))
    build = str(model.pop("system/nos_version"))
    assert observed["system/nos_version"] == build.split(".")[0]
    assert build in str(observed["system/nos_build"])
    assert {p: observed.get(p) for p in model if "xoff" not in p} == {
        p: v for p, v in model.items() if "xoff" not in p
    }


def test_apply_with_commit_confirm_converges_saves_and_cleans_up(switches: Switches) -> None:
    """Confirmed: running and startup hold the change; checkpoint, timer and file are gone."""
    ref = switches.add("sonic")
    driver = switches.driver("sonic")
    result = driver.apply(ref, plan(driver, ref), dry_run=False, confirm_within=60)
    assert result.outcome is Outcome.applied, result.error
    assert plan(driver, ref) == []
    saved = record(switches, ref)
    assert saved["startup"] == saved["running"]
    assert saved["checkpoints"] == {} and saved["pending_rollbacks"] == []


def test_each_step_by_hand_leaves_no_patch_file(switches: Switches) -> None:
    """stage writes /tmp/plumb-<id>.json; confirm removes it with the checkpoint."""
    ref = switches.add("sonic")
    driver = switches.driver("sonic")
    candidate = driver.stage(ref, plan(driver, ref))
    assert {c.path for c in driver.compare(ref, candidate)} == set(WANT)
    driver.commit(ref, candidate, confirm_within=30)
    assert candidate.ident in record(switches, ref)["checkpoints"]
    driver.confirm(ref, candidate)
    assert "No such file" in shell(driver, ref, f"cat {candidate.files[0]}")
    assert record(switches, ref)["checkpoints"] == {}


def test_the_rollback_timer_is_armed_before_the_patch(switches: Switches) -> None:
    """Unconfirmed, the systemd timer rolls the switch back to the checkpoint by itself."""
    ref = switches.add("sonic")
    driver = switches.driver("sonic")
    candidate = driver.stage(ref, plan(driver, ref))
    assert isinstance(candidate, SonicCandidate)
    driver.commit(ref, candidate, confirm_within=1)
    assert record(switches, ref)["pending_rollbacks"][0]["unit"] == candidate.timer
    assert driver.observe(ref)["interfaces/Ethernet0/mtu"] == 9000
    time.sleep(1.5)
    assert driver.observe(ref)["interfaces/Ethernet0/mtu"] == 9100
    with pytest.raises(ConfigRejected, match=r"exit status 5.*already fired"):
        driver.confirm(ref, candidate)


def test_the_candidate_keeps_the_before_state_and_its_patch(switches: Switches) -> None:
    """stage reads the switch just before writing the patch file and keeps both."""
    ref = switches.add("sonic")
    driver = switches.driver("sonic")
    before = driver.observe(ref)
    candidate = driver.stage(ref, plan(driver, ref))
    assert candidate.before == before and candidate.patches
    assert json.loads(shell(driver, ref, f"cat {candidate.files[0]}")) == candidate.patches[0]
    driver.discard(ref, candidate)
    assert "No such file" in shell(driver, ref, f"cat {candidate.files[0]}")


def test_dry_run_writes_nothing(switches: Switches) -> None:
    """A dry run validates with ``apply-patch --dry-run`` and takes no write."""
    ref = switches.add("sonic")
    driver = switches.driver("sonic")
    writes = switches.sim.write_count(ref.name)
    assert driver.apply(ref, plan(driver, ref), dry_run=True).outcome is Outcome.planned
    assert switches.sim.write_count(ref.name) == writes
    saved = switches.sim.state_dir / f"{ref.name}.json"
    assert not saved.exists() or record(switches, ref)["checkpoints"] == {}


def test_a_refused_patch_is_rejected_and_applies_nothing(switches: Switches) -> None:
    """The dry run refuses the patch (non-zero exit): ConfigRejected, running unchanged."""
    ref = switches.add("sonic")
    driver = switches.driver("sonic")
    switches.sim.set_fault(ref.name, Fault(reject=r"/PORT/"))
    writes = switches.sim.write_count(ref.name)
    with pytest.raises(ConfigRejected, match="dry-run: exit status 1"):
        driver.apply(ref, plan(driver, ref), dry_run=False)
    assert switches.sim.write_count(ref.name) == writes


def test_a_timed_out_apply_is_unknown_then_settled(switches: Switches) -> None:
    """An apply-patch with no answer is DeviceTimeout; re-observing finds it applied."""
    ref = switches.add("sonic")
    driver = switches.driver("sonic", commit_timeout=1)
    changes = plan(driver, ref)
    switches.sim.set_fault(ref.name, Fault(hang_commit=2.5))
    with pytest.raises(DeviceTimeout) as caught:
        driver.apply(ref, changes, dry_run=False)
    switches.sim.clear_faults(ref.name)
    outcome, _ = _settle_unknown(driver, ref, changes, caught.value, None)
    assert outcome is Outcome.applied


def test_a_dropped_apply_is_connection_lost(switches: Switches) -> None:
    """The connection cut mid-apply is ConnectionLost, never a plain failure."""
    ref = switches.add("sonic")
    driver = switches.driver("sonic")
    switches.sim.set_fault(ref.name, Fault(drop_mid_commit=True))
    with pytest.raises(ConnectionLost):
        driver.apply(ref, plan(driver, ref), dry_run=False)


def test_nos_upgrade_installs_reboots_and_waits(switches: Switches) -> None:
    """A NOS change installs the image from the ``image`` URL, reboots and waits."""
    ref = switches.add("sonic", reboot_seconds=0.5)
    driver = switches.driver("sonic", image="http://images.example/sonic-vs-{version}.bin")
    changes = plan(driver, ref, {"system/nos_version": "202411"})
    assert driver.apply(ref, changes, dry_run=False).outcome is Outcome.applied
    assert switches.sim.state(ref.name).nos_version == "202411"


def test_a_nos_change_without_an_image_url_is_refused(switches: Switches) -> None:
    """Without the ``image`` option there is nothing safe to install."""
    ref = switches.add("sonic")
    with pytest.raises(ConfigRejected, match="image"):
        switches.driver("sonic").stage(ref, [Change("system/nos_version", "202311.1", "202411")])


def test_an_unparsable_answer_is_that_devices_error(switches: Switches) -> None:
    """Output the parser cannot read is ConfigRejected for the device, not a crash."""
    driver = switches.driver("sonic")
    for text, reason in (("{not json", "not JSON"), ("[1, 2]", "not a JSON object")):
        with pytest.raises(ConfigRejected, match=reason):
            driver._running(cast(ExecSession, _Fixed("sonic-x", text)))


class _Fixed:
    """A session whose every command answers ``text`` with exit status 0."""

    def __init__(self, name: str, text: str) -> None:
        self.name = name
        self.text = text

    def run(self, command: str, **_: Any) -> Any:
        return Result(self.text, "", 0)


def test_connections_are_reused_across_steps(switches: Switches) -> None:
    """observe, stage, compare, commit and confirm share one SSH client per device."""
    ref = switches.add("sonic")
    driver = switches.driver("sonic")
    driver.apply(ref, plan(driver, ref), dry_run=False, confirm_within=30)
    assert driver.exec.opened == 1
