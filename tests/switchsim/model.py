"""Dialect-neutral state of one simulated switch.

Both dialects (EOS and SONiC) read and write the same typed model: the EOS
dialect keeps a `SwitchState` as its running configuration, the SONiC dialect
keeps a config_db document and projects it onto a `SwitchState` for
assertions.  Values are validated here so that both dialects reject the same
bad input.

Interface names are the dialect's own (``Ethernet1`` on EOS, ``Ethernet0`` on
SONiC); ECN thresholds are in kilobytes (1 KB = 1024 bytes).
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass, field
from typing import Any

MTU_MIN = 68
MTU_MAX = 9216
ASN_MAX = 4_294_967_295


@dataclass(frozen=True)
class DeviceFacts:
    """Identity values that never change for a device (serial number, MAC, boot time)."""

    serial: str
    mac: str
    boot_time: float
    now: float

    def port_mac(self, index: int) -> str:
        """A per-port MAC derived from the system MAC."""
        last = (int(self.mac.replace(":", "")[-4:], 16) + index) & 0xFFFF
        return self.mac[:-5] + f"{last >> 8:02x}:{last & 0xFF:02x}"


@dataclass
class EcnQueue:
    """ECN marking thresholds of one transmit queue."""

    kmin_kb: int
    kmax_kb: int
    pmax_percent: int


@dataclass
class InterfaceState:
    """Configuration of one switch port."""

    mtu: int = 9214
    description: str = ""
    ipv4: str | None = None
    pfc_priorities: list[int] = field(default_factory=list)
    ecn: dict[int, EcnQueue] = field(default_factory=dict)
    pfc_headroom_kb: int | None = None
    pfc_xoff_kb: int | None = None


@dataclass
class BgpNeighbor:
    """One BGP peer."""

    remote_as: int
    route_map_in: str | None = None


@dataclass
class BgpState:
    """The BGP process of the default VRF."""

    asn: int
    router_id: str | None = None
    maximum_paths: int = 1
    neighbors: dict[str, BgpNeighbor] = field(default_factory=dict)


@dataclass
class SwitchState:
    """Everything the simulator models about one switch."""

    hostname: str
    model: str
    nos_version: str
    boot_image: str
    interfaces: dict[str, InterfaceState] = field(default_factory=dict)
    dscp_to_tc: dict[int, int] = field(default_factory=dict)
    bgp: BgpState | None = None

    def clone(self) -> SwitchState:
        """Return an independent deep copy (hand-written: far cheaper than copy.deepcopy)."""
        bgp = self.bgp
        return SwitchState(
            hostname=self.hostname,
            model=self.model,
            nos_version=self.nos_version,
            boot_image=self.boot_image,
            interfaces={
                name: InterfaceState(
                    mtu=p.mtu,
                    description=p.description,
                    ipv4=p.ipv4,
                    pfc_priorities=list(p.pfc_priorities),
                    ecn={
                        q: EcnQueue(e.kmin_kb, e.kmax_kb, e.pmax_percent) for q, e in p.ecn.items()
                    },
                    pfc_headroom_kb=p.pfc_headroom_kb,
                    pfc_xoff_kb=p.pfc_xoff_kb,
                )
                for name, p in self.interfaces.items()
            },
            dscp_to_tc=dict(self.dscp_to_tc),
            bgp=None
            if bgp is None
            else BgpState(
                asn=bgp.asn,
                router_id=bgp.router_id,
                maximum_paths=bgp.maximum_paths,
                neighbors={
                    ip: BgpNeighbor(n.remote_as, n.route_map_in) for ip, n in bgp.neighbors.items()
                },
            ),
        )

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-ready dict (integer keys become strings)."""
        bgp = self.bgp
        return {
            "hostname": self.hostname,
            "model": self.model,
            "nos_version": self.nos_version,
            "boot_image": self.boot_image,
            "interfaces": {
                name: {
                    "mtu": p.mtu,
                    "description": p.description,
                    "ipv4": p.ipv4,
                    "pfc_priorities": list(p.pfc_priorities),
                    "ecn": {
                        str(q): {
                            "kmin_kb": e.kmin_kb,
                            "kmax_kb": e.kmax_kb,
                            "pmax_percent": e.pmax_percent,
                        }
                        for q, e in sorted(p.ecn.items())
                    },
                    "pfc_headroom_kb": p.pfc_headroom_kb,
                    "pfc_xoff_kb": p.pfc_xoff_kb,
                }
                for name, p in self.interfaces.items()
            },
            "dscp_to_tc": {str(d): t for d, t in sorted(self.dscp_to_tc.items())},
            "bgp": None
            if bgp is None
            else {
                "asn": bgp.asn,
                "router_id": bgp.router_id,
                "maximum_paths": bgp.maximum_paths,
                "neighbors": {
                    ip: {"remote_as": n.remote_as, "route_map_in": n.route_map_in}
                    for ip, n in bgp.neighbors.items()
                },
            },
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SwitchState:
        """Build a state from `to_dict` output, validating every value."""
        interfaces = {
            str(name): _interface_from_dict(port)
            for name, port in data.get("interfaces", {}).items()
        }
        bgp_data = data.get("bgp")
        bgp = None
        if bgp_data is not None:
            bgp = BgpState(
                asn=check_asn(int(bgp_data["asn"])),
                router_id=check_router_id(bgp_data.get("router_id")),
                maximum_paths=check_range(
                    "maximum-paths", int(bgp_data.get("maximum_paths", 1)), 1, 512
                ),
                neighbors={
                    check_ipv4(str(ip)): BgpNeighbor(
                        remote_as=check_asn(int(n["remote_as"])), route_map_in=n.get("route_map_in")
                    )
                    for ip, n in bgp_data.get("neighbors", {}).items()
                },
            )
        return cls(
            hostname=check_hostname(str(data["hostname"])),
            model=str(data["model"]),
            nos_version=str(data["nos_version"]),
            boot_image=str(data["boot_image"]),
            interfaces=interfaces,
            dscp_to_tc={
                check_range("dscp", int(d), 0, 63): check_range("traffic-class", int(t), 0, 7)
                for d, t in data.get("dscp_to_tc", {}).items()
            },
            bgp=bgp,
        )


def _interface_from_dict(data: dict[str, Any]) -> InterfaceState:
    headroom = data.get("pfc_headroom_kb")
    xoff = data.get("pfc_xoff_kb")
    return InterfaceState(
        mtu=check_mtu(int(data.get("mtu", 9214))),
        description=str(data.get("description", "")),
        ipv4=check_ipv4_interface(data["ipv4"]) if data.get("ipv4") else None,
        pfc_priorities=sorted(
            {check_range("priority", int(p), 0, 7) for p in data.get("pfc_priorities", [])}
        ),
        ecn={
            check_range("tx-queue", int(q), 0, 7): check_ecn(
                int(e["kmin_kb"]), int(e["kmax_kb"]), int(e["pmax_percent"])
            )
            for q, e in data.get("ecn", {}).items()
        },
        pfc_headroom_kb=None
        if headroom is None
        else check_range("headroom", int(headroom), 1, 1_048_576),
        pfc_xoff_kb=None
        if xoff is None
        else check_range("xoff-threshold", int(xoff), 1, 1_048_576),
    )


def check_range(what: str, value: int, low: int, high: int) -> int:
    """Return `value` if it lies in [low, high], else raise ValueError."""
    if not low <= value <= high:
        raise ValueError(f"{what} {value} out of range {low}-{high}")
    return value


def check_mtu(value: int) -> int:
    """Validate an L3 MTU."""
    return check_range("mtu", value, MTU_MIN, MTU_MAX)


def check_asn(value: int) -> int:
    """Validate a 4-byte AS number."""
    return check_range("AS number", value, 1, ASN_MAX)


def check_ecn(kmin: int, kmax: int, pmax: int) -> EcnQueue:
    """Validate ECN thresholds: 1 <= kmin <= kmax, 1 <= pmax <= 100."""
    check_range("minimum-threshold", kmin, 1, 1_048_576)
    check_range("maximum-threshold", kmax, 1, 1_048_576)
    check_range("max-mark-probability", pmax, 1, 100)
    if kmin > kmax:
        raise ValueError(f"minimum threshold {kmin} exceeds maximum threshold {kmax}")
    return EcnQueue(kmin_kb=kmin, kmax_kb=kmax, pmax_percent=pmax)


def check_ipv4(text: str) -> str:
    """Validate a dotted-quad IPv4 address."""
    try:
        return str(ipaddress.IPv4Address(text))
    except ValueError as exc:
        raise ValueError(f"invalid IPv4 address {text!r}") from exc


def check_router_id(text: object) -> str | None:
    """Validate an optional router id."""
    return None if text is None else check_ipv4(str(text))


def check_ipv4_interface(text: str) -> str:
    """Validate an interface address such as ``10.0.0.0/31``."""
    if "/" not in text:
        raise ValueError(f"address {text!r} lacks a prefix length")
    try:
        return str(ipaddress.IPv4Interface(text))
    except ValueError as exc:
        raise ValueError(f"invalid interface address {text!r}") from exc


_HOSTNAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$")


def check_hostname(text: str) -> str:
    """Validate a hostname (letters, digits, ``-``, ``_``, ``.``)."""
    if not _HOSTNAME.match(text):
        raise ValueError(f"invalid hostname {text!r}")
    return text


def natural_key(name: str) -> tuple[str, tuple[int, ...]]:
    """Sort key that orders Ethernet2 before Ethernet10."""
    prefix = re.sub(r"[\d/]+$", "", name)
    numbers = tuple(int(n) for n in re.findall(r"\d+", name[len(prefix) :]))
    return prefix, numbers


def eos_version_of(image: str) -> str:
    """Return the EOS version named by a boot image such as ``flash:EOS-4.31.0F.swi``."""
    match = re.match(r"^(?:flash:)?/?EOS(?:64)?-([A-Za-z0-9.]+)\.swi$", image)
    if match is None:
        raise ValueError(f"not an EOS image name: {image!r}")
    return match.group(1)


def sonic_version_of(image: str) -> str:
    """Return the SONiC version named by an image path, URL or installed-image name.

    ``http://x/sonic-mellanox-202405.2.bin`` and ``SONiC-OS-202405.2`` both name
    ``202405.2``: the text after the last ``-`` of the file name, less ``.bin``.
    """
    base = image.rstrip("/").rsplit("/", 1)[-1]
    base = base.removesuffix(".bin")
    version = base.rsplit("-", 1)[-1]
    if not re.match(r"^[A-Za-z0-9][A-Za-z0-9._]*$", version):
        raise ValueError(f"not a SONiC image name: {image!r}")
    return version


SONIC_DEFAULT_DSCP = {d: 1 for d in range(64)} | {3: 3, 4: 4, 5: 2, 8: 0, 46: 5, 48: 6}
"""``DSCP_TO_TC_MAP|AZURE`` as sonic-buildimage's qos_config.j2 renders it at boot."""


def default_state(hostname: str, dialect: str, ports: int = 4) -> SwitchState:
    """A small plausible switch of the given dialect with `ports` unconfigured ports."""
    if dialect == "eos":
        names = [f"Ethernet{i}" for i in range(1, ports + 1)]
        return SwitchState(
            hostname=hostname,
            model="DCS-7280CR3-32P4",
            nos_version="4.30.1F",
            boot_image="flash:EOS-4.30.1F.swi",
            interfaces={n: InterfaceState(mtu=9214) for n in names},
        )
    if dialect == "sonic":
        names = [f"Ethernet{4 * i}" for i in range(ports)]
        return SwitchState(
            hostname=hostname,
            model="Mellanox-SN4600C-C64",
            nos_version="202311.1",
            boot_image="SONiC-OS-202311.1",
            interfaces={n: InterfaceState(mtu=9100) for n in names},
            dscp_to_tc=dict(SONIC_DEFAULT_DSCP),
        )
    raise ValueError(f"unknown dialect {dialect!r}")
