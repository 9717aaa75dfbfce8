"""An EOS running configuration as the switch holds it.

This is the EOS device's source of truth: every construct the simulated
switch accepts is kept in the form it was configured (qos profiles and the
ports that apply them, ``tx-queue`` or ``uc-tx-queue`` blocks, threshold
units, peer groups, IPv6 neighbours, address families, the ASN notation), so
a change to one setting leaves every other line exactly as it was.  Commands
the simulator does not model are kept verbatim where they were given
(`extra`: `eos_blocks.Block` lists per mode).  `eos_render` prints it,
`eos_config` changes it one line at a time and `eos_view` projects it onto
the dialect-neutral `SwitchState` that tests assert on.

Copies are hand-written (`clone`): a session copies the whole configuration
and a benchmark fleet opens thousands of sessions.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .eos_blocks import Block, clone_all

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
    drop: set[int] = field(default_factory=set)  # stated ``priority P drop``
    queues: dict[tuple[str, int], EcnThresholds] = field(default_factory=dict)
    queue_extra: dict[tuple[str, int], list[Block]] = field(default_factory=dict)
    extra: list[Block] = field(default_factory=list)

    def clone(self) -> QosSettings:
        """An independent copy."""
        return QosSettings(
            self.pfc,
            set(self.no_drop),
            set(self.drop),
            dict(self.queues),
            {key: clone_all(lines) for key, lines in self.queue_extra.items()},
            clone_all(self.extra),
        )

    def queue_keys(self) -> list[tuple[str, int]]:
        """Queues with anything configured, in EOS's order."""
        used = set(self.queues) | {k for k, lines in self.queue_extra.items() if lines}
        return sorted(used)


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
    extra: list[Block] = field(default_factory=list)
    switchport_line: bool = False  # ``switchport`` stated (AVD and EOS 4.3x print it)
    stated: list[str] = field(default_factory=list)  # ``no mtu``... as `show ... all` prints

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
            clone_all(self.extra),
            self.switchport_line,
            list(self.stated),
        )

    def lag_member(self) -> bool:
        """Whether a ``channel-group`` line makes the port a member of a Port-Channel."""
        return any(b.line.startswith("channel-group ") for b in self.extra)


@dataclass
class EosPeer:
    """A BGP neighbour or peer group: what is configured on it directly."""

    peer_group: str | None = None
    remote_as: int | None = None
    route_map_in: str | None = None
    route_map_out: str | None = None
    description: str | None = None
    extra: list[Block] = field(default_factory=list)  # other ``neighbor X ...`` lines

    def clone(self) -> EosPeer:
        """An independent copy."""
        return EosPeer(
            self.peer_group,
            self.remote_as,
            self.route_map_in,
            self.route_map_out,
            self.description,
            clone_all(self.extra),
        )


