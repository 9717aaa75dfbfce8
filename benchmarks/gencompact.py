"""The compact form of a generated fleet: one ``inventory/topology.yaml`` of rules.

``genfleet.py --compact`` writes the same fleet as the record form, with racks, devices
and cables given as rules over index ranges (docs/fleet-repo.md, "Compact topology")
instead of one record each. The rules are written in the order the record files load
(``leaves.yaml``, ``nodes.yaml``, ``spines.yaml``; ``backend.yaml`` then
``frontend.yaml``), so both forms load to the same records in the same order.
Cable lengths are drawn at random per cable, so they travel as ``lengths_m`` tables.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from benchmarks.genlayout import Cable, FleetLayout

RECORD_FILES = (
    "inventory/racks.yaml",
    "inventory/devices/spines.yaml",
    "inventory/devices/leaves.yaml",
    "inventory/devices/nodes.yaml",
    "inventory/links/backend.yaml",
    "inventory/links/frontend.yaml",
)
"""The record-form files the topology file replaces (gangs stay records)."""

TOPOLOGY_FILE = "inventory/topology.yaml"


def _mgmt(block: int, index: str) -> str:
    """The management address pattern of genlayout's ``mgmt_address(block, index)``: .1-.254 of
    consecutive /24s from 198.18.<block>.0."""
    third = f"{block} + ({index}) // 254"
    return f"198.{{18 + ({third}) // 256}}.{{({third}) % 256}}.{{({index}) % 254 + 1}}"


def _metres(link: Cable) -> str:
    return f"{link.length_dm // 10}.{link.length_dm % 10}"


def _rows(links: list[Cable], per_row: int, indent: str) -> list[str]:
    return [
        f"{indent}- [{', '.join(_metres(link) for link in links[i : i + per_row])}]\n"
        for i in range(0, len(links), per_row)
    ]


def _ragged_rows(links: list[Cable], sizes: list[int], indent: str) -> list[str]:
    out, start = [], 0
    for size in sizes:
        out.append(
            f"{indent}- [{', '.join(_metres(link) for link in links[start : start + size])}]\n"
        )
        start += size
    return out


def _plane_label(first: str) -> str:
    last = f"{first} + rails_per_plane - 1"
    return f'      labels: {{fabric_plane: "rails-{{{first}}}-{{{last}}}"}}\n'


def compact_topology(fleet: FleetLayout, header: str) -> str:
    """The text of ``inventory/topology.yaml`` for ``fleet``."""
    f, p = fleet, fleet.plan
    rpp, spp = p.rails_per_plane, p.spines_per_plane
    node = f"gpu-n{{n:0{f._node_w}}}"
    gpu_rack = f"gpu-r{{(n - 1) // 4 + 1:0{f._rack_w}}}"
    suffix = "" if f.groups == 1 else "-{g}"
    leaf = f"leaf-r{{r}}{suffix}"
    uplinks = "min(32, nodes - 32 * g)"
    out = [
        header,
        "topology:\n",
        "  constants:\n",
        f"    nodes: {f.n}\n",
        f"    groups: {f.groups}                # leaves per rail: one per 32 nodes\n",
        f"    rails_per_plane: {rpp}\n",
        f"    spines_per_plane: {spp}\n",
        "  racks:\n",
        "    - rule: gpu-racks\n",
        f"      for: {{r: 1..{f.racks_n}}}\n",
        f"      name: gpu-r{{r:0{f._rack_w}}}\n",
        "      kind: gpu\n",
        f"      power_domain: pdu-r{{r:0{f._rack_w}}}\n",
        "      cooling_domain: row-{letters((r - 1) // 4)}\n",
        "      row: row-{letters((r - 1) // 4)}\n",
        "    - rule: network-racks         # at the head of each group's first row\n",
        "      for: {g: 1..groups}\n",
        f"      name: net-{{g:0{f._net_w}}}\n",
        "      kind: network\n",
        f"      power_domain: pdu-net-{{g:0{f._net_w}}}\n",
        "      cooling_domain: row-{letters(2 * (g - 1))}\n",
        "      row: row-{letters(2 * (g - 1))}\n",
        "    - rule: spine-racks\n",
        f"      for: {{k: 1..{f.spine_racks}}}\n",
        f"      name: net-spine-{{k:0{f._spine_rack_w}}}\n",
        "      kind: network\n",
        f"      power_domain: pdu-net-spine-{{k:0{f._spine_rack_w}}}\n",
        "      cooling_domain: row-core\n",
        "      row: row-core\n",
        "  devices:\n",
        "    - rule: rail-leaves           # even rails EOS, odd rails SONiC\n",
        "      for: {g: 0..groups - 1, r: 0..7}\n",
        f"      name: {leaf}\n",
        "      role: leaf\n",
        "      vendor: \"{choose(r % 2, 'arista', 'nvidia')}\"\n",
        "      model: \"{choose(r % 2, '7060DX5-64S', 'ACS-SN5600')}\"\n",
        "      platform: \"{choose(r % 2, 'eos', 'sonic')}\"\n",
        f"      rack: net-{{g + 1:0{f._net_w}}}\n",
        f'      mgmt: "{_mgmt(f.leaf_block, "g * 8 + r")}"\n',
        '      rail: "{r}"\n',
    ]
    if p.planes > 1:
        out.append(_plane_label("r - r % rails_per_plane"))
    out += [
        "    - rule: frontend-switches\n",
        "      for: {g: 0..groups - 1}\n",
        "      name: fe-{g + 1}\n",
        "      role: frontend\n",
        "      vendor: arista\n",
        "      model: 7050CX3-32S\n",
        "      platform: eos\n",
        f"      rack: net-{{g + 1:0{f._net_w}}}\n",
        f'      mgmt: "{_mgmt(f.fe_block, "g")}"\n',
    ]
    for rule, low, high, rev in (
        ("hx8-nodes", 1, f.n - 4, "A1"),
        ("hx8-nodes-b0", f.n - 3, f.n, "B0"),
    ):
        if low > high:
            continue
        out += [
            f"    - rule: {rule}\n",
            f"      for: {{n: {low}..{high}}}\n",
            f"      name: {node}\n",
            "      role: gpu-node\n",
            "      vendor: halcyon\n",
            "      model: HX8\n",
            "      platform: linux\n",
            f"      rack: {gpu_rack}\n",
            f'      mgmt: "{_mgmt(f.node_block, "n - 1")}"\n',
            "      gpus: 8\n",
            f"      labels: {{nic_revision: {rev}}}\n",
            "      nics:\n",
            "        - for: {r: 0..7}\n",
            '          name: eth{r}\n          speed_gbps: 400\n          rail: "{r}"\n',
            f"          model: ConnectX-7\n          revision: {rev}\n",
            "        - {name: fe0, speed_gbps: 100, rail: null}\n",
        ]
    out += [
        "    - rule: spines\n",
        f"      for: {{s: 0..{p.spines - 1}}}\n",
        "      name: spine-{s + 1}\n",
        "      role: spine\n",
        "      vendor: arista\n",
        f"      model: {f.spine_model}\n",
        "      platform: eos\n",
        f"      rack: net-spine-{{s // 8 + 1:0{f._spine_rack_w}}}\n",
        f'      mgmt: "{_mgmt(f.spine_block, "s")}"\n',
    ]
    if p.planes > 1:
        out.append(_plane_label("s // spines_per_plane * rails_per_plane"))
    per_spine = f"({uplinks} // spines_per_plane)"
    spine = f"spine-{{r // rails_per_plane * spines_per_plane + j // {per_spine} + 1}}"
    spine_port = (
        "Ethernet{r % rails_per_plane * (nodes // spines_per_plane) + 32 * g // spines_per_plane"
        f" + j % {per_spine} + 1}}"
    )
    out += [
        "  links:\n",
        "    - rule: rails                 # NIC r of node n -> its group's rail-r leaf\n",
        "      for: {n: 1..nodes, r: 0..7}\n",
        f"      a: {node}\n",
        "      a_port: eth{r}\n",
        f"      b: leaf-r{{r}}{'' if f.groups == 1 else '-{(n - 1) // 32}'}\n",
        "      b_port: Ethernet{(n - 1) % 32 + 1}\n",
        "      class: host-leaf\n",
        "      lengths_m:                  # per node, eth0..eth7\n",
        *_rows(f.host_links, 8, "        "),
        "    - rule: uplinks               # split evenly over the plane's spines\n",
        f'      for: {{r: 0..7, g: 0..groups - 1, j: "0..{uplinks} - 1"}}\n',
        f"      a: {leaf}\n",
        "      a_port: Ethernet{33 + j}\n",
        f'      b: "{spine}"\n',
        f'      b_port: "{spine_port}"\n',
        "      class: leaf-spine\n",
        "      lengths_m:                  # per leaf, Ethernet33 up\n",
        *_ragged_rows(
            f.fabric_links,
            [p.hosts_on_leaf(g) for _ in range(8) for g in range(f.groups)],
            "        ",
        ),
        "    - rule: frontend\n",
        "      for: {n: 1..nodes}\n",
        f"      a: {node}\n",
        "      a_port: fe0\n",
        "      b: fe-{(n - 1) // 32 + 1}\n",
        "      b_port: Ethernet{(n - 1) % 32 + 1}\n",
        "      class: frontend\n",
        "      speed_gbps: 100\n",
        "      lengths_m: [\n",
        ",\n".join(
            f"        {', '.join(_metres(link) for link in f.frontend_links[i : i + 16])}"
            for i in range(0, len(f.frontend_links), 16)
        ),
        "\n      ]\n",
    ]
    return "".join(out)
