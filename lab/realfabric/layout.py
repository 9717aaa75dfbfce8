"""The real-network lab's layout (pure): what ``plumb lab init --real`` makes for a fleet.

Namespace names are ``<prefix><device>``, the prefix derived from the fleet's name and
state directory so two fabrics on one host never clash. Linux interface names hold at
most 15 characters and no ``/``: a port name that is not one maps deterministically to
``<first characters>-<hash>`` (:func:`ifname`), and the map is recorded in the state file.
Cable MTUs and addresses are the rendered intent (``interfaces/<port>/mtu``,
``nics/<nic>/address``, a switch port's ``ipv6_address``...), so the lab starts at the
fleet's intended port settings: a fleet peering ``ipv6`` gets its /127s on the veths, and
one peering ``unnumbered`` without an IPv4 pool for its switch-to-switch links has only
their link-local addresses there. Hosts stay IPv4.

The sessions the fabric should have (:func:`expected_sessions`) are keyed as FRR lists
them in ``show bgp summary json``: by the session's neighbour (the peer's address), and
an unnumbered one by the Linux name of the switch's own port.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path

from intent.fleet import Fleet
from intent.sessions import sessions_of
from inventory.models import BGP_ROLES, Role
from reconciler.render import render_device
from reconciler.settings import Scalar, as_desired_state

IFNAME_MAX = 15
_IFNAME_OK = re.compile(r"^[A-Za-z0-9_.-]{1,15}$")
DEFAULT_MTU = 1500


def ifname(port: str) -> str:
    """The Linux interface name of ``port``: the port name itself when Linux accepts it,
    else its first characters and a hash of the whole (stable across runs)."""
    if _IFNAME_OK.match(port):
        return port
    digest = hashlib.sha256(port.encode()).hexdigest()[:5]
    stem = re.sub(r"[^A-Za-z0-9]", "", port)[: IFNAME_MAX - 6]
    return f"{stem}-{digest}"


def fabric_prefix(fleet: Fleet) -> str:
    """The namespace prefix of this fleet's fabric (short, per fleet and state dir)."""
    where = str((fleet.root / fleet.config.state_dir).resolve())
    digest = hashlib.sha256(f"{fleet.config.fleet}\0{where}".encode()).hexdigest()[:6]
    return f"plumb-{digest}-"


@dataclass(frozen=True)
class Veth:
    """One cable: a veth pair between two namespaces, each end at its port's MTU."""

    a_device: str
    a_ifname: str
    a_mtu: int
    b_device: str
    b_ifname: str
    b_mtu: int


@dataclass(frozen=True)
class Node:
    """One device of the fabric."""

    name: str
    namespace: str
    frr: bool  # runs zebra + bgpd
    host: bool  # a GPU node
    ports: dict[str, str]  # inventory port -> Linux interface name
    addresses: dict[str, tuple[str, ...]]  # Linux interface name -> its IPv4 and IPv6/len
    loopback: str | None = None  # the router id, as a /32 on lo
    default_via: str | None = None  # a host's default gateway (its first NIC's leaf)


@dataclass(frozen=True)
class FabricLayout:
    prefix: str
    nodes: dict[str, Node]
    veths: list[Veth]
    base_configs: dict[str, str] = field(default_factory=dict)  # device -> bgpd.conf

    def namespaces(self) -> list[str]:
        return [node.namespace for node in self.nodes.values()]


def _port_mtu(state: dict[str, Scalar], kind: str, port: str) -> int:
    value = state.get(f"{kind}/{port}/mtu")
    return value if isinstance(value, int) and not isinstance(value, bool) else DEFAULT_MTU


def _addresses(state: dict[str, Scalar], kind: str, port: str) -> tuple[str, ...]:
    """The port's intended addresses: IPv4, then IPv6."""
    found = (state.get(f"{kind}/{port}/{name}") for name in ("address", "ipv6_address"))
    return tuple(str(value) for value in found if value)


def base_config(name: str, asn: int, filters: list[str]) -> str:
    """A switch's startup bgpd configuration: what a site's provisioning gives it before
    plumb manages router id, ECMP width and sessions (the linux-frr driver keeps these
    lines). Short timers so a fabric converges in seconds; connected routes (the
    loopback, the cables' /31s) announced; every inbound filter the fleet names exists
    and permits, so sessions carry routes."""
    lines = [f"hostname {name}", f"router bgp {asn}", " no bgp ebgp-requires-policy"]
    lines += [" timers bgp 3 9", " bgp bestpath as-path multipath-relax"]
    lines += [" address-family ipv4 unicast", "  redistribute connected"]
    lines += [" exit-address-family", "exit"]
    for name_ in filters:
        lines += [f"route-map {name_} permit 10", "exit"]
    return "\n".join(lines) + "\n"


