"""Data-plane verification of the real-network lab: what the network itself says
after a change, as evidence a wave is judged on and as ``plumb verify``'s report.

Two probes, both zero-tolerance:

* **BGP**: every session the intent expects on a switch (numbered over IPv4 or IPv6, or
  unnumbered: :func:`~lab.realfabric.layout.expected_sessions`) is Established and accepts
  routes. A session that does not, after up to ``settle_s`` seconds for a reset to
  come back, counts against the switch (read from the switch; when the switch itself
  cannot be read, from the peer's side of the same cable).
* **Path MTU**: between every pair of GPU racks, a DF ping (``ping -M do``) from the
  first node of one rack to the first node of the other, once to the NIC on the
  source's own leaf and once to a NIC on another rail, so the path crosses a spine.
  The size is the smallest MTU of the NICs the probe and its reply leave and enter:
  the frames both hosts really send, which the fabric must carry. A probe that is
  lost black-holes that path and counts against every device it may cross (both
  hosts, their leaves and, across rails, every spine: ECMP picks one).

The choice of probes and the attribution are pure (:func:`plan_probes`,
:func:`fault_counts`); :func:`verify` runs them.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from intent.fleet import Fleet
from inventory.models import Role
from lab.realfabric.layout import SessionEnd, backend_nic, expected_sessions
from lab.realfabric.probes import DeviceBgp, PingResult, bgp_of, df_ping, wait_for_bgp
from lab.realfabric.state import FabricState, fabric_driver
from reconciler.drivers.base import DeviceRef
from reconciler.drivers.linux_frr_sessions import ESTABLISHED
from reconciler.errors import DeviceError

ICMP_HEADERS = 28  # IPv4 + ICMP echo: a DF ping of ``size`` bytes is a ``size + 28`` packet
PING_WORKERS = 8


@dataclass(frozen=True)
class Probe:
    """One DF ping between two GPU nodes and every device its packets may cross."""

    source: str
    source_nic: str  # the NIC the source's default route leaves by
    destination: str
    destination_nic: str
    address: str  # the destination NIC's address
    return_nic: str  # the NIC the reply leaves by (the destination's default route)
    path: frozenset[str]

    def nics(self) -> tuple[tuple[str, str], ...]:
        return (
            (self.source, self.source_nic),
            (self.destination, self.destination_nic),
            (self.destination, self.return_nic),
        )


def _bare(address: str | None) -> str | None:
    return None if address is None else address.split("/")[0]


def plan_probes(fleet: Fleet) -> list[Probe]:
    """The DF pings between every ordered pair of GPU racks (of nodes, in a fleet
    with one rack): to the destination's NIC on the source's leaf, and to one on
    another rail (rotating over the rails, so every leaf is crossed)."""
    cabling = fleet.cabling
    racks: dict[str, str] = {}
    for name, device in sorted(fleet.devices.items()):
        if device.role is Role.gpu_node and backend_nic(fleet, name) is not None:
            racks.setdefault(device.rack or name, name)
    firsts = list(racks.values())
    if len(firsts) < 2:
        firsts = sorted(
            n
            for n, d in fleet.devices.items()
            if d.role is Role.gpu_node and backend_nic(fleet, n) is not None
        )[:2]
    spines = frozenset(
        n for n, d in fleet.devices.items() if d.role in (Role.spine, Role.super_spine)
    )
    probes: list[Probe] = []
    pair = 0
    for source in firsts:
        for destination in firsts:
            if source == destination:
                continue
            out_nic = backend_nic(fleet, source)
            back_nic = backend_nic(fleet, destination)
            assert out_nic is not None and back_nic is not None
            rail_nics = [
                nic.name
                for nic in sorted(fleet.devices[destination].nics, key=lambda n: n.rail or 0)
                if nic.rail is not None and nic.name in cabling.ends(destination)
            ]
            leaf_of = {
                port: cabling.end_device[end ^ 1] for port, end in cabling.ends(destination).items()
            }
            source_leaf = cabling.end_device[cabling.ends(source)[out_nic] ^ 1]
            same = [n for n in rail_nics if leaf_of[n] == source_leaf]
            other = [n for n in rail_nics if leaf_of[n] != source_leaf]
            chosen = same[:1] + ([other[pair % len(other)]] if other else [])
            pair += 1
            for nic in chosen:
                address = _bare(fleet.addresses.text_at(cabling.ends(destination)[nic]))
                if address is None:
                    continue
                leaves = {source_leaf, leaf_of[nic], leaf_of[back_nic]}
                crossing = spines if len(leaves) > 1 else frozenset()
                path = frozenset({source, destination, *leaves}) | crossing
                probes.append(Probe(source, out_nic, destination, nic, address, back_nic, path))
    return probes


@dataclass(frozen=True)
class PathResult:
    probe: Probe
    mtu: int | None  # the size probed at (the smallest MTU of its NICs); None: unknown
    ping: PingResult | None  # None when the probe could not be sized

    @property
    def ok(self) -> bool:
        return self.ping is not None and self.ping.ok

    @property
    def error(self) -> str | None:
        """Why the probe tells nothing (not a black hole: the probe did not run)."""
        if self.ping is None:
            return "the NICs' MTU could not be read"
        return self.ping.error


@dataclass(frozen=True)
class Verification:
    bgp: Mapping[str, DeviceBgp]
    sessions: Mapping[str, Sequence[SessionEnd]]
    paths: Sequence[PathResult]

    def sessions_down(self) -> dict[str, dict[str, str]]:
        """Switch -> peer -> state, for every expected session that is not Established
        with routes (read from the switch, or from the peer when the switch cannot be
        read); a switch neither side answers for is left out (see :meth:`unread`)."""
        down: dict[str, dict[str, str]] = {}
        for device, ends in self.sessions.items():
            mine = self.bgp.get(device)
            peers: dict[str, str] = {}
            for end in ends:
                state = _state(mine, end.key)
                if state is None:
                    state = _state(self.bgp.get(end.peer), end.peer_key)
                if state is not None and state != ESTABLISHED:
                    peers[end.peer] = state
            if peers or not self._unread(device):
                down[device] = peers
        return down

    def _unread(self, device: str) -> bool:
        mine = self.bgp.get(device)
        if mine is not None and mine.error is None:
            return False
        return any(_state(self.bgp.get(e.peer), e.peer_key) is None for e in self.sessions[device])

    def unread(self) -> list[str]:
        return [d for d in self.sessions if d not in self.sessions_down()]

    def black_holes(self) -> list[PathResult]:
        return [p for p in self.paths if p.error is None and not p.ok]

    @property
    def ok(self) -> bool:
        down = self.sessions_down()
        return (
            not self.unread()
            and not any(down.values())
            and not self.black_holes()
            and not any(p.error for p in self.paths)
        )


NO_ROUTES = "Established, no routes accepted"


def _state(bgp: DeviceBgp | None, key: str) -> str | None:
    """The session's state as this switch reports it; None: the switch did not answer.
    A switch that answers without the peer has no session with it: ``Idle``. A fabric
    session that accepts no route carries no traffic: it counts as down too."""
    if bgp is None or bgp.error is not None:
        return None
    session = bgp.sessions.get(key)
    if session is None:
        return "Idle"
    if session.state == ESTABLISHED and session.prefixes_received == 0:
        return NO_ROUTES
    return session.state


def fault_counts(
    verification: Verification, targets: Collection[str]
) -> tuple[dict[str, int], dict[str, int], list[str]]:
    """(sessions down per target, black-holed probes per target, targets without
    evidence): every target not named in the third list has a count, 0 or more."""
    down = verification.sessions_down()
    bgp = {t: len(down[t]) if t in down else 0 for t in targets}
    blind = [t for t in targets if t in verification.sessions and t not in down]
    paths = dict.fromkeys(targets, 0)
    for result in verification.paths:
        hit = [t for t in targets if t in result.probe.path]
        if result.error is not None:
            blind += [t for t in hit if t not in blind]
        elif not result.ok:
            for target in hit:
                paths[target] += 1
    for target in blind:
        bgp.pop(target, None)
        paths.pop(target, None)
    return bgp, paths, sorted(blind)


def _nic_mtus(
    fleet: Fleet, state: FabricState, nodes: Collection[str]
) -> dict[str, dict[str, int]]:
    """node -> NIC -> current MTU, read through the fabric's driver."""
    driver = fabric_driver(state)
    out: dict[str, dict[str, int]] = {}
    try:
        for node in sorted(nodes):
            device = fleet.devices[node]
            ref = DeviceRef(node, device.platform.value, device.role.value, host="")
            try:
                seen = driver.observe(ref)
            except DeviceError:
                continue
            out[node] = {
                path.split("/")[1]: value
                for path, value in seen.items()
                if path.startswith("nics/")
                and path.endswith("/mtu")
                and isinstance(value, int)
                and not isinstance(value, bool)
            }
    finally:
        driver.close()
    return out


