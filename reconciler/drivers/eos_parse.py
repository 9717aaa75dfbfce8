"""EOS output -> plumb's flat state (pure): the parsing half of the EOS driver.

Reads ``show version | json``, ``show interfaces | json``, ``show running-config |
json`` (EOS's nested ``{"cmds": {...}}`` tree, or the text config made into one),
``show configuration sessions detail | json`` and, through
:mod:`~reconciler.drivers.lldp_parse`, ``show lldp neighbors detail | json``.

What real EOS configurations hold, and how it is read:

* **Ports.** An Ethernet port is routed when it says ``no switchport`` (``show
  interfaces`` ``forwardingModel: routed``), else switched
  (``interfaces/<port>/mode``). ``show interfaces`` reports a routed port's L3 MTU
  (``mtu N``; 1500 or ``interface defaults`` ``mtu`` when unset) and a switchport's
  L2 frame size (9214): each is observed as ``interfaces/<port>/mtu``. The running
  config alone gives the L3 MTU of routed ports only.
* **QoS profiles.** ECN and PFC come from the port itself and from the ``qos profile``
  its ``service-profile`` applies; a port's own line for the same queue or priority
  wins. Queues are ``tx-queue N`` or ``uc-tx-queue N``. ECN thresholds are in bytes,
  kbytes or mbytes (kbytes, rounded up) or in segments or milliseconds, which have no
  byte size: those observe ``kmin_kb``/``kmax_kb`` as None and report the unit in
  ``qos/ecn/<q>/threshold_unit`` (every unit the ports use, comma-separated; the
  capability rule refuses to overwrite thresholds it cannot compare; a line plumb
  cannot read at all reports ``unreadable``). A line without
  ``max-mark-probability`` observes ``pmax_percent`` as None: plumb relies on no
  unverified default and writes the value explicitly. The line's other options
  (``weight N``) are kept for the writer, which repeats them. PFC priorities count
  only where PFC is on. plumb's intent holds ECN once per switch: it is observed as
  the value every Ethernet port shares, None when they disagree.
* **Port-Channel members** (``channel-group``; ``show interfaces``
  ``forwardingModel: dataLink``) are observed with mode ``lag-member``.
* **DSCP maps** may group several code points and end with ``drop-precedence N``.
* **BGP** is read by :mod:`~reconciler.drivers.eos_bgp_parse` (peer groups, address
  families, the route maps in force).
* **Version.** ``4.30.0F-31408673.4300F (engineering build)`` is ``4.30.0F`` in
  ``system/nos_version``; the full text is ``system/nos_build``.

PFC headroom and the pause (xoff) threshold have no EOS command (see
:mod:`~reconciler.drivers.eos_caps`): they are never observed. Output of an
unexpected shape raises :class:`UnexpectedOutput` for that device only.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from reconciler.drivers.eos_bgp_parse import (
    BgpConfig,
    bgp_state,
    format_asn,
    parse_asn,
    read_bgp,
    reported_policies,
)
from reconciler.errors import DeviceError
from reconciler.settings import Scalar

__all__ = ["format_asn", "parse_asn"]

Tree = Mapping[str, Any]
ECN_START = "random-detect ecn minimum-threshold "
_BYTES = {"bytes": 1, "kbytes": 1024, "mbytes": 1024 * 1024}
UNITS = (*_BYTES, "segments", "milliseconds")
UNREADABLE = "unreadable"
DEFAULT_L3_MTU = 1500
_VERSION = re.compile(r"^\d+(?:\.\d+)+[A-Za-z]*")
_WRITABLE = re.compile(
    r"^(?:system/nos_version|interfaces/Ethernet[0-9/]+/(?:mtu|address|ipv6_address|pfc_priorities)"
    r"|qos/dscp/\d+|qos/ecn/\d/(?:kmin_kb|kmax_kb|pmax_percent)|bgp/(?:asn|router_id|maximum_paths)"
    r"|bgp/neighbors/(?:[0-9.]+|[0-9a-f:]+|Ethernet[0-9/]+)/(?:remote_as|inbound_filter))$"
)


class UnexpectedOutput(DeviceError):
    """The device answered with output plumb cannot read: that device's error only."""


