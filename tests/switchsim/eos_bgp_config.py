"""EOS ``router bgp`` grammar: the process, peer groups, neighbours and address families.

AS numbers are accepted in asplain (``4266524237``) or asdot
(``65101.65101``) form; ``bgp asn notation asdot`` only changes how they are
printed.  The AS of a running process cannot be changed by entering
``router bgp OTHER``: EOS answers ``% BGP is already running with AS number
N``.  Peer groups use the 4.2x+ syntax ``neighbor NAME peer group`` and
``neighbor IP peer group NAME``; the older hyphenated ``peer-group`` form is
accepted as input and printed in the new form, as EOS does.  A neighbour
inherits ``remote-as`` and route maps from its peer group.

``address-family ipv4`` and ``address-family ipv6`` are blocks of their own:
``neighbor X activate`` / ``no neighbor X activate`` and ``neighbor X route-map
NAME in|out`` there apply to that family only and are more specific than the
router-level route map (`EosBgp.policy`).  Other neighbour options
(``send-community``, ``maximum-routes``, ``update-source``...), ``vrf``/``vlan``/other
address-family blocks and the remaining router-level commands are kept verbatim
(`eos_blocks`).

Interface neighbours (BGP unnumbered, 4.30+): ``neighbor interface RANGE peer-group G
remote-as N | peer-filter F`` takes a port range (``Et1-4,Et7``, ``Ethernet1/1-4``) of
an existing peer group; each port holds one such line, replaced by the next and removed
by ``no neighbor interface RANGE``; they are printed one port a line, by full name.  A
link-local neighbour address needs its interface (``fe80::1%Et1``): without one EOS
refuses it.
"""

from __future__ import annotations

import ipaddress
import re

from .eos_blocks import add_line, negate
from .eos_config import keep_verbatim
from .eos_model import EosBgp, EosConfig, EosFamily, EosPeer, state_default
from .eos_modes import (
    GLOBAL,
    NOT_HERE,
    ROUTER_BGP,
    EosContext,
    incomplete,
    interface_name,
    number,
)
from .eos_vocab import ADDRESS_FAMILY, NEIGHBOR, known, words
from .eos_vocab import ROUTER_BGP as ROUTER_BGP_WORDS
from .model import ASN_MAX, check_ipv4
from .replies import CliError, invalid

AF_NEIGHBOR = words(
    "activate additional-paths default-originate graceful-restart maximum-advertised-routes"
    " missing-policy next-hop next-hop-unchanged prefix-list rcf rib-in route-map weight"
)
"""Neighbour options EOS has inside ``address-family ipv4|ipv6``."""


def parse_asn(token: str) -> int:
    """An AS number in asplain or asdot notation."""
    if token.count(".") == 1:
        high, low = token.split(".")
        value = (number(high, "AS number", 0, 65535) << 16) + number(low, "AS number", 0, 65535)
    else:
        value = number(token, "AS number", 1, ASN_MAX)
    if value == 0:
        raise invalid("AS number 0 is reserved")
    return value


def router_bgp(config: EosConfig, remove: bool, rest: list[str]) -> EosContext:
    """``router bgp ASN`` (enter, creating the process) or ``no router bgp [ASN]``."""
    if remove:
        if len(rest) > 1:
            raise invalid()
        if rest and config.bgp is not None and parse_asn(rest[0]) != config.bgp.asn:
            raise invalid("no BGP process with that AS number")
        config.bgp = None
        return GLOBAL
    if not rest:
        raise incomplete()
    if len(rest) > 1:
        raise invalid()
    asn = parse_asn(rest[0])
    if config.bgp is None:
        config.bgp = EosBgp(asn=asn)
        _spell(config.bgp, rest[0], asn)
    elif config.bgp.asn != asn:
        shown = config.bgp.shown(config.bgp.asn)
        raise CliError(f"% BGP is already running with AS number {shown}")
    return ROUTER_BGP


def _spell(bgp: EosBgp, token: str, value: int) -> None:
    """Remember an AS number entered in asdot, which EOS prints back as entered."""
    if "." in token:
        bgp.spelled[value] = token
    else:
        bgp.spelled.pop(value, None)


def _address(token: str) -> str | None:
    """The canonical form of a peer address (link-local ones with their ``%`` zone),
    or None for a group name."""
    try:
        address = ipaddress.ip_address(token)
    except ValueError:
        return None
    if address.version == 6 and address.is_link_local and "%" not in token:
        raise invalid(f"link-local address {token} requires an interface (e.g. {token}%Et1)")
    return str(address)


_OTHER_PORT = re.compile(r"^(?:Vlan|Port-Channel)[0-9]{1,4}$")


