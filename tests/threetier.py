"""A small three-tier (five-stage Clos) fleet repo for tests: two pods of two leaves and
two spines each, two super-spines above them, one GPU node per leaf.

Every leaf reaches both spines of its pod (two cables each), every spine both
super-spines (one cable each). The spines of pod p1 share AS 64600, those of pod p2
AS 64700, the super-spines AS 64512, each leaf its own.
"""

from __future__ import annotations

from pathlib import Path

from tests.fleetcopy import FleetCopy

PODS = ("p1", "p2")
SUPER_SPINES = ("ss-1", "ss-2")
POD_SPINE_ASNS = {"p1": 64600, "p2": 64700}
SUPER_SPINE_ASN = 64512


def spines(pod: str) -> list[str]:
    return [f"spine-{pod}-{n}" for n in (1, 2)]


def leaves(pod: str) -> list[str]:
    return [f"leaf-{pod}-{n}" for n in (1, 2)]


def _switch(name: str, role: str, pod: str | None, mgmt: int) -> str:
    pod_line = f", pod: {pod}" if pod is not None else ""
    return (
        f"  - {{name: {name}, role: {role}, vendor: arista, model: 7060DX5-64S, "
        f"platform: eos, rack: net-1, mgmt: 198.18.9.{mgmt}{pod_line}}}\n"
    )


def _devices() -> str:
    out, mgmt = "devices:\n", 1
    for name in SUPER_SPINES:
        out += _switch(name, "super-spine", None, mgmt)
        mgmt += 1
    for pod in PODS:
        for name in spines(pod):
            out += _switch(name, "spine", pod, mgmt)
            mgmt += 1
        for name in leaves(pod):
            out += _switch(name, "leaf", pod, mgmt)
            mgmt += 1
    for index, leaf in enumerate(leaf for pod in PODS for leaf in leaves(pod)):
        out += (
            f"  - {{name: gpu-{index + 1}, role: gpu-node, vendor: acme, model: HX8, "
            f"platform: linux, rack: gpu-1, mgmt: 198.18.10.{index + 1}, gpus: 8, "
            f"nics: [{{name: eth0, speed_gbps: 400}}]}}  # under {leaf}\n"
        )
    return out


def _cable(a: str, a_port: str, b: str, b_port: str, link_class: str) -> str:
    return (
        f"  - {{a: {a}, a_port: {a_port}, b: {b}, b_port: {b_port}, "
        f"class: {link_class}, length_m: 10.0}}\n"
    )


def _links() -> str:
    out = "links:\n"
    spine_port: dict[str, int] = {}
    for index, leaf in enumerate(leaf for pod in PODS for leaf in leaves(pod)):
        out += _cable(f"gpu-{index + 1}", "eth0", leaf, "Ethernet1", "host-leaf")
    for pod in PODS:
        for leaf in leaves(pod):
            port = 33
            for spine in spines(pod):
                for _ in range(2):
                    spine_port[spine] = spine_port.get(spine, 0) + 1
                    out += _cable(
                        leaf, f"Ethernet{port}", spine, f"Ethernet{spine_port[spine]}", "leaf-spine"
                    )
                    port += 1
    for pod in PODS:
        for spine in spines(pod):
            for up, super_spine in enumerate(SUPER_SPINES):
                spine_port[super_spine] = spine_port.get(super_spine, 0) + 1
                out += _cable(
                    spine,
                    f"Ethernet{33 + up}",
                    super_spine,
                    f"Ethernet{spine_port[super_spine]}",
                    "spine-superspine",
                )
    return out


def _bgp() -> str:
    leaf_asns = "".join(
        f"    {leaf}: {64601 + i}\n"
        for i, leaf in enumerate(leaf for pod in PODS for leaf in leaves(pod))
    )
    pods = "".join(f"    {pod}: {asn}\n" for pod, asn in POD_SPINE_ASNS.items())
    return (
        "bgp:\n"
        f"  super_spine_asn: {SUPER_SPINE_ASN}\n"
        "  pod_spine_asns:\n" + pods + "  maximum_paths: 4\n"
        "  inbound_filter: FABRIC-IN\n"
        "  leaf_asns:\n" + leaf_asns
    )


FILES = {
    "plumb.yaml": "fleet: tri\nstate_dir: .plumb\ndrivers:\n  - driver: lab\n",
    "inventory/racks.yaml": (
        "racks:\n"
        "  - {name: net-1, kind: network, power_domain: pdu-1, cooling_domain: row-1}\n"
        "  - {name: gpu-1, kind: gpu, power_domain: pdu-2, cooling_domain: row-1}\n"
    ),
    "intent/mtu.yaml": (
        "mtu:\n"
        "  host-leaf: {switch_port: 9214, host: 9000, rdma: 4096}\n"
        "  leaf-spine: {switch_port: 9214}\n"
        "  spine-superspine: {switch_port: 9214}\n"
    ),
    "intent/addressing.yaml": (
        "addressing:\n"
        "  pools:\n"
        "    host-leaf: 10.1.0.0/24\n"
        "    leaf-spine: 10.0.0.0/24\n"
        "    spine-superspine: 10.0.1.0/24\n"
        "  loopbacks: 10.255.0.0/24\n"
    ),
    "intent/firmware.yaml": (
        "firmware:\n"
        "  bundles:\n"
        "    - {name: eos-4.32.2F, models: [7060DX5-64S], components: {nos: 4.32.2F}}\n"
        "    - {name: hx8-1, models: [HX8], components: {nic_firmware: 28.43.1014}}\n"
        "groups:\n"
        "  - {name: switches, match: {models: [7060DX5-64S]}, "
        "set: {firmware: {bundle: eos-4.32.2F}}}\n"
        "  - {name: nodes, match: {models: [HX8]}, set: {firmware: {bundle: hx8-1}}}\n"
    ),
    "policies/waivers.yaml": "waivers: []\n",
}


def make_three_tier(root: Path) -> FleetCopy:
    """Write the fleet repo under ``root`` and return it as a :class:`FleetCopy`."""
    files = dict(FILES)
    files["inventory/devices.yaml"] = _devices()
    files["inventory/links.yaml"] = _links()
    files["intent/bgp.yaml"] = _bgp()
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return FleetCopy(root)
