"""IPv4 addresses as integers, written out without ``ipaddress``.

A 4,096-node fleet renders 130,000+ interface addresses and BGP neighbors; building an
``ipaddress`` object for each only to print it costs more than the rest of render. The
address plan keeps addresses as 32-bit integers and these routines write them exactly
as ``str(IPv4Address(n))`` and ``str(IPv4Interface((n, prefixlen)))`` do.
"""

from __future__ import annotations

_OCTETS = tuple(str(i) for i in range(256))


def ipv4_text(packed: int) -> str:
    """Dotted-quad text of a 32-bit address (``167772161`` -> ``10.0.0.1``)."""
    octet = _OCTETS
    return (
        f"{octet[packed >> 24]}.{octet[(packed >> 16) & 255]}."
        f"{octet[(packed >> 8) & 255]}.{octet[packed & 255]}"
    )


def interface_text(packed: int, prefixlen: int) -> str:
    """Address and prefix length (``10.0.0.1/31``)."""
    return f"{ipv4_text(packed)}/{prefixlen}"
