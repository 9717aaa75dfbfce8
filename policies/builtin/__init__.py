"""The built-in policy library; importing this package registers every policy."""

from policies.builtin import bgp, cabling, firmware, mtu, qos

__all__ = ["bgp", "cabling", "firmware", "mtu", "qos"]