def backend_nic(fleet: Fleet, node: str) -> str | None:
    """A GPU node's first cabled NIC on a rail: its default route leaves by it (by its
    first cabled port when it has none), and the data-plane probes start from it."""
    rails = {nic.name for nic in fleet.devices[node].nics if nic.rail is not None}
    return next((port for port in fleet.cabling.ends(node) if port in rails), None)


def plan_layout(fleet: Fleet) -> FabricLayout:
    """Namespaces, veths, addresses and base configs for ``fleet``."""
    prefix = fabric_prefix(fleet)
    cabling = fleet.cabling
    states = {name: as_desired_state(render_device(fleet, name)) for name in fleet.devices}
    filters = sorted(
        {
            str(v)
            for state in states.values()
            for p, v in state.items()
            if p.endswith("/inbound_filter") and v
        }
    )
    nodes: dict[str, Node] = {}
    base: dict[str, str] = {}
    for name, device in fleet.devices.items():
        host = device.role is Role.gpu_node
        kind = "nics" if host else "interfaces"
        state = states[name]
        ports = {port: ifname(port) for port in cabling.ends(name)}
        addresses = {
            ports[port]: found for port in ports if (found := _addresses(state, kind, port))
        }
        frr = device.role in BGP_ROLES and isinstance(state.get("bgp/asn"), int)
        router_id = state.get("bgp/router_id")
        loopback = f"{router_id}/32" if router_id else None
        gateway = None
        if host and ports:
            out = backend_nic(fleet, name) or next(iter(cabling.ends(name)))
            peer_address = fleet.addresses.text_at(cabling.ends(name)[out] ^ 1)
            gateway = peer_address.split("/")[0] if peer_address else None
        nodes[name] = Node(name, f"{prefix}{name}", frr, host, ports, addresses, loopback, gateway)
        if frr:
            base[name] = base_config(name, int(str(state["bgp/asn"])), filters)
    veths: list[Veth] = []
    for index in range(len(cabling.links)):
        a, b = 2 * index, 2 * index + 1
        a_dev, b_dev = cabling.end_device[a], cabling.end_device[b]
        if a_dev not in nodes or b_dev not in nodes:
            continue
        a_port, b_port = cabling.end_port[a], cabling.end_port[b]
        a_kind = "nics" if nodes[a_dev].host else "interfaces"
        b_kind = "nics" if nodes[b_dev].host else "interfaces"
        veths.append(
            Veth(
                a_dev,
                nodes[a_dev].ports[a_port],
                _port_mtu(states[a_dev], a_kind, a_port),
                b_dev,
                nodes[b_dev].ports[b_port],
                _port_mtu(states[b_dev], b_kind, b_port),
            )
        )
    return FabricLayout(prefix, nodes, veths, base)


@dataclass(frozen=True)
class SessionEnd:
    """One expected BGP session as seen from one switch: the key FRR lists the peer
    under, and the peer's key for this switch (to read the session from its side)."""

    device: str
    peer: str
    key: str
    peer_key: str


def expected_sessions(fleet: Fleet) -> dict[str, list[SessionEnd]]:
    """Per BGP switch, its sessions to other BGP switches, from the cabling and each
    switch's ``bgp.peering``; a session without a neighbour (no address allocated) is
    not expected."""
    keys: dict[tuple[str, str], str] = {}
    cables: dict[str, list[tuple[str, str, str]]] = {}
    for name, device in fleet.devices.items():
        if device.role not in BGP_ROLES:
            continue
        cables[name] = []
        for session in sessions_of(fleet, name):
            if session.neighbor is not None:
                unnumbered = session.mode == "unnumbered"
                keys[name, session.port] = (
                    ifname(session.neighbor) if unnumbered else session.neighbor
                )
            cables[name].append((session.port, session.peer, session.peer_port))
    out: dict[str, list[SessionEnd]] = {}
    for name, ends in cables.items():
        out[name] = [
            SessionEnd(name, peer, keys[name, port], keys[peer, peer_port])
            for port, peer, peer_port in ends
            if (name, port) in keys and (peer, peer_port) in keys
        ]
    return out


def expected_peers(fleet: Fleet) -> dict[str, frozenset[str]]:
    """Each BGP switch's intended neighbours, as FRR keys their sessions."""
    return {d: frozenset(e.key for e in ends) for d, ends in expected_sessions(fleet).items()}


RUN_DIR = Path("/run/plumb/realfabric")


def fabric_dir(prefix: str) -> Path:
    """Where a fabric's per-device directories live: under /run (which the ``frr`` user
    can traverse, where a state directory may not be), named by the fabric's prefix."""
    return RUN_DIR / prefix.rstrip("-")


def workdir(prefix: str, device: str) -> Path:
    """Where a device's files live: FRR's config, pid files and vty sockets, and the
    linux-frr driver's candidate, saved config and revert timer."""
    return fabric_dir(prefix) / device
