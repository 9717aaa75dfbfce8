"""The fleet generator: its repos load, follow the sizing rule and are reproducible."""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass
from functools import cache
from ipaddress import IPv4Address, IPv4Network
from pathlib import Path

import pytest
from pydantic import BaseModel

from benchmarks.genfleet import FleetSummary, generate_fleet, headroom_bytes
from benchmarks.genlayout import plan_fabric
from intent.models import IntentFile, PlumbConfig, WaiversFile
from inventory.models import Device, InventoryFile, Link, LinkClass, Role
from inventory.source import parse_text
from rollouts.spec import RolloutFile

REPO = Path(__file__).resolve().parents[1]
ORION = REPO / "examples" / "orion"

EXPECTED_YAML = [
    "intent/addressing.yaml",
    "intent/bgp.yaml",
    "intent/devices.yaml",
    "intent/firmware.yaml",
    "intent/groups.yaml",
    "intent/mtu.yaml",
    "intent/qos.yaml",
    "inventory/devices/leaves.yaml",
    "inventory/devices/nodes.yaml",
    "inventory/devices/spines.yaml",
    "inventory/gangs.yaml",
    "inventory/links/backend.yaml",
    "inventory/links/frontend.yaml",
    "inventory/racks.yaml",
    "plumb.yaml",
    "policies/waivers.yaml",
    "rollouts/firmware-hx8-2026-09.yaml",
    "rollouts/qos-mtu-tune.yaml",
]

KINDS: dict[str, tuple[str, type[BaseModel]]] = {
    "plumb.yaml": ("plumb", PlumbConfig),
    "inventory": ("inventory", InventoryFile),
    "intent": ("intent", IntentFile),
    "policies": ("waivers", WaiversFile),
    "rollouts": ("rollout", RolloutFile),
}


def _kind(rel: str) -> tuple[str, type[BaseModel]]:
    return KINDS[rel if "/" not in rel else rel.split("/", 1)[0]]


def _yaml_files(root: Path) -> list[str]:
    return sorted(
        path.relative_to(root).as_posix()
        for path in root.rglob("*.yaml")
        if "schemas" not in path.relative_to(root).parts
    )


@dataclass(frozen=True)
class Fleet:
    """One fleet repo, loaded through the same reader and models plumb uses."""

    root: Path
    files: dict[str, BaseModel]

    def _inventory(self) -> list[InventoryFile]:
        return [m for m in self.files.values() if isinstance(m, InventoryFile)]

    @property
    def devices(self) -> list[Device]:
        return [d for m in self._inventory() for d in m.devices]

    @property
    def links(self) -> list[Link]:
        return [link for m in self._inventory() for link in m.links]

    def intent(self, rel: str) -> IntentFile:
        model = self.files[rel]
        assert isinstance(model, IntentFile)
        return model

    def inventory(self, rel: str) -> InventoryFile:
        model = self.files[rel]
        assert isinstance(model, InventoryFile)
        return model

    def role(self, role: Role) -> list[Device]:
        return [d for d in self.devices if d.role is role]

    def links_of(self, link_class: LinkClass) -> list[Link]:
        return [link for link in self.links if link.link_class is link_class]


@cache
def _load(root: Path) -> Fleet:
    files: dict[str, BaseModel] = {}
    for rel in _yaml_files(root):
        data = parse_text(rel, (root / rel).read_bytes()).data
        files[rel] = _kind(rel)[1].model_validate(data)
    return Fleet(root, files)


