"""EOS configuration-mode grammar: one config line applied to an `EosConfig`.

`apply_line(config, context, line, grammar)` mutates `config` and returns the
mode the next line is read in and any notice EOS prints for it.  As on EOS, a
line that is not valid in a sub-mode is tried in the enclosing modes, so
``interface Ethernet2`` works straight after lines for Ethernet1.  A refused
line raises `CliError` (``% Invalid input`` or ``% Incomplete command``) and
leaves `config` untouched: handlers validate before they write.

Modes: global, ``interface``, ``qos profile``, the ``tx-queue`` /
``uc-tx-queue`` sub-mode of either, ``route-map``, ``router bgp`` and its
``address-family`` (see `eos_bgp_config`).  Which queue kind exists depends
on the platform (`EosProfile.queue_kinds`).  EOS has no
``priority-flow-control headroom`` or ``xoff-threshold`` command: PFC buffer
sizes are not interface configuration, so those lines are invalid input.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass

from .eos_model import (
    BYTE_UNITS,
    OTHER_UNITS,
    EcnThresholds,
    EosConfig,
    EosInterface,
    QosSettings,
    RouteMapEntry,
)
from .model import check_hostname, check_ipv4_interface, check_range, eos_version_of
from .replies import CliError, invalid

INTERFACE_MTU = (68, 9214)
THRESHOLD_MAX = 256_000_000


@dataclass(frozen=True)
class EosContext:
    """A configuration mode; `name` is the interface, qos profile, route-map or family."""

    kind: str = "global"
    name: str = ""
    queue: tuple[str, int] | None = None
    within: str = ""

    @property
    def parent(self) -> EosContext | None:
        """The enclosing mode, or None at global level."""
        if self.queue is not None:
            return EosContext(self.within, self.name)
        if self.kind == "address-family":
            return ROUTER_BGP
        return None if self.kind == "global" else GLOBAL

    def prompt_suffix(self) -> str:
        """The part of the prompt after ``config``/``config-s-NAME``."""
        if self.kind == "global":
            return ""
        if self.queue is not None:
            kind, number = self.queue
            short = "uc-txq" if kind == "uc-tx-queue" else "txq"
            return EosContext(self.within, self.name).prompt_suffix() + f"-{short}-{number}"
        if self.kind == "interface":
            return "-if-Et" + self.name.removeprefix("Ethernet")
        if self.kind == "address-family":
            return "-router-bgp-af"
        if self.kind in ("qos-profile", "route-map"):
            return f"-{self.kind}-{self.name.split()[0]}"
        return f"-{self.kind}"


@dataclass(frozen=True)
class Grammar:
    """Platform facts the grammar needs: the queue kinds, and whether ports appear on use.

    `create_interfaces` and `mtu_max` are for loading a saved configuration:
    there an ``interface`` line names a port the platform has, and an MTU may
    be what a spec's initial state declared (up to the model's 9216) rather
    than what the CLI accepts (9214).
    """

    queue_kinds: tuple[str, ...] = ("tx-queue",)
    create_interfaces: bool = False
    mtu_max: int = INTERFACE_MTU[1]


GLOBAL = EosContext()
ROUTER_BGP = EosContext("router-bgp")
NOT_HERE = object()
_INTERFACE = re.compile(r"^(?:ethernet|eth|et)(\d+(?:/\d+)*)$", re.IGNORECASE)


def incomplete() -> CliError:
    """EOS's answer to a command that lacks its arguments."""
    return CliError("% Incomplete command")


