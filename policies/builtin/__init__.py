"""The built-in policy library; importing this package registers every policy."""

from policies.builtin import bgp, firmware, mtu, qos

__all__ = ["bgp", "firmware", "mtu", "qos"]
