"""An EOS running configuration as the switch holds it.

This is the EOS device's source of truth: every construct the simulated
switch accepts is kept in the form it was configured (qos profiles and the
ports that apply them, ``tx-queue`` or ``uc-tx-queue`` blocks, threshold
units, peer groups, IPv6 neighbours, the ASN notation), so a change to one
setting leaves every other line exactly as it was.  `eos_render` prints it,
`eos_config` changes it one line at a time and `eos_view` projects it onto
the dialect-neutral `SwitchState` that tests assert on.

Copies are hand-written (`clone`): a session copies the whole configuration
and a benchmark fleet opens thousands of sessions.
"""

from __future__ import annotations

from dataclasses import dataclass, field

L3_MTU_DEFAULT = 1500
L2_MTU_DEFAULT = 9214
BYTE_UNITS = {"bytes": 1, "kbytes": 1024, "mbytes": 1024 * 1024}
OTHER_UNITS = ("segments", "milliseconds")


@dataclass(frozen=True)
class EcnThresholds:
    """One ``random-detect ecn`` line, in the units it was given."""

    low: int
    low_unit: str
    high: int
    high_unit: str
    probability: int | None = None
    weight: int | None = None

    def kilobytes(self) -> tuple[int, int] | None:
        """Both thresholds in KB (1024 bytes), or None for segment/time units."""
        if self.low_unit not in BYTE_UNITS or self.high_unit not in BYTE_UNITS:
            return None
        low = self.low * BYTE_UNITS[self.low_unit] // 1024
        high = self.high * BYTE_UNITS[self.high_unit] // 1024
        return max(1, low), max(1, high)


@dataclass
class QosSettings:
    """PFC and per-queue ECN lines: what a port and a ``qos profile`` both hold.

    `pfc` is None when neither ``priority-flow-control on`` nor
    ``no priority-flow-control`` is configured.  `queues` is keyed by the
    queue kind (``tx-queue`` or ``uc-tx-queue``) and number.
    """

    pfc: bool | None = None
    no_drop: set[int] = field(default_factory=set)
    queues: dict[tuple[str, int], EcnThresholds] = field(default_factory=dict)

    def clone(self) -> QosSettings:
        """An independent copy."""
        return QosSettings(self.pfc, set(self.no_drop), dict(self.queues))


@dataclass
class EosInterface:
    """One Ethernet port's configuration."""

    description: str = ""
    mtu: int | None = None
    l2_mtu: int | None = None
    switchport: bool = True
    ipv4: str | None = None
    ipv6: list[str] = field(default_factory=list)
    service_profile: str | None = None
    qos: QosSettings = field(default_factory=QosSettings)

    def clone(self) -> EosInterface:
        """An independent copy."""
        return EosInterface(
            self.description,
            self.mtu,
            self.l2_mtu,
            self.switchport,
            self.ipv4,
            list(self.ipv6),
            self.service_profile,
            self.qos.clone(),
        )


@dataclass
class EosPeer:
    """A BGP neighbour or peer group: what is configured on it directly."""

    peer_group: str | None = None
    remote_as: int | None = None
    route_map_in: str | None = None
    route_map_out: str | None = None
    description: str | None = None

    def clone(self) -> EosPeer:
        """An independent copy."""
        return EosPeer(
            self.peer_group, self.remote_as, self.route_map_in, self.route_map_out, self.description
        )


@dataclass
class EosBgp:
    """``router bgp`` of the default VRF."""

    asn: int
    asdot: bool = False
    router_id: str | None = None
    maximum_paths: int | None = None
    ecmp: int | None = None
    peer_groups: dict[str, EosPeer] = field(default_factory=dict)
    neighbors: dict[str, EosPeer] = field(default_factory=dict)
    activated: dict[str, set[str]] = field(default_factory=dict)

    def clone(self) -> EosBgp:
        """An independent copy."""
        return EosBgp(
            self.asn,
            self.asdot,
            self.router_id,
            self.maximum_paths,
            self.ecmp,
            {name: p.clone() for name, p in self.peer_groups.items()},
            {name: p.clone() for name, p in self.neighbors.items()},
            {family: set(peers) for family, peers in self.activated.items()},
        )


@dataclass(frozen=True)
class RouteMapEntry:
    """One ``route-map NAME permit|deny SEQ`` entry and its match/set lines."""

    action: str
    lines: tuple[str, ...] = ()


@dataclass
class EosConfig:
    """The whole running (or startup, or session) configuration."""

    hostname: str
    boot_image: str
    interfaces: dict[str, EosInterface] = field(default_factory=dict)
    qos_profiles: dict[str, QosSettings] = field(default_factory=dict)
    dscp_map: dict[int, tuple[int, int | None]] = field(default_factory=dict)
    ip_routing: bool = False
    route_maps: dict[tuple[str, int], RouteMapEntry] = field(default_factory=dict)
    bgp: EosBgp | None = None

    def clone(self) -> EosConfig:
        """An independent copy."""
        return EosConfig(
            self.hostname,
            self.boot_image,
            {name: port.clone() for name, port in self.interfaces.items()},
            {name: qos.clone() for name, qos in self.qos_profiles.items()},
            dict(self.dscp_map),
            self.ip_routing,
            dict(self.route_maps),
            None if self.bgp is None else self.bgp.clone(),
        )

    def effective_qos(self, port: EosInterface) -> QosSettings:
        """The port's PFC/ECN settings: its service profile, overridden by its own lines."""
        profile = self.qos_profiles.get(port.service_profile or "")
        if profile is None:
            return port.qos
        merged = profile.clone()
        if port.qos.pfc is not None:
            merged.pfc = port.qos.pfc
        merged.no_drop |= port.qos.no_drop
        merged.queues.update(port.qos.queues)
        return merged


def asdot(asn: int) -> str:
    """An AS number in asdot notation (``65101.65101``; below 65536 unchanged)."""
    return str(asn) if asn < 65536 else f"{asn >> 16}.{asn & 0xFFFF}"


def asn_text(asn: int, dotted: bool) -> str:
    """An AS number as the configured notation prints it."""
    return asdot(asn) if dotted else str(asn)
