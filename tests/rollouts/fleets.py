"""Small synthetic fleets for rollout planning: pydantic inventory models built
directly (no YAML), and hypothesis strategies for fleets, changes and specs."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from ipaddress import IPv4Address
from typing import Any

from hypothesis import strategies as st

from inventory.models import Device, Gang, Link, LinkClass, Rack, Role
from reconciler.settings import Change
from rollouts.spec import RolloutSpec
from rollouts.topology import Inventory


def rack(name: str, power: str | None = None, cooling: str = "row-a") -> Rack:
    return Rack(name=name, power_domain=power or f"pdu-{name}", cooling_domain=cooling)


def node(name: str, rack_name: str, index: int, **labels: str) -> Device:
    return Device(
        name=name,
        role=Role.gpu_node,
        vendor="halcyon",
        model=labels.pop("model", "HX8"),
        platform="linux",
        rack=rack_name,
        mgmt=IPv4Address("10.0.0.0") + index + 1,
        gpus=8,
        labels=labels,
    )


def switch(name: str, rack_name: str, index: int, role: Role = Role.leaf) -> Device:
    return Device(
        name=name,
        role=role,
        vendor="arista",
        model="7060DX5-64S",
        platform="eos",
        rack=rack_name,
        mgmt=IPv4Address("10.1.0.0") + index + 1,
    )


def host_cable(host: str, port: str, tor: str, tor_port: str) -> Link:
    return Link.model_validate(
        {
            "a": host,
            "a_port": port,
            "b": tor,
            "b_port": tor_port,
            "class": LinkClass.host_leaf,
            "length_m": 3.0,
        }
    )


def firmware(before: str, after: str = "9") -> tuple[Change, ...]:
    return (Change("firmware/nic_firmware", before, after),)


def spec(**fields: Any) -> RolloutSpec:
    """A spec selecting every GPU node, with ``fields`` on top (nested dicts)."""
    return RolloutSpec.model_validate(
        {"name": "t", "targets": {"select": "role=gpu-node"}, **fields}
    )


@dataclass(frozen=True)
class Case:
    """A generated fleet, the changes per target and a spec."""

    fleet: Inventory
    changes: Mapping[str, Sequence[Change]]
    spec: RolloutSpec


def orion_like(racks: int = 8, per_rack: int = 4) -> Inventory:
    """ORION's shape: 4 nodes per rack, the last rack B0 and in no gang, two gangs with
    one DP replica per rack (racks 1-4 and 5-7)."""
    all_racks = {
        f"r{i}": rack(f"r{i}", cooling="row-a" if i <= racks // 2 else "row-b")
        for i in range(1, racks + 1)
    }
    devices: dict[str, Device] = {}
    for r in range(1, racks + 1):
        for j in range(per_rack):
            name = f"n{(r - 1) * per_rack + j + 1:02d}"
            revision = "B0" if r == racks else "A1"
            devices[name] = node(name, f"r{r}", len(devices), nic_revision=revision)
    names = list(devices)
    replicas_a = [tuple(names[i * per_rack : (i + 1) * per_rack]) for i in range(racks // 2)]
    replicas_b = [
        tuple(names[i * per_rack : (i + 1) * per_rack]) for i in range(racks // 2, racks - 1)
    ]
    gangs = {
        "a": Gang(name="a", nodes=sum(replicas_a, ()), dp_replicas=tuple(replicas_a)),
        "b": Gang(name="b", nodes=sum(replicas_b, ()), dp_replicas=tuple(replicas_b)),
    }
    return Inventory(devices, all_racks, gangs)


@st.composite
def fleets(draw: st.DrawFn) -> Inventory:
    """1-6 racks of 1-5 GPU nodes; shared power and cooling domains; 0-3 gangs with
    0-3 DP replicas each; two models and two NIC revisions."""
    n_racks = draw(st.integers(1, 6))
    racks = {}
    for i in range(n_racks):
        power = f"pdu-{draw(st.integers(0, n_racks - 1))}"
        cooling = f"row-{draw(st.integers(0, 2))}"
        racks[f"r{i}"] = rack(f"r{i}", power, cooling)
    devices: dict[str, Device] = {}
    for name in racks:
        for _ in range(draw(st.integers(1, 5))):
            device = f"n{len(devices):02d}"
            model = draw(st.sampled_from(["HX8", "HX9"]))
            revision = draw(st.sampled_from(["A1", "B0"]))
            devices[device] = node(device, name, len(devices), model=model, nic_revision=revision)
    names = list(devices)
    gang_of = draw(st.lists(st.integers(-1, 2), min_size=len(names), max_size=len(names)))
    gangs: dict[str, Gang] = {}
    for g in range(3):
        members = tuple(n for n, k in zip(names, gang_of, strict=True) if k == g)
        if not members:
            continue
        parts = draw(st.integers(0, min(3, len(members))))
        replicas = tuple(members[i::parts] for i in range(parts)) if parts else ()
        gangs[f"g{g}"] = Gang(
            name=f"g{g}", nodes=members, dp_replicas=replicas, gpus_per_node=draw(st.integers(1, 8))
        )
    return Inventory(devices, racks, gangs)


def optional(values: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.none() | values


@st.composite
def cases(draw: st.DrawFn, *, drain: bool | None = None, domain_caps: bool = True) -> Case:
    """A fleet, a random non-empty target set with firmware changes, and a spec."""
    fleet = draw(fleets())
    names = sorted(fleet.devices)
    targets = draw(st.lists(st.sampled_from(names), min_size=1, unique=True))
    changes = {t: firmware(draw(st.sampled_from(["1", "2"]))) for t in targets}
    caps: dict[str, Any] = {
        "per_wave": draw(optional(st.integers(1, 10))),
        "fleet_fraction_in_flight": draw(optional(st.floats(0.2, 1.0))),
    }
    if domain_caps:
        caps |= {
            "per_rack": draw(optional(st.integers(1, 3))),
            "per_power_domain": draw(optional(st.integers(1, 4))),
            "per_cooling_domain": draw(optional(st.integers(1, 6))),
            "per_dp_replica": draw(optional(st.integers(1, 2))),
        }
    extra = draw(st.lists(st.sampled_from(["label.nic_revision", "rack"]), unique=True))
    built = spec(
        strata={
            "extra_attributes": extra,
            "canary_per_stratum": draw(st.integers(1, 3)),
            "canary_waves": draw(st.integers(1, 3)),
        },
        waves={
            "growth": draw(st.floats(1.0, 4.0)),
            "first_wave": draw(optional(st.integers(1, 6))),
        },
        caps={k: v for k, v in caps.items() if v is not None},
        drain=draw(st.booleans()) if drain is None else drain,
        seed=draw(st.integers(0, 2**32)),
    )
    return Case(fleet, changes, built)


def canary_need(sizes: Sequence[int], per_stratum: int) -> int:
    return sum(min(per_stratum, s) for s in sizes)


def fleet_limit(case: Case) -> int | None:
    caps = case.spec.caps
    limits = [caps.per_wave] if caps.per_wave is not None else []
    if caps.fleet_fraction_in_flight is not None:
        limits.append(math.floor(caps.fleet_fraction_in_flight * len(case.fleet.devices) + 1e-9))
    return min(limits) if limits else None


@st.composite
def switch_cases(draw: st.DrawFn) -> Case:
    """A drained rollout over GPU nodes and the switches above them: 1-4 racks of 1-4
    nodes, each node cabled to 1-3 of 2-6 leaves (a ToR pair, rails), 0-3 gangs over the
    nodes, 0-2 spines (nothing behind them); a random non-empty target set, every cap
    optional (never_both_tors and per_role included)."""
    n_racks = draw(st.integers(1, 4))
    racks = {f"r{i}": rack(f"r{i}", cooling=f"row-{i % 2}") for i in range(n_racks)}
    racks["net"] = rack("net")
    devices: dict[str, Device] = {}
    for name in list(racks)[:-1]:
        for _ in range(draw(st.integers(1, 4))):
            devices[f"n{len(devices):02d}"] = node(f"n{len(devices):02d}", name, len(devices))
    nodes = list(devices)
    leaves = [f"leaf{i}" for i in range(draw(st.integers(2, 6)))]
    spines = [f"spine{i}" for i in range(draw(st.integers(0, 2)))]
    for i, name in enumerate(leaves):
        devices[name] = switch(name, "net", i)
    for i, name in enumerate(spines):
        devices[name] = switch(name, "net", 50 + i, Role.spine)
    links = []
    ports: dict[str, int] = {}
    for host in nodes:
        tors = draw(st.lists(st.sampled_from(leaves), min_size=1, max_size=3, unique=True))
        for k, tor in enumerate(tors):
            ports[tor] = ports.get(tor, 0) + 1
            links.append(host_cable(host, f"eth{k}", tor, f"Ethernet{ports[tor]}"))
    gang_of = draw(st.lists(st.integers(-1, 2), min_size=len(nodes), max_size=len(nodes)))
    gangs = {}
    for g in range(3):
        members = tuple(n for n, k in zip(nodes, gang_of, strict=True) if k == g)
        if members:
            gangs[f"g{g}"] = Gang(
                name=f"g{g}", nodes=members, gpus_per_node=draw(st.integers(1, 8))
            )
    targets = draw(st.lists(st.sampled_from(sorted(devices)), min_size=1, unique=True))
    changes = {
        t: (Change("system/nos_version", draw(st.sampled_from(["1", "2"])), "9"),) for t in targets
    }
    caps: dict[str, Any] = {
        "per_wave": draw(optional(st.integers(1, 6))),
        "per_rack": draw(optional(st.integers(1, 3))),
        "never_both_tors": draw(st.booleans()),
        "per_role": draw(
            st.dictionaries(st.sampled_from(["leaf", "spine", "gpu-node"]), st.integers(1, 3))
        ),
    }
    built = RolloutSpec.model_validate(
        {
            "name": "t",
            "targets": {"select": "role=gpu-node|leaf|spine"},
            "strata": {"canary_waves": draw(st.integers(1, 3))},
            "waves": {"growth": draw(st.floats(1.0, 4.0))},
            "caps": {k: v for k, v in caps.items() if v is not None},
            "drain": True,
            "seed": draw(st.integers(0, 2**32)),
        }
    )
    return Case(Inventory(devices, racks, gangs, tuple(links)), changes, built)
