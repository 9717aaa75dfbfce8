"""The simulated EOS switch takes real EOS configurations as EOS does: every line a
switch accepts is kept as given, only what EOS refuses is refused, and ``router bgp``
address families stay blocks of their own.

Each test adds its own device to one module-wide simulator (booted from a
configuration text through its saved record, or configured over SSH with netmiko)
and checks one fact.
"""

from __future__ import annotations

import itertools
import json
from typing import Any

from netmiko import BaseConnection, ConnectHandler

from tests.switchsim import DeviceSpec, SwitchSim
from tests.switchsim.eos_blocks import Block, block_tree
from tests.switchsim.eos_device import write_boot_record
from tests.switchsim.eos_profiles import eos_profile
from tests.switchsim.eos_render import running_config
from tests.switchsim.eos_view import boot_config

PASSWORD = "pw"
TOMAHAWK = "eos-4.33-tomahawk"
_names = itertools.count(1)

# The DCQCN example of a public RoCE configuration guide for an Arista 7388 (Tomahawk
# family), with the comment lines EOS keeps (``!!``).
DCQCN = """\
hostname leaf-ai
!! Map RoCE and CNP traffic classes to their DSCP to match the NICs
qos map traffic-class 3 to dscp 26
qos map traffic-class 7 to dscp 48
!
qos profile QOS_ROCE_DCQCN
   qos trust dscp
   priority-flow-control on
   priority-flow-control priority 3 no-drop
   !
   uc-tx-queue 3
      random-detect ecn minimum-threshold 2000 segments maximum-threshold 10000 segments \
max-mark-probability 20 weight 0
      random-detect ecn count
!
interface Ethernet2/5/1
   load-interval 2
   mtu 9214
   speed 200g-4
   error-correction encoding reed-solomon
   ip address 1.1.122.14/31
   phy link training
   service-profile QOS_ROCE_DCQCN
!
"""


def boot(sim: SwitchSim, config: str, profile: str = TOMAHAWK) -> str:
    """A fresh device of `profile` booted from `config`; its name."""
    name = f"eos-boot-{next(_names)}"
    chosen = eos_profile(profile)
    write_boot_record(
        sim.state_dir / f"{name}.json",
        name,
        config,
        chosen.model,
        chosen.version,
        chosen.boot_image,
    )
    sim.add_device(DeviceSpec(name=name, dialect="eos", password=PASSWORD, profile=profile))
    return name


def connect(sim: SwitchSim, name: str) -> BaseConnection:
    conn = ConnectHandler(
        device_type="arista_eos",
        host="127.0.0.1",
        port=sim.port(name),
        username="admin",
        password=PASSWORD,
        fast_cli=True,
        conn_timeout=5,
    )
    conn.enable()
    return conn


def configure(conn: BaseConnection, lines: list[str]) -> str:
    return str(conn.send_config_set(lines, config_mode_command="configure terminal"))


def show_json(conn: BaseConnection, command: str) -> Any:
    return json.loads(str(conn.send_command(command)))


def paths(text: str) -> set[tuple[str, ...]]:
    """Every configuration line of `text` with the lines of the modes it sits in."""
    found: set[tuple[str, ...]] = set()
    pending: list[tuple[tuple[str, ...], Block]] = [((), b) for b in block_tree(text)]
    while pending:
        above, block = pending.pop()
        here = (*above, block.line)
        found.add(here)
        pending += [(here, child) for child in block.children]
    return found


def test_a_real_dcqcn_configuration_boots_with_every_line_kept(sim: SwitchSim) -> None:
    """`qos trust dscp`, `random-detect ecn count`, `speed 200g-4`, `load-interval`, `qos map
    traffic-class ... to dscp`, `phy link training` and `!!` comments are all kept verbatim."""
    _config, refused = boot_config(DCQCN, eos_profile(TOMAHAWK).queue_kinds)
    name = boot(sim, DCQCN)
    with connect(sim, name) as conn:
        running = str(conn.send_command("show running-config"))
    assert refused == []
    assert paths(DCQCN) - paths(running) == set()


def test_show_running_config_all_style_lines_are_kept(sim: SwitchSim) -> None:
    """Default-stating lines of `show running-config all` (`no shutdown`, `no bgp default
    ipv4-unicast`, `switchport`, a queue's `no priority`) are configuration and stay."""
    config = (
        "interface Ethernet1\n   no shutdown\n   switchport\n   !\n   uc-tx-queue 1\n"
        "      no priority\n      bandwidth percent 50\n!\n"
        "router bgp 65000\n   no bgp default ipv4-unicast\n   distance bgp 20 200 200\n!\n"
    )
    name = boot(sim, config)
    with connect(sim, name) as conn:
        running = str(conn.send_command("show running-config"))
    assert paths(config) - paths(running) == set()


