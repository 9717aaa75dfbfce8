"""A small generated fleet (benchmarks/genfleet.py) switched to one BGP peering mode."""

from __future__ import annotations

import re
from pathlib import Path

from benchmarks.genfleet import generate_fleet
from tests.fleetcopy import FleetCopy

IPV6_POOL = "fc00:0:1::/64"


def peering_fleet(
    root: Path, mode: str, nodes: int = 8, seed: int = 0, *, link_local_only: bool = False
) -> FleetCopy:
    """``nodes`` GPU nodes; every switch peering ``mode`` (``ipv4``: the file unchanged;
    ``ipv6`` also declares an IPv6 pool for the leaf-spine links). ``link_local_only``
    (unnumbered) drops the leaf-spine IPv4 pool: those links get no address at all."""
    generate_fleet(root, nodes, seed=seed)
    fleet = FleetCopy(root)
    if mode != "ipv4":
        fleet.append("intent/bgp.yaml", f"  peering: {mode}\n")
    if mode == "ipv6":
        fleet.append("intent/addressing.yaml", f"  ipv6_pools:\n    leaf-spine: {IPV6_POOL}\n")
    if link_local_only:
        file = root / "intent" / "addressing.yaml"
        file.write_text(re.sub(r"(?m)^    leaf-spine: .*\n", "", file.read_text(), count=1))
    return fleet