@dataclass
class EosFamily:
    """``address-family ipv4`` or ``ipv6`` under ``router bgp``.

    A neighbour's (or peer group's) route map here is more specific than its
    router-level one for this family.  `deactivated` holds the peers with a
    ``no neighbor X activate`` line.
    """

    activated: set[str] = field(default_factory=set)
    deactivated: set[str] = field(default_factory=set)
    route_map_in: dict[str, str] = field(default_factory=dict)
    route_map_out: dict[str, str] = field(default_factory=dict)
    extra: list[Block] = field(default_factory=list)

    def clone(self) -> EosFamily:
        """An independent copy."""
        return EosFamily(
            set(self.activated),
            set(self.deactivated),
            dict(self.route_map_in),
            dict(self.route_map_out),
            clone_all(self.extra),
        )

    def forget(self, who: str) -> None:
        """Drop everything this family says about peer or group `who`."""
        for table in (self.route_map_in, self.route_map_out):
            table.pop(who, None)
        self.activated.discard(who)
        self.deactivated.discard(who)
        prefix = f"neighbor {who} "
        self.extra = [b for b in self.extra if not b.line.startswith(prefix)]


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
    families: dict[str, EosFamily] = field(default_factory=dict)
    extra: list[Block] = field(default_factory=list)
    spelled: dict[int, str] = field(default_factory=dict)  # AS numbers entered in asdot
    stated: list[str] = field(default_factory=list)  # ``no router-id``... stated defaults
    # ``neighbor interface``: port -> (peer group, "remote-as N" | "peer-filter F")
    interfaces: dict[str, tuple[str, str]] = field(default_factory=dict)

    def shown(self, asn: int) -> str:
        """An AS number as ``show running-config`` prints it: asdot under ``bgp asn
        notation asdot``, else as it was entered."""
        return asdot(asn) if self.asdot else self.spelled.get(asn, str(asn))

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
            {name: f.clone() for name, f in self.families.items()},
            clone_all(self.extra),
            dict(self.spelled),
            list(self.stated),
            dict(self.interfaces),
        )

    def family(self, name: str) -> EosFamily:
        """The ``address-family`` block `name`, created when first entered."""
        return self.families.setdefault(name, EosFamily())

    def policy(self, address: str, family: str, direction: str) -> str | None:
        """The route map in force for neighbour `address` in `family` (``in``/``out``):
        its own address-family line, else its peer group's there, else its own
        router-level line, else its peer group's."""
        peer = self.neighbors[address]
        group = self.peer_groups.get(peer.peer_group or "")
        af = self.families.get(family, EosFamily())
        table = af.route_map_in if direction == "in" else af.route_map_out
        own = peer.route_map_in if direction == "in" else peer.route_map_out
        inherited = None
        if group is not None:
            inherited = group.route_map_in if direction == "in" else group.route_map_out
        found = [table.get(address), table.get(peer.peer_group or ""), own, inherited]
        return next((name for name in found if name), None)


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
    extra: list[Block] = field(default_factory=list)

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
            clone_all(self.extra),
        )

    def default_l3_mtu(self) -> int:
        """The L3 MTU of a routed port without ``mtu``: ``interface defaults`` ``mtu N``
        where configured, else 1500."""
        for block in self.extra:
            if block.line == "interface defaults":
                for line in block.children:
                    words = line.line.split()
                    if len(words) == 2 and words[0] == "mtu" and words[1].isdigit():
                        return int(words[1])
        return L3_MTU_DEFAULT

    def effective_qos(self, port: EosInterface) -> QosSettings:
        """The port's PFC/ECN settings: its service profile, overridden by its own lines."""
        profile = self.qos_profiles.get(port.service_profile or "")
        if profile is None:
            return port.qos
        merged = profile.clone()
        if port.qos.pfc is not None:
            merged.pfc = port.qos.pfc
        merged.no_drop = (merged.no_drop - port.qos.drop) | port.qos.no_drop
        merged.queues.update(port.qos.queues)
        return merged


def state_default(stated: list[str], line: str, defaults: dict[str, str], loading: bool) -> None:
    """Track a modeled setting stated in its default form in a loaded configuration
    (``no mtu``, as ``show running-config all`` prints it): kept while the setting
    stays default, dropped once a value is set (`defaults`: default-form line -> the
    words a value line starts with).  Typed at the CLI, the default form is just the
    default, which ``show running-config`` does not print."""
    if line in defaults:
        if loading and line not in stated:
            stated.append(line)
        return
    for default, words in defaults.items():
        if line == words or line.startswith(words + " "):
            stated[:] = [s for s in stated if s != default]


def asdot(asn: int) -> str:
    """An AS number in asdot notation (``65101.65101``; below 65536 unchanged)."""
    return str(asn) if asn < 65536 else f"{asn >> 16}.{asn & 0xFFFF}"


def asn_text(asn: int, dotted: bool) -> str:
    """An AS number as the configured notation prints it."""
    return asdot(asn) if dotted else str(asn)
