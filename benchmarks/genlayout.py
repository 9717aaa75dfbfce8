"""The shape of a generated fleet: the fabric a node count needs, and every name,
management address and cable of the fleet, computed once. ``benchmarks/genfleet.py``
writes it out as record files, ``benchmarks/gencompact.py`` as topology rules.

Sizing rule for N nodes (N a multiple of 4)
-------------------------------------------
* Every node has 8 backend NICs (``eth0``..``eth7``, 400 Gb/s, NIC i on rail i) and one
  frontend NIC ``fe0`` (100 Gb/s) cabled to a frontend switch (32 nodes per switch).
* Every rail has ``ceil(N / 32)`` leaves. Leaf k of rail r serves nodes 32k+1..32k+32 on
  ``Ethernet1``..``Ethernet32`` (port = the node's position in its group of 32) and has as
  many uplinks as host ports, from ``Ethernet33`` up.
* The rails are split into P spine planes (P the smallest of 1, 2, 4, 8 that fits). A
  plane is a two-tier leaf-spine fabric: every leaf of the plane reaches every spine
  of the plane. With U leaf uplinks in a plane, the target is ``max(4, ceil(U / 64))``
  spines of 64 ports; the spine count S is the largest divisor of every leaf's uplink
  count that does not exceed the target, so each leaf sends exactly ``uplinks / S``
  cables to each spine and each spine has ``U / S`` ports (more than 64 when the
  target does not divide evenly). P is the smallest plane count with ``U / S <= 512``.
  Cross-rail traffic moves over NVLink inside a node before it enters the fabric, so
  the planes need no links between them.

  ======  ======  ======  ======  ===========  ===========================
  nodes   leaves  planes  spines  ports/spine  cables per leaf per spine
  ======  ======  ======  ======  ===========  ===========================
      32       8       1       4           64  8 (ORION)
     128      32       1      16           64  2
     512     128       1      32          128  1
   2,048     512       1      32          512  1
   4,096   1,024       2      64          512  1 (rails 0-3 and 4-7)
  ======  ======  ======  ======  ===========  ===========================

* Spines of up to 64 ports are Arista 7060DX5-64S; larger spines are modular 7816R3
  chassis (ports numbered flat, ``Ethernet1``.., line cards not modelled).
* Leaves: even rails Arista 7060DX5-64S (EOS), odd rails NVIDIA Spectrum-4 SN5600 (SONiC),
  named by the SONiC HwSKU they report (ACS-SN5600), which SONiC's config updater keys
  its platform rules on.
* Racks: 4 nodes per GPU rack (own PDU), cooling by row of 4 racks; the 8 leaves and
  the frontend switch of each group of 32 nodes share a network rack at the head of
  that group's first row; spines sit 8 to a rack in the ``row-core`` row.
* Gangs: ``min(64, N / 2)`` nodes each (rounded down to whole racks), one DP replica
  per rack, filling the fleet in order; the last rack runs no gang.
* The last rack's NICs are revision B0 (label ``nic_revision: B0``), all others A1: a
  minority stratum that only a stratified canary is sure to cover.
* BGP: spines share one ASN; leaves get 64601.. (16-bit private) or, when there are
  more leaves than that range holds, 4200000001.. (32-bit private).
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterator
from dataclasses import dataclass
from ipaddress import IPv4Address, IPv4Network

RAILS = 8
HOSTS_PER_LEAF = 32
NODES_PER_RACK = 4
RACKS_PER_ROW = 4
SPINES_PER_RACK = 8
MIN_SPINES = 4
SPINE_PORT_TARGET = 64
SPINE_PORT_LIMIT = 512
GANG_NODES = 64
FRONTEND_GBPS = 100

FAR_ROW_EXTRA_DM = 80  # one row further from the network rack adds 8 m of cable
HOST_CABLE_MAX_DM = 300  # host cables never run longer than 30 m

ASN16_SPINE, ASN16_LAST = 64600, 65534  # private 16-bit range: 64512-65534
ASN32_SPINE = 4_200_000_000  # private 32-bit range: 4200000000-4294967294
MGMT_POOL = IPv4Network("198.18.0.0/15")  # RFC 2544 benchmarking range
MGMT_HOSTS_PER_BLOCK = 254  # .1 .. .254 of each /24


@dataclass(frozen=True)
class FabricPlan:
    """Sizes of the backend fabric for one node count (see the module docstring)."""

    nodes: int
    leaves_per_rail: int
    planes: int
    spines_per_plane: int
    spine_ports: int

    @property
    def leaves(self) -> int:
        return RAILS * self.leaves_per_rail

    @property
    def spines(self) -> int:
        return self.planes * self.spines_per_plane

    @property
    def rails_per_plane(self) -> int:
        return RAILS // self.planes

    def hosts_on_leaf(self, group: int) -> int:
        """Host ports (and so uplinks) of the leaves that serve node group ``group``."""
        return min(HOSTS_PER_LEAF, self.nodes - HOSTS_PER_LEAF * group)


def plan_fabric(nodes: int) -> FabricPlan:
    """Leaves, spine planes, spines and spine ports for ``nodes`` GPU nodes."""
    if nodes < NODES_PER_RACK or nodes % NODES_PER_RACK:
        raise ValueError(f"nodes must be a positive multiple of {NODES_PER_RACK}, got {nodes}")
    leaves_per_rail = -(-nodes // HOSTS_PER_LEAF)
    last_leaf = nodes - HOSTS_PER_LEAF * (leaves_per_rail - 1)
    spread = math.gcd(HOSTS_PER_LEAF, last_leaf)  # every leaf's uplink count is a multiple
    for planes in (1, 2, 4, 8):
        uplinks = nodes * (RAILS // planes)
        target = max(MIN_SPINES, -(-uplinks // SPINE_PORT_TARGET))
        spines = max(d for d in range(1, spread + 1) if spread % d == 0 and d <= target)
        if uplinks // spines <= SPINE_PORT_LIMIT:
            return FabricPlan(nodes, leaves_per_rail, planes, spines, uplinks // spines)
    raise ValueError(
        f"{nodes} nodes cannot be wired as leaf-spine with at most {SPINE_PORT_LIMIT} ports "
        f"per spine; use a multiple of {HOSTS_PER_LEAF} nodes"
    )


@dataclass(frozen=True)
class Cable:
    """One cable; ``a`` is the lower tier (node or leaf), ``b`` the upper."""

    a: str
    a_port: str
    b: str
    b_port: str
    link_class: str
    length_dm: int  # decimetres, so lengths stay exact
    speed_gbps: int | None = None

    def line(self) -> str:
        speed = "" if self.speed_gbps is None else f", speed_gbps: {self.speed_gbps}"
        return (
            f"  - {{a: {self.a}, a_port: {self.a_port}, b: {self.b}, b_port: {self.b_port}, "
            f"class: {self.link_class}, length_m: {metres(self.length_dm)}{speed}}}\n"
        )


def metres(decimetres: int) -> str:
    return f"{decimetres // 10}.{decimetres % 10}"


def _width(count: int) -> int:
    return max(2, len(str(count)))


class FleetLayout:
    """Every name, address and cable of one fleet, computed once and then rendered."""

    def __init__(self, nodes: int, name: str, seed: int) -> None:
        self.plan = plan_fabric(nodes)
        self.name = name
        self.n = nodes
        self.racks_n = nodes // NODES_PER_RACK
        self.groups = self.plan.leaves_per_rail
        self.spine_racks = -(-self.plan.spines // SPINES_PER_RACK)
        self._node_w = _width(nodes)
        self._rack_w = _width(self.racks_n)
        self._net_w = _width(self.groups)
        self._spine_rack_w = _width(self.spine_racks)
        self.rng = random.Random(seed)
        self.host_links = list(self._host_leaf_links())
        self.frontend_links = list(self._frontend_links())
        self.fabric_links = list(self._leaf_spine_links())
        # management addresses: consecutive /24 blocks for spines, leaves, frontend
        # switches, then nodes
        self.spine_block = 0
        self.leaf_block = _mgmt_blocks(self.plan.spines)
        self.fe_block = self.leaf_block + _mgmt_blocks(self.plan.leaves)
        self.node_block = self.fe_block + _mgmt_blocks(self.groups)
        self.spine_model = "7060DX5-64S" if self.plan.spine_ports <= 64 else "7816R3"

    # -- names ------------------------------------------------------------------------
    def node(self, i: int) -> str:
        return f"gpu-n{i + 1:0{self._node_w}d}"

    def gpu_rack(self, r: int) -> str:
        return f"gpu-r{r + 1:0{self._rack_w}d}"

    def net_rack(self, group: int) -> str:
        return f"net-{group + 1:0{self._net_w}d}"

    def spine_rack(self, s: int) -> str:
        return f"net-spine-{s // SPINES_PER_RACK + 1:0{self._spine_rack_w}d}"

    def leaf(self, rail: int, group: int) -> str:
        return f"leaf-r{rail}" if self.groups == 1 else f"leaf-r{rail}-{group}"

    def spine(self, s: int) -> str:
        return f"spine-{s + 1}"

    def frontend(self, group: int) -> str:
        return f"fe-{group + 1}"

    def plane_label(self, rail: int) -> str:
        first = rail - rail % self.plan.rails_per_plane
        return f"rails-{first}-{first + self.plan.rails_per_plane - 1}"

    def row_of_rack(self, r: int) -> int:
        return r // RACKS_PER_ROW

    def group_row(self, group: int) -> int:
        """The row whose head holds the network rack of node group ``group``."""
        return self.row_of_rack(group * HOSTS_PER_LEAF // NODES_PER_RACK)

    # -- cables -----------------------------------------------------------------------
    def _host_length_dm(self, i: int) -> int:
        group = i // HOSTS_PER_LEAF
        rows_away = self.row_of_rack(i // NODES_PER_RACK) - self.group_row(group)
        return min(HOST_CABLE_MAX_DM, self.rng.randint(20, 50) + FAR_ROW_EXTRA_DM * rows_away)

    def _host_leaf_links(self) -> Iterator[Cable]:
        for i in range(self.n):
            group, slot = divmod(i, HOSTS_PER_LEAF)
            for rail in range(RAILS):
                yield Cable(
                    self.node(i), f"eth{rail}", self.leaf(rail, group), f"Ethernet{slot + 1}",
                    "host-leaf", self._host_length_dm(i),
                )

    def _frontend_links(self) -> Iterator[Cable]:
        for i in range(self.n):
            group, slot = divmod(i, HOSTS_PER_LEAF)
            yield Cable(
                self.node(i), "fe0", self.frontend(group), f"Ethernet{slot + 1}",
                "frontend", self._host_length_dm(i), FRONTEND_GBPS,
            )

    def _leaf_spine_links(self) -> Iterator[Cable]:
        """Uplinks in blocks: a leaf's first ``uplinks / S`` go to the plane's first spine."""
        plan = self.plan
        next_port = [1] * plan.spines
        for rail in range(RAILS):
            first_spine = rail // plan.rails_per_plane * plan.spines_per_plane
            for group in range(self.groups):
                uplinks = plan.hosts_on_leaf(group)
                per_spine = uplinks // plan.spines_per_plane
                # one cable run per leaf-spine pair (10-49 m), its cables within 1 m of each other
                runs_dm = [self.rng.randint(100, 490) for _ in range(plan.spines_per_plane)]
                for j in range(uplinks):
                    s = first_spine + j // per_spine
                    yield Cable(
                        self.leaf(rail, group), f"Ethernet{HOSTS_PER_LEAF + 1 + j}",
                        self.spine(s), f"Ethernet{next_port[s]}",
                        "leaf-spine", runs_dm[j // per_spine] + self.rng.randint(0, 10),
                    )
                    next_port[s] += 1

    # -- derived plans ----------------------------------------------------------------
    def leaves_in_order(self) -> list[tuple[int, int]]:
        return [(rail, group) for group in range(self.groups) for rail in range(RAILS)]

    def leaf_asns(self) -> tuple[int, int]:
        """(spine ASN, first leaf ASN): 16-bit private while the leaves fit, else 32-bit."""
        spine = ASN16_SPINE if ASN16_SPINE + self.plan.leaves <= ASN16_LAST else ASN32_SPINE
        return spine, spine + 1

    def gangs(self) -> list[list[list[int]]]:
        """Gangs as lists of DP replicas (one rack each) of node indices."""
        size = min(GANG_NODES, self.n // 2) // NODES_PER_RACK * NODES_PER_RACK
        if size == 0:
            return []
        racks = [list(range(r * NODES_PER_RACK, (r + 1) * NODES_PER_RACK))
                 for r in range(self.racks_n - 1)]
        per_gang = size // NODES_PER_RACK
        return [racks[k:k + per_gang] for k in range(0, len(racks), per_gang)]


def _mgmt_blocks(count: int) -> int:
    return -(-count // MGMT_HOSTS_PER_BLOCK)


def mgmt_address(block: int, index: int) -> str:
    base = int(MGMT_POOL.network_address)
    offset = (block + index // MGMT_HOSTS_PER_BLOCK) * 256 + index % MGMT_HOSTS_PER_BLOCK + 1
    if offset >= MGMT_POOL.num_addresses:
        raise ValueError(f"management addresses exceed {MGMT_POOL}")
    return str(IPv4Address(base + offset))