def _sized(probe: Probe, mtus: Mapping[str, Mapping[str, int]]) -> int | None:
    sizes = [mtus.get(node, {}).get(nic) for node, nic in probe.nics()]
    known = [s for s in sizes if s is not None]
    return min(known) if len(known) == len(sizes) else None


def _ping(fleet: Fleet, state: FabricState, probe: Probe, mtu: int | None) -> PathResult:
    if mtu is None:
        return PathResult(probe, None, None)
    source = _bare(fleet.addresses.text_at(fleet.cabling.ends(probe.source)[probe.source_nic]))
    result = df_ping(state, probe.source, probe.address, mtu - ICMP_HEADERS, source_address=source)
    return PathResult(probe, mtu, result)


def verify(fleet: Fleet, state: FabricState, *, settle_s: float = 30.0) -> Verification:
    """Probe the real-network lab of ``fleet`` now: BGP (waiting up to ``settle_s``
    for sessions a change reset to come back), then every rack pair's path MTU."""
    sessions = expected_sessions(fleet)
    expected = {d: frozenset(e.key for e in ends) for d, ends in sessions.items()}
    switches = [d for d in sessions if d in state.devices]
    if settle_s > 0:
        settled = wait_for_bgp(state, {d: expected[d] for d in switches}, timeout=settle_s)
        bgp = dict(settled.devices)
    else:
        bgp = {d: bgp_of(state, d, expected[d]) for d in switches}
    probes = [p for p in plan_probes(fleet) if p.source in state.devices]
    mtus = _nic_mtus(fleet, state, {n for p in probes for n, _ in p.nics()})
    with ThreadPoolExecutor(max_workers=PING_WORKERS) as pool:
        paths = list(pool.map(lambda p: _ping(fleet, state, p, _sized(p, mtus)), probes))
    return Verification(bgp, {d: sessions[d] for d in switches}, paths)