def is_ethernet(name: str) -> bool:
    return re.fullmatch(r"Ethernet\d+(?:/\d+)*", name) is not None


def natural(name: str) -> tuple[int, ...]:
    return tuple(int(n) for n in re.findall(r"\d+", name))


def common(values: list[Any]) -> Any:
    """The value every port shares, or None when they differ (or there are none)."""
    if not values or any(v != values[0] for v in values):
        return None
    return values[0]


# Trident and Tomahawk fixed and modular series: transmit queues are uc-tx-queue /
# mc-tx-queue there, tx-queue on the Arad/Jericho (7280R, 7500R, 7800R) series.
_UNICAST_QUEUE_MODELS = re.compile(r"^DCS-7(?:010|050|060|250|260|300|320|358|368|388)")


def unicast_queues(model: str) -> bool:
    """Whether the platform names its transmit queues ``uc-tx-queue``."""
    return _UNICAST_QUEUE_MODELS.match(model) is not None


def writable(path: str) -> bool:
    """Whether plumb writes ``path`` on EOS (everything else is reported only)."""
    return _WRITABLE.match(path) is not None


# -- show version / show interfaces / sessions --------------------------------------------


def normal_version(text: str) -> str:
    """``4.30.0F-31408673.4300F (engineering build)`` -> ``4.30.0F``."""
    found = _VERSION.match(text.strip())
    if found is None:
        raise ValueError(f"version {text[:60]!r} does not start with a release number")
    return found.group(0)


def parse_version(data: Mapping[str, Any]) -> dict[str, Scalar]:
    """``show version | json`` -> ``system/*`` (release, full build, model, serial)."""
    build = str(data["version"])
    return {
        "system/nos_version": normal_version(build),
        "system/nos_build": build,
        "system/model": str(data.get("modelName", "")),
        "system/serial": str(data.get("serialNumber", "")),
    }


def parse_interfaces(data: Mapping[str, Any]) -> dict[str, Scalar]:
    """``show interfaces | json`` -> per-port mode, mtu (L3 routed, L2 switched),
    address and description."""
    out: dict[str, Scalar] = {}
    interfaces: Mapping[str, Any] = data["interfaces"]
    for name in sorted((n for n in interfaces if is_ethernet(n)), key=natural):
        port = interfaces[name]
        address: str | None = None
        for entry in port.get("interfaceAddress", []):
            primary = entry.get("primaryIp", {})
            if primary.get("address") not in (None, "0.0.0.0"):
                address = f"{primary['address']}/{primary['maskLen']}"
                break
        model = port.get("forwardingModel", "routed")
        out[f"interfaces/{name}/mode"] = _MODES.get(model, "switched")
        out[f"interfaces/{name}/mtu"] = int(port["mtu"])
        out[f"interfaces/{name}/address"] = address
        out[f"interfaces/{name}/description"] = str(port.get("description", ""))
    return out


_MODES = {"routed": "routed", "dataLink": "lag-member"}


def timed_sessions(data: Mapping[str, Any]) -> list[str]:
    """Sessions whose commit timer is running, from ``show configuration sessions
    detail | json``: before EOS 4.32 the session's state is ``pendingCommitTimer``;
    from 4.32 it is ``committed`` and the timer is in top-level keys
    (``commitTimerSessionName``, ``commitTimerExpireTime``)."""
    found = {
        name
        for name, session in data.get("sessions", {}).items()
        if session["state"] == "pendingCommitTimer"
    }
    timer = data.get("commitTimerSessionName")
    if isinstance(timer, str) and timer:
        found.add(timer)
    return sorted(found)


# -- running-config ----------------------------------------------------------------------


