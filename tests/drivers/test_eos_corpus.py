"""The EOS driver and simulator on a corpus of public EOS device data
(``tests/fixtures/corpus/eos``, sources and licences in ``MANIFEST.json``).

For every file: the driver parses it without an error (what it cannot read is a
per-field unknown). For every running configuration besides: the simulator boots it
with every line kept as given (only the documented peer-group spelling is
normalised), and observe -> plan -> apply -> observe converges with nothing outside
plumb's owned fields changed on the switch. One simulator serves the module.
"""

from __future__ import annotations

import ipaddress
import json
import re
from pathlib import Path
from typing import Any

import pytest

from inventory.problems import UNKNOWN
from reconciler.capabilities import inexpressible
from reconciler.drivers.base import Outcome
from reconciler.drivers.eos_bgp_parse import parse_bgp_peers
from reconciler.drivers.eos_parse import (
    config_state,
    parse_interfaces,
    parse_version,
    read_config,
    text_tree,
)
from reconciler.drivers.lldp_parse import parse_eos_lldp
from reconciler.drivers.netmiko_eos import EosDriver
from reconciler.settings import Owned, Scalar, diff
from tests.drivers.conftest import Switches
from tests.drivers.eosboot import boot_eos
from tests.switchsim.eos_blocks import Block, block_tree
from tests.switchsim.eos_modes import interface_name
from tests.switchsim.eos_profiles import eos_profile
from tests.switchsim.eos_render import running_config
from tests.switchsim.eos_view import boot_config

CORPUS = Path(__file__).resolve().parent.parent / "fixtures" / "corpus" / "eos"
MANIFEST: list[dict[str, str]] = json.loads((CORPUS / "MANIFEST.json").read_text())["files"]
CONFIGS = [e for e in MANIFEST if e["kind"] == "running-config"]
DEFAULT_PLATFORM = "eos-4.32"
LICENCES = {"Apache-2.0", "MIT", "BSD-3-Clause"}
ETHERNET = re.compile(r"^(?:ethernet|eth|et)\d+(?:/\d+)*$", re.IGNORECASE)
PARSERS = {
    "show-version": parse_version,
    "show-interfaces": parse_interfaces,
    "show-lldp-neighbors-detail": parse_eos_lldp,
    "show-bgp-neighbors": parse_bgp_peers,
}


def entry_id(entry: dict[str, str]) -> str:
    return entry["file"]


def text_of(entry: dict[str, str]) -> str:
    return (CORPUS / entry["file"]).read_text()


def test_every_file_is_in_the_manifest_with_its_source_and_licence() -> None:
    """Each corpus file names its repository, path, commit and a permissive licence."""
    files = {p.name for p in CORPUS.iterdir() if p.name != "MANIFEST.json"}
    assert files == {e["file"] for e in MANIFEST}
    for entry in MANIFEST:
        assert entry["repository"].startswith("https://github.com/")
        assert entry["path"] and re.fullmatch(r"[0-9a-f]{40}", entry["commit"])
        assert entry["licence"] in LICENCES
    assert len(MANIFEST) >= 40


@pytest.mark.parametrize("entry", MANIFEST, ids=entry_id)
def test_the_driver_parses_every_file(entry: dict[str, str]) -> None:
    """Each answer or configuration parses without an error."""
    if entry["kind"] == "running-config":
        state = config_state(read_config(text_tree(text_of(entry))))
        assert state["bgp/asn"] is None or isinstance(state["bgp/asn"], int)
    else:
        parsed: Any = PARSERS[entry["kind"]](json.loads(text_of(entry)))
        assert isinstance(parsed, dict)


def paths(blocks: list[Block], above: tuple[str, ...] = ()) -> set[tuple[str, ...]]:
    """Every configuration line with the lines of the modes it sits in."""
    found: set[tuple[str, ...]] = set()
    for block in blocks:
        here = (*above, block.line)
        found |= {here} | paths(block.children, here)
    return found


def eos_spelling(line: str) -> str:
    """What EOS prints for a line it takes in another accepted form: the hyphenated
    ``peer-group`` of a neighbour or group is printed ``peer group``, an abbreviated
    Ethernet name (``Eth1``, ``ethernet1``) in full."""
    words = line.split()
    if words[:1] == ["neighbor"] and len(words) >= 3 and words[1] != "interface":
        return line.replace(" peer-group", " peer group", 1)
    if len(words) == 2 and words[0] == "interface" and ETHERNET.match(words[1]):
        return "interface " + interface_name(words[1])
    return line