def test_only_what_eos_refuses_is_refused() -> None:
    """A Jericho-style `tx-queue` on a Tomahawk platform, a PFC xoff threshold, an unknown
    ECN keyword and an unknown command are refused; nothing else in the text is."""
    config = (
        "interface Ethernet1\n   speed 400g-8\n   priority-flow-control xoff-threshold 50 kbytes\n"
        "   !\n   tx-queue 3\n      bandwidth percent 10\n!\n"
        "qos profile P\n   !\n   uc-tx-queue 3\n      random-detect ecn bogus 1\n!\n"
        "frobnicate all ports\n"
    )
    _config, refused = boot_config(config, eos_profile(TOMAHAWK).queue_kinds)
    assert [line for line, _reason in refused] == [
        "priority-flow-control xoff-threshold 50 kbytes",
        "tx-queue 3",
        "random-detect ecn bogus 1",
        "frobnicate all ports",
    ]


def test_address_family_route_maps_stay_under_their_family(sim: SwitchSim) -> None:
    """`neighbor X route-map NAME in|out` under `address-family ipv4` stays there, is not
    flattened into the router level, and is the policy the neighbour reports in force."""
    config = (
        "router bgp 65101\n   neighbor 10.0.0.1 remote-as 65000\n"
        "   neighbor 10.0.0.1 route-map RM-ROUTER in\n   !\n   address-family ipv4\n"
        "      neighbor 10.0.0.1 activate\n      neighbor 10.0.0.1 route-map RM-AF-IN in\n"
        "      neighbor 10.0.0.1 route-map RM-AF-OUT out\n!\n"
    )
    name = boot(sim, config)
    with connect(sim, name) as conn:
        running = str(conn.send_command("show running-config"))
        peers = show_json(conn, "show bgp neighbors vrf all | json revision 2")
    assert paths(config) - paths(running) == set()
    assert ("router bgp 65101", "neighbor 10.0.0.1 route-map RM-AF-IN in") not in paths(running)
    peer = peers["vrfs"]["default"]["peerList"][0]
    assert (peer["peerAddress"], peer["routeMapInbound"], peer["routeMapOutbound"]) == (
        "10.0.0.1",
        "RM-AF-IN",
        "RM-AF-OUT",
    )


def test_a_peer_group_route_map_in_the_family_beats_the_router_level_one(
    sim: SwitchSim,
) -> None:
    """A neighbour's own router-level route map gives way to its peer group's one under
    the address family, which is more specific; with none at all the key is absent."""
    config = (
        "router bgp 65101\n   neighbor SPINE peer group\n   neighbor SPINE remote-as 65000\n"
        "   neighbor 10.0.0.1 peer group SPINE\n   neighbor 10.0.0.1 route-map RM-OWN in\n"
        "   neighbor 10.0.0.3 peer group SPINE\n   !\n   address-family ipv4\n"
        "      neighbor SPINE route-map RM-GROUP-AF in\n!\n"
    )
    name = boot(sim, config)
    with connect(sim, name) as conn:
        peers = show_json(conn, "show bgp neighbors vrf all | json")
    found = {p["peerAddress"]: p for p in peers["vrfs"]["default"]["peerList"]}
    assert found["10.0.0.1"]["routeMapInbound"] == "RM-GROUP-AF"
    assert "routeMapOutbound" not in found["10.0.0.1"]


def test_reentering_an_ecn_line_resets_the_options_it_leaves_out(sim: SwitchSim) -> None:
    """A `random-detect ecn` line replaces the queue's whole ECN line: `weight` not
    repeated returns to its default (so a writer must repeat it)."""
    name = boot(sim, DCQCN)
    with connect(sim, name) as conn:
        configure(
            conn,
            [
                "qos profile QOS_ROCE_DCQCN",
                "uc-tx-queue 3",
                "random-detect ecn minimum-threshold 150 kbytes maximum-threshold 1500 kbytes",
            ],
        )
        running = str(conn.send_command("show running-config"))
    queue = ("qos profile QOS_ROCE_DCQCN", "uc-tx-queue 3")
    assert (
        *queue,
        "random-detect ecn minimum-threshold 150 kbytes maximum-threshold 1500 kbytes",
    ) in paths(running)
    assert (*queue, "random-detect ecn count") in paths(running)
    assert "weight 0" not in running


