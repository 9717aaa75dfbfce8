"""SONiC BGP configuration -> plumb's flat state (pure).

SONiC configures FRR in one of two ways, told apart by ``DEVICE_METADATA|localhost``
``frr_mgmt_framework_config``:

- ``bgpcfgd`` (the default): the AS is ``DEVICE_METADATA|localhost`` ``bgp_asn`` and
  each peer a ``BGP_NEIGHBOR|<ip>`` row (``asn``, ``name``, ``local_addr``,
  ``holdtime``...). Router-id (the Loopback0 address), maximum-paths and the inbound
  route-maps (on the peer groups) come from bgpcfgd's templates, so they are read from
  the FRR running configuration (``bgpraw``) and config_db cannot change them.
- ``frrcfgd`` (``frr_mgmt_framework_config: "true"``): ``BGP_GLOBALS|default``
  ``local_asn`` / ``router_id``, ``BGP_GLOBALS_AF|default|ipv4_unicast``
  ``max_ebgp_paths``, ``BGP_NEIGHBOR|default|<ip>`` ``asn`` and
  ``BGP_NEIGHBOR_AF|default|<ip>|ipv4_unicast`` ``route_map_in``.

``system/bgp_config`` reports the mode. IPv6 peers are read like IPv4 ones, their
inbound route-map from the ``ipv6_unicast`` family (``BGP_NEIGHBOR_AF|default|<ip>|
ipv6_unicast``, bgpraw's ``address-family ipv6 unicast``). A peer keyed by an interface
name (``BGP_NEIGHBOR|default|Ethernet0``, ``BGP_NEIGHBOR|Ethernet0``: BGP unnumbered,
FRR's ``neighbor IF interface``) is read under its interface name: its ``asn``, else its
``peer_type`` (``external`` / ``internal``, FRR's ``remote-as external``), and its
inbound route-map from ``ipv4_unicast`` (IPv4 routes with IPv6 next hops, RFC 8950).
An AS that is not a number (``bgp_asn: "None"`` on a chassis supervisor) is no AS: BGP
is unconfigured. A key that is neither an address nor an interface name, or a row
without either field, is skipped (``None``),
never the device's failure. On a multi-ASIC switch each ASIC namespace runs its own BGP:
peers are merged over the namespaces.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping
from typing import Any

from reconciler.settings import Scalar

Spaces = Mapping[str, Mapping[str, Any]]
FRRCFGD, BGPCFGD = "frrcfgd", "bgpcfgd"


def bgp_mode(spaces: Spaces) -> str:
    host = spaces.get("localhost", spaces.get("", {}))
    meta = host.get("DEVICE_METADATA", {}).get("localhost", {})
    return FRRCFGD if str(meta.get("frr_mgmt_framework_config", "")) == "true" else BGPCFGD


_OCTET = r"(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"
_IPV4 = re.compile(rf"{_OCTET}(?:\.{_OCTET}){{3}}")
_INTERFACE = re.compile(r"^(?:Ethernet|Eth|Vlan|PortChannel|Loopback)[0-9][0-9A-Za-z_./:-]{0,40}$")


def peer_of(key: str) -> tuple[str, str]:
    """``BGP_NEIGHBOR`` key -> (vrf, peer): ``10.0.0.1`` or ``default|10.0.0.1`` give the
    address (normalised), ``Ethernet0`` or ``default|Vlan100`` the interface name of an
    unnumbered peer; anything else gives ``""`` (not a peer plumb can name)."""
    vrf, _, peer = key.rpartition("|")
    try:
        return vrf or "default", str(ipaddress.ip_address(peer))
    except ValueError:
        return vrf or "default", peer if _INTERFACE.match(peer) else ""


def is_address(peer: str) -> bool:
    """Whether a peer name is an IP address (not an unnumbered peer's interface)."""
    if _IPV4.fullmatch(peer):  # the common case, without building an address object
        return True
    if ":" not in peer:  # neither dotted-quad IPv4 nor IPv6: an interface name
        return False
    try:
        ipaddress.ip_address(peer)
    except ValueError:
        return False
    return True


def as_number(value: Any) -> int | None:
    """A config_db AS number (``"65100"``), else None: a supervisor's minigraph gives
    ``bgp_asn: "None"`` where BGP is unconfigured."""
    text = str(value).strip()
    return int(text) if text.isdigit() else None


def remote_as(fields: Mapping[str, Any]) -> Scalar:
    """A peer row's AS (``asn``), else its ``peer_type`` (``external``/``internal``)."""
    asn = fields.get("asn")
    if isinstance(asn, str) and asn.isdigit():
        return int(asn)
    kind = fields.get("peer_type")
    return kind if kind in ("external", "internal") else None


def af_of(peer: str) -> str:
    """The config_db address family of a peer's inbound route-map: its own address's,
    IPv4 for an interface (unnumbered) peer."""
    return "ipv6_unicast" if ":" in peer else "ipv4_unicast"


def parse_bgpraw(text: str) -> dict[str, Any]:
    """FRR running config -> router-id, ipv4 maximum-paths, inbound route-map per peer
    in the peer's family (a peer group's route-map applies to its members)."""
    found: dict[str, Any] = {"router_id": None, "maximum_paths": None, "maps": {}}
    groups: dict[str, str] = {}
    maps: dict[str, dict[str, str]] = {}  # family -> peer or group -> route-map
    in_bgp, family = False, ""
    for raw in text.splitlines():
        words = raw.split()
        if words[:1] == ["neighbor"] and words[2:3] == ["interface"]:
            del words[2]  # unnumbered: "neighbor Ethernet0 interface peer-group G"
        if not words or words[0] == "!":
            continue
        if not raw.startswith(" "):
            in_bgp = words[:2] == ["router", "bgp"] and len(words) == 3
            family = ""
            continue
        if not in_bgp:
            continue
        if words[0] == "address-family":
            family = " ".join(words[1:])
        elif words[0] == "exit-address-family":
            family = ""
        elif words[:2] == ["bgp", "router-id"] and len(words) == 3:
            found["router_id"] = words[2]
        elif words[0] == "maximum-paths" and len(words) == 2 and family == "ipv4 unicast":
            found["maximum_paths"] = int(words[1])
        elif words[0] == "neighbor" and len(words) == 4 and words[2] == "peer-group":
            groups[words[1]] = words[3]
        elif words[0] == "neighbor" and len(words) == 5 and words[2:5:2] == ["route-map", "in"]:
            maps.setdefault(family.replace(" ", "_") or "ipv4_unicast", {})[words[1]] = words[3]
    per_peer: dict[str, str] = {}
    for peer in {*groups, *(p for by in maps.values() for p in by)}:
        by = maps.get(af_of(peer), {})
        name = by.get(peer) or by.get(groups.get(peer, ""))
        if name is not None:
            per_peer[peer] = name
    found["maps"] = per_peer
    return found


def _frrcfgd(db: Mapping[str, Any], out: dict[str, Scalar]) -> None:
    glob = db.get("BGP_GLOBALS", {}).get("default", {})
    if "local_asn" in glob:
        out["bgp/asn"] = as_number(glob["local_asn"])
    if "router_id" in glob:
        out["bgp/router_id"] = str(glob["router_id"])
    af = db.get("BGP_GLOBALS_AF", {}).get("default|ipv4_unicast", {})
    if "max_ebgp_paths" in af:
        out["bgp/maximum_paths"] = int(af["max_ebgp_paths"])
    filters = db.get("BGP_NEIGHBOR_AF", {})
    for key, fields in db.get("BGP_NEIGHBOR", {}).items():
        vrf, peer = peer_of(key)
        if vrf != "default" or not peer:
            continue
        out[f"bgp/neighbors/{peer}/remote_as"] = remote_as(fields)
        maps = filters.get(f"default|{peer}|{af_of(peer)}", {}).get("route_map_in") or [""]
        out[f"bgp/neighbors/{peer}/inbound_filter"] = str(
            maps[0] if isinstance(maps, list) else maps
        )


def _bgpcfgd(db: Mapping[str, Any], out: dict[str, Scalar]) -> None:
    meta = db.get("DEVICE_METADATA", {}).get("localhost", {})
    if "bgp_asn" in meta:
        out["bgp/asn"] = as_number(meta["bgp_asn"])
    raw = db.get("bgpraw")
    running = parse_bgpraw(raw) if isinstance(raw, str) else None
    if running is not None:
        for key in ("router_id", "maximum_paths"):
            if running[key] is not None:
                out[f"bgp/{key}"] = running[key]
    for key, fields in db.get("BGP_NEIGHBOR", {}).items():
        vrf, peer = peer_of(key)
        if vrf != "default" or not peer:
            continue
        out[f"bgp/neighbors/{peer}/remote_as"] = remote_as(fields)
        name = None if running is None else running["maps"].get(peer, "")
        out[f"bgp/neighbors/{peer}/inbound_filter"] = name


def parse_bgp(spaces: Spaces) -> dict[str, Scalar]:
    """The BGP paths: AS, router-id, maximum-paths and peers (``None`` when unset)."""
    mode = bgp_mode(spaces)
    out: dict[str, Scalar] = {
        "system/bgp_config": mode,
        "bgp/asn": None,
        "bgp/router_id": None,
        "bgp/maximum_paths": None,
    }
    found: dict[str, Scalar] = {}
    asns: set[Scalar] = set()
    for space, db in spaces.items():
        if space == "localhost" and len(spaces) > 1:
            continue  # the host of a multi-ASIC switch runs no BGP peering of its own
        one: dict[str, Scalar] = {}
        (_frrcfgd if mode == FRRCFGD else _bgpcfgd)(db, one)
        asns.add(one.pop("bgp/asn", None))
        found.update(one)
    if len(asns) == 1 and None not in asns:
        out["bgp/asn"] = asns.pop()
        out.update(found)
    return out
