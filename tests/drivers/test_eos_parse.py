"""The EOS parsers against golden fixtures written from EOS's documented output formats
(``tests/fixtures/eos/<command>/<case>/``: the device's answer and the flat state it
holds, by hand; a config's expected state lists what is set, every other DSCP and ECN
path must read None)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from reconciler.drivers.eos_parse import (
    common,
    format_asn,
    normal_version,
    parse_asn,
    parse_config,
    parse_ecn,
    parse_interfaces,
    parse_version,
    text_tree,
    timed_sessions,
    writable,
)

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "eos"
UNSET: dict[str, Any] = {f"qos/dscp/{d}": None for d in range(64)} | {
    f"qos/ecn/{q}/{f}": None
    for q in range(8)
    for f in ("kmin_kb", "kmax_kb", "pmax_percent", "threshold_unit")
}


def cases(command: str) -> list[Path]:
    return sorted(p for p in (FIXTURES / command).iterdir() if p.is_dir())


def load(folder: Path, name: str) -> Any:
    return json.loads((folder / name).read_text())


def running(case: Path) -> Any:
    text = case / "output.txt"
    return text_tree(text.read_text()) if text.exists() else load(case, "output.json")


@pytest.mark.parametrize("case", cases("show_version"), ids=lambda p: p.name)
def test_show_version(case: Path) -> None:
    """``show version | json`` gives the release, the full build, model and serial."""
    assert parse_version(load(case, "output.json")) == load(case, "expected.json")


@pytest.mark.parametrize("case", cases("show_interfaces"), ids=lambda p: p.name)
def test_show_interfaces(case: Path) -> None:
    """``show interfaces | json`` gives each Ethernet port's mode, mtu, address, description."""
    assert parse_interfaces(load(case, "output.json")) == load(case, "expected.json")


@pytest.mark.parametrize("case", cases("show_running-config"), ids=lambda p: p.name)
def test_show_running_config(case: Path) -> None:
    """The running config (text or ``| json`` tree) gives ports, QoS and BGP as set."""
    assert parse_config(running(case)) == UNSET | load(case, "expected.json")


@pytest.mark.parametrize("case", cases("show_configuration_sessions_detail"), ids=lambda p: p.name)
def test_timed_sessions_on_both_version_families(case: Path) -> None:
    """The session under a commit timer is found before and after EOS 4.32."""
    assert timed_sessions(load(case, "output.json")) == load(case, "expected.json")


def test_engineering_builds_normalise_to_the_release() -> None:
    """Build suffixes are dropped; a string without a release number is refused."""
    assert normal_version("4.32.2.1F-38154561.42321F") == "4.32.2.1F"
    assert normal_version("4.28.3M") == "4.28.3M"
    with pytest.raises(ValueError, match="release number"):
        normal_version("(engineering build)")


def test_asdot_and_asplain_are_the_same_number() -> None:
    """asdot parses to the 32-bit number and renders back only where the device uses it."""
    assert parse_asn("65101.65101") == 65101 * 65536 + 65101
    assert parse_asn("4200000001") == 4200000001
    assert format_asn(parse_asn("1.10"), asdot=True) == "1.10"
    assert format_asn(65001, asdot=True) == "65001"
    assert format_asn(65546, asdot=False) == "65546"
    with pytest.raises(ValueError, match="asdot"):
        parse_asn("70000.1")


def test_ecn_units_and_an_unstated_mark_probability() -> None:
    """Byte units convert to kbytes (rounded up); segments and milliseconds have no size;
    a missing max-mark-probability is not assumed (None: plumb states it when writing)."""
    kb = parse_ecn("random-detect ecn minimum-threshold 1500 bytes maximum-threshold 1 mbytes")
    assert kb is not None and (kb.kmin_kb, kb.kmax_kb, kb.pmax_percent) == (2, 1024, None)
    ms = parse_ecn(
        "random-detect ecn minimum-threshold 3 milliseconds maximum-threshold 9 milliseconds "
        "max-mark-probability 90"
    )
    assert ms is not None and (ms.kmin_kb, ms.kmax_kb, ms.pmax_percent, ms.unit) == (
        None,
        None,
        90,
        "milliseconds",
    )
    assert parse_ecn("random-detect ecn count") is None


def test_ecn_options_are_kept_for_the_writer() -> None:
    """`weight N` (and any option after the thresholds) is kept apart from the values plumb
    owns, so a rewrite can repeat it; it does not make two thresholds differ."""
    line = "random-detect ecn minimum-threshold 320 kbytes maximum-threshold 640 kbytes"
    weighted = parse_ecn(line + " max-mark-probability 20 weight 0")
    plain = parse_ecn(line + " max-mark-probability 20")
    assert weighted is not None and weighted.options == (("weight", "0"),)
    assert weighted == plain


def test_an_ecn_line_plumb_cannot_read_is_an_unknown_not_an_error() -> None:
    """An unknown unit or a malformed line reads as unit `unreadable` with no values."""
    for line in (
        "random-detect ecn minimum-threshold 1 parsecs maximum-threshold 2 parsecs",
        "random-detect ecn minimum-threshold 1 kbytes",
        "random-detect ecn minimum-threshold 1 kbytes maximum-threshold 9 kbytes weight",
    ):
        found = parse_ecn(line)
        assert found is not None and (found.kmin_kb, found.pmax_percent, found.unit) == (
            None,
            None,
            "unreadable",
        )


def test_only_the_switch_namespace_is_writable() -> None:
    """Read-only facts (mode, build, LLDP, units, link-local peers) never become changes;
    IPv6 and interface neighbours do."""
    assert writable("interfaces/Ethernet1/1/mtu")
    assert writable("interfaces/Ethernet1/ipv6_address")
    assert writable("bgp/neighbors/10.0.0.1/inbound_filter")
    assert writable("bgp/neighbors/2001:db8::1/remote_as")
    assert writable("bgp/neighbors/Ethernet1/1/remote_as")
    assert not writable("bgp/neighbors/fe80::1%Ethernet1/remote_as")
    assert not writable("interfaces/Ethernet1/mode")
    assert not writable("system/nos_build")
    assert not writable("qos/ecn/3/threshold_unit")
    assert not writable("lldp/Ethernet1/system")


def test_ports_that_disagree_observe_as_none() -> None:
    """A fleet-wide value is what every port shares, else None."""
    assert common([1, 1, 1]) == 1
    assert common([1, 2]) is None
    assert common([]) is None