def test_unmodeled_lines_follow_no_and_default(sim: SwitchSim) -> None:
    """`no load-interval` undoes `load-interval 2`; `shutdown` replaces `no shutdown`."""
    name = boot(sim, "interface Ethernet1\n   no shutdown\n   load-interval 2\n!\n")
    with connect(sim, name) as conn:
        configure(conn, ["interface Ethernet1", "no load-interval", "shutdown"])
        running = str(conn.send_command("show running-config"))
    port = {p[1] for p in paths(running) if p[0] == "interface Ethernet1" and len(p) == 2}
    assert "shutdown" in port and not {"no shutdown", "load-interval 2"} & port


def test_a_port_channel_member_forwards_as_data_link(sim: SwitchSim) -> None:
    """`show interfaces` reports a `channel-group` member's forwarding model as `dataLink`."""
    name = boot(sim, "interface Ethernet1\n   channel-group 1 mode active\n!\n")
    with connect(sim, name) as conn:
        ports = show_json(conn, "show interfaces | json")["interfaces"]
    assert ports["Ethernet1"]["forwardingModel"] == "dataLink"


def test_a_global_command_after_interface_lines_goes_to_global(sim: SwitchSim) -> None:
    """`qos map dscp` typed in interface mode is a global command (an interface's own
    `qos` commands are `qos trust`, `qos cos`, `qos dscp`)."""
    name = boot(sim, "interface Ethernet1\n   no switchport\n!\n")
    with connect(sim, name) as conn:
        configure(
            conn, ["interface Ethernet1", "qos trust dscp", "qos map dscp 46 to traffic-class 5"]
        )
        running = str(conn.send_command("show running-config"))
    assert ("interface Ethernet1", "qos trust dscp") in paths(running)
    assert ("qos map dscp 46 to traffic-class 5",) in paths(running)


def test_text_blocks_and_dotted_as_numbers_come_back_as_given() -> None:
    """A banner's unindented text and a `comment` block's lines up to `EOF` stay theirs;
    an AS number entered in asdot is printed as entered; `link tracking group` and
    `vpws` sub-modes are EOS commands."""
    config = (
        "banner motd\nAuthorised use only\n  second line\nEOF\n!\n"
        "interface Ethernet1\n   comment\n   Comment created by hand\n   EOF\n"
        "   link tracking group LT1 upstream\n!\n"
        "link tracking group LT1\n   recovery delay 300\n!\n"
        "router bgp 65111.100\n   neighbor 10.0.0.1 remote-as 65110.100\n"
        "   neighbor 10.0.0.3 remote-as 4200000001\n   !\n   vpws TENANT_A\n"
        "      rd 10.0.0.1:1000\n!\n"
    )
    booted, refused = boot_config(config, eos_profile(TOMAHAWK).queue_kinds)
    text = running_config(booted, "DCS-7060X6-64PE", "4.33.1F")
    assert refused == []
    assert paths(config) - paths(text) == set()
    assert "banner motd\nAuthorised use only\n  second line\nEOF\n" in text


def test_default_forms_of_modeled_settings_are_kept_until_a_value_is_set() -> None:
    """`show running-config all` states defaults (`no mtu`, `no description`, `no ip
    address`, `no router-id`, `bgp asn notation asplain`): a booted configuration keeps
    them, and a value set later replaces the default form."""
    config = (
        "interface Ethernet1\n   no description\n   no mtu\n   no switchport\n"
        "   no ip address\n   no service-profile\n!\n"
        "router bgp 65000\n   bgp asn notation asplain\n   no router-id\n!\n"
    )
    booted, refused = boot_config(config, eos_profile(TOMAHAWK).queue_kinds)
    assert refused == []
    assert paths(config) - paths(running_config(booted, "DCS-7060X6-64PE", "4.33.1F")) == set()
    from tests.switchsim.eos_config import apply_line
    from tests.switchsim.eos_modes import GLOBAL

    context = GLOBAL
    for line in ["interface Ethernet1", "mtu 9000", "router bgp 65000", "router-id 10.0.0.1"]:
        context, _ = apply_line(booted, context, line)
    shown = paths(running_config(booted, "DCS-7060X6-64PE", "4.33.1F"))
    assert ("interface Ethernet1", "mtu 9000") in shown
    assert ("interface Ethernet1", "no mtu") not in shown
    assert ("router bgp 65000", "no router-id") not in shown
    assert ("interface Ethernet1", "no description") in shown


def test_interface_defaults_give_routed_ports_their_mtu(sim: SwitchSim) -> None:
    """`interface defaults` / `mtu 9214` is the L3 MTU `show interfaces` reports for a routed
    port without its own `mtu` line."""
    name = boot(
        sim, "interface defaults\n   mtu 9214\n!\ninterface Ethernet1\n   no switchport\n!\n"
    )
    with connect(sim, name) as conn:
        ports = show_json(conn, "show interfaces | json")["interfaces"]
    assert ports["Ethernet1"]["mtu"] == 9214