def apply_line(
    config: EosConfig, context: EosContext, line: str, grammar: Grammar = Grammar()
) -> tuple[EosContext, str]:
    """Apply one configuration line; return the next mode and EOS's notice (or "")."""
    from .eos_bgp_config import bgp_line

    tokens = line.split()
    if not tokens:
        return context, ""
    mode: EosContext | None = context
    while mode is not None:
        if mode.queue is not None:
            result = _queue_line(config, mode, tokens)
        elif mode.kind == "interface":
            result = _interface_line(config, mode, tokens, line.strip(), grammar)
        elif mode.kind == "qos-profile":
            result = _qos_lines(config.qos_profiles[mode.name], mode, tokens, grammar)
        elif mode.kind == "route-map":
            result = _route_map_line(config, mode, tokens, line.strip())
        elif mode.kind in ("router-bgp", "address-family"):
            result = bgp_line(config, mode, tokens, line.strip())
        else:
            result = _global_line(config, tokens, grammar)
        if isinstance(result, tuple):
            return result
        if isinstance(result, EosContext):
            return result, ""
        mode = mode.parent
    raise invalid()


def number(token: str, what: str, low: int, high: int) -> int:
    """An integer argument in [low, high], or ``% Invalid input``."""
    if not token.isdigit():
        raise invalid(f"{what} must be a number")
    try:
        return check_range(what, int(token), low, high)
    except ValueError as exc:
        raise invalid(str(exc)) from exc


def interface_name(token: str) -> str:
    """Canonical EOS interface name (``Et1`` -> ``Ethernet1``) or CliError."""
    match = _INTERFACE.match(token)
    if match is None:
        raise invalid(f"unknown interface {token}")
    return f"Ethernet{match.group(1)}"


def _global_line(config: EosConfig, tokens: list[str], grammar: Grammar) -> object:
    from .eos_bgp_config import router_bgp

    match tokens:
        case ["hostname"] | ["interface"] | ["qos", "profile"] | ["boot", "system"]:
            raise incomplete()
        case ["hostname", name]:
            try:
                config.hostname = check_hostname(name)
            except ValueError as exc:
                raise invalid(str(exc)) from exc
            return GLOBAL
        case ["interface", name]:
            canonical = interface_name(name)
            if canonical not in config.interfaces:
                if not grammar.create_interfaces:
                    raise invalid(f"interface {canonical} does not exist")
                config.interfaces[canonical] = EosInterface()
            return EosContext("interface", canonical)
        case ["qos", "profile", name]:
            config.qos_profiles.setdefault(name, QosSettings())
            return EosContext("qos-profile", name)
        case ["no", "qos", "profile", name]:
            config.qos_profiles.pop(name, None)
            return GLOBAL
        case ["qos", "map", "dscp", *rest] | ["no", "qos", "map", "dscp", *rest]:
            _dscp_map(config, rest, remove=tokens[0] == "no")
            return GLOBAL
        case ["ip", "routing"]:
            config.ip_routing = True
            return GLOBAL
        case ["no", "ip", "routing"]:
            config.ip_routing = False
            return GLOBAL
        case ["route-map", name, *rest]:
            return _route_map(config, name, rest)
        case ["no", "route-map", name]:
            config.route_maps = {k: v for k, v in config.route_maps.items() if k[0] != name}
            return GLOBAL
        case ["router", "bgp", *rest] | ["no", "router", "bgp", *rest]:
            return router_bgp(config, tokens[0] == "no", rest)
        case ["boot", "system", image]:
            try:
                eos_version_of(image)
            except ValueError as exc:
                raise invalid(str(exc)) from exc
            config.boot_image = image
            return GLOBAL
    return NOT_HERE


def _dscp_map(config: EosConfig, rest: list[str], remove: bool) -> None:
    if "to" not in rest:
        raise incomplete()
    split = rest.index("to")
    values = [number(d, "dscp", 0, 63) for d in rest[:split]]
    target: tuple[int, int | None]
    match rest[split + 1 :]:
        case ["traffic-class", tc]:
            target = (number(tc, "traffic-class", 0, 7), None)
        case ["traffic-class", tc, "drop-precedence", dp]:
            target = (number(tc, "traffic-class", 0, 7), number(dp, "drop-precedence", 0, 2))
        case [] | ["traffic-class"] | ["traffic-class", _, "drop-precedence"]:
            raise incomplete()
        case _:
            raise invalid()
    if not values:
        raise incomplete()
    for dscp in values:
        if remove:
            config.dscp_map.pop(dscp, None)
        else:
            config.dscp_map[dscp] = target


