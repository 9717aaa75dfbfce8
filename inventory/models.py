"""Typed inventory: racks, devices with NICs, cables, training gangs.

These are the physical and organisational facts of a fleet (what exists and how it
is cabled), as read from ``inventory/*.yaml``. Desired settings live in ``intent``.
Models are frozen and forbid unknown keys, so a typo is an error with a location.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import ConfigDict, Field, StrictFloat, StrictInt, model_validator

from inventory.schemabase import Ipv4, Label, Name, PortName, Strict
from inventory.topology_model import Topology


class Role(StrEnum):
    super_spine = "super-spine"
    spine = "spine"
    leaf = "leaf"
    frontend = "frontend"
    gpu_node = "gpu-node"

    @property
    def is_switch(self) -> bool:
        return self is not Role.gpu_node


BGP_ROLES: tuple[Role, ...] = (Role.leaf, Role.spine, Role.super_spine)
"""Switches that run eBGP in the fabric (RFC 7938): leaves, spines and, in a three-tier
fabric, super-spines."""


class Platform(StrEnum):
    eos = "eos"
    sonic = "sonic"
    linux = "linux"
    linux_frr = "linux-frr"  # a whitebox switch running Linux + FRR


class LinkClass(StrEnum):
    host_leaf = "host-leaf"
    leaf_spine = "leaf-spine"
    spine_superspine = "spine-superspine"
    frontend = "frontend"


class Rack(Strict):
    name: Name
    kind: str = Field("gpu", pattern=r"^(gpu|network|storage|mixed)$")
    power_domain: Name
    cooling_domain: Name
    row: Name | None = None


class Nic(Strict):
    name: PortName
    speed_gbps: StrictInt = Field(gt=0, le=1600)
    rail: StrictInt | None = Field(None, ge=0, le=63)
    model: str | None = Field(None, max_length=64)
    revision: str | None = Field(None, max_length=32)


class Device(Strict):
    name: Name
    role: Role
    vendor: Name
    model: Name
    hwsku: Name | None = Field(
        None,
        description="SONiC: the HwSKU the switch runs (DEVICE_METADATA hwsku), when `model` "
        "is not one (a marketing name such as SN5600 for ACS-SN5600)",
    )
    platform: Platform
    rack: Name
    mgmt: Ipv4
    rail: StrictInt | None = Field(None, ge=0, le=63, description="rail served (leaves)")
    pod: Name | None = Field(
        None, description="pod of a three-tier fabric (leaves and spines; absent in two tiers)"
    )
    gpus: StrictInt = Field(0, ge=0, le=64)
    nics: tuple[Nic, ...] = ()
    labels: dict[Label, Label] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _unique_nics(self) -> Device:
        names = [nic.name for nic in self.nics]
        if len(names) != len(set(names)):
            dupes = sorted({n for n in names if names.count(n) > 1})
            raise ValueError(f"NIC names repeat: {', '.join(dupes)}")
        return self


class Link(Strict):
    """One cable. ``a`` is the lower tier (host or leaf), ``b`` the upper."""

    a: Name
    a_port: PortName
    b: Name
    b_port: PortName
    link_class: LinkClass = Field(alias="class")
    length_m: StrictFloat = Field(gt=0, le=2000)
    speed_gbps: StrictInt | None = Field(None, gt=0, le=1600)

    model_config = ConfigDict(frozen=True, extra="forbid")


class Gang(Strict):
    """A training job whose nodes stall together: draining one stops the whole gang."""

    name: Name
    nodes: tuple[Name, ...] = Field(min_length=1)
    dp_replicas: tuple[tuple[Name, ...], ...] = ()
    gpus_per_node: StrictInt = Field(8, ge=1, le=64)

    @model_validator(mode="after")
    def _replicas_partition_nodes(self) -> Gang:
        if len(set(self.nodes)) != len(self.nodes):
            raise ValueError("a node is listed twice in the gang")
        if self.dp_replicas:
            flat = [n for replica in self.dp_replicas for n in replica]
            if sorted(flat) != sorted(self.nodes):
                raise ValueError("dp_replicas must partition the gang's nodes exactly")
        return self


class InventoryFile(Strict):
    """Schema of one file under ``inventory/``: any of the four sections."""

    racks: tuple[Rack, ...] = ()
    devices: tuple[Device, ...] = ()
    links: tuple[Link, ...] = ()
    gangs: tuple[Gang, ...] = ()
    topology: Topology | None = Field(
        None, description="rules and exceptions expanded into racks, devices and links"
    )
