"""EOS configuration-mode grammar: one config line applied to an `EosConfig`.

`apply_line(config, context, line, grammar)` mutates `config` and returns the
mode the next line is read in and any notice EOS prints for it.  As on EOS, a
line that is not valid in a sub-mode is tried in the enclosing modes, so
``interface Ethernet2`` works straight after lines for Ethernet1.  A refused
line raises `CliError` (``% Invalid input`` or ``% Incomplete command``) and
leaves `config` untouched: handlers validate before they write.

Modes (`eos_modes`): global, ``interface``, ``qos profile``, the transmit-queue
sub-modes of either (`eos_qos_config`), ``route-map``, ``router bgp`` and its
``address-family`` blocks (`eos_bgp_config`).  Commands the simulator does not
model are kept verbatim (`eos_blocks`) when the mode has them (`eos_vocab`);
a line no mode up the chain has is ``% Invalid input``.  A sub-mode the
simulator does not model (``management api http-commands``, ``interface
Loopback0``...) is entered as an opaque mode whose lines are kept as given.
"""

from __future__ import annotations

import ipaddress

from .eos_blocks import Block, add_line, negate
from .eos_model import EosConfig, EosInterface, QosSettings, RouteMapEntry, state_default
from .eos_modes import (
    GLOBAL,
    INTERFACE_MTU,
    NOT_HERE,
    ROUTER_BGP,
    EosContext,
    Grammar,
    incomplete,
    interface_name,
    lines_of,
    number,
    opaque,
)
from .eos_qos_config import dscp_map, qos_line, queue_line
from .eos_vocab import GLOBAL as GLOBAL_WORDS
from .eos_vocab import INTERFACE, QOS_PROFILE, ROUTE_MAP, known, starts_block, words
from .model import check_hostname, check_ipv4_interface, eos_version_of
from .replies import CliError, invalid

__all__ = ["GLOBAL", "ROUTER_BGP", "EosContext", "Grammar", "apply_line", "incomplete", "number"]


CLI = Grammar()


def apply_line(
    config: EosConfig, context: EosContext, line: str, grammar: Grammar = CLI
) -> tuple[EosContext, str]:
    """Apply one configuration line; return the next mode and EOS's notice (or "")."""
    from .eos_bgp_config import bgp_line

    raw = line.strip()
    tokens = raw.split()
    if not tokens:
        return context, ""
    mode: EosContext | None = context
    while mode is not None:
        if mode.kind == "opaque":
            result = _opaque_line(config, mode, raw)
        elif mode.queue is not None:
            result = queue_line(config, mode, tokens, raw)
        elif mode.kind == "interface":
            result = _interface_line(config, mode, tokens, raw, grammar)
        elif mode.kind == "qos-profile":
            result = _profile_line(config, mode, tokens, raw, grammar)
        elif mode.kind == "route-map":
            result = _route_map_line(config, mode, tokens, raw)
        elif mode.kind in ("router-bgp", "address-family"):
            result = bgp_line(config, mode, tokens, raw, grammar.create_interfaces)
        else:
            result = _global_line(config, tokens, raw, grammar)
        if isinstance(result, tuple):
            return result
        if isinstance(result, EosContext):
            return result, ""
        mode = mode.parent
    raise invalid()


def keep_verbatim(config: EosConfig, mode: EosContext, tokens: list[str], raw: str) -> object:
    """Keep an unmodeled line in `mode`; a global one that opens a sub-mode is entered."""
    lines = lines_of(config, mode)
    if tokens[0] in ("no", "default") and len(tokens) > 1:
        negate(lines, raw.split(None, 1)[1], keep_no=tokens[0] == "no")
        return mode
    block = add_line(lines, raw)
    if (mode.kind == "global" and starts_block(raw)) or (
        mode.kind == "router-bgp" and tokens[0] in _BGP_BLOCKS
    ):
        return opaque(config, mode, block)
    return mode


_BGP_BLOCKS = ("vrf", "vlan", "vlan-aware-bundle", "vpws", "address-family")
# Words that both open global commands and are common inside sub-modes: typed in an
# unmodeled sub-mode they stay there.
_SUBMODE_WORDS = words(
    "no default shutdown description name exit vrf ip ipv6 protocol timeout idle-timeout"
    " authentication local-interface peer-address peer-link domain-id trunk state"
)