def _route_map(config: EosConfig, name: str, rest: list[str]) -> EosContext:
    match rest:
        case []:
            action, seq = "permit", 10
        case [("permit" | "deny") as action]:
            seq = 10
        case [("permit" | "deny") as action, seq_text]:
            seq = number(seq_text, "sequence", 0, 65535)
        case _:
            raise invalid()
    entry = config.route_maps.get((name, seq))
    if entry is None or entry.action != action:
        config.route_maps[(name, seq)] = RouteMapEntry(action, () if entry is None else entry.lines)
    return EosContext("route-map", f"{name} {seq}")


def _route_map_line(config: EosConfig, mode: EosContext, tokens: list[str], raw: str) -> object:
    name, seq_text = mode.name.rsplit(" ", 1)
    key = (name, int(seq_text))
    entry = config.route_maps[key]
    if tokens[0] in ("match", "set") and len(tokens) >= 2:
        if raw not in entry.lines:
            config.route_maps[key] = RouteMapEntry(entry.action, (*entry.lines, raw))
        return mode
    if tokens[0] == "no" and len(tokens) >= 3 and tokens[1] in ("match", "set"):
        kept = tuple(line for line in entry.lines if line != raw.split(None, 1)[1])
        config.route_maps[key] = RouteMapEntry(entry.action, kept)
        return mode
    return NOT_HERE


def _interface_line(
    config: EosConfig, mode: EosContext, tokens: list[str], raw: str, grammar: Grammar
) -> object:
    port = config.interfaces[mode.name]
    notice = ""
    match tokens:
        case ["mtu"] | ["description"] | ["ip", "address"] | ["ipv6", "address"] | ["l2", "mtu"]:
            raise incomplete()
        case ["mtu", value]:
            port.mtu = number(value, "mtu", INTERFACE_MTU[0], grammar.mtu_max)
        case ["no", "mtu", *_] | ["default", "mtu", *_]:
            port.mtu = None
        case ["l2", "mtu", value]:
            port.l2_mtu = number(value, "l2 mtu", *INTERFACE_MTU)
        case ["no", "l2", "mtu", *_]:
            port.l2_mtu = None
        case ["description", *_]:
            port.description = raw.split(None, 1)[1]
        case ["no", "description", *_]:
            port.description = ""
        case ["switchport"]:
            port.switchport = True
        case ["no", "switchport"]:
            port.switchport = False
        case ["ip", "address", address]:
            try:
                port.ipv4 = check_ipv4_interface(address)
            except ValueError as exc:
                raise invalid(str(exc)) from exc
            if port.switchport:
                notice = (
                    f"! IP configuration will be ignored while interface {mode.name}"
                    " is not a routed port."
                )
        case ["no", "ip", "address", *_]:
            port.ipv4 = None
        case ["ipv6", "address", address]:
            canonical = _ipv6(address)
            if canonical not in port.ipv6:
                port.ipv6 = [*port.ipv6, canonical]
        case ["no", "ipv6", "address"]:
            port.ipv6 = []
        case ["no", "ipv6", "address", address]:
            port.ipv6 = [a for a in port.ipv6 if a != _ipv6(address)]
        case ["no", "shutdown"]:
            pass  # ports are up unless shut down, which this simulator does not model
        case ["service-profile", name]:
            port.service_profile = name
        case ["no", "service-profile", *_]:
            port.service_profile = None
        case _:
            return _qos_lines(port.qos, mode, tokens, grammar)
    return mode, notice


def _ipv6(text: str) -> str:
    if "/" not in text:
        raise invalid(f"address {text} lacks a prefix length")
    try:
        return str(ipaddress.IPv6Interface(text))
    except ValueError as exc:
        raise invalid(str(exc)) from exc