def platform(entry: dict[str, str]) -> str:
    return entry.get("platform", DEFAULT_PLATFORM)


@pytest.mark.parametrize("entry", CONFIGS, ids=entry_id)
def test_the_simulator_boots_every_configuration_verbatim(entry: dict[str, str]) -> None:
    """No line is refused, every line comes back in `show running-config` as given, in
    the mode it was given in, and that text boots to itself (what a restart restores)."""
    profile = eos_profile(platform(entry))
    config, refused = boot_config(text_of(entry), profile.queue_kinds)
    assert refused == []
    given = {
        tuple(eos_spelling(line) for line in path) for path in paths(block_tree(text_of(entry)))
    }
    text = running_config(config, profile.model, profile.version)
    shown = paths(block_tree(text))
    assert given - shown == set()
    again, refused = boot_config(text, profile.queue_kinds)
    assert refused == [] and running_config(again, profile.model, profile.version) == text


OWNED_IN_PORT = re.compile(
    r"^(?:mtu \d+|ip address \S+|priority-flow-control .*|(?:uc-)?tx-queue \d|"
    r"random-detect ecn minimum-threshold .*|no random-detect ecn)$"
)


def _is_ipv4(word: str) -> bool:
    try:
        return ipaddress.ip_address(word).version == 4
    except ValueError:
        return False


def owned(path: tuple[str, ...]) -> bool:
    """Whether a configuration line is one plumb's fields may change."""
    top, rest = path[0], path[1:]
    if top.startswith("qos map dscp "):
        return True
    if top.startswith(("interface Ethernet", "qos profile ")) and rest:
        return all(OWNED_IN_PORT.match(line) for line in rest)
    if top.startswith("router bgp ") and rest:
        line = rest[-1]
        words = line.split()
        if line.startswith(("maximum-paths", "router-id")) or line == "address-family ipv4":
            return True
        return (
            len(words) >= 3
            and words[0] == "neighbor"
            and _is_ipv4(words[1])
            and (words[2] == "remote-as" or (words[2:3] == ["route-map"] and words[-1] == "in"))
        )
    return False


def changes_for(observed: dict[str, Scalar]) -> dict[str, Scalar]:
    """A change of every owned kind the device has something to change in."""
    ports = sorted(
        p.removeprefix("interfaces/").removesuffix("/mode")
        for p in observed
        if p.startswith("interfaces/") and p.endswith("/mode")
    )
    routed = [p for p in ports if observed[f"interfaces/{p}/mode"] == "routed"]
    want: dict[str, Scalar] = {
        "qos/dscp/46": 5,
        "qos/ecn/3/kmin_kb": 200,
        "qos/ecn/3/kmax_kb": 800,
        "qos/ecn/3/pmax_percent": 20,
    }
    if routed:
        want[f"interfaces/{routed[0]}/mtu"] = 9000
    if ports:
        want[f"interfaces/{ports[0]}/pfc_priorities"] = "3,4"
    if observed.get("bgp/asn") is not None:
        want["bgp/maximum_paths"] = 128
        peers = sorted(
            p.split("/")[2]
            for p in observed
            if p.endswith("/inbound_filter") and _is_ipv4(p.split("/")[2])
        )
        if peers:
            want[f"bgp/neighbors/{peers[0]}/inbound_filter"] = "PLUMB-IN"
    return {p: v for p, v in want.items() if inexpressible("eos", p, observed) is None}


def running(driver: EosDriver, ref: Any) -> set[tuple[str, ...]]:
    with driver.pool.session(ref) as session:
        return paths(block_tree(session.run("show running-config")))


@pytest.mark.parametrize("entry", CONFIGS, ids=entry_id)
def test_observe_plan_apply_converges_and_touches_nothing_else(
    entry: dict[str, str], switches: Switches
) -> None:
    """Every expressible owned field the device has reaches intent in one apply, the next
    plan is empty, and only plumb's lines changed on the switch."""
    ref = boot_eos(switches, text_of(entry), platform(entry))
    driver: EosDriver = switches.driver("eos")
    observed = driver.observe(ref)
    desired = {p: Owned(v, UNKNOWN) for p, v in changes_for(observed).items()}
    changes = diff(desired, observed)
    assert changes
    before = running(driver, ref)
    result = driver.apply(ref, changes, dry_run=False, confirm_within=30)
    assert result.outcome is Outcome.applied, result.error
    assert diff(desired, driver.observe(ref)) == []
    after = running(driver, ref)
    assert {p for p in before ^ after if not owned(p)} == set()
