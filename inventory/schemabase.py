"""What every file schema builds on: the strict base model and the constrained name and
address types.

The inventory models (:mod:`inventory.models`), the compact topology section
(:mod:`inventory.topology_model`), intent and rollout specs all declare their fields
with these, so a name or an address is checked the same way wherever it is written.
"""

from __future__ import annotations

from ipaddress import (
    IPv4Address,
    IPv4Interface,
    IPv4Network,
    IPv6Interface,
    IPv6Network,
    ip_interface,
)
from typing import Annotated

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    PlainValidator,
    StringConstraints,
    WithJsonSchema,
)

Name = Annotated[
    str,
    StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$"),
]
"""Device, rack, gang and group names: safe to put in a file name or a CLI argument."""

PortName = Annotated[
    str,
    StringConstraints(pattern=r"^[A-Za-z][A-Za-z0-9/._-]{0,31}$"),
]
"""Interface names as the NOS spells them (``Ethernet12``, ``Ethernet1/1``, ``eth3``)."""

Label = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9._/-]{0,62}$")]


def _address_text(value: object) -> object:
    """Addresses are written as text: ``ipaddress`` would read ``10`` as ``0.0.0.10``."""
    if isinstance(value, str | IPv4Address | IPv4Interface | IPv4Network):
        return value
    if isinstance(value, IPv6Interface | IPv6Network):
        return value
    raise ValueError("an address is written as text (e.g. 10.0.0.1), not as a number")


Ipv4 = Annotated[IPv4Address, BeforeValidator(_address_text)]
Ipv4Interface = Annotated[IPv4Interface, BeforeValidator(_address_text)]
Ipv4Network = Annotated[IPv4Network, BeforeValidator(_address_text)]
"""IPv4 values as dotted-quad text only (``10.0.0.1``, ``10.0.0.0/31``)."""
Ipv6Interface = Annotated[IPv6Interface, BeforeValidator(_address_text)]
Ipv6Network = Annotated[IPv6Network, BeforeValidator(_address_text)]
"""IPv6 values as text (``fc00::1/127``, ``fc00:0:1::/64``)."""


def _interface(value: object) -> IPv4Interface | IPv6Interface:
    """An interface address of either family, with one message for both when it is
    neither (pydantic would report each member of a union on its own)."""
    value = _address_text(value)
    if isinstance(value, IPv4Interface | IPv6Interface):
        return value
    try:
        return ip_interface(str(value))
    except ValueError:
        raise ValueError(
            "not an IPv4 or IPv6 interface address (e.g. 10.0.0.0/31, fc00::/127)"
        ) from None


IpInterface = Annotated[
    IPv4Interface | IPv6Interface,
    PlainValidator(_interface),
    WithJsonSchema(
        {
            "anyOf": [
                {"format": "ipv4interface", "type": "string"},
                {"format": "ipv6interface", "type": "string"},
            ]
        }
    ),
]
"""An IPv4 or an IPv6 interface address, as text."""


class Strict(BaseModel):
    """Base for every file model: immutable, unknown keys refused."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=False)