def _ports(text: str) -> list[str]:
    """An interface range (``Et1-4,7``, ``Ethernet1/1-4``, ``Et49/1-52/1``) -> full
    port names."""
    ports: list[str] = []
    for item in text.split(","):
        if _OTHER_PORT.match(item):  # an SVI or a Port-Channel, one at a time
            ports.append(item)
            continue
        low, dash, high = item.partition("-")
        first = interface_name("Et" + low if low[:1].isdigit() else low)
        if not dash:
            ports.append(first)
            continue
        numbers = first[len("Ethernet") :].split("/")
        top = high.split("/")
        top = numbers[:-1] + top if len(top) == 1 else top
        if len(top) != len(numbers) or not all(t.isdigit() for t in top):
            raise invalid(f"invalid interface range {text}")
        differ = [i for i, (a, b) in enumerate(zip(numbers, top, strict=True)) if int(a) != int(b)]
        at = differ[0] if differ else len(numbers) - 1
        if len(differ) > 1 or int(top[at]) < int(numbers[at]):
            raise invalid(f"invalid interface range {text}")
        for n in range(int(numbers[at]), int(top[at]) + 1):
            ports.append("Ethernet" + "/".join([*numbers[:at], str(n), *numbers[at + 1 :]]))
    return ports


def _interface_neighbors(bgp: EosBgp, rest: list[str], remove: bool) -> None:
    """``[no] neighbor interface RANGE peer-group G remote-as N | peer-filter F``."""
    if not rest:
        raise incomplete()
    ports = _ports(rest[0])
    if remove:
        for port in ports:
            bgp.interfaces.pop(port, None)
        return
    options = rest[1:]
    if options[:2] == ["peer", "group"]:
        options = ["peer-group", *options[2:]]
    match options:
        case ["peer-group", group, "remote-as", asn]:
            value = parse_asn(asn)
            _spell(bgp, asn, value)
            how = f"remote-as {asn}"
        case ["peer-group", group, "peer-filter", name]:
            how = f"peer-filter {name}"
        case [] | ["peer-group"] | ["peer-group", _] | ["peer-group", _, _]:
            raise incomplete()
        case _:
            raise invalid()
    if group not in bgp.peer_groups:
        raise invalid(f"peer group {group} does not exist")
    for port in ports:
        bgp.interfaces[port] = (group, how)


def _key(bgp: EosBgp, token: str) -> str:
    """How a peer or group is keyed: canonical address, or the group's name."""
    address = _address(token)
    if address is None and token not in bgp.peer_groups:
        raise invalid(f"peer group {token} does not exist")
    return address or token


def _peer(bgp: EosBgp, token: str, create: bool = True) -> EosPeer:
    key = _key(bgp, token)
    if key in bgp.peer_groups:
        return bgp.peer_groups[key]
    if key not in bgp.neighbors:
        if not create:
            raise invalid(f"neighbor {key} does not exist")
        bgp.neighbors[key] = EosPeer()
    return bgp.neighbors[key]


def bgp_line(
    config: EosConfig, mode: EosContext, tokens: list[str], raw: str, loading: bool = False
) -> object:
    """One line in ``router bgp`` or ``address-family`` mode (`loading`: from a saved
    configuration rather than typed)."""
    bgp = config.bgp
    if bgp is None:  # removed by a line that fell through to global mode
        return NOT_HERE
    if mode.kind == "address-family":
        return _family_line(config, bgp, mode, tokens, raw)
    result = _router_line(config, bgp, mode, tokens, raw)
    if result is mode:
        state_default(bgp.stated, " ".join(tokens), BGP_DEFAULTS, loading)
    return result


BGP_DEFAULTS = {
    "no router-id": "router-id",
    "no maximum-paths": "maximum-paths",
    "bgp asn notation asplain": "bgp asn notation asdot",
}


def _router_line(
    config: EosConfig, bgp: EosBgp, mode: EosContext, tokens: list[str], raw: str
) -> object:
    match tokens:
        case ["bgp", "asn", "notation", ("asdot" | "asplain") as notation]:
            bgp.asdot = notation == "asdot"
        case ["no", "bgp", "asn", "notation", *_]:
            bgp.asdot = False
        case ["router-id", address]:
            try:
                bgp.router_id = check_ipv4(address)
            except ValueError as exc:
                raise invalid(str(exc)) from exc
        case ["no", "router-id", *_]:
            bgp.router_id = None
        case ["maximum-paths", paths]:
            bgp.maximum_paths, bgp.ecmp = number(paths, "maximum-paths", 1, 600), None
        case ["maximum-paths", paths, "ecmp", ecmp]:
            value = number(paths, "maximum-paths", 1, 600)
            if number(ecmp, "ecmp", 1, 600) < value:
                raise invalid("ecmp must be at least maximum-paths")
            bgp.maximum_paths, bgp.ecmp = value, int(ecmp)
        case ["no", "maximum-paths", *_]:
            bgp.maximum_paths = bgp.ecmp = None
        case ["address-family", ("ipv4" | "ipv6") as family]:
            bgp.family(family)
            return EosContext("address-family", family)
        case ["no", "address-family", ("ipv4" | "ipv6") as family]:
            bgp.families.pop(family, None)
        case ["neighbor", "interface", *rest]:
            _interface_neighbors(bgp, rest, remove=False)
        case ["no" | "default", "neighbor", "interface", *rest]:
            _interface_neighbors(bgp, rest, remove=True)
        case ["neighbor", *rest]:
            _neighbor(bgp, rest, raw)
        case ["no" | "default", "neighbor", *rest]:
            _no_neighbor(bgp, rest, raw)
        case ["router-id"] | ["maximum-paths"] | ["address-family"] | ["bgp", "asn", "notation"]:
            raise incomplete()
        case _ if known(ROUTER_BGP_WORDS, tokens):
            return keep_verbatim(config, mode, tokens, raw)
        case _:
            return NOT_HERE
    return mode