def _opaque_line(config: EosConfig, mode: EosContext, raw: str) -> object:
    """Inside a sub-mode kept verbatim (typed interactively; a loaded configuration
    says by indentation what belongs to it): a global sub-mode opener, or a global
    command that is not also a common sub-mode word, leaves it; anything else is one
    of its lines."""
    first = raw.split()[0]
    if starts_block(raw) or (first in GLOBAL_WORDS and first not in _SUBMODE_WORDS):
        return NOT_HERE
    lines = lines_of(config, mode)
    if raw not in (b.line for b in lines):
        lines.append(Block(raw))
    return mode


def _global_line(config: EosConfig, tokens: list[str], raw: str, grammar: Grammar) -> object:
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
        case ["interface", name] if name[:2].lower() == "et" and "." not in name:
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
            dscp_map(config, rest, remove=tokens[0] == "no")
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
        case _ if known(GLOBAL_WORDS, tokens):
            return keep_verbatim(config, GLOBAL, tokens, raw)
    return NOT_HERE


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
    if tokens[0] in ("no", "default") and known(ROUTE_MAP, tokens):
        undone = raw.split(None, 1)[1]
        kept = tuple(
            line for line in entry.lines if line != undone and not line.startswith(undone + " ")
        )
        config.route_maps[key] = RouteMapEntry(entry.action, kept)
        return mode
    complete = len(tokens) >= 2 or tokens[0] == "continue" or tokens[0].startswith("!!")
    if known(ROUTE_MAP, tokens) and complete:
        if raw not in entry.lines:
            config.route_maps[key] = RouteMapEntry(entry.action, (*entry.lines, raw))
        return mode
    return NOT_HERE


def _profile_line(
    config: EosConfig, mode: EosContext, tokens: list[str], raw: str, grammar: Grammar
) -> object:
    qos = config.qos_profiles[mode.name]
    result = qos_line(qos, mode, tokens, raw, grammar)
    if result is NOT_HERE and known(QOS_PROFILE, tokens):
        return keep_verbatim(config, mode, tokens, raw)
    return result


PORT_DEFAULTS = {
    "no mtu": "mtu",
    "no l2 mtu": "l2 mtu",
    "no description": "description",
    "no ip address": "ip address",
    "no ipv6 address": "ipv6 address",
    "no service-profile": "service-profile",
}


def _interface_line(
    config: EosConfig, mode: EosContext, tokens: list[str], raw: str, grammar: Grammar
) -> object:
    result = _port_line(config, mode, tokens, raw, grammar)
    if result is not NOT_HERE:
        stated = config.interfaces[mode.name].stated
        state_default(stated, " ".join(tokens), PORT_DEFAULTS, grammar.create_interfaces)
    return result


def _port_line(
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
            port.switchport, port.switchport_line = True, True
        case ["no", "switchport"]:
            port.switchport, port.switchport_line = False, False
        case ["default", "switchport"]:
            port.switchport, port.switchport_line = True, False
        case ["ip", "address", "dhcp"]:
            return keep_verbatim(config, mode, tokens, raw)
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
        case ["no", "ip", "address"]:
            port.ipv4 = None
        case ["no", "ip", "address", address] if address == port.ipv4:
            port.ipv4 = None
        case ["ipv6", "address", address]:
            canonical = _ipv6(address)
            if canonical not in port.ipv6:
                port.ipv6 = [*port.ipv6, canonical]
        case ["no", "ipv6", "address"]:
            port.ipv6 = []
        case ["no", "ipv6", "address", address] if "/" in address:
            port.ipv6 = [a for a in port.ipv6 if a != _ipv6(address)]
        case ["service-profile", name]:
            port.service_profile = name
        case ["no", "service-profile", *_]:
            port.service_profile = None
        case _:
            result = qos_line(port.qos, mode, tokens, raw, grammar)
            if result is NOT_HERE and known(INTERFACE, tokens):
                return keep_verbatim(config, mode, tokens, raw)
            return result
    return mode, notice


def _ipv6(text: str) -> str:
    if "/" not in text:
        raise invalid(f"address {text} lacks a prefix length")
    try:
        return str(ipaddress.IPv6Interface(text))
    except ValueError as exc:
        raise invalid(str(exc)) from exc


__all__ += ["CliError", "keep_verbatim"]
