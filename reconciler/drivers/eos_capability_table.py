"""The EOS rows of docs/drivers.md "Capabilities", as data next to the rules (pure).

Each row says how a setting path is read and written on EOS and when
:func:`~reconciler.drivers.eos_caps.eos_inexpressible` refuses it, and carries
examples (a path, an observed state, and a phrase the refusal must contain, or
None when the path is expressible there); ``tests/drivers/test_eos_capability_table.py``
checks every example against the rule and that the documentation holds the rows
:func:`markdown_rows` renders, so the table cannot drift from the code.

Platforms and releases covered: EOS 4.15-4.34 (configuration sessions; commit
timers as ``pendingCommitTimer`` before 4.32, ``commitTimerSessionName`` from 4.32);
Jericho/Arad platforms (7280R, 7500R, 7800R: ``tx-queue``) and Trident/Tomahawk ones
(7050X, 7060X, 7260X, 7300X, 7358X, 7368X, 7388X: ``uc-tx-queue``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from reconciler.settings import Scalar

PORT: dict[str, Scalar] = {"interfaces/Ethernet1/mode": "routed"}


@dataclass(frozen=True)
class Row:
    """One platform/path row and the examples that pin its refusal column to the rule
    (the SONiC rows, :mod:`.sonic_capability_table`, are of this type too)."""

    paths: str
    read: str
    written: str
    refused: str
    examples: tuple[tuple[str, Mapping[str, Scalar], str | None], ...]


ROWS = (
    Row(
        "`qos/pfc_headroom_kb`, `qos/pfc_xoff_kb`",
        "not observed",
        "never",
        "always: EOS has no command for them; the platform derives them from port speed "
        "and buffer profile",
        (("qos/pfc_headroom_kb", {}, "no command"), ("qos/pfc_xoff_kb", {}, "no command")),
    ),
    Row(
        "`interfaces/<port>/mtu`",
        "`show interfaces` `mtu` (L3 MTU routed, L2 frame size switched)",
        "`mtu N` / `no mtu`",
        "the port is a switchport (`mtu` sets only the L3 MTU) or a Port-Channel member "
        "(the Port-Channel's MTU); above 9214, EOS's largest (refused at stage, and at "
        "validate by `mtu.platform-range`)",
        (
            ("interfaces/Ethernet1/mtu", {"interfaces/Ethernet1/mode": "switched"}, "L3 MTU"),
            ("interfaces/Ethernet1/mtu", {"interfaces/Ethernet1/mode": "lag-member"}, "Port"),
            ("interfaces/Ethernet1/mtu", PORT, None),
        ),
    ),
    Row(
        "`interfaces/<port>/address`",
        "`show interfaces` primary IPv4",
        "`ip address A/L` / `no ip address`",
        "the port is a switchport (an address needs `no switchport`, a forwarding-mode "
        "change plumb never makes implicitly) or a Port-Channel member",
        (
            ("interfaces/Ethernet1/address", {"interfaces/Ethernet1/mode": "switched"}, "switch"),
            ("interfaces/Ethernet1/address", {"interfaces/Ethernet1/mode": "lag-member"}, "Port"),
        ),
    ),
    Row(
        "`interfaces/<port>/ipv6_address`",
        "the port's first global `ipv6 address` (running config; none: not observed)",
        "`ipv6 address A/L`, the old one removed first (`no ipv6 address OLD`)",
        "as `address`",
        (
            (
                "interfaces/Ethernet1/ipv6_address",
                {"interfaces/Ethernet1/mode": "switched"},
                "switch",
            ),
            ("interfaces/Ethernet1/ipv6_address", PORT, None),
        ),
    ),
    Row(
        "`interfaces/<port>/pfc_priorities`",
        "no-drop priorities where PFC is on, port over qos profile",
        "port lines (`... priority P no-drop`, `... drop` over a profile)",
        "never",
        (
            (
                "interfaces/Ethernet1/pfc_priorities",
                {"interfaces/Ethernet1/mode": "lag-member"},
                None,
            ),
        ),
    ),
    Row(
        "`qos/ecn/<q>/{kmin_kb,kmax_kb,pmax_percent}`",
        "value every Ethernet port shares (port over qos profile), bytes/kbytes/mbytes as "
        "kbytes; `pmax_percent` None when the line does not state it",
        "the whole line, into the shared qos profile, else every port; `uc-tx-queue` or "
        "`tx-queue` as the device (else its platform) uses; `max-mark-probability` always "
        "stated, other options (`weight N`) repeated",
        "thresholds in segments or milliseconds, or a line plumb cannot read "
        "(`qos/ecn/<q>/threshold_unit`): no byte size to compare; a switch with no Ethernet port",
        (
            ("qos/ecn/3/kmin_kb", PORT | {"qos/ecn/3/threshold_unit": "segments"}, "segments"),
            ("qos/ecn/3/kmax_kb", PORT | {"qos/ecn/3/threshold_unit": "unreadable"}, "read"),
            ("qos/ecn/3/kmin_kb", {}, "no Ethernet port"),
            ("qos/ecn/3/pmax_percent", PORT | {"qos/ecn/3/threshold_unit": "kbytes"}, None),
        ),
    ),
    Row(
        "`qos/dscp/<d>`",
        "`qos map dscp ... to traffic-class T [drop-precedence N]`",
        "`qos map dscp D to traffic-class T`",
        "never",
        (("qos/dscp/26", {}, None),),
    ),
    Row(
        "`bgp/asn`, `bgp/router_id`, `bgp/maximum_paths`",
        "`router bgp` (asplain or asdot; an AS that is neither reads as its text)",
        "in the device's notation; the AS of a running process is never changed in place",
        "never (an AS change is refused at stage)",
        (("bgp/asn", {}, None), ("bgp/maximum_paths", {}, None)),
    ),
    Row(
        "`bgp/neighbors/<ipv4>/remote_as`, `bgp/neighbors/<ipv6>/remote_as`",
        "own value, else the peer group's",
        "per neighbour; equal to the group's: inherited; a new IPv6 neighbour is also "
        "activated in `address-family ipv6`",
        "never",
        (
            ("bgp/neighbors/10.0.0.1/remote_as", {}, None),
            ("bgp/neighbors/2001:db8::1/remote_as", {}, None),
        ),
    ),
    Row(
        "`bgp/neighbors/<port>/{remote_as,inbound_filter}` (unnumbered)",
        "`neighbor interface RANGE peer-group G remote-as N` (`Et1-4,Et7`, one neighbour a "
        "port; `peer-filter F` reads as that text); the route map in force is G's (IPv4)",
        "`neighbor interface PORT peer-group G remote-as N`, G the port's group, else the one "
        "the interface neighbours share, else `UNNUMBERED` (created, activated in IPv4 with "
        "IPv6 next hops); the route map on G under `address-family ipv4`",
        "never by rule; at stage: interface neighbours in several groups, a route map the "
        "group's other members do not want",
        (
            ("bgp/neighbors/Ethernet1/remote_as", {}, None),
            ("bgp/neighbors/Ethernet1/inbound_filter", {}, None),
        ),
    ),
    Row(
        "`bgp/neighbors/<ipv4>/inbound_filter`, `bgp/neighbors/<ipv6>/inbound_filter`",
        "the route map in force for the neighbour's family (IPv4 shown): "
        "`show bgp neighbors vrf all \\| json revision 2` `routeMapInbound` where the switch "
        "answers, else config: own line under `address-family ipv4`, the peer group's there, "
        "own router-level line, the group's",
        "where the one in force lives: replaced under the family, or overriding a group's "
        "line there on the neighbour under the family; at router level otherwise",
        "clearing a route map the peer group gives (refused at stage)",
        (("bgp/neighbors/10.0.0.1/inbound_filter", {}, None),),
    ),
    Row(
        "`bgp/neighbors/<peer>/{outbound_filter,ipv4_*,ipv6_*}`",
        "as `inbound_filter`, outbound and per other address family the neighbour is "
        "activated in (`ipv6_inbound_filter`...)",
        "never",
        "always: reported only",
        (),
    ),
    Row(
        "`bgp/neighbors/<link-local>%<port>/*`",
        "`neighbor fe80::1%Et1 ...`, the zone as the full port name",
        "never",
        "always: plumb writes unnumbered sessions as interface neighbours",
        (("bgp/neighbors/fe80::1%Ethernet1/remote_as", {}, "link-local"),),
    ),
)


def markdown_rows() -> list[str]:
    """The EOS rows of the Capabilities table, as docs/drivers.md holds them."""
    return [f"| eos | {row.paths} | {row.read} | {row.written} | {row.refused} |" for row in ROWS]