def _neighbor(bgp: EosBgp, rest: list[str], raw: str) -> None:
    match rest:
        case [name, "peer", "group"] | [name, "peer-group"] if _address(name) is None:
            bgp.peer_groups.setdefault(name, EosPeer())
        case [address, "peer", "group", group] | [address, "peer-group", group] if _address(
            address
        ):
            if group not in bgp.peer_groups:
                raise invalid(f"peer group {group} does not exist")
            _peer(bgp, address).peer_group = group
        case [who, "remote-as", asn]:
            value = parse_asn(asn)
            _peer(bgp, who).remote_as = value
            _spell(bgp, asn, value)
        case [who, "route-map", name, "in"]:
            _peer(bgp, who).route_map_in = name
        case [who, "route-map", name, "out"]:
            _peer(bgp, who).route_map_out = name
        case [who, "description", _, *_]:
            _peer(bgp, who).description = raw.split(None, 3)[3]
        case [] | [_] | [_, "remote-as" | "route-map" | "description" | "peer"]:
            raise incomplete()
        case [who, option, *_] if option in NEIGHBOR and option not in _MODELED:
            add_line(_peer(bgp, who).extra, raw)
        case _:
            raise invalid()


_MODELED = ("activate", "peer", "peer-group")


def _no_neighbor(bgp: EosBgp, rest: list[str], raw: str) -> None:
    match rest:
        case [who]:
            key = _key(bgp, who)
            if key in bgp.peer_groups and _address(who) is None:
                del bgp.peer_groups[key]
                for peer in bgp.neighbors.values():
                    peer.peer_group = None if peer.peer_group == key else peer.peer_group
            else:
                bgp.neighbors.pop(key, None)
            for family in bgp.families.values():
                family.forget(key)
        case [who, "remote-as", *_]:
            _peer(bgp, who, create=False).remote_as = None
        case [who, "route-map", *args] if args[-1:] in (["in"], ["out"]):
            peer = _peer(bgp, who, create=False)
            if args[-1] == "in":
                peer.route_map_in = None
            else:
                peer.route_map_out = None
        case [who, "description", *_]:
            _peer(bgp, who, create=False).description = None
        case [who, "peer", "group", *_] | [who, "peer-group", *_]:
            _peer(bgp, who, create=False).peer_group = None
        case [who, option, *_] if option in NEIGHBOR:
            negate(_peer(bgp, who).extra, raw.split(None, 1)[1], raw.startswith("no "))
        case []:
            raise incomplete()
        case _:
            raise invalid()


def _family_line(
    config: EosConfig, bgp: EosBgp, mode: EosContext, tokens: list[str], raw: str
) -> object:
    family: EosFamily = bgp.family(mode.name)
    match tokens:
        case ["neighbor", who, "activate"]:
            key = _key(bgp, who)
            family.activated.add(key)
            family.deactivated.discard(key)
        case ["no", "neighbor", who, "activate"]:
            key = _key(bgp, who)
            family.activated.discard(key)
            family.deactivated.add(key)
        case ["default", "neighbor", who, "activate"]:
            key = _key(bgp, who)
            family.activated.discard(key)
            family.deactivated.discard(key)
        case ["neighbor", who, "route-map", name, ("in" | "out") as direction]:
            table = family.route_map_in if direction == "in" else family.route_map_out
            table[_key(bgp, who)] = name
        case ["no" | "default", "neighbor", who, "route-map", *args] if args[-1:] in (
            ["in"],
            ["out"],
        ):
            table = family.route_map_in if args[-1] == "in" else family.route_map_out
            table.pop(_key(bgp, who), None)
        case ["neighbor", who, option, *_] if option in AF_NEIGHBOR:
            _key(bgp, who)
            add_line(family.extra, raw)
        case ["no" | "default", "neighbor", who, option, *_] if option in AF_NEIGHBOR:
            _key(bgp, who)
            negate(family.extra, raw.split(None, 1)[1], keep_no=tokens[0] == "no")
        case ["neighbor", *_] | ["no" | "default", "neighbor", *_]:
            return NOT_HERE
        case _ if known(ADDRESS_FAMILY, tokens):
            return keep_verbatim(config, mode, tokens, raw)
        case _:
            return NOT_HERE
    return mode
