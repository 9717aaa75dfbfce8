"""The built-in policy library; importing this package registers every policy."""

from policies.builtin import bgp, cabling, fabric, firmware, lossless, mtu, peering, qos

__all__ = ["bgp", "cabling", "fabric", "firmware", "lossless", "mtu", "peering", "qos"]