def _qos_lines(qos: QosSettings, mode: EosContext, tokens: list[str], grammar: Grammar) -> object:
    """PFC lines and queue sub-modes: the same in a port and in a ``qos profile``."""
    match tokens:
        case ["priority-flow-control", "on"] | ["priority-flow-control", "mode", "on"]:
            qos.pfc = True
        case ["no", "priority-flow-control"] | ["priority-flow-control", "mode", "off"]:
            qos.pfc = False
        case ["default", "priority-flow-control"]:
            qos.pfc = None
        case ["priority-flow-control", "priority", prio, "no-drop"]:
            qos.no_drop.add(number(prio, "priority", 0, 7))
        case ["priority-flow-control", "priority", prio, "drop"]:
            qos.no_drop.discard(number(prio, "priority", 0, 7))
        case ["no", "priority-flow-control", "priority", prio, *rest] if rest in ([], ["no-drop"]):
            qos.no_drop.discard(number(prio, "priority", 0, 7))
        case ["priority-flow-control"] | ["priority-flow-control", "priority", *_]:
            raise incomplete()
        case [kind] if kind in grammar.queue_kinds:
            raise incomplete()
        case [kind, queue] if kind in grammar.queue_kinds:
            return EosContext(mode.kind, mode.name, (kind, number(queue, kind, 0, 7)), mode.kind)
        case _:
            return NOT_HERE
    return mode


def _queue_line(config: EosConfig, mode: EosContext, tokens: list[str]) -> object:
    assert mode.queue is not None
    owner = (
        config.interfaces[mode.name].qos
        if mode.within == "interface"
        else config.qos_profiles[mode.name]
    )
    match tokens:
        case ["random-detect", "ecn", "minimum-threshold", *rest]:
            owner.queues[mode.queue] = _ecn(rest)
        case ["no", "random-detect", "ecn", *_]:
            owner.queues.pop(mode.queue, None)
        case ["random-detect"] | ["random-detect", "ecn"]:
            raise incomplete()
        case _:
            return NOT_HERE
    return mode


def _ecn(rest: list[str]) -> EcnThresholds:
    """``minimum-threshold`` onwards of a ``random-detect ecn`` line."""
    if len(rest) < 5:
        raise incomplete()
    low, low_unit, keyword, high, high_unit, *options = rest
    if keyword != "maximum-threshold":
        raise invalid()
    units = (*BYTE_UNITS, *OTHER_UNITS)
    if low_unit not in units or high_unit not in units:
        raise invalid(f"unknown unit {low_unit if low_unit not in units else high_unit}")
    lo = number(low, "minimum-threshold", 1, THRESHOLD_MAX)
    hi = number(high, "maximum-threshold", 1, THRESHOLD_MAX)
    if (low_unit in BYTE_UNITS) != (high_unit in BYTE_UNITS) or (
        low_unit in OTHER_UNITS and low_unit != high_unit
    ):
        raise invalid("thresholds must use the same kind of unit")
    scale = BYTE_UNITS if low_unit in BYTE_UNITS else {low_unit: 1}
    if lo * scale[low_unit] > hi * scale[high_unit]:
        raise invalid("minimum-threshold exceeds maximum-threshold")
    probability = weight = None
    for index in range(0, len(options), 2):
        keyword, value = options[index], options[index + 1 : index + 2]
        if keyword not in ("max-mark-probability", "weight"):
            raise invalid()
        if not value:
            raise incomplete()
        if keyword == "max-mark-probability" and probability is None and weight is None:
            probability = number(value[0], keyword, 1, 100)
        elif keyword == "weight" and weight is None:
            weight = number(value[0], keyword, 0, 15)
        else:
            raise invalid()
    return EcnThresholds(lo, low_unit, hi, high_unit, probability, weight)
