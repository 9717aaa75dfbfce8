"""Rewriting an EOS ECN line keeps what plumb does not own on it, and states what plumb
owns: EOS resets every option a re-entered `random-detect ecn` line leaves out, so the
line is written whole (``weight N`` repeated, ``max-mark-probability`` always stated).

Switches are simulated (a Tomahawk-family profile: ``uc-tx-queue``), booted from
configurations in EOS's documented syntax and driven by the real driver over SSH.
"""

from __future__ import annotations

import pytest

from inventory.problems import UNKNOWN
from reconciler.drivers.base import DeviceRef, Outcome
from reconciler.drivers.eos_lines import render_session
from reconciler.drivers.eos_parse import config_state, read_config, text_tree
from reconciler.drivers.netmiko_eos import EosDriver
from reconciler.drivers.safevalues import SafeValues
from reconciler.errors import ConfigRejected
from reconciler.settings import Owned, Scalar, diff
from tests.drivers.conftest import Switches
from tests.drivers.eosboot import boot_eos

TOMAHAWK = "eos-4.33-tomahawk"
PROFILE = """\
hostname leaf-roce
qos profile ROCE
   qos trust dscp
   priority-flow-control on
   priority-flow-control priority 3 no-drop
   !
   uc-tx-queue 3
      random-detect ecn minimum-threshold 150 kbytes maximum-threshold 1500 kbytes{pmax} weight 0
      random-detect ecn count
!
interface Ethernet1/1
   mtu 9214
   no switchport
   ip address 10.0.0.0/31
   service-profile ROCE
!
interface Ethernet2/1
   mtu 9214
   no switchport
   ip address 10.0.0.2/31
   service-profile ROCE
!
"""
WEIGHTED = PROFILE.format(pmax=" max-mark-probability 20")
UNSTATED = PROFILE.format(pmax="")


def queue_lines(driver: EosDriver, ref: DeviceRef) -> list[str]:
    with driver.pool.session(ref) as session:
        text = session.run("show running-config")
    block = text.split("   uc-tx-queue 3\n", 1)[1]
    return [line.strip() for line in block.splitlines()[:2]]


def apply(switches: Switches, config: str, want: dict[str, Scalar]) -> tuple[EosDriver, DeviceRef]:
    ref = boot_eos(switches, config, TOMAHAWK)
    driver: EosDriver = switches.driver("eos")
    desired = {p: Owned(v, UNKNOWN) for p, v in want.items()}
    result = driver.apply(ref, diff(desired, driver.observe(ref)), dry_run=False, confirm_within=30)
    assert result.outcome is Outcome.applied, result.error
    assert diff(desired, driver.observe(ref)) == []
    return driver, ref


def test_a_threshold_change_keeps_the_weight_and_the_counters(switches: Switches) -> None:
    """Changing Kmin re-enters the whole line with `weight 0` (which EOS would otherwise
    reset to its default) and leaves `random-detect ecn count` alone."""
    driver, ref = apply(switches, WEIGHTED, {"qos/ecn/3/kmin_kb": 200})
    assert queue_lines(driver, ref) == [
        "random-detect ecn minimum-threshold 200 kbytes maximum-threshold 1500 kbytes "
        "max-mark-probability 20 weight 0",
        "random-detect ecn count",
    ]


def test_an_unstated_mark_probability_is_written_explicitly(switches: Switches) -> None:
    """A line without `max-mark-probability` observes it as unknown; intent's value is then
    written explicitly, and the next plan is empty."""
    ref = boot_eos(switches, UNSTATED, TOMAHAWK)
    driver: EosDriver = switches.driver("eos")
    assert driver.observe(ref)["qos/ecn/3/pmax_percent"] is None
    driver, ref = apply(
        switches,
        UNSTATED,
        {"qos/ecn/3/kmin_kb": 150, "qos/ecn/3/kmax_kb": 1500, "qos/ecn/3/pmax_percent": 100},
    )
    assert queue_lines(driver, ref)[0].endswith("max-mark-probability 100 weight 0")


def test_port_lines_with_different_options_are_not_merged_into_a_profile() -> None:
    """Moving ECN into the shared profile would have to pick one port's options: refused."""
    ecn = "      random-detect ecn minimum-threshold 1 kbytes maximum-threshold 9 kbytes"
    text = (
        "qos profile P\n   priority-flow-control on\n!\n"
        f"interface Ethernet1\n   service-profile P\n   !\n   tx-queue 3\n{ecn} weight 1\n!\n"
        f"interface Ethernet2\n   service-profile P\n   !\n   tx-queue 3\n{ecn} weight 2\n!\n"
    )
    config = read_config(text_tree(text))
    values = SafeValues("leaf")
    settings = [
        values.setting(p, v)
        for p, v in {
            "qos/ecn/3/kmin_kb": 2,
            "qos/ecn/3/kmax_kb": 9,
            "qos/ecn/3/pmax_percent": 50,
        }.items()
    ]
    with pytest.raises(ConfigRejected, match="different options"):
        render_session("leaf", config_state(config), config, settings)
