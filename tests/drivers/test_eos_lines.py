"""EOS lines keep the device's structure (qos profiles, queue keywords, asdot, peer
groups), and the EOS capability rule refuses what EOS cannot take."""

from __future__ import annotations

from pathlib import Path

import pytest

from reconciler.drivers.eos_caps import eos_inexpressible
from reconciler.drivers.eos_lines import render_session
from reconciler.drivers.eos_parse import config_state, read_config, text_tree
from reconciler.drivers.safevalues import SafeValues
from reconciler.errors import ConfigRejected
from reconciler.settings import Scalar

CONFIGS = Path(__file__).resolve().parent.parent / "fixtures" / "eos" / "show_running-config"
PORT: dict[str, Scalar] = {"interfaces/Ethernet1/mode": "routed"}


def render(case: str, changes: dict[str, Scalar]) -> list[str]:
    config = read_config(text_tree((CONFIGS / case / "output.txt").read_text()))
    values = SafeValues("leaf")
    settings = [values.setting(p, v) for p, v in changes.items()]
    return render_session("leaf", config_state(config), config, settings)


def after(case: str, lines: list[str]) -> dict[str, Scalar]:
    """The flat state of the case's config with ``lines`` applied the way EOS nests them
    (enough of EOS's mode rules for the lines plumb writes)."""
    text = (CONFIGS / case / "output.txt").read_text()
    tree = text_tree(text)
    block: dict[str, object] = tree
    parent: dict[str, object] = tree
    for line in lines:
        top = line.startswith(("interface ", "qos profile ", "router bgp ", "qos map ", "no qos"))
        if top:
            target = tree
        elif line.startswith(("tx-queue ", "uc-tx-queue ")):
            target = parent
        else:
            target = block
        cmds = target.setdefault("cmds", {})
        assert isinstance(cmds, dict)
        if line.startswith("no "):
            positive = line[3:]
            for key in [k for k in cmds if k == positive or k.startswith(positive)]:
                del cmds[key]
            if positive.startswith("priority-flow-control priority"):
                continue
        else:
            for key in [k for k in cmds if _same_knob(k, line)]:
                del cmds[key]
            cmds.setdefault(line, {"cmds": {}})
        if top:
            parent = block = cmds.get(line, tree)
        elif line.startswith(("tx-queue ", "uc-tx-queue ")):
            block = cmds[line]
    return config_state(read_config(tree))


def _same_knob(old: str, new: str) -> bool:
    for prefix in ("random-detect ecn minimum", "mtu ", "priority-flow-control priority "):
        if new.startswith(prefix) and old.startswith(prefix):
            return prefix != "priority-flow-control priority " or old.split()[2] == new.split()[2]
    words = new.split()
    return len(words) >= 3 and words[0] == "neighbor" and old.split()[:3] == words[:3]


def test_ecn_goes_into_the_shared_profile_with_the_device_queue_keyword() -> None:
    """Every port applies ROCE-LOSSLESS: ECN is written there under ``uc-tx-queue``, and a
    port's own line for that queue, which would shadow it, is removed."""
    lines = render(
        "profiles-asdot-peer-groups",
        {"qos/ecn/4/kmin_kb": 300, "qos/ecn/4/kmax_kb": 1200, "qos/ecn/4/pmax_percent": 15},
    )
    assert lines == [
        "qos profile ROCE-LOSSLESS",
        "uc-tx-queue 4",
        "random-detect ecn minimum-threshold 300 kbytes maximum-threshold 1200 kbytes "
        "max-mark-probability 15",
        "interface Ethernet2/1",
        "uc-tx-queue 4",
        "no random-detect ecn",
    ]
    state = after("profiles-asdot-peer-groups", lines)
    assert (state["qos/ecn/4/kmin_kb"], state["qos/ecn/4/kmax_kb"]) == (300, 1200)


def test_ecn_without_a_shared_profile_is_written_on_every_port() -> None:
    """No profile: each Ethernet port gets the queue's line, with ``tx-queue`` as it uses."""
    lines = render("classic", {"qos/ecn/3/kmin_kb": 180})
    assert lines.count("tx-queue 3") == 3
    assert [line for line in lines if line.startswith("interface")] == [
        "interface Ethernet1/1",
        "interface Ethernet2/1",
        "interface Ethernet3/1",
    ]
    assert after("classic", lines)["qos/ecn/3/kmin_kb"] == 180


def test_a_pfc_priority_from_the_profile_is_dropped_on_the_port_only() -> None:
    """Priority 4 comes from the shared profile: the port overrides it with ``drop``."""
    lines = render("profiles-asdot-peer-groups", {"interfaces/Ethernet1/1/pfc_priorities": "3"})
    assert lines == ["interface Ethernet1/1", "priority-flow-control priority 4 drop"]
    assert (
        after("profiles-asdot-peer-groups", lines)["interfaces/Ethernet1/1/pfc_priorities"] == "3"
    )