@dataclass(frozen=True)
class Ecn:
    """One queue's ECN thresholds as configured (kbytes None: not in bytes; percent None:
    not stated), and the line's other options, which a rewrite repeats."""

    kmin_kb: int | None
    kmax_kb: int | None
    pmax_percent: int | None
    unit: str = field(compare=False)  # 200 kbytes and 204800 bytes are the same threshold
    options: tuple[tuple[str, str], ...] = field(default=(), compare=False)  # (weight, 0)


@dataclass
class QosBlock:
    """ECN and PFC set in one place: a port or a ``qos profile``."""

    pfc_on: bool | None = None  # None: not said here
    priorities: dict[int, bool] = field(default_factory=dict)  # priority -> no-drop
    ecn: dict[int, Ecn] = field(default_factory=dict)
    queue_words: dict[int, str] = field(default_factory=dict)  # queue -> tx-queue|uc-tx-queue


@dataclass
class PortConfig(QosBlock):
    routed: bool = False
    mtu: int | None = None
    address: str | None = None
    ipv6_address: str | None = None  # the first global one (``ipv6 address X/127``)
    profile: str | None = None
    lag: bool = False  # a ``channel-group`` member


@dataclass
class EosConfig:
    """What plumb reads from a running config, with the structure a writer must keep."""

    hostname: str | None = None
    default_mtu: int = DEFAULT_L3_MTU
    ports: dict[str, PortConfig] = field(default_factory=dict)
    profiles: dict[str, QosBlock] = field(default_factory=dict)
    dscp: dict[int, int] = field(default_factory=dict)
    bgp: BgpConfig = field(default_factory=BgpConfig)

    def profile_of(self, port: str) -> QosBlock:
        name = self.ports[port].profile
        return self.profiles.get(name, QosBlock()) if name else QosBlock()

    def shared_profile(self) -> str | None:
        """The qos profile every Ethernet port applies (and that exists), else None."""
        name = common([p.profile for p in self.ports.values()])
        return name if isinstance(name, str) and name in self.profiles else None

    def queue_word(self, queue: int, model: str = "") -> str:
        """The queue keyword this device uses for ``queue``: as its config has it, else
        by platform (``uc-tx-queue`` on Trident and Tomahawk models, ``tx-queue`` on
        the others)."""
        blocks = [*self.profiles.values(), *self.ports.values()]
        words = [b.queue_words[queue] for b in blocks if queue in b.queue_words]
        words = words or [w for b in blocks for w in b.queue_words.values()]
        if not words:
            return "uc-tx-queue" if unicast_queues(model) else "tx-queue"
        return "uc-tx-queue" if "uc-tx-queue" in words else "tx-queue"

    def pfc_on(self, port: str) -> bool:
        own = self.ports[port].pfc_on
        return bool(self.profile_of(port).pfc_on) if own is None else own

    def no_drop(self, port: str) -> list[int]:
        """The priorities PFC keeps lossless on ``port`` (port lines over its profile)."""
        return self.lossless(port) if self.pfc_on(port) else []

    def ecn(self, port: str, queue: int) -> Ecn | None:
        own = self.ports[port].ecn.get(queue)
        return own if own is not None else self.profile_of(port).ecn.get(queue)

    def lossless(self, port: str) -> list[int]:
        """The no-drop priorities of ``port`` whether or not PFC is on there."""
        merged = self.profile_of(port).priorities | self.ports[port].priorities
        return sorted(p for p, lossless in merged.items() if lossless)


def _children(block: Any) -> Mapping[str, Any]:
    if isinstance(block, Mapping):
        cmds: Mapping[str, Any] = block.get("cmds") or {}
        return cmds
    return {}


