"""LLDP neighbour tables -> plumb's flat state (pure): what each switch port sees on the wire.

Two sources, one result. For every local port with a neighbour:

* ``lldp/<port>/system``: the neighbour's system name (as it advertises it, so possibly
  an FQDN; matching it to inventory is the cabling policy's business);
* ``lldp/<port>/port``: the neighbour's port. The port id when it is an interface name;
  when the port id is a MAC address (Linux hosts running lldpd advertise the NIC's MAC
  by default, and put the interface name in the port description) the description, if
  it names an interface; otherwise the port id as sent.

Ports without a neighbour produce nothing. When a port hears several agents (a GPU
NIC's firmware agent next to the host's lldpd is common), the one that names its
system and its interface wins; ties keep the device's order.

Sources:

* EOS ``show lldp neighbors detail | json``: ``lldpNeighbors.<port>.lldpNeighborInfo``
  is a list; the port is ``neighborInterfaceInfo.interfaceId_v2`` (EOS 4.2x and later),
  else ``interfaceId``, which EOS prints inside literal double quotes (``"\\"Ethernet1\\""``);
  its kind is ``interfaceIdType`` (``interfaceName``, ``macAddress``, ``local``, ...).
* SONiC: lldpd's ``lldpctl -f json`` in the ``lldp`` container. ``lldp.interface`` is an
  object keyed by local port when there is one, and a list of one-key objects when
  there are more (the same port may repeat, one entry per neighbour). ``chassis`` is
  keyed by the system name, or holds ``id``/``descr`` directly when the neighbour sends
  none. ``port.id`` is ``{"type": "ifname" | "mac" | "local" | ..., "value": ...}``.

Malformed input raises ``ValueError`` naming where (the drivers turn it into that
device's error).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from reconciler.settings import Scalar

_MAC = re.compile(
    r"[0-9a-f]{2}([:-])(?:[0-9a-f]{2}\1){4}[0-9a-f]{2}|(?:[0-9a-f]{4}\.){2}[0-9a-f]{4}"
)
_INTERFACE = re.compile(r"[A-Za-z][A-Za-z0-9_.:/-]*")


def is_mac(text: str) -> bool:
    """Whether ``text`` is a MAC address (``aa:bb:..``, ``aa-bb-..`` or ``aabb.ccdd.eeff``)."""
    return _MAC.fullmatch(text.lower()) is not None


def names_interface(text: str) -> bool:
    """Whether ``text`` reads as an interface name (one token, starts with a letter)."""
    return _INTERFACE.fullmatch(text) is not None and not is_mac(text)


@dataclass(frozen=True)
class Neighbour:
    """One neighbour as heard on a local port."""

    local: str
    system: str
    port: str
    port_is_name: bool  # the port id is an interface name, or a description naming one

    def rank(self) -> int:
        return (2 if self.system else 0) + (1 if self.port_is_name else 0)


def neighbour_port(port_id: str, id_is_mac: bool, description: str) -> tuple[str, bool]:
    """The neighbour port to report and whether it is an interface name."""
    if id_is_mac or is_mac(port_id):
        if names_interface(description):
            return description, True
        return port_id, False
    return port_id, bool(port_id) and names_interface(port_id)


def to_state(neighbours: Iterator[Neighbour]) -> dict[str, Scalar]:
    """The best-ranked neighbour of every local port, as ``lldp/<port>/{system,port}``."""
    best: dict[str, Neighbour] = {}
    for neighbour in neighbours:
        kept = best.get(neighbour.local)
        if kept is None or neighbour.rank() > kept.rank():
            best[neighbour.local] = neighbour
    state: dict[str, Scalar] = {}
    for local, neighbour in best.items():
        state[f"lldp/{local}/system"] = neighbour.system
        state[f"lldp/{local}/port"] = neighbour.port
    return state


# -- shape checks --------------------------------------------------------------------------


def _object(value: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise ValueError(f"LLDP: {where}: expected an object, got {_kind(value)}")
    return value


def _text(value: Any, where: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str | int) or isinstance(value, bool):
        raise ValueError(f"LLDP: {where}: expected a string, got {_kind(value)}")
    return str(value)


def _kind(value: Any) -> str:
    return "nothing" if value is None else type(value).__name__


# -- EOS -----------------------------------------------------------------------------------


def _eos_neighbour(local: str, info: Any, where: str) -> Neighbour:
    entry = _object(info, where)
    system = _text(entry.get("systemName"), f"{where}.systemName")
    port_info = _object(entry.get("neighborInterfaceInfo", {}), f"{where}.neighborInterfaceInfo")
    port_id = _text(port_info.get("interfaceId_v2"), f"{where}.interfaceId_v2")
    if not port_id:
        port_id = _text(port_info.get("interfaceId"), f"{where}.interfaceId").strip('"')
    id_type = _text(port_info.get("interfaceIdType"), f"{where}.interfaceIdType")
    description = _text(
        port_info.get("interfaceDescription"), f"{where}.interfaceDescription"
    ).strip()
    port, is_name = neighbour_port(port_id, id_type == "macAddress", description)
    return Neighbour(local, system, port, is_name)


def _eos_neighbours(data: Any) -> Iterator[Neighbour]:
    top = _object(data, "top level")
    if "lldpNeighbors" not in top:
        raise ValueError("LLDP: top level: no lldpNeighbors (not `show lldp neighbors detail`)")
    for local, port in _object(top["lldpNeighbors"], "lldpNeighbors").items():
        where = f"lldpNeighbors.{local}"
        infos = _object(port, where).get("lldpNeighborInfo", [])
        if not isinstance(infos, list):
            raise ValueError(f"LLDP: {where}.lldpNeighborInfo: expected a list, got {_kind(infos)}")
        for index, info in enumerate(infos):
            yield _eos_neighbour(str(local), info, f"{where}.lldpNeighborInfo[{index}]")


def parse_eos_lldp(data: Any) -> dict[str, Scalar]:
    """EOS ``show lldp neighbors detail | json`` -> ``lldp/<port>/{system,port}``."""
    return to_state(_eos_neighbours(data))


# -- SONiC (lldpd) -------------------------------------------------------------------------


def _one_or_many(value: Any) -> list[Any]:
    """lldpd prints a single object where a list of one is meant."""
    return value if isinstance(value, list) else [value]


def _lldpd_interfaces(interfaces: Any) -> Iterator[tuple[str, Any, str]]:
    """(local port, attributes, where) for every entry of ``lldp.interface``."""
    if isinstance(interfaces, Mapping):
        for name, attributes in interfaces.items():
            yield str(name), attributes, f"lldp.interface.{name}"
        return
    if not isinstance(interfaces, list):
        raise ValueError(
            f"LLDP: lldp.interface: expected an object or a list, got {_kind(interfaces)}"
        )
    for index, entry in enumerate(interfaces):
        one = _object(entry, f"lldp.interface[{index}]")
        if len(one) != 1:
            raise ValueError(
                f"LLDP: lldp.interface[{index}]: expected one interface, got {len(one)} keys"
            )
        ((name, attributes),) = one.items()
        yield str(name), attributes, f"lldp.interface[{index}].{name}"


def _lldpd_system(chassis: Any, where: str) -> str:
    """The system name: the chassis object's only key, unless it holds ``id`` directly."""
    entry = _object(chassis, where)
    if not entry or "id" in entry or "descr" in entry:
        return ""  # the neighbour sent no system name
    if len(entry) != 1:
        raise ValueError(f"LLDP: {where}: expected one system, got {len(entry)} keys")
    name = next(iter(entry))
    _object(entry[name], f"{where}.{name}")
    return str(name)


