"""Which EOS commands exist in which mode: what the simulator accepts without modeling.

EOS refuses a line whose first keyword the mode does not have (``% Invalid
input``), and otherwise applies it.  The simulator models the few commands plumb
reads and writes (`eos_config`, `eos_qos_config`, `eos_bgp_config`); for every
other command it only needs to know that EOS has it, in that mode, to keep the
line verbatim (`eos_blocks`).  The keyword lists below are taken from the EOS
User Manual's command references (global configuration, Ethernet interface,
QoS profile and transmit queue, router BGP and its address families, route-map
modes); a keyword missing here is a line the simulator refuses that a real
switch would take, so the lists err on the side of EOS's documented commands,
never on what plumb happens to send.

Within a sub-mode the simulator does not model (``management api
http-commands``, ``router ospf 1``, ``vlan 10``, ``vrf X`` under BGP...), every
line is kept as given: EOS would check it against that sub-mode's own grammar,
which the simulator does not carry.
"""

from __future__ import annotations


def words(text: str) -> frozenset[str]:
    """The keywords of a space-separated list."""
    return frozenset(text.split())


GLOBAL = words(
    """
    aaa action address agent alias application arp banner bfd boot class-map clock cvx daemon dhcp
    dynamic group l2-protocol maintenance mcs track
    dns dot1x email enable environment errdisable event-handler event-monitor flow
    hardware hostname interface ip ipv6 lacp link link-tracking lldp load-balance load-interval
    logging mac management match-list monitor mpls mlag multicast ntp patch peer-filter
    platform policy-map poe port-channel prefix-list priority-flow-control prompt ptp qos
    queue-monitor radius-server redundancy role route-map router service sflow snmp-server
    spanning-tree ssh stun switchport sync-e system tacacs-server tap tcam terminal
    traffic-policies transceiver tunnel-ribs username vlan vmtracer vrf vxlan
    comment
    """
)
"""First keywords of global configuration commands."""

INTERFACE = words(
    """
    arp bfd carrier-delay channel-group dcbx description dhcp dot1q dot1x encapsulation
    error-correction evpn flow flowcontrol hardware isis l2 l2-protocol lacp link
    link-debounce link-tracking lldp load-interval logging mac mac-address mac-security
    mlag mpls mtu multicast ospfv3 phy pim poe priority-flow-control ptp sflow
    service-policy service-profile shape shutdown snmp spanning-tree speed storm-control
    switchport sync-e tap tcp tool traffic-engineering traffic-loopback traffic-policy
    transceiver tx-queue uc-tx-queue mc-tx-queue unidirectional vmtracer vrf vrrp vxlan
    bgp comment
    """
) | frozenset(
    (
        "qos trust",
        "qos cos",
        "qos dscp",
        "ip address",
        "ip ospf",
        "ip pim",
        "ip helper-address",
        "ip proxy-arp",
        "ip local-proxy-arp",
        "ip virtual-router",
        "ip access-group",
        "ip verify",
        "ip igmp",
        "ip attached-host",
        "ip dhcp",
        "ip mtu",
        "ip nat",
        "ip multicast",
        "ip directed-broadcast",
        "ip unreachables",
        "ip load-sharing",
        "ipv6 address",
        "ipv6 enable",
        "ipv6 nd",
        "ipv6 ospf",
        "ipv6 dhcp",
        "ipv6 virtual-router",
        "ipv6 access-group",
        "ipv6 pim",
        "ipv6 verify",
        "ipv6 mtu",
        "ipv6 attached-host",
        "ipv6 mld",
    )
)
"""First keywords of Ethernet interface commands."""

QOS_PROFILE = words(
    "priority-flow-control service-policy shape tx-queue uc-tx-queue mc-tx-queue comment"
) | frozenset(("qos trust", "qos cos", "qos dscp"))
"""First keywords of ``qos profile`` commands."""

TX_QUEUE = words("bandwidth priority random-detect shape comment")
"""First keywords of a transmit queue's commands (any of the three queue kinds)."""

ROUTER_BGP = words(
    """
    address-family aggregate-address bfd bgp default-metric distance dynamic graceful-restart
    graceful-restart-helper listen maximum-paths monitoring neighbor network
    next-hop-unchanged rd redistribute route-target router-id session shutdown timers ucmp update
    vlan vlan-aware-bundle vpws vrf comment
    """
)
"""First keywords of ``router bgp`` commands (default VRF)."""

NEIGHBOR = words(
    """
    activate additional-paths allowas-in as-path bfd default-originate description
    dont-capability-negotiate ebgp-multihop enforce-first-as export-localpref
    graceful-restart graceful-restart-helper idle-restart-timer import-localpref link-bandwidth
    local-as local-v6-addr maximum-accepted-routes maximum-routes metric-out missing-policy
    next-hop-peer next-hop-self next-hop-unchanged next-hop out-delay passive password rcf session
    peer peer-group prefix-list remote-as remote-port remove-private-as rib-in
    route-map route-reflector-client route-to-peer send-community shutdown timers
    transport ttl update-source weight encapsulation
    """
)
"""Options of ``neighbor PEER ...`` at router level and in address families."""

ADDRESS_FAMILY = words(
    """
    bgp default-route graceful-restart neighbor network redistribute aggregate-address
    maximum-paths next-hop comment
    """
)
"""First keywords of ``address-family ipv4|ipv6`` commands under ``router bgp``."""

ROUTE_MAP = words("continue description match set sub-route-map comment")
"""First keywords of a ``route-map`` entry's commands."""

BLOCK_STARTERS = (
    "interface ",
    "router ",
    "vlan ",
    "vrf ",
    "management ",
    "route-map ",
    "qos profile ",
    "class-map ",
    "policy-map ",
    "ip access-list ",
    "ipv6 access-list ",
    "mac access-list ",
    "daemon ",
    "mlag ",
    "event-handler ",
    "monitor ",
    "hardware ",
    "platform ",
    "application ",
    "flow ",
    "stun",
    "dot1x",
    "peer-filter ",
    "tap ",
    "traffic-policies",
    "policy ",
    "link tracking group ",
    "banner ",
    "maintenance",
    "l2-protocol",
    "address locking",
    "dynamic prefix-list ",
    "group ",
    "mcs ",
)
"""Global commands that open a sub-mode: typed interactively inside another
unmodeled sub-mode they end it, as EOS finds them only in global mode."""


def known(vocabulary: frozenset[str], tokens: list[str]) -> bool:
    """Whether a mode with `vocabulary` has the command `tokens` (``no``/``default``
    forms and ``!!`` comments included).  A keyword that both this mode and global
    configuration have is listed with its second word (``qos trust``: an
    interface's ``qos map ...`` is a global command)."""
    if not tokens:
        return False
    if tokens[0].startswith("!!"):
        return True
    if tokens[0] in ("no", "default") and len(tokens) > 1:
        tokens = tokens[1:]
    return tokens[0] in vocabulary or " ".join(tokens[:2]) in vocabulary


def starts_block(line: str) -> bool:
    """Whether `line` is a global command that opens a sub-mode."""
    return line.startswith(BLOCK_STARTERS)
