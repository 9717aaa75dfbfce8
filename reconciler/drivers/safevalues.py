"""Strict validation of every value a switch driver renders into a device command.

Sits between the plan (paths and scalars from intent or from a device's own
before-state) and the renderers that build CLI lines, JSON patches and shell
commands. Each value is checked against a strict pattern or integer range
*before* any command is built; anything else raises
:class:`~reconciler.errors.ConfigRejected` naming the field, so text such as
``Ethernet1; reload``, a newline, ``|``, a backtick, ``$(...)`` or a quote can
never reach a device. Pure: no I/O, no third-party imports.

:func:`parse_setting` turns one ``(path, value)`` of the switch namespace (see
:mod:`reconciler.render`) into a typed :class:`Setting`; the path's own parts
(port, peer address or interface, DSCP, priority) are validated like values.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass

from reconciler.errors import ConfigRejected
from reconciler.settings import Scalar

INTERFACE = re.compile(r"^Ethernet[0-9]{1,3}(?:/[0-9]{1,3}){0,2}$")
_DOTTED = re.compile(r"^[0-9]{1,3}(?:\.[0-9]{1,3}){3}$")
_PREFIX = re.compile(r"^[0-9]{1,3}(?:\.[0-9]{1,3}){3}/[0-9]{1,2}$")
_HEX = re.compile(r"^[0-9a-f:]{2,39}$")
_HEX_PREFIX = re.compile(r"^[0-9a-f:]{2,39}/[0-9]{1,3}$")
FILTER = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]{0,62}$")
VERSION = re.compile(r"^[0-9A-Za-z][0-9A-Za-z._]{0,39}$")
NAME = re.compile(r"^plumb-[0-9a-f]{8}$")
_PRIORITIES = re.compile(r"^(?:[0-7](?:,[0-7]){0,7})?$")
_DIGITS = re.compile(r"^[0-9]{1,5}$")
_KEYWORD = re.compile(r"^[a-z][a-z-]{0,39}$")
EOS_IMAGE = re.compile(r"^(?:flash|usb1|file):[A-Za-z0-9._/-]{1,120}\.swi$")
IMAGE_URL = re.compile(r"^https?://[A-Za-z0-9._~/:%+-]{1,200}$")

MTU = (68, 9216)
ASN = (1, 4_294_967_295)
KBYTES = (1, 1_048_576)
PERCENT = (1, 100)
PATHS = (1, 512)
DSCP = (0, 63)
PRIORITY = (0, 7)
ECN_FIELDS = ("kmin_kb", "kmax_kb", "pmax_percent")


@dataclass(frozen=True)
class Setting:
    """One validated setting: ``kind`` names the knob, ``subject`` the port, peer,
    DSCP or priority it belongs to, ``value`` is safe to render (None: remove)."""

    path: str
    kind: str
    subject: str
    value: int | str | None


class SafeValues:
    """Validators bound to one device, so every refusal names device and field."""

    def __init__(self, device: str) -> None:
        self.device = device

    def _refuse(self, field: str, value: object, why: str) -> ConfigRejected:
        return ConfigRejected(self.device, f"{field}: unsafe value {str(value)[:60]!r}: {why}")

    def _text(self, value: object, field: str, pattern: re.Pattern[str], what: str) -> str:
        if not isinstance(value, str) or pattern.fullmatch(value) is None:
            raise self._refuse(field, value, f"not {what}")
        return value

    def interface(self, value: object, field: str) -> str:
        return self._text(value, field, INTERFACE, "an Ethernet interface name")

    def ipv4(self, value: object, field: str) -> str:
        text = self._text(value, field, _DOTTED, "a dotted-quad IPv4 address")
        try:
            return str(ipaddress.IPv4Address(text))
        except ValueError:
            raise self._refuse(field, value, "not an IPv4 address") from None

    def ipv4_prefix(self, value: object, field: str) -> str:
        text = self._text(value, field, _PREFIX, "an IPv4 address with a prefix length")
        try:
            return str(ipaddress.IPv4Interface(text))
        except ValueError:
            raise self._refuse(field, value, "not an IPv4 interface address") from None

    def ipv6(self, value: object, field: str) -> str:
        """A global IPv6 address in the compressed form the NOSes print; a link-local
        one is refused (it names no peer without an interface: write the interface)."""
        text = self._text(value, field, _HEX, "a lower-case IPv6 address")
        try:
            address = ipaddress.IPv6Address(text)
        except ValueError:
            raise self._refuse(field, value, "not an IPv6 address") from None
        if address.is_link_local:
            raise self._refuse(field, value, "a link-local peer is written as its interface")
        return str(address)

    def ipv6_prefix(self, value: object, field: str) -> str:
        text = self._text(value, field, _HEX_PREFIX, "an IPv6 address with a prefix length")
        try:
            return str(ipaddress.IPv6Interface(text))
        except ValueError:
            raise self._refuse(field, value, "not an IPv6 interface address") from None

    def peer(self, value: str, field: str) -> str:
        """A BGP neighbour as plumb keys it: IPv4 or IPv6 address, or (unnumbered) the
        Ethernet interface it runs on."""
        if value.startswith("Ethernet"):
            return self.interface(value, field)
        return self.ipv6(value, field) if ":" in value else self.ipv4(value, field)

    def integer(self, value: object, field: str, bounds: tuple[int, int]) -> int:
        low, high = bounds
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise self._refuse(field, value, f"not an integer in {low}..{high}")
        return value

    def number_token(self, value: object, field: str, bounds: tuple[int, int]) -> int:
        """A number that arrives as text (a path component such as a DSCP)."""
        text = self._text(value, field, _DIGITS, "a decimal number")
        return self.integer(int(text), field, bounds)

    def keyword(self, value: object, field: str) -> str:
        """A CLI keyword read back from the device (an option name such as ``weight``)."""
        return self._text(value, field, _KEYWORD, "a lower-case CLI keyword")

    def filter_name(self, value: object, field: str) -> str:
        return self._text(value, field, FILTER, "a route-map / filter name")

    def version(self, value: object, field: str) -> str:
        return self._text(value, field, VERSION, "a version string")

    def image(self, value: object, field: str, pattern: re.Pattern[str]) -> str:
        """A boot image name or download URL, once ``{version}`` is filled in."""
        return self._text(value, field, pattern, "an image name or URL of the allowed form")

    def object_name(self, value: object, field: str) -> str:
        """Names plumb generates for sessions, checkpoints, timers and files."""
        return self._text(value, field, NAME, "a plumb object name (plumb-<8 hex>)")

    def priorities(self, value: object, field: str) -> list[int]:
        text = self._text(value, field, _PRIORITIES, "a comma list of priorities 0-7")
        found = [int(p) for p in text.split(",")] if text else []
        if len(set(found)) != len(found):
            raise self._refuse(field, value, "a priority is repeated")
        return sorted(found)

    # -- the switch path namespace ---------------------------------------------------

    def setting(self, path: str, value: Scalar) -> Setting:
        """Validate one path and its value; unknown paths are refused too."""
        parts = path.split("/")
        match parts:
            case ["system", "nos_version"]:
                return Setting(path, "nos_version", "", self.version(value, path))
            case ["interfaces", *port, field] if port:  # EOS ports may hold "/"
                port_name = self.interface("/".join(port), path)
                return self._interface_setting(path, port_name, field, value)
            case ["qos", "dscp", dscp]:
                code = self.number_token(dscp, path, DSCP)
                tc = None if value is None else self.integer(value, path, PRIORITY)
                return Setting(path, "dscp", str(code), tc)
            case ["qos", "ecn", prio, field] if field in ECN_FIELDS:
                queue = self.number_token(prio, path, PRIORITY)
                bounds = PERCENT if field == "pmax_percent" else KBYTES
                return Setting(
                    path, f"ecn_{field}", str(queue), self._optional_int(value, path, bounds)
                )
            case ["qos", ("pfc_xoff_kb" | "pfc_headroom_kb") as field]:
                return Setting(path, field, "", self._optional_int(value, path, KBYTES))
            case ["bgp", "asn"]:
                return Setting(path, "asn", "", self._optional_int(value, path, ASN))
            case ["bgp", "router_id"]:
                rid = None if value is None else self.ipv4(value, path)
                return Setting(path, "router_id", "", rid)
            case ["bgp", "maximum_paths"]:
                return Setting(path, "maximum_paths", "", self._optional_int(value, path, PATHS))
            case ["bgp", "neighbors", *peer, "remote_as"] if peer:  # "Ethernet1/1" holds "/"
                asn = self._optional_int(value, path, ASN)
                return Setting(path, "remote_as", self.peer("/".join(peer), path), asn)
            case ["bgp", "neighbors", *peer, "inbound_filter"] if peer:
                name = "" if value in (None, "") else self.filter_name(value, path)
                return Setting(path, "inbound_filter", self.peer("/".join(peer), path), name)
        raise ConfigRejected(self.device, f"{path}: not a setting switch drivers can write")

    def _optional_int(self, value: Scalar, path: str, bounds: tuple[int, int]) -> int | None:
        return None if value is None else self.integer(value, path, bounds)

    def _interface_setting(self, path: str, port: str, field: str, value: Scalar) -> Setting:
        if field == "mtu":
            return Setting(path, "mtu", port, self._optional_int(value, path, MTU))
        if field == "address":
            address = None if value in (None, "") else self.ipv4_prefix(value, path)
            return Setting(path, "address", port, address)
        if field == "ipv6_address":
            address = None if value in (None, "") else self.ipv6_prefix(value, path)
            return Setting(path, "ipv6_address", port, address)
        if field == "pfc_priorities":
            text = "" if value is None else value
            listed = self.priorities(text, path)
            return Setting(path, "pfc_priorities", port, ",".join(map(str, listed)))
        raise ConfigRejected(self.device, f"{path}: not a setting switch drivers can write")