def _lldpd_neighbour(local: str, attributes: Any, where: str) -> Neighbour | None:
    entry = _object(attributes, where)
    if "port" not in entry and "chassis" not in entry:
        return None  # an interface lldpd lists without a neighbour
    systems = _one_or_many(entry.get("chassis", {}))
    system = _lldpd_system(systems[0], f"{where}.chassis")
    port = _object(_one_or_many(entry.get("port", {}))[0], f"{where}.port")
    port_id_entry = port.get("id", {})
    ident = _object(port_id_entry, f"{where}.port.id")
    port_id = _text(ident.get("value"), f"{where}.port.id.value")
    id_type = _text(ident.get("type"), f"{where}.port.id.type")
    description = _text(port.get("descr"), f"{where}.port.descr").strip()
    name, is_name = neighbour_port(port_id, id_type == "mac", description)
    return Neighbour(local, system, name, is_name)


def _sonic_neighbours(data: Any) -> Iterator[Neighbour]:
    top = _object(data, "top level")
    if "lldp" not in top:
        raise ValueError("LLDP: top level: no lldp object (not `lldpctl -f json`)")
    lldp = top["lldp"]
    if lldp in ({}, [], None):
        return  # lldpd prints an empty object when no port has a neighbour
    for entry in _one_or_many(lldp):
        section = _object(entry, "lldp")
        if "interface" not in section:
            continue
        for local, attributes, where in _lldpd_interfaces(section["interface"]):
            neighbour = _lldpd_neighbour(local, attributes, where)
            if neighbour is not None:
                yield neighbour


def parse_sonic_lldp(data: Any) -> dict[str, Scalar]:
    """SONiC ``lldpctl -f json`` (lldpd) -> ``lldp/<port>/{system,port}``."""
    return to_state(_sonic_neighbours(data))