def test_pfc_is_turned_on_where_a_priority_is_wanted() -> None:
    """A port with a no-drop line but PFC off gets ``priority-flow-control on``."""
    lines = render("classic", {"interfaces/Ethernet3/1/pfc_priorities": "3"})
    assert lines == ["interface Ethernet3/1", "priority-flow-control on"]


def test_bgp_lines_use_the_device_asdot_notation() -> None:
    """A device running ``router bgp 65101.65101`` is written in asdot."""
    lines = render(
        "profiles-asdot-peer-groups",
        {"bgp/maximum_paths": 128, "bgp/neighbors/10.9.9.9/remote_as": 65102 * 65536 + 7},
    )
    assert lines == [
        "router bgp 65101.65101",
        "maximum-paths 128 ecmp 128",
        "neighbor 10.9.9.9 remote-as 65102.7",
    ]


def test_a_value_equal_to_the_peer_group_is_inherited_not_restated() -> None:
    """10.1.1.2 overrides its group's remote-as; setting the group's value removes the
    override instead of restating it."""
    lines = render("profiles-asdot-peer-groups", {"bgp/neighbors/10.1.1.2/remote_as": 65100})
    assert lines == ["router bgp 65101.65101", "no neighbor 10.1.1.2 remote-as"]


def test_changing_an_inherited_value_overrides_it_on_the_neighbour() -> None:
    """The peer group, which other neighbours share, is never edited."""
    lines = render(
        "profiles-asdot-peer-groups",
        {"bgp/neighbors/10.1.1.0/remote_as": 65300, "bgp/neighbors/10.1.1.0/inbound_filter": "X"},
    )
    assert lines == [
        "router bgp 65101.65101",
        "neighbor 10.1.1.0 remote-as 65300",
        "neighbor 10.1.1.0 route-map X in",
    ]
    assert not any(line.startswith("neighbor SPINES") for line in lines)


def test_clearing_a_route_map_the_peer_group_gives_is_refused() -> None:
    """Removing an inherited inbound filter would need the shared group changed: refused."""
    with pytest.raises(ConfigRejected, match="peer group SPINES"):
        render("profiles-asdot-peer-groups", {"bgp/neighbors/10.1.1.0/inbound_filter": ""})


def test_pfc_headroom_and_xoff_are_never_rendered() -> None:
    """EOS has no command for them: a renderer that receives one refuses."""
    with pytest.raises(ConfigRejected, match="no command"):
        render("classic", {"qos/pfc_headroom_kb": 128})


@pytest.mark.parametrize(
    ("path", "observed", "reason"),
    [
        ("qos/pfc_headroom_kb", {}, "no command for PFC headroom"),
        ("qos/pfc_xoff_kb", {}, "xoff"),
        ("interfaces/Ethernet10/mtu", {"interfaces/Ethernet10/mode": "switched"}, "L3 MTU"),
        ("interfaces/Ethernet10/address", {"interfaces/Ethernet10/mode": "switched"}, "switchport"),
        ("qos/ecn/5/kmin_kb", PORT | {"qos/ecn/5/threshold_unit": "segments"}, "segments"),
        (
            "qos/ecn/4/pmax_percent",
            PORT | {"qos/ecn/4/threshold_unit": "kbytes,milliseconds"},
            "milli",
        ),
        ("qos/ecn/4/kmax_kb", PORT | {"qos/ecn/4/threshold_unit": "unreadable"}, "plumb can read"),
        ("qos/ecn/3/kmin_kb", {}, "no Ethernet port"),
        ("interfaces/Ethernet5/mtu", {"interfaces/Ethernet5/mode": "lag-member"}, "Port-Channel"),
        ("bgp/neighbors/fe80::1%Ethernet1/remote_as", {}, "link-local"),
    ],
)
def test_what_eos_cannot_take_is_refused_with_a_reason(
    path: str, observed: dict[str, Scalar], reason: str
) -> None:
    """The capability rule names why; the same paths on a routed, byte-unit device pass."""
    assert reason in (eos_inexpressible(path, observed) or "")


@pytest.mark.parametrize(
    ("path", "observed"),
    [
        ("interfaces/Ethernet1/1/mtu", {"interfaces/Ethernet1/1/mode": "routed"}),
        ("qos/ecn/4/kmin_kb", PORT | {"qos/ecn/4/threshold_unit": "kbytes,mbytes"}),
        ("qos/ecn/3/kmin_kb", PORT),
        ("interfaces/Ethernet5/pfc_priorities", {"interfaces/Ethernet5/mode": "lag-member"}),
        ("bgp/neighbors/10.0.0.1/remote_as", {}),
    ],
)
def test_what_eos_can_take_passes(path: str, observed: dict[str, Scalar]) -> None:
    """Routed ports, byte-unit thresholds and IPv4 neighbours are expressible."""
    assert eos_inexpressible(path, observed) is None


def test_an_mtu_beyond_eos_range_is_refused_before_the_session() -> None:
    """EOS's ``mtu`` takes 68-9214: 9216 never reaches the device."""
    with pytest.raises(ConfigRejected, match="at most 9214"):
        render("classic", {"interfaces/Ethernet1/1/mtu": 9216})
