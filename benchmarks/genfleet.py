"""Write a rail-optimized GPU fleet repo of any size: the ORION example and benchmark fleets.

This sits before the plumb flow: it produces the YAML that ``inventory`` and ``intent``
read. ``generate_fleet(out, 32)`` is the ORION reference fleet committed under
``examples/orion``; larger sizes feed the benchmarks. Output depends only on the
arguments, so the same seed gives byte-identical files. Text is written with plain
string formatting (no YAML dumper) to keep a 4,096-node fleet under a few seconds.

What the fleet looks like (the sizing rule, names, addresses, cables) is
``benchmarks/genlayout.py``; this module writes it out as files.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from dataclasses import dataclass
from ipaddress import IPv4Address, IPv4Network
from pathlib import Path

try:
    from benchmarks import gencompact
    from benchmarks.genlayout import (
        ASN16_SPINE,
        FRONTEND_GBPS,
        HOSTS_PER_LEAF,
        NODES_PER_RACK,
        RACKS_PER_ROW,
        RAILS,
        SPINES_PER_RACK,
        FleetLayout,
        metres,
        mgmt_address,
    )
    from benchmarks.genrollouts import rollout_files
except ModuleNotFoundError:  # run as a script: python benchmarks/genfleet.py
    import gencompact  # type: ignore[no-redef]
    from genlayout import (  # type: ignore[no-redef]
        ASN16_SPINE,
        FRONTEND_GBPS,
        HOSTS_PER_LEAF,
        NODES_PER_RACK,
        RACKS_PER_ROW,
        RAILS,
        SPINES_PER_RACK,
        FleetLayout,
        metres,
        mgmt_address,
    )
    from genrollouts import rollout_files  # type: ignore[no-redef]

GPUS_PER_NODE = 8

BACKEND_GBPS = 400
PORT_MTU = 9214  # the largest L3 MTU EOS takes (SONiC takes up to 9216)
HOST_MTU = 9000
RDMA_MTU = 4096
PFC_HEADROOM_KB = 128
SWITCH_BUFFER_KB = 114_688
PEER_RESPONSE_NS = 1500
PFC_FRAME_BYTES = 64
FIBRE_M_PER_S = 2e8

# (vendor, model, platform) of the leaves on even and odd rails: two NOSes, so one NOS
# defect reaches half of every node's rails, never all of them
_LEAF_KINDS = (("arista", "7060DX5-64S", "eos"), ("nvidia", "ACS-SN5600", "sonic"))


@dataclass(frozen=True)
class FleetSummary:
    """What one generation wrote. ``records`` counts racks + devices + links + gangs."""

    nodes: int
    gpus: int
    leaves: int
    spines: int
    frontend_switches: int
    racks: int
    links: int
    gangs: int
    records: int
    files: int
    planes: int
    spine_ports: int


def _letters(index: int) -> str:
    """0 -> a, 25 -> z, 26 -> aa: row and gang suffixes that never run out."""
    text = ""
    index += 1
    while index:
        index, rem = divmod(index - 1, 26)
        text = chr(ord("a") + rem) + text
    return text


def headroom_bytes(length_m: float, mtu: int = PORT_MTU) -> float:
    """PFC headroom per port: 2 x MTU + 2 x r x L / v + r x t_resp + PFC frame (400 Gb/s)."""
    rate = BACKEND_GBPS * 1e9 / 8
    return (
        2 * mtu
        + 2 * rate * length_m / FIBRE_M_PER_S
        + rate * PEER_RESPONSE_NS * 1e-9
        + PFC_FRAME_BYTES
    )


def _header(rel: str, kind: str, about: str) -> str:
    up = "../" * rel.count("/")
    lines = [f"# yaml-language-server: $schema={up}schemas/{kind}.schema.json\n"]
    lines += [f"# {line}".rstrip() + "\n" for line in about.strip().splitlines()]
    return "".join(lines)


def _pool(base: IPv4Address, addresses: int, floor_prefix: int) -> IPv4Network:
    """The smallest aligned network at or after ``base`` that holds ``addresses``."""
    prefix = min(floor_prefix, 32 - max(0, math.ceil(math.log2(max(addresses, 1)))))
    size = 2 ** (32 - prefix)
    start = -(-int(base) // size) * size
    return IPv4Network(f"{IPv4Address(start)}/{prefix}")


class _Render:
    """Turns a :class:`FleetLayout` into the text of each file."""

    def __init__(self, fleet: FleetLayout) -> None:
        self.f = fleet
        p = fleet.plan
        self.loopbacks = _pool(IPv4Address("10.255.0.0"), p.spines + p.leaves + 1, 22)

    def files(self) -> dict[str, str]:
        return {
            "plumb.yaml": self.plumb(),
            "inventory/racks.yaml": self.racks(),
            "inventory/devices/spines.yaml": self.spines(),
            "inventory/devices/leaves.yaml": self.leaves(),
            "inventory/devices/nodes.yaml": self.nodes(),
            "inventory/links/backend.yaml": self.backend(),
            "inventory/links/frontend.yaml": self.frontend(),
            "inventory/gangs.yaml": self.gangs(),
            "intent/mtu.yaml": self.mtu(),
            "intent/qos.yaml": self.qos(),
            "intent/bgp.yaml": self.bgp(),
            "intent/addressing.yaml": self.addressing(),
            "intent/firmware.yaml": self.firmware(),
            "intent/groups.yaml": self.groups(),
            "intent/devices.yaml": self.device_overrides(),
            "policies/waivers.yaml": self.waivers(),
            "rollouts/.gitkeep": "",
            **rollout_files(self.f.n, NODES_PER_RACK, self.f.gpu_rack(self.f.racks_n - 1)),
        }

    # -- plumb.yaml and inventory -----------------------------------------------------
    def plumb(self) -> str:
        f, p = self.f, self.f.plan
        description = (
            f"{f.n} HX8 GPU nodes ({f.n * GPUS_PER_NODE} GPUs) on a rail-optimized leaf-spine "
            f"backend: {p.leaves} rail leaves, {p.spines} spines, "
            f"{len(f.host_links) + len(f.fabric_links)} backend links."
        )
        about = "Fleet root: the fleet's name, where plumb keeps its state, fleet-wide defaults."
        return _header("plumb.yaml", "plumb", about) + (
            f"fleet: {f.name}\n"
            "state_dir: .plumb          # observed state, before-states and the audit log\n"
            "defaults:\n"
            f"  link_speed_gbps: {BACKEND_GBPS}     # backend cables that state no speed\n"
            f'description: "{description}"\n'
            "drivers:                   # which driver reaches which device (first match wins)\n"
            "  - driver: lab            # the embedded simulated fleet (`plumb lab init`);"
            " see docs/drivers.md\n"
        )

    def racks(self) -> str:
        f = self.f
        out = [_header("inventory/racks.yaml", "inventory", (
            "Racks and their failure domains: one PDU per rack, cooling shared by a row.\n"
            f"GPU racks hold {NODES_PER_RACK} nodes, {RACKS_PER_ROW} racks to a row; each group "
            f"of {HOSTS_PER_LEAF} nodes has\n"
            "a network rack (its rail leaves and frontend switch) at the head of its first row."
        )), "racks:\n", "  # GPU racks\n"]
        for r in range(f.racks_n):
            row = f"row-{_letters(f.row_of_rack(r))}"
            out.append(f"  - {{name: {f.gpu_rack(r)}, kind: gpu, power_domain: pdu-r"
                       f"{r + 1:0{f._rack_w}d}, cooling_domain: {row}, row: {row}}}\n")
        out.append("  # network racks: 8 rail leaves and 1 frontend switch each\n")
        for g in range(f.groups):
            row = f"row-{_letters(f.group_row(g))}"
            rack = f.net_rack(g)
            out.append(f"  - {{name: {rack}, kind: network, power_domain: pdu-{rack}, "
                       f"cooling_domain: {row}, row: {row}}}\n")
        out.append(f"  # spine racks, {SPINES_PER_RACK} spines each, in their own row\n")
        for s in range(0, f.plan.spines, SPINES_PER_RACK):
            rack = f.spine_rack(s)
            out.append(f"  - {{name: {rack}, kind: network, power_domain: pdu-{rack}, "
                       "cooling_domain: row-core, row: row-core}\n")
        return "".join(out)

    def _switch(self, name: str, role: str, vendor: str, model: str, platform: str,
                rack: str, mgmt: str, extra: str = "") -> str:
        return (f"  - name: {name}\n    role: {role}\n    vendor: {vendor}\n"
                f"    model: {model}\n    platform: {platform}\n    rack: {rack}\n"
                f"    mgmt: {mgmt}\n{extra}")

    def spines(self) -> str:
        f, p = self.f, self.f.plan
        per_leaf = f"{HOSTS_PER_LEAF // p.spines_per_plane} of its uplinks"
        if p.nodes % HOSTS_PER_LEAF:
            per_leaf = "an equal share of its uplinks"
        about = (
            f"Spines: the upper tier of the backend fabric, {p.spine_ports} x 400G ports each.\n"
        )
        if p.planes == 1:
            about += f"Every leaf sends {per_leaf} to each spine.\n"
        else:
            about += (
                f"{p.planes} planes of {p.rails_per_plane} rails, "
                f"{p.spines_per_plane} spines each.\n"
                f"Every leaf sends {per_leaf} to each spine of its plane.\n"
            )
        out = [_header("inventory/devices/spines.yaml", "inventory", about), "devices:\n"]
        for s in range(p.spines):
            extra = ""
            if p.planes > 1:
                plane = f.plane_label(s // p.spines_per_plane * p.rails_per_plane)
                extra = f"    labels: {{fabric_plane: {plane}}}\n"
            out.append(self._switch(f.spine(s), "spine", "arista", f.spine_model, "eos",
                                    f.spine_rack(s), mgmt_address(f.spine_block, s), extra))
        return "".join(out)

    def leaves(self) -> str:
        f, p = self.f, self.f.plan
        out = [_header("inventory/devices/leaves.yaml", "inventory", (
            f"Rail leaves (leaf rail r takes NIC r of {HOSTS_PER_LEAF} nodes: Ethernet1-32 down, "
            "Ethernet33-64 up)\nand the frontend switches. Even rails run EOS, odd rails SONiC, "
            "so a NOS change\ntouches half of every node's rails, never all of them."
        )), "devices:\n"]
        for index, (rail, group) in enumerate(f.leaves_in_order()):
            if rail == 0:
                first = group * HOSTS_PER_LEAF
                last = first + p.hosts_on_leaf(group) - 1
                out.append(f"  # {f.node(first)}..{f.node(last)}, rack {f.net_rack(group)}\n")
            vendor, model, platform = _LEAF_KINDS[rail % 2]
            extra = f"    rail: {rail}\n"
            if p.planes > 1:
                extra += f"    labels: {{fabric_plane: {f.plane_label(rail)}}}\n"
            out.append(self._switch(f.leaf(rail, group), "leaf", vendor, model, platform,
                                    f.net_rack(group), mgmt_address(f.leaf_block, index), extra))
        out.append("  # frontend switches: fe0 of each node, 100G, lossy, not on the RDMA path\n")
        for g in range(f.groups):
            out.append(self._switch(f.frontend(g), "frontend", "arista", "7050CX3-32S", "eos",
                                    f.net_rack(g), mgmt_address(f.fe_block, g)))
        return "".join(out)

    def nodes(self) -> str:
        f = self.f
        minority = f.n - NODES_PER_RACK
        out = [_header("inventory/devices/nodes.yaml", "inventory", (
            f"GPU nodes: HX8, {GPUS_PER_NODE} GPUs, GPU i paired with backend NIC eth<i> on "
            "rail i, plus fe0 (frontend).\n"
            f"The last rack ({f.gpu_rack(f.racks_n - 1)}) carries ConnectX-7 revision B0 "
            "NICs; every other node has A1."
        )), "devices:\n"]
        for i in range(f.n):
            if i % NODES_PER_RACK == 0:
                out.append(f"  # {f.gpu_rack(i // NODES_PER_RACK)}\n")
            rev = "B0" if i >= minority else "A1"
            out.append(
                f"  - name: {f.node(i)}\n    role: gpu-node\n    vendor: halcyon\n    model: HX8\n"
                f"    platform: linux\n    rack: {f.gpu_rack(i // NODES_PER_RACK)}\n"
                f"    mgmt: {mgmt_address(f.node_block, i)}\n    gpus: {GPUS_PER_NODE}\n"
                f"    labels: {{nic_revision: {rev}}}\n    nics:\n"
            )
            out.extend(
                f"      - {{name: eth{rail}, speed_gbps: {BACKEND_GBPS}, rail: {rail}, "
                f"model: ConnectX-7, revision: {rev}}}\n"
                for rail in range(RAILS)
            )
            out.append(f"      - {{name: fe0, speed_gbps: {FRONTEND_GBPS}, rail: null}}\n")
        return "".join(out)

    def backend(self) -> str:
        f = self.f
        longest = max(link.length_dm for link in f.host_links + f.fabric_links)
        out = [_header("inventory/links/backend.yaml", "inventory", (
            "Backend RDMA cables, 400G. host-leaf: NIC eth<r> of every node to the rail-r leaf "
            "of its group,\non the leaf port numbered by the node's place in the group. "
            "leaf-spine: Ethernet33 and up,\nsplit evenly over the spines. Lengths in metres; "
            "each metre adds 0.5 KB of PFC headroom\n"
            f"per port (longest cable {metres(longest)} m)."
        )), "links:\n"]
        for i, link in enumerate(f.host_links):
            node = i // RAILS
            if node % NODES_PER_RACK == 0 and i % RAILS == 0:
                rack = node // NODES_PER_RACK
                far = f.row_of_rack(rack) != f.group_row(node // HOSTS_PER_LEAF)
                where = "next row, longer runs" if far else "same row"
                net = f.net_rack(node // HOSTS_PER_LEAF)
                out.append(f"  # {f.gpu_rack(rack)} -> {net} ({where})\n")
            out.append(link.line())
        previous = ""
        for link in f.fabric_links:
            if link.a != previous:
                out.append(f"  # {link.a} uplinks\n")
                previous = link.a
            out.append(link.line())
        return "".join(out)

    def frontend(self) -> str:
        out = [_header("inventory/links/frontend.yaml", "inventory", (
            "Frontend cables: fe0 of every node to its group's frontend switch, 100G, lossy "
            "(storage,\nscheduler and login traffic; not part of the lossless RDMA path)."
        )), "links:\n"]
        out.extend(link.line() for link in self.f.frontend_links)
        return "".join(out)

    def gangs(self) -> str:
        f = self.f
        gangs = f.gangs()
        idle = f"{f.node(f.n - NODES_PER_RACK)}..{f.node(f.n - 1)} ({f.gpu_rack(f.racks_n - 1)})"
        out = [_header("inventory/gangs.yaml", "inventory", (
            "Training gangs: a gang's nodes stall together, so draining one node stops the "
            "whole gang.\nEach data-parallel replica is one rack, the natural size of a rollout "
            f"wave.\n{idle} run no gang."
        )), "gangs:" + (" []\n" if not gangs else "\n")]
        for k, replicas in enumerate(gangs):
            members = [f.node(i) for replica in replicas for i in replica]
            rows = [", ".join(members[j:j + 8]) for j in range(0, len(members), 8)]
            wrap = ",\n      "
            out.append(
                f"  - name: llm-pretrain-{_letters(k)}    # {len(members) * GPUS_PER_NODE} GPUs, "
                f"{len(replicas)} DP replicas\n"
                f"    gpus_per_node: {GPUS_PER_NODE}\n"
                f"    nodes: [{wrap.join(rows)}]\n"
                "    dp_replicas:\n"
            )
            out.extend(
                f"      - [{', '.join(f.node(i) for i in replica)}]  "
                f"# {f.gpu_rack(replica[0] // NODES_PER_RACK)}\n"
                for replica in replicas
            )
        return "".join(out)

    # -- intent -----------------------------------------------------------------------
    def mtu(self) -> str:
        return _header("intent/mtu.yaml", "intent", (
            "MTU per link class and layer. The three layers must agree on every path: a "
            "mismatch\nblackholes large frames while BGP stays up."
        )) + (
            "mtu:\n"
            "  host-leaf:\n"
            f"    switch_port: {PORT_MTU}   # leaf ports facing the hosts\n"
            f"    host: {HOST_MTU}          # {HOST_MTU} + 22 <= {PORT_MTU}: Ethernet header, "
            "802.1Q tag and FCS\n"
            f"    rdma: {RDMA_MTU}          # {RDMA_MTU} + 64 <= {HOST_MTU}; the largest verbs "
            "MTU, 98.0 % wire efficiency\n"
            "  leaf-spine:\n"
            f"    switch_port: {PORT_MTU}   # both ends of a fabric link carry the same MTU\n"
            "  frontend:\n"
            f"    switch_port: {PORT_MTU}\n"
            f"    host: {HOST_MTU}\n"
        )

    def qos(self) -> str:
        f = self.f
        longest_m = max(link.length_dm for link in f.host_links + f.fabric_links) / 10
        worst_kb = headroom_bytes(longest_m) / 1000
        best_kb = headroom_bytes(0.0) / 1000
        per_leaf_kb = 2 * HOSTS_PER_LEAF * PFC_HEADROOM_KB
        return _header("intent/qos.yaml", "intent", (
            "RoCEv2 lossless profile for the backend fabric: DSCP 26 -> priority 3 (RDMA, "
            "lossless),\nDSCP 48 -> priority 6 (CNP). Hosts and switches share this one profile."
        )) + (
            "qos:\n"
            "  lossless_link_classes: [host-leaf, leaf-spine]   # the RDMA path; frontend "
            "stays lossy\n"
            "  dscp_map:\n"
            "    - {dscp: 26, priority: 3}   # RoCEv2 data\n"
            "    - {dscp: 48, priority: 6}   # congestion notification packets, a class of "
            "their own\n"
            "  roce_priority: 3\n"
            "  cnp_priority: 6\n"
            "  pfc_priorities: [3]           # exactly the RoCE priority: one extra or missing "
            "is a defect\n"
            "  ecn:\n"
            "    # DCQCN: Kmin ~ the same-rail bandwidth-delay product and below Xoff,\n"
            "    # so ECN marks before PFC pauses\n"
            "    - {priority: 3, kmin_kb: 200, kmax_kb: 800, pmax_percent: 20}\n"
            "  pfc_xoff_kb: 400\n"
            "  # headroom = 2 x MTU + 2 x r x L / v + r x t_resp + PFC frame, at r = 400 Gb/s:\n"
            f"  # {best_kb:.1f} KB at 0 m to {worst_kb:.1f} KB on the longest cable "
            f"({longest_m:.1f} m)\n"
            f"  pfc_headroom_kb: {PFC_HEADROOM_KB}\n"
            "  # 112 MiB: Tomahawk-4-class shared buffer; a 64-port leaf reserves "
            f"{per_leaf_kb} KB of headroom\n"
            f"  switch_buffer_kb: {SWITCH_BUFFER_KB}\n"
            f"  peer_response_ns: {PEER_RESPONSE_NS}        # t_resp: the peer keeps sending "
            "this long after a pause\n"
            f"  pfc_frame_bytes: {PFC_FRAME_BYTES}\n"
        )

    def bgp(self) -> str:
        f, p = self.f, self.f.plan
        spine_asn, first_leaf = f.leaf_asns()
        width = "16-bit" if spine_asn == ASN16_SPINE else "32-bit"
        leaves = f.leaves_in_order()
        name_w = max(len(f.leaf(r, g)) for r, g in leaves) + 1
        spine_w = max(len(f.spine(s)) for s in range(p.spines)) + 1
        out = [_header("intent/bgp.yaml", "intent", (
            "eBGP underlay in the RFC 7938 style: one ASN shared by every spine, a unique "
            f"private\n{width} ASN per leaf, an inbound filter on every session, router ids "
            "from the loopback pool."
        )), (
            "bgp:\n"
            f"  spine_asn: {spine_asn}\n"
            f"  maximum_paths: 64           # >= the {HOSTS_PER_LEAF} equal-cost uplinks of "
            "a leaf\n"
            "  inbound_filter: FABRIC-IN   # applied to every eBGP session\n"
            "  leaf_asns:\n"
        )]
        out.extend(f"    {f.leaf(r, g) + ':':<{name_w}} {first_leaf + k}\n"
                   for k, (r, g) in enumerate(leaves))
        out.append("  router_ids:                 # each switch's loopback address\n")
        for k, device in enumerate([f.spine(s) for s in range(p.spines)]
                                   + [f.leaf(r, g) for r, g in leaves]):
            out.append(f"    {device + ':':<{max(name_w, spine_w)}} {self._loopback(k)}\n")
        return "".join(out)

    def _loopback(self, k: int) -> str:
        return str(self.loopbacks.network_address + k + 1)

    def addressing(self) -> str:
        f = self.f
        fabric = _pool(IPv4Address("10.0.0.0"), 2 * len(f.fabric_links), 16)
        hosts = _pool(max(IPv4Address("10.1.0.0"), fabric.broadcast_address + 1),
                      2 * len(f.host_links), 16)
        return _header("intent/addressing.yaml", "intent", (
            "Routed to the host: a /31 per backend link, both ends in the same /31, "
            "allocated in cable\norder from one pool per link class. Loopbacks are "
            "router ids."
        )) + (
            "addressing:\n"
            "  pools:\n"
            f"    leaf-spine: {fabric}   # {len(f.fabric_links):,} links x /31 = "
            f"{2 * len(f.fabric_links):,} of {fabric.num_addresses:,} addresses\n"
            f"    host-leaf: {hosts}    # {len(f.host_links):,} links x /31 = "
            f"{2 * len(f.host_links):,} of {hosts.num_addresses:,} addresses\n"
            f"  loopbacks: {self.loopbacks}    # one /32 per spine and leaf\n"
        )

    def firmware(self) -> str:
        eos_models = sorted({self.f.spine_model, "7060DX5-64S", "7050CX3-32S"})
        return _header("intent/firmware.yaml", "intent", (
            "Validated bundles (every version tested together, per model) and known-bad "
            "combinations.\nA device may run only a bundle listed for its model."
        )) + (
            "firmware:\n"
            "  bundles:\n"
            "    - name: hx8-2026.06\n"
            "      models: [HX8]\n"
            "      components:\n"
            '        gpu_driver: "550.90.07"\n'
            '        cuda: "12.4"\n'
            '        nic_firmware: "28.41.1000"      # ConnectX-7\n'
            '        nic_driver: "24.04-0.6.6.0"\n'
            '        bios: "1.6.2"\n'
            '        bmc: "3.10.4"\n'
            '        fabric_manager: "550.90.07"     # must equal gpu_driver\n'
            "    - name: hx8-2026.09\n"
            "      models: [HX8]\n"
            "      components:\n"
            '        gpu_driver: "570.124.06"\n'
            '        cuda: "12.8"\n'
            '        nic_firmware: "28.43.1014"\n'
            '        nic_driver: "24.10-1.1.4.0"\n'
            '        bios: "1.8.0"\n'
            '        bmc: "3.12.1"\n'
            '        fabric_manager: "570.124.06"\n'
            "    - name: eos-4.31.2F\n"
            f"      models: [{', '.join(eos_models)}]\n"
            '      components: {nos: "4.31.2F"}\n'
            "    - name: eos-4.32.2F\n"
            f"      models: [{', '.join(eos_models)}]\n"
            '      components: {nos: "4.32.2F"}\n'
            "    - name: sonic-202405\n"
            "      models: [ACS-SN5600]\n"
            '      components: {nos: "202405"}\n'
            "    - name: sonic-202411\n"
            "      models: [ACS-SN5600]\n"
            '      components: {nos: "202411"}\n'
            "  blocked:\n"
            "    - models: [HX8]\n"
            '      components: {nic_firmware: "28.39.1002", nic_driver: "23.10-1.1.9.0"}\n'
            "      reason: >-\n"
            "        ConnectX-7 firmware 28.39.1002 with driver 23.10-1.1.9.0 resets the NIC "
            "under sustained\n"
            "        PFC pause (illustrative advisory); never run the two together.\n"
        )

    def groups(self) -> str:
        eos_models = sorted({self.f.spine_model, "7060DX5-64S", "7050CX3-32S"})
        return _header("intent/groups.yaml", "intent", (
            "Which bundle each kind of device runs. The whole fleet is declared on the newer "
            "bundles;\na rollout moves devices to them in waves."
        )) + (
            "groups:\n"
            "  - name: hx8-nodes\n"
            "    match: {models: [HX8]}\n"
            "    set: {firmware: {bundle: hx8-2026.09}}\n"
            "  - name: eos-switches\n"
            f"    match: {{models: [{', '.join(eos_models)}]}}\n"
            "    set: {firmware: {bundle: eos-4.32.2F}}\n"
            "  - name: sonic-leaves\n"
            "    match: {models: [ACS-SN5600]}\n"
            "    set: {firmware: {bundle: sonic-202411}}\n"
        )

    def device_overrides(self) -> str:
        return _header("intent/devices.yaml", "intent", (
            "Settings for single devices, keyed by device name. Empty: every device takes its "
            "values\nfrom the fleet-wide sections and its groups."
        )) + "devices: {}\n"

    def waivers(self) -> str:
        return _header("policies/waivers.yaml", "waivers", (
            "Accepted policy violations: policy id, subject, reason and expiry date. Empty: "
            "none accepted."
        )) + "waivers: []\n"


def generate_fleet(
    out_dir: Path, nodes: int, *, name: str = "orion", seed: int = 0, compact: bool = False
) -> FleetSummary:
    """Write a complete fleet repo of ``nodes`` GPU nodes under ``out_dir``; with
    ``compact``, racks, devices and cables as topology rules (benchmarks/gencompact.py)."""
    fleet = FleetLayout(nodes, name, seed)
    render = _Render(fleet)
    files = render.files()
    if compact:
        files = _compact(fleet, files)
    for rel, text in files.items():
        path = out_dir / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("utf-8"))
    (out_dir / "schemas").mkdir(parents=True, exist_ok=True)
    p = fleet.plan
    racks = fleet.racks_n + fleet.groups + fleet.spine_racks
    devices = nodes + p.leaves + p.spines + fleet.groups
    links = len(fleet.host_links) + len(fleet.fabric_links) + len(fleet.frontend_links)
    gangs = len(fleet.gangs())
    return FleetSummary(
        nodes=nodes, gpus=nodes * GPUS_PER_NODE, leaves=p.leaves, spines=p.spines,
        frontend_switches=fleet.groups, racks=racks, links=links, gangs=gangs,
        records=racks + devices + links + gangs, files=len(files),
        planes=p.planes, spine_ports=p.spine_ports,
    )


def _compact(fleet: FleetLayout, files: dict[str, str]) -> dict[str, str]:
    header = _header(gencompact.TOPOLOGY_FILE, "inventory", (
        "Racks, devices and cables as rules over index ranges (the compact form of the\n"
        "record files): see docs/fleet-repo.md, Compact topology."
    ))
    kept = {k: v for k, v in files.items() if k not in gencompact.RECORD_FILES}
    return {gencompact.TOPOLOGY_FILE: gencompact.compact_topology(fleet, header), **kept}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Write a rail-optimized GPU fleet repo.")
    parser.add_argument("out", type=Path, help="directory to write the fleet repo into")
    parser.add_argument("--nodes", type=int, required=True, help="GPU nodes, a multiple of 4")
    parser.add_argument("--name", default="orion", help="fleet name in plumb.yaml")
    parser.add_argument("--seed", type=int, default=0, help="seed for cable lengths")
    parser.add_argument("--compact", action="store_true",
                        help="racks, devices and cables as topology rules, not records")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    try:
        summary = generate_fleet(args.out, args.nodes, name=args.name, seed=args.seed,
                                 compact=args.compact)
    except ValueError as exc:
        parser.error(str(exc))
    elapsed = time.perf_counter() - started
    print(
        f"{args.out}: {summary.nodes} nodes, {summary.leaves} leaves, {summary.spines} spines "
        f"({summary.spine_ports} ports, {summary.planes} plane(s)), {summary.links} links, "
        f"{summary.gangs} gangs, {summary.records} records in {summary.files} files, "
        f"{elapsed:.2f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