@pytest.fixture(scope="module", params=[32, 128], ids=["32-nodes", "128-nodes"])
def generated(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> tuple[int, Path, FleetSummary]:
    nodes: int = request.param
    root = tmp_path_factory.mktemp(f"fleet{nodes}")
    return nodes, root, generate_fleet(root, nodes)


@pytest.fixture(scope="module")
def orion() -> Fleet:
    return _load(ORION)


def test_every_yaml_file_validates_against_its_model(
    generated: tuple[int, Path, FleetSummary],
) -> None:
    """Every file of a generated fleet loads with plumb's reader and validates."""
    _, root, _ = generated
    assert _yaml_files(root) == EXPECTED_YAML
    assert set(_load(root).files) == set(EXPECTED_YAML)


def test_every_yaml_file_points_at_the_schema_of_its_kind(
    generated: tuple[int, Path, FleetSummary],
) -> None:
    """Each file opens with a yaml-language-server modeline to schemas/<kind>.schema.json."""
    _, root, _ = generated
    for rel in EXPECTED_YAML:
        first = (root / rel).read_text().splitlines()[0]
        prefix = "# yaml-language-server: $schema="
        assert first.startswith(prefix), rel
        target = ((root / rel).parent / first[len(prefix):]).resolve()
        assert target == (root / "schemas" / f"{_kind(rel)[0]}.schema.json").resolve(), rel


def test_link_counts_follow_the_sizing_rule(generated: tuple[int, Path, FleetSummary]) -> None:
    """N nodes give 8N host-leaf, 8N leaf-spine and N frontend links."""
    nodes, root, summary = generated
    fleet = _load(root)
    assert len(fleet.links_of(LinkClass.host_leaf)) == 8 * nodes
    assert len(fleet.links_of(LinkClass.leaf_spine)) == 8 * nodes
    assert len(fleet.links_of(LinkClass.frontend)) == nodes
    assert summary.links == len(fleet.links) == 17 * nodes


def test_device_counts_follow_the_sizing_rule(generated: tuple[int, Path, FleetSummary]) -> None:
    """8 leaves per 32 nodes, spines as planned, one frontend switch per 32 nodes."""
    nodes, root, summary = generated
    fleet = _load(root)
    plan = plan_fabric(nodes)
    assert len(fleet.role(Role.gpu_node)) == summary.nodes == nodes
    assert len(fleet.role(Role.leaf)) == summary.leaves == 8 * -(-nodes // 32)
    assert len(fleet.role(Role.spine)) == summary.spines == plan.spines
    assert len(fleet.role(Role.frontend)) == summary.frontend_switches == -(-nodes // 32)


def test_every_leaf_has_as_many_uplinks_as_host_ports(
    generated: tuple[int, Path, FleetSummary],
) -> None:
    """A full leaf has 32 hosts on Ethernet1-32 and 32 uplinks on Ethernet33-64."""
    _, root, _ = generated
    fleet = _load(root)
    down: dict[str, set[str]] = defaultdict(set)
    up: dict[str, set[str]] = defaultdict(set)
    for link in fleet.links_of(LinkClass.host_leaf):
        down[link.b].add(link.b_port)
    for link in fleet.links_of(LinkClass.leaf_spine):
        up[link.a].add(link.a_port)
    for leaf in fleet.role(Role.leaf):
        assert down[leaf.name] == {f"Ethernet{i}" for i in range(1, 33)}, leaf.name
        assert up[leaf.name] == {f"Ethernet{i}" for i in range(33, 65)}, leaf.name


def test_every_leaf_spreads_its_uplinks_evenly_over_its_spines(
    generated: tuple[int, Path, FleetSummary],
) -> None:
    """Each leaf sends the same number of uplinks to every spine it reaches."""
    nodes, root, _ = generated
    plan = plan_fabric(nodes)
    per_leaf: dict[str, Counter[str]] = defaultdict(Counter)
    for link in _load(root).links_of(LinkClass.leaf_spine):
        per_leaf[link.a][link.b] += 1
    for leaf, spines in per_leaf.items():
        assert len(spines) == plan.spines_per_plane, leaf
        assert set(spines.values()) == {32 // plan.spines_per_plane}, leaf


def test_every_spine_has_the_planned_port_count(generated: tuple[int, Path, FleetSummary]) -> None:
    """Spine ports are Ethernet1..P with P the planned (and bounded) count."""
    nodes, root, summary = generated
    ports: dict[str, set[str]] = defaultdict(set)
    for link in _load(root).links_of(LinkClass.leaf_spine):
        ports[link.b].add(link.b_port)
    assert summary.spine_ports == plan_fabric(nodes).spine_ports <= 512
    assert len(ports) == summary.spines
    for spine, used in ports.items():
        assert used == {f"Ethernet{i}" for i in range(1, summary.spine_ports + 1)}, spine


def test_no_endpoint_is_cabled_twice(generated: tuple[int, Path, FleetSummary]) -> None:
    """No (device, port) pair is the end of more than one link."""
    _, root, _ = generated
    ends = Counter(
        end for link in _load(root).links for end in ((link.a, link.a_port), (link.b, link.b_port))
    )
    assert [end for end, count in ends.items() if count > 1] == []


def test_host_ends_are_declared_nics_on_their_leaf_rail(
    generated: tuple[int, Path, FleetSummary],
) -> None:
    """Every link ends on declared devices; NIC eth<i> meets a leaf of rail i."""
    _, root, _ = generated
    fleet = _load(root)
    devices = {d.name: d for d in fleet.devices}
    for link in fleet.links:
        assert link.a in devices and link.b in devices, link
    for link in fleet.links_of(LinkClass.host_leaf):
        nics = {nic.name: nic for nic in devices[link.a].nics}
        assert nics[link.a_port].rail == devices[link.b].rail, link


def test_names_are_unique(generated: tuple[int, Path, FleetSummary]) -> None:
    """Devices, racks and gangs each have unique names, and devices sit in declared racks."""
    _, root, _ = generated
    fleet = _load(root)
    racks = [r.name for r in fleet.inventory("inventory/racks.yaml").racks]
    gangs = [g.name for g in fleet.inventory("inventory/gangs.yaml").gangs]
    devices = [d.name for d in fleet.devices]
    for names in (racks, gangs, devices):
        assert len(names) == len(set(names))
    assert {d.rack for d in fleet.devices} <= set(racks)


def test_mgmt_addresses_are_unique_and_benchmark_reserved(
    generated: tuple[int, Path, FleetSummary],
) -> None:
    """Every management address is distinct and inside 198.18.0.0/15."""
    _, root, _ = generated
    addresses = [d.mgmt for d in _load(root).devices]
    assert len(addresses) == len(set(addresses))
    assert all(a in IPv4Network("198.18.0.0/15") for a in addresses)


def test_asns_and_router_ids_are_unique_and_cover_every_switch(
    generated: tuple[int, Path, FleetSummary],
) -> None:
    """Every leaf has its own private ASN, distinct from the spines'; router ids are unique."""
    _, root, _ = generated
    fleet = _load(root)
    bgp = fleet.intent("intent/bgp.yaml").bgp
    assert bgp is not None and bgp.spine_asn is not None
    leaves = {d.name for d in fleet.role(Role.leaf)}
    assert set(bgp.leaf_asns) == leaves
    asns = [*bgp.leaf_asns.values(), bgp.spine_asn]
    assert len(asns) == len(set(asns))
    assert all(64512 <= asn <= 65534 for asn in asns)
    assert set(bgp.router_ids) == leaves | {d.name for d in fleet.role(Role.spine)}
    assert len(set(bgp.router_ids.values())) == len(bgp.router_ids)


def test_address_pools_hold_a_slash_31_per_link_without_overlap(
    generated: tuple[int, Path, FleetSummary],
) -> None:
    """Each routed link class's pool fits one /31 per link and no pools overlap."""
    _, root, _ = generated
    fleet = _load(root)
    addressing = fleet.intent("intent/addressing.yaml").addressing
    assert addressing is not None and addressing.loopbacks is not None
    pools = addressing.pools
    for link_class, pool in pools.items():
        assert pool.num_addresses >= 2 * len(fleet.links_of(link_class)), link_class
    networks = [*pools.values(), addressing.loopbacks]
    for i, first in enumerate(networks):
        assert not any(first.overlaps(other) for other in networks[i + 1:])


def test_same_seed_gives_byte_identical_output(tmp_path: Path) -> None:
    """Two generations with the same arguments write the same bytes."""
    generate_fleet(tmp_path / "one", 32, seed=7)
    generate_fleet(tmp_path / "two", 32, seed=7)
    files = sorted(p.relative_to(tmp_path / "one") for p in (tmp_path / "one").rglob("*"))
    assert files == sorted(p.relative_to(tmp_path / "two") for p in (tmp_path / "two").rglob("*"))
    for rel in files:
        if (tmp_path / "one" / rel).is_file():
            assert (tmp_path / "one" / rel).read_bytes() == (tmp_path / "two" / rel).read_bytes()


def test_another_seed_changes_cable_lengths_only(tmp_path: Path) -> None:
    """The seed moves cable lengths and nothing else: the topology stays the same."""
    generate_fleet(tmp_path / "a", 32, seed=1)
    generate_fleet(tmp_path / "b", 32, seed=2)
    a, b = _load(tmp_path / "a").links, _load(tmp_path / "b").links
    assert [link.model_copy(update={"length_m": 1.0}) for link in a] == [
        link.model_copy(update={"length_m": 1.0}) for link in b
    ]
    assert [link.length_m for link in a] != [link.length_m for link in b]


def test_committed_orion_equals_a_fresh_generation(tmp_path: Path) -> None:
    """examples/orion is exactly what the generator writes for 32 nodes."""
    generate_fleet(tmp_path, 32)
    fresh = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file())
    committed = sorted(
        p.relative_to(ORION).as_posix()
        for p in ORION.rglob("*")
        if p.is_file() and p.name != "README.md" and "schemas" not in p.relative_to(ORION).parts
    )
    assert committed == fresh
    stale = [rel for rel in fresh if (ORION / rel).read_bytes() != (tmp_path / rel).read_bytes()]
    assert stale == [], "regenerate: python benchmarks/genfleet.py examples/orion --nodes 32"


def test_orion_has_the_reference_shape(orion: Fleet) -> None:
    """ORION: 32 nodes, 256 GPUs, 8 rail leaves, 4 spines and 512 backend links."""
    assert len(orion.role(Role.gpu_node)) == 32
    assert sum(d.gpus for d in orion.devices) == 256
    assert sorted(d.name for d in orion.role(Role.leaf)) == [f"leaf-r{i}" for i in range(8)]
    assert sorted(d.name for d in orion.role(Role.spine)) == [f"spine-{i}" for i in range(1, 5)]
    backend = orion.links_of(LinkClass.host_leaf) + orion.links_of(LinkClass.leaf_spine)
    assert len(backend) == 512


def test_orion_headroom_stays_in_the_reference_band(orion: Fleet) -> None:
    """Every lossless ORION cable needs 93-119 KB of PFC headroom, within the declared 128 KB."""
    qos = orion.intent("intent/qos.yaml").qos
    assert qos is not None and qos.pfc_headroom_kb is not None
    for link in orion.links_of(LinkClass.host_leaf) + orion.links_of(LinkClass.leaf_spine):
        need_kb = headroom_bytes(link.length_m) / 1000
        assert 93 <= need_kb <= 119 <= qos.pfc_headroom_kb, link


def test_orion_gangs_match_the_reference_layout(orion: Fleet) -> None:
    """Gang a spans racks 1-4, gang b racks 5-7, one DP replica per rack; rack 8 is idle."""
    gangs = {g.name: g for g in orion.inventory("inventory/gangs.yaml").gangs}
    assert set(gangs) == {"llm-pretrain-a", "llm-pretrain-b"}
    assert gangs["llm-pretrain-a"].nodes == tuple(f"gpu-n{i:02d}" for i in range(1, 17))
    assert gangs["llm-pretrain-b"].nodes == tuple(f"gpu-n{i:02d}" for i in range(17, 29))
    racks = {d.name: d.rack for d in orion.role(Role.gpu_node)}
    for gang in gangs.values():
        for replica in gang.dp_replicas:
            assert len(replica) == 4 and len({racks[n] for n in replica}) == 1


def test_only_the_last_rack_has_revision_b0_nics(orion: Fleet) -> None:
    """The B0 stratum is exactly gpu-r08, labelled and reflected in every backend NIC."""
    b0 = {d.name for d in orion.role(Role.gpu_node) if d.labels["nic_revision"] == "B0"}
    assert b0 == {"gpu-n29", "gpu-n30", "gpu-n31", "gpu-n32"}
    for node in orion.role(Role.gpu_node):
        revisions = {nic.revision for nic in node.nics if nic.rail is not None}
        assert revisions == {node.labels["nic_revision"]}, node.name


def test_groups_declare_newer_bundles_validated_for_their_models(orion: Fleet) -> None:
    """Each group's bundle lists every model it matches and no bundle hits the blocked list."""
    intent = orion.intent("intent/firmware.yaml").firmware
    assert intent is not None
    bundles = {b.name: b for b in intent.bundles}
    groups = orion.intent("intent/groups.yaml").groups
    assert {g.set.firmware.bundle for g in groups if g.set.firmware} == {
        "hx8-2026.09", "eos-4.32.2F", "sonic-202411",
    }
    for group in groups:
        assert group.match.models is not None and group.set.firmware is not None
        bundle = bundles[str(group.set.firmware.bundle)]
        assert set(group.match.models) <= set(bundle.models), group.name
    for blocked in intent.blocked:
        for bundle in bundles.values():
            hit = all(bundle.components.get(k) == v for k, v in blocked.components.items())
            assert not hit, bundle.name


@pytest.mark.parametrize(
    ("nodes", "planes", "spines", "ports"),
    [(32, 1, 4, 64), (128, 1, 16, 64), (512, 1, 32, 128), (2048, 1, 32, 512), (4096, 2, 64, 512)],
)
def test_plan_sizes_spines_by_the_documented_rule(
    nodes: int, planes: int, spines: int, ports: int
) -> None:
    """Spine planes, spines and ports per spine match the module docstring's table."""
    plan = plan_fabric(nodes)
    assert (plan.planes, plan.spines, plan.spine_ports) == (planes, spines, ports)


def test_plan_refuses_node_counts_that_are_not_whole_racks() -> None:
    """A node count that is not a multiple of 4 is an error, not a ragged fleet."""
    with pytest.raises(ValueError, match="multiple of 4"):
        plan_fabric(30)


def test_a_4096_node_fleet_uses_two_planes_and_32_bit_asns(tmp_path: Path) -> None:
    """At 4,096 nodes the leaves outgrow the 16-bit private ASN range and spines split."""
    summary = generate_fleet(tmp_path, 4096)
    assert (summary.leaves, summary.spines, summary.spine_ports) == (1024, 64, 512)
    assert summary.links == 17 * 4096
    bgp = parse_text("bgp", (tmp_path / "intent/bgp.yaml").read_bytes()).data["bgp"]
    assert bgp["spine_asn"] == 4_200_000_000
    assert min(bgp["leaf_asns"].values()) == 4_200_000_001
    assert IPv4Address(bgp["router_ids"]["leaf-r7-127"]) in IPv4Network("10.255.0.0/21")