def _kb(number: str, unit: str) -> int | None:
    if unit not in _BYTES:
        return None
    return -(-int(number) * _BYTES[unit] // 1024)


def parse_ecn(line: str) -> Ecn | None:
    """One ``random-detect ecn minimum-threshold ...`` line (None if it is not one); a
    line of that command plumb cannot read is an :data:`UNREADABLE` unit, never an
    error."""
    if not line.startswith(ECN_START):
        return None
    words = line.split()[3:]
    unreadable = Ecn(None, None, None, UNREADABLE)
    if len(words) < 5 or words[2] != "maximum-threshold" or len(words) % 2 == 0:
        return unreadable
    low, low_unit, _, high, high_unit, *rest = words
    pairs = [(rest[i], rest[i + 1]) for i in range(0, len(rest), 2)]
    known = low_unit in UNITS and high_unit in UNITS and low.isdigit() and high.isdigit()
    if not known or any(not value.isdigit() for _, value in pairs):
        return unreadable
    percent = dict(pairs).get("max-mark-probability")
    options = tuple(p for p in pairs if p[0] != "max-mark-probability")
    unit = low_unit if low_unit == high_unit else f"{low_unit},{high_unit}"
    pmax = None if percent is None else int(percent)
    return Ecn(_kb(low, low_unit), _kb(high, high_unit), pmax, unit, options)


def _qos_line(target: QosBlock, words: list[str], sub: Any) -> bool:
    """Apply one QoS line to a port or profile; False if it is not a QoS line."""
    match words:
        case ["priority-flow-control", "on"]:
            target.pfc_on = True
        case ["no", "priority-flow-control"] | ["priority-flow-control", "off"]:
            target.pfc_on = False
        case ["priority-flow-control", "priority", prio, ("no-drop" | "drop") as kind]:
            target.priorities[int(prio)] = kind == "no-drop"
        case [("tx-queue" | "uc-tx-queue") as word, queue]:
            target.queue_words[int(queue)] = word
            for line in _children(sub):
                if (ecn := parse_ecn(line)) is not None:
                    target.ecn[int(queue)] = ecn
        case _:
            return False
    return True


def _port(block: Any) -> PortConfig:
    port = PortConfig()
    for line, sub in _children(block).items():
        words = line.split()
        if _qos_line(port, words, sub):
            continue
        match words:
            case ["no", "switchport"]:
                port.routed = True
            case ["switchport"]:
                port.routed = False
            case ["mtu", value]:
                port.mtu = int(value)
            case ["ip", "address", address]:
                port.address = address
            case ["ipv6", "address", address] if port.ipv6_address is None:
                port.ipv6_address = _global_ipv6(address)
            case ["service-profile", name]:
                port.profile = name
            case ["channel-group", *_]:
                port.lag = True
    return port


def _profile(block: Any) -> QosBlock:
    profile = QosBlock()
    for line, sub in _children(block).items():
        _qos_line(profile, line.split(), sub)
    return profile


def read_config(tree: Tree) -> EosConfig:
    """``show running-config | json`` (or :func:`text_tree` of the text) -> EosConfig."""
    config = EosConfig()
    for line, block in _children(tree).items():
        match line.split():
            case ["hostname", name]:
                config.hostname = name
            case ["interface", name] if is_ethernet(name):
                config.ports[name] = _port(block)
            case ["interface", "defaults"]:
                for sub in _children(block):
                    if sub.startswith("mtu "):
                        config.default_mtu = int(sub.split()[1])
            case ["qos", "profile", name]:
                config.profiles[name] = _profile(block)
            case ["qos", "map", "dscp", *values, "to", "traffic-class", tc]:
                config.dscp.update({int(d): int(tc) for d in values})
            case ["qos", "map", "dscp", *values, "to", "traffic-class", tc, "drop-precedence", _]:
                config.dscp.update({int(d): int(tc) for d in values})
            case ["bgp", "asn", "notation", notation]:
                config.bgp.asdot = notation == "asdot"
            case ["router", "bgp", asn]:
                read_bgp(config.bgp, asn, block)
    return config


def _global_ipv6(text: str) -> str | None:
    """``fc00::1/127`` as EOS prints it; None for a link-local or unreadable one."""
    try:
        address = ipaddress.IPv6Interface(text)
    except ValueError:
        return None
    return None if address.ip.is_link_local else str(address)


def config_state(config: EosConfig) -> dict[str, Scalar]:
    """The flat settings a parsed config holds (per port effective values; fleet-wide
    ECN where every port agrees)."""
    out: dict[str, Scalar] = {}
    if config.hostname is not None:
        out["system/hostname"] = config.hostname
    names = sorted(config.ports, key=natural)
    for name in names:
        port = config.ports[name]
        mode = "lag-member" if port.lag else "routed" if port.routed else "switched"
        out[f"interfaces/{name}/mode"] = mode
        if port.routed:
            out[f"interfaces/{name}/mtu"] = port.mtu or config.default_mtu
        out[f"interfaces/{name}/address"] = port.address if port.routed else None
        if port.routed and port.ipv6_address is not None:
            out[f"interfaces/{name}/ipv6_address"] = port.ipv6_address
        out[f"interfaces/{name}/pfc_priorities"] = ",".join(map(str, config.no_drop(name)))
    for number in range(64):
        out[f"qos/dscp/{number}"] = config.dscp.get(number)
    for queue in range(8):
        shared = common([config.ecn(name, queue) for name in names])
        unit = shared.unit if isinstance(shared, Ecn) else None
        out[f"qos/ecn/{queue}/kmin_kb"] = None if unit is None else shared.kmin_kb
        out[f"qos/ecn/{queue}/kmax_kb"] = None if unit is None else shared.kmax_kb
        out[f"qos/ecn/{queue}/pmax_percent"] = None if unit is None else shared.pmax_percent
        units = {
            unit
            for name in names
            if (ecn := config.ecn(name, queue)) is not None
            for unit in ecn.unit.split(",")
        }
        out[f"qos/ecn/{queue}/threshold_unit"] = ",".join(sorted(units)) or None
    out.update(bgp_state(config.bgp))
    return out


def parse_config(tree: Tree) -> dict[str, Scalar]:
    """``show running-config | json`` (or a text config made into a tree) -> flat state."""
    return config_state(read_config(tree))


def observed_state(
    version: Mapping[str, Any],
    interfaces: Mapping[str, Any],
    running: Tree,
    policies: Mapping[str, tuple[str, str]] | None = None,
) -> dict[str, Scalar]:
    """The whole observed state: ``show interfaces`` wins over config for mode, mtu and
    address (it reports what the port does, defaults included), and ``policies`` (the
    route maps the device reports in force per neighbour, when it answers) over the
    route maps inferred from config."""
    state = parse_config(running)
    state.update(parse_version(version))
    state.update(parse_interfaces(interfaces))
    if policies is not None:
        state = reported_policies(state, policies)
    return dict(sorted(state.items()))


# -- text config -------------------------------------------------------------------------


def config_lines(text: str) -> list[tuple[int, str]]:
    """(indent, command) for every configuration line, comments and ``end`` dropped."""
    out = []
    for raw in text.splitlines():
        stripped = raw.strip()
        if stripped and not stripped.startswith("!") and stripped != "end":
            out.append((len(raw) - len(raw.lstrip(" ")), stripped))
    return out


def text_tree(text: str) -> dict[str, Any]:
    """``show running-config`` text -> the same ``cmds`` tree ``| json`` gives."""
    root: dict[str, Any] = {"cmds": {}}
    stack: list[tuple[int, dict[str, Any]]] = [(-1, root)]
    entries = config_lines(text)
    for index, (indent, command) in enumerate(entries):
        while stack[-1][0] >= indent:
            stack.pop()
        parent = stack[-1][1]["cmds"]
        if index + 1 < len(entries) and entries[index + 1][0] > indent:
            block: dict[str, Any] = {"cmds": {}}
            parent[command] = block
            stack.append((indent, block))
        else:
            parent[command] = None
    return root


def diff_paths(before: Mapping[str, Scalar], after: Mapping[str, Scalar]) -> dict[str, Scalar]:
    """Paths whose value differs between two flat states, with the new value."""
    paths: Iterable[str] = sorted(set(before) | set(after))
    return {p: after.get(p) for p in paths if before.get(p) != after.get(p)}
