"""EOS configuration-mode grammar: one config line applied to a `SwitchState`.

`apply_line(state, context, line)` mutates `state` and returns the mode the
next line is read in (global, interface, tx-queue or router-bgp).  As on EOS,
a line that is not valid in a sub-mode is tried in the enclosing modes, so
``interface Ethernet2`` works straight after lines for Ethernet1.  A refused
line raises `CliError` and leaves `state` untouched (handlers validate before
they write).

The headroom line ``priority-flow-control headroom N kbytes`` and the pause
threshold line ``priority-flow-control xoff-threshold N kbytes`` are this
simulator's own syntax: real EOS sizes PFC buffers through other commands.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .model import (
    BgpNeighbor,
    BgpState,
    SwitchState,
    check_asn,
    check_ecn,
    check_hostname,
    check_ipv4,
    check_ipv4_interface,
    check_mtu,
    check_range,
    eos_version_of,
)
from .replies import invalid


@dataclass(frozen=True)
class EosContext:
    """A configuration sub-mode: global, interface, tx-queue or router bgp."""

    interface: str | None = None
    queue: int | None = None
    bgp: bool = False

    @property
    def parent(self) -> EosContext | None:
        """The enclosing mode, or None at global level."""
        if self.queue is not None:
            return EosContext(interface=self.interface)
        if self.interface is not None or self.bgp:
            return GLOBAL
        return None

    def prompt_suffix(self) -> str:
        """The part of the prompt after ``config``/``config-s-NAME``."""
        if self.interface is not None:
            short = "Et" + self.interface.removeprefix("Ethernet")
            return f"-if-{short}" + ("" if self.queue is None else f"-txq-{self.queue}")
        return "-router-bgp" if self.bgp else ""


GLOBAL = EosContext()
_NOT_HERE = object()
_INTERFACE = re.compile(r"^(?:ethernet|eth|et)(\d+(?:/\d+)*)$", re.IGNORECASE)
_UNITS = {"bytes": 1 / 1024, "kbytes": 1, "mbytes": 1024}


def apply_line(state: SwitchState, context: EosContext, line: str) -> EosContext:
    """Apply one configuration line; return the mode for the next line."""
    tokens = line.split()
    if not tokens:
        return context
    mode: EosContext | None = context
    while mode is not None:
        result = _dispatch(state, mode, tokens, line.strip())
        if isinstance(result, EosContext):
            return result
        mode = mode.parent
    raise invalid()


def _dispatch(state: SwitchState, mode: EosContext, tokens: list[str], raw: str) -> object:
    if mode.queue is not None:
        return _txq_line(state, mode, tokens)
    if mode.interface is not None:
        return _interface_line(state, mode, tokens, raw)
    if mode.bgp:
        return _bgp_line(state, mode, tokens)
    return _global_line(state, tokens, raw)


def interface_name(token: str) -> str:
    """Canonical EOS interface name (``Et1`` -> ``Ethernet1``) or CliError."""
    match = _INTERFACE.match(token)
    if match is None:
        raise invalid(f"unknown interface {token}")
    return f"Ethernet{match.group(1)}"


def _int(token: str, what: str, low: int, high: int) -> int:
    if not token.isdigit():
        raise invalid(f"{what} must be a number")
    try:
        return check_range(what, int(token), low, high)
    except ValueError as exc:
        raise invalid(str(exc)) from exc


def _global_line(state: SwitchState, tokens: list[str], raw: str) -> object:
    match tokens:
        case ["hostname", name]:
            try:
                state.hostname = check_hostname(name)
            except ValueError as exc:
                raise invalid(str(exc)) from exc
            return GLOBAL
        case ["interface", name]:
            canonical = interface_name(name)
            if canonical not in state.interfaces:
                raise invalid(f"interface {canonical} does not exist")
            return EosContext(interface=canonical)
        case ["qos", "map", "dscp", *dscps, "to", "traffic-class", tc] if dscps:
            values = [_int(d, "dscp", 0, 63) for d in dscps]
            klass = _int(tc, "traffic-class", 0, 7)
            state.dscp_to_tc.update({d: klass for d in values})
            return GLOBAL
        case ["no", "qos", "map", "dscp", *dscps, "to", "traffic-class", _tc] if dscps:
            for d in [_int(d, "dscp", 0, 63) for d in dscps]:
                state.dscp_to_tc.pop(d, None)
            return GLOBAL
        case ["router", "bgp", asn]:
            number = _asn(asn)
            if state.bgp is None:
                state.bgp = BgpState(asn=number)
            elif state.bgp.asn != number:
                raise invalid(f"BGP is already running with AS number {state.bgp.asn}")
            return EosContext(bgp=True)
        case ["no", "router", "bgp", *_]:
            state.bgp = None
            return GLOBAL
        case ["boot", "system", image]:
            try:
                eos_version_of(image)
            except ValueError as exc:
                raise invalid(str(exc)) from exc
            state.boot_image = image
            return GLOBAL
    return _NOT_HERE


def _asn(token: str) -> int:
    if not token.isdigit():
        raise invalid(f"bad AS number {token}")
    try:
        return check_asn(int(token))
    except ValueError as exc:
        raise invalid(str(exc)) from exc


def _interface_line(state: SwitchState, mode: EosContext, tokens: list[str], raw: str) -> object:
    assert mode.interface is not None
    port = state.interfaces[mode.interface]
    match tokens:
        case ["mtu", value]:
            if not value.isdigit():
                raise invalid("mtu must be a number")
            try:
                port.mtu = check_mtu(int(value))
            except ValueError as exc:
                raise invalid(str(exc)) from exc
        case ["no", "mtu", *_]:
            port.mtu = 1500
        case ["description", *_]:
            port.description = raw.split(None, 1)[1]
        case ["no", "description", *_]:
            port.description = ""
        case ["ip", "address", address]:
            try:
                port.ipv4 = check_ipv4_interface(address)
            except ValueError as exc:
                raise invalid(str(exc)) from exc
        case ["no", "ip", "address", *_]:
            port.ipv4 = None
        case ["no", "switchport"] | ["no", "shutdown"]:
            pass
        case ["priority-flow-control", "on"] | ["priority-flow-control", "mode", "on"]:
            pass
        case ["no", "priority-flow-control"] | ["priority-flow-control", "mode", "off"]:
            port.pfc_priorities = []
        case ["priority-flow-control", "priority", prio, "no-drop"]:
            priority = _int(prio, "priority", 0, 7)
            port.pfc_priorities = sorted(set(port.pfc_priorities) | {priority})
        case ["no", "priority-flow-control", "priority", prio, *rest] if rest in ([], ["no-drop"]):
            priority = _int(prio, "priority", 0, 7)
            port.pfc_priorities = [p for p in port.pfc_priorities if p != priority]
        case ["priority-flow-control", "headroom", size, "kbytes"]:
            port.pfc_headroom_kb = _int(size, "headroom", 1, 1_048_576)
        case ["no", "priority-flow-control", "headroom", *_]:
            port.pfc_headroom_kb = None
        case ["priority-flow-control", "xoff-threshold", size, "kbytes"]:
            port.pfc_xoff_kb = _int(size, "xoff-threshold", 1, 1_048_576)
        case ["no", "priority-flow-control", "xoff-threshold", *_]:
            port.pfc_xoff_kb = None
        case ["tx-queue", queue]:
            return EosContext(interface=mode.interface, queue=_int(queue, "tx-queue", 0, 7))
        case _:
            return _NOT_HERE
    return mode


def _threshold(value: str, unit: str) -> int:
    if unit not in _UNITS:
        raise invalid(f"unknown unit {unit}")
    number = _int(value, "threshold", 1, 1 << 30)
    return max(1, int(number * _UNITS[unit]))


def _txq_line(state: SwitchState, mode: EosContext, tokens: list[str]) -> object:
    assert mode.interface is not None and mode.queue is not None
    port = state.interfaces[mode.interface]
    match tokens:
        case [
            "random-detect",
            "ecn",
            "minimum-threshold",
            low,
            low_unit,
            "maximum-threshold",
            high,
            high_unit,
            "max-mark-probability",
            pmax,
            *weight,
        ] if len(weight) in (0, 2) and weight[:1] in ([], ["weight"]):
            try:
                queue = check_ecn(_threshold(low, low_unit), _threshold(high, high_unit), int(pmax))
            except ValueError as exc:
                raise invalid(str(exc)) from exc
            port.ecn[mode.queue] = queue
        case ["no", "random-detect", "ecn", *_]:
            port.ecn.pop(mode.queue, None)
        case _:
            return _NOT_HERE
    return mode


def _bgp_line(state: SwitchState, mode: EosContext, tokens: list[str]) -> object:
    bgp = state.bgp
    assert bgp is not None
    match tokens:
        case ["router-id", address]:
            bgp.router_id = _ip(address)
        case ["no", "router-id", *_]:
            bgp.router_id = None
        case ["maximum-paths", paths, *ecmp] if ecmp == [] or (
            len(ecmp) == 2 and ecmp[0] == "ecmp"
        ):
            value = _int(paths, "maximum-paths", 1, 512)
            if ecmp and _int(ecmp[1], "ecmp", 1, 512) < value:
                raise invalid("ecmp must be at least maximum-paths")
            bgp.maximum_paths = value
        case ["no", "maximum-paths", *_]:
            bgp.maximum_paths = 1
        case ["neighbor", address, "remote-as", asn]:
            peer = _ip(address)
            number = _asn(asn)
            if peer in bgp.neighbors:
                bgp.neighbors[peer].remote_as = number
            else:
                bgp.neighbors[peer] = BgpNeighbor(remote_as=number)
        case ["neighbor", address, "route-map", name, "in"]:
            _peer(bgp, address).route_map_in = name
        case ["no", "neighbor", address, "route-map", *_]:
            _peer(bgp, address).route_map_in = None
        case ["no", "neighbor", address, *rest] if not rest or rest[0] == "remote-as":
            bgp.neighbors.pop(_ip(address), None)
        case _:
            return _NOT_HERE
    return mode


def _ip(text: str) -> str:
    try:
        return check_ipv4(text)
    except ValueError as exc:
        raise invalid(str(exc)) from exc


def _peer(bgp: BgpState, address: str) -> BgpNeighbor:
    peer = _ip(address)
    if peer not in bgp.neighbors:
        raise invalid(f"neighbor {peer} has no remote-as configured")
    return bgp.neighbors[peer]
