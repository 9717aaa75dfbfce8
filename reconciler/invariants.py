"""Fleet invariants on device *state* (desired, observed or intermediate).

The intent policies check declared values; these check what the devices would
actually hold at some moment, pair by pair along the cabling, so a plan can prove
that every intermediate state it passes through is safe:

* ``mtu.host-fits-port``: host NIC MTU + 22 <= MTU of the switch port it is cabled to;
* ``mtu.rdma-fits-host``: RDMA path MTU + 64 <= host NIC MTU;
* ``mtu.fabric-ends-equal``: both ends of a switch-to-switch link have the same MTU;
* ``qos.pfc-pair``: both ends of a link pause the same priorities;
* ``qos.dscp-pair``: both ends of a lossless link share the DSCP map;
* ``bgp.remote-as``: each end's remote-as for the other equals the other's ASN.

Evaluation is local: :func:`breaches_around` looks only at the ports of the given
devices (cabling index look-ups), and :func:`breaches_on_ports` only at the named
ports of each device (a device-wide setting such as the ASN or the DSCP map names
all of them), so checking a step costs O(ports whose ends change).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field

from intent.fleet import Fleet
from inventory.index import PortLink
from inventory.models import BGP_ROLES, Role
from policies.views import ETHERNET_OVERHEAD, RDMA_OVERHEAD
from reconciler.settings import Scalar, State


@dataclass(frozen=True, order=True)
class Breach:
    """A broken invariant; identity is (rule, subject), the detail is for people."""

    rule: str
    subject: str
    detail: str = field(compare=False)


def _port_prefix(fleet: Fleet, device: str, port: str) -> str:
    if fleet.devices[device].role is Role.gpu_node:
        return f"nics/{port}"
    return f"interfaces/{port}"


def _int(value: Scalar) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


DscpMaps = dict[str, tuple[State, dict[str, Scalar]]]
"""device -> (the state it was read from, its DSCP map): a state is replaced, never
edited, so a map stays valid while the state is the same object."""


def _dscp_of(cache: DscpMaps, device: str, state: State) -> dict[str, Scalar]:
    """A device's DSCP map, computed once per state (states hold thousands of paths)."""
    found = cache.get(device)
    if found is None or found[0] is not state:
        found = cache[device] = (
            state,
            {k: v for k, v in state.items() if k.startswith("qos/dscp/")},
        )
    return found[1]


def _link_breaches(
    fleet: Fleet, states: Mapping[str, State], pl: PortLink, dscp: DscpMaps
) -> Iterable[Breach]:
    local, peer = pl.local, pl.peer
    if local.device not in states or peer.device not in states:
        return
    mine, theirs = states[local.device], states[peer.device]
    my_prefix = _port_prefix(fleet, local.device, local.port)
    their_prefix = _port_prefix(fleet, peer.device, peer.port)
    my_mtu, their_mtu = _int(mine.get(f"{my_prefix}/mtu")), _int(theirs.get(f"{their_prefix}/mtu"))
    host_side = fleet.devices[local.device].role is Role.gpu_node
    peer_is_switch = fleet.devices[peer.device].role.is_switch
    fits = my_mtu is None or their_mtu is None or my_mtu + ETHERNET_OVERHEAD <= their_mtu
    if host_side and not fits:
        yield Breach(
            "mtu.host-fits-port",
            str(local),
            f"{local} MTU {my_mtu} + 22 > {peer} MTU {their_mtu}",
        )
    if not host_side and peer_is_switch and my_mtu != their_mtu and str(local) < str(peer):
        yield Breach("mtu.fabric-ends-equal", str(local), f"{local} {my_mtu} != {peer} {their_mtu}")
    my_pfc, their_pfc = (
        mine.get(f"{my_prefix}/pfc_priorities"),
        theirs.get(f"{their_prefix}/pfc_priorities"),
    )
    if (
        my_pfc is not None
        and their_pfc is not None
        and my_pfc != their_pfc
        and str(local) < str(peer)
    ):
        yield Breach("qos.pfc-pair", str(local), f"{local} PFC {my_pfc!r} != {peer} {their_pfc!r}")
    if (
        my_pfc
        and their_pfc
        and str(local) < str(peer)
        and _dscp_of(dscp, local.device, mine) != _dscp_of(dscp, peer.device, theirs)
    ):
        yield Breach("qos.dscp-pair", str(local), f"{local} and {peer} DSCP maps differ")


def _host_breaches(
    fleet: Fleet, states: Mapping[str, State], device: str, ports: Iterable[PortLink] | None = None
) -> Iterable[Breach]:
    state = states.get(device)
    if state is None or fleet.devices[device].role is not Role.gpu_node:
        return
    for pl in fleet.cabling.ports(device) if ports is None else ports:
        mtu = _int(state.get(f"nics/{pl.local.port}/mtu"))
        rdma = _int(state.get(f"nics/{pl.local.port}/rdma_mtu"))
        if mtu is not None and rdma is not None and rdma + RDMA_OVERHEAD > mtu:
            yield Breach(
                "mtu.rdma-fits-host", str(pl.local), f"{pl.local} RDMA MTU {rdma} + 64 > MTU {mtu}"
            )


def _session_breach(fleet: Fleet, states: Mapping[str, State], pl: PortLink) -> Breach | None:
    """The session from ``pl.local`` towards ``pl.peer``: its remote-as must be the peer's ASN."""
    device, peer = pl.local.device, pl.peer.device
    if device not in states or peer not in states:
        return None
    if fleet.devices[device].role not in BGP_ROLES or fleet.devices[peer].role not in BGP_ROLES:
        return None
    remote_as = _remote_as_towards(states[device], states[peer], pl)
    peer_asn = states[peer].get("bgp/asn")
    if remote_as is not None and peer_asn is not None and remote_as != peer_asn:
        return Breach(
            "bgp.remote-as",
            str(pl.local),
            f"{device} remote-as {remote_as} for {peer}, which is AS {peer_asn}",
        )
    return None


def _remote_as_towards(mine: State, theirs: State, pl: PortLink) -> Scalar:
    """The remote-as of the session over ``pl``: keyed by the peer's IPv4 or IPv6 address,
    or (unnumbered) by the local port; None when there is none."""
    keys = [f"bgp/neighbors/{pl.local.port}/remote_as"]
    for kind in ("address", "ipv6_address"):
        address = theirs.get(f"interfaces/{pl.peer.port}/{kind}")
        if isinstance(address, str):
            keys.append(f"bgp/neighbors/{address.split('/')[0]}/remote_as")
    return next((mine[key] for key in keys if mine.get(key) is not None), None)


def breaches_around(
    fleet: Fleet, states: Mapping[str, State], devices: Iterable[str]
) -> set[Breach]:
    """Every breach on the given devices and on the links that touch them."""
    return breaches_on_ports(fleet, states, {device: None for device in devices})


def breaches_on_ports(
    fleet: Fleet,
    states: Mapping[str, State],
    ports: Mapping[str, Collection[str] | None],
    dscp: DscpMaps | None = None,
) -> set[Breach]:
    """Every breach on the named ports of each device (``None``: all its ports) and on
    the links cabled to them. ``dscp`` keeps the devices' DSCP maps between calls over
    states that share most devices' states."""
    found: set[Breach] = set()
    dscp = {} if dscp is None else dscp
    for device, names in ports.items():
        if device not in fleet.devices:
            continue
        links = fleet.cabling.ports(device)
        if names is not None:
            links = [pl for pl in links if pl.local.port in names]
        found.update(_host_breaches(fleet, states, device, links))
        for pl in links:
            reverse = fleet.cabling.at(pl.peer.device, pl.peer.port)
            for direction in (pl, reverse):
                if direction is None:
                    continue
                found.update(_link_breaches(fleet, states, direction, dscp))
                breach = _session_breach(fleet, states, direction)
                if breach is not None:
                    found.add(breach)
            if fleet.devices[pl.peer.device].role is Role.gpu_node:
                found.update(
                    b
                    for b in _host_breaches(fleet, states, pl.peer.device)
                    if b.subject == str(pl.peer)
                )
    return found
