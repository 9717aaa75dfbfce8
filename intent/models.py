"""Typed intent: the values a fleet declares, as read from ``intent/*.yaml``.

Two kinds of content live here:

* **Device settings** (:class:`DeviceSettings`): MTU per link class, the RoCE QoS
  profile, BGP and the firmware bundle. They can be set fleet-wide (the top-level
  ``mtu``/``qos``/``bgp``/``firmware`` sections), per group (``groups``) or per
  device (``devices``); :mod:`intent.resolve` resolves them with one owner each.
* **Catalogues** that are fleet-wide only: validated firmware bundles, blocked
  combinations, and the point-to-point addressing plan.

Every field of a settings patch is optional: absent means "not set at this scope".
"""

from __future__ import annotations

from datetime import date
from typing import Annotated, Literal

from pydantic import Field, StrictInt, StringConstraints, field_validator, model_validator

from intent.serve import ServeConfig
from intent.sources import SourcesConfig
from inventory.models import LinkClass, Platform, Role
from inventory.schemabase import (
    IpInterface,
    Ipv4,
    Ipv4Network,
    Ipv6Network,
    Label,
    Name,
    PortName,
    Strict,
)

Asn = Annotated[StrictInt, Field(ge=1, le=4_294_967_295)]
Priority = Annotated[StrictInt, Field(ge=0, le=7)]
FilterName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z][A-Za-z0-9_.-]{0,62}$")]
Version = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9._+~-]{0,63}$")]
Component = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_]{0,31}$")]
Glob = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9*?\[\]._-]{1,64}$")]


class MtuLayers(Strict):
    """MTU of one link class, per layer; each layer applies to the devices that own it."""

    switch_port: StrictInt | None = Field(
        None, ge=576, le=9216, description="L2 port MTU on switches"
    )
    host: StrictInt | None = Field(None, ge=576, le=9216, description="host netdev MTU")
    rdma: StrictInt | None = Field(None, ge=256, le=4096, description="RDMA path MTU (verbs)")


class DscpEntry(Strict):
    dscp: StrictInt = Field(ge=0, le=63)
    priority: Priority


class EcnQueue(Strict):
    """DCQCN marking on one egress queue: linear from kmin to kmax, up to pmax."""

    priority: Priority
    kmin_kb: StrictInt = Field(gt=0, le=1_000_000)
    kmax_kb: StrictInt = Field(gt=0, le=1_000_000)
    pmax_percent: StrictInt = Field(ge=1, le=100)


class QosSettings(Strict):
    """The RoCEv2 lossless profile. ``pfc_priorities`` must equal the lossless
    priorities: ``lossless_priorities`` when declared (a design with two lossless
    classes, e.g. RoCE on 3 and storage on 4), else ``[roce_priority]``. ``roce_dscp``
    and ``cnp_dscp`` declare what the hosts actually mark, so the map can be checked
    against it."""

    lossless_link_classes: tuple[LinkClass, ...] | None = None
    dscp_map: tuple[DscpEntry, ...] | None = None
    roce_priority: Priority | None = None
    cnp_priority: Priority | None = None
    lossless_priorities: tuple[Priority, ...] | None = None
    roce_dscp: StrictInt | None = Field(None, ge=0, le=63)
    cnp_dscp: StrictInt | None = Field(None, ge=0, le=63)
    pfc_priorities: tuple[Priority, ...] | None = None
    ecn: tuple[EcnQueue, ...] | None = None
    pfc_xoff_kb: StrictInt | None = Field(None, gt=0, le=1_000_000)
    pfc_headroom_kb: StrictInt | None = Field(None, gt=0, le=1_000_000)
    switch_buffer_kb: StrictInt | None = Field(None, gt=0, le=10_000_000)
    peer_response_ns: StrictInt | None = Field(None, ge=0, le=1_000_000_000)
    pfc_frame_bytes: StrictInt | None = Field(None, ge=64, le=1500)

    @field_validator("dscp_map")
    @classmethod
    def _dscp_unique(cls, value: tuple[DscpEntry, ...] | None) -> tuple[DscpEntry, ...] | None:
        if value is not None:
            seen = [entry.dscp for entry in value]
            if len(seen) != len(set(seen)):
                raise ValueError("a DSCP value is mapped twice")
        return value


class NeighborSettings(Strict):
    """Per-peer overrides of a BGP session (keyed by the peer device's name)."""

    remote_as: Asn | None = None
    inbound_filter: FilterName | None = None


Peering = Literal["ipv4", "ipv6", "unnumbered"]
"""How a switch addresses its switch-to-switch sessions: the /31 of each cable (``ipv4``,
the default), the /127 of each cable (``ipv6``, RFC 6164), or no address at all
(``unnumbered``: one session per interface over IPv6 link-local, IPv4 routes with IPv6
next hops, RFC 8950)."""


class BgpSettings(Strict):
    asn: Asn | None = None
    router_id: Ipv4 | None = Field(
        None,
        description="the 32-bit BGP identifier as a dotted quad, also on IPv6-only and "
        "unnumbered sessions",
    )
    peering: Peering | None = Field(
        None,
        description="how switch-to-switch sessions are addressed: ipv4 (a /31 per cable, the "
        "default), ipv6 (a /127 per cable from addressing.ipv6_pools) or unnumbered "
        "(interface peers over IPv6 link-local)",
    )
    maximum_paths: StrictInt | None = Field(None, ge=1, le=1024)
    inbound_filter: FilterName | None = None
    neighbors: dict[Name, NeighborSettings] | None = None


class FirmwareSettings(Strict):
    bundle: Name | None = None


class DeviceSettings(Strict):
    """What a group or a single device may set; the same shape at every scope."""

    mtu: dict[LinkClass, MtuLayers] | None = None
    qos: QosSettings | None = None
    bgp: BgpSettings | None = None
    firmware: FirmwareSettings | None = None


class BgpPlan(BgpSettings):
    """Fleet-wide BGP: defaults plus the ASN and router-id plan."""

    spine_asn: Asn | None = None
    pod_spine_asns: dict[Name, Asn] = Field(
        default_factory=dict,
        description="three tiers: the ASN the spines of each pod share (one per pod)",
    )
    super_spine_asn: Asn | None = None
    leaf_asns: dict[Name, Asn] = Field(default_factory=dict)
    router_ids: dict[Name, Ipv4] = Field(default_factory=dict)


class Bundle(Strict):
    """A validated set of component versions, valid only for the listed models."""

    name: Name
    models: tuple[Name, ...] = Field(min_length=1)
    components: dict[Component, Version] = Field(min_length=1)


class BlockedCombination(Strict):
    """Known-bad: any device of these models whose bundle has all these versions."""

    models: tuple[Name, ...] = ()
    components: dict[Component, Version] = Field(min_length=1)
    reason: str = Field(min_length=1, max_length=500)


class FirmwareCatalog(FirmwareSettings):
    bundles: tuple[Bundle, ...] = ()
    blocked: tuple[BlockedCombination, ...] = ()


class AddressOverride(Strict):
    device: Name
    port: PortName
    address: IpInterface


class Addressing(Strict):
    """Point-to-point /31 per routed link, allocated from a pool per link class; with
    ``ipv6_pools``, a /127 per routed link as well."""

    pools: dict[LinkClass, Ipv4Network] = Field(default_factory=dict)
    ipv6_pools: dict[LinkClass, Ipv6Network] = Field(
        default_factory=dict, description="a /127 per link of the class (RFC 6164)"
    )
    loopbacks: Ipv4Network | None = None
    overrides: tuple[AddressOverride, ...] = ()


class Selector(Strict):
    """Which devices a group applies to: every given condition must hold."""

    names: tuple[Glob, ...] | None = None
    roles: tuple[Role, ...] | None = None
    vendors: tuple[Name, ...] | None = None
    models: tuple[Name, ...] | None = None
    platforms: tuple[Platform, ...] | None = None
    racks: tuple[Name, ...] | None = None
    rails: tuple[StrictInt, ...] | None = None
    labels: dict[Label, Label] | None = None

    @model_validator(mode="after")
    def _not_empty(self) -> Selector:
        if all(getattr(self, name) is None for name in type(self).model_fields):
            raise ValueError("an empty match would select every device; say so with names: ['*']")
        return self


class Group(Strict):
    name: Name
    match: Selector
    set: DeviceSettings


class IntentFile(Strict):
    """Schema of one file under ``intent/``: any of these sections."""

    mtu: dict[LinkClass, MtuLayers] | None = None
    qos: QosSettings | None = None
    bgp: BgpPlan | None = None
    firmware: FirmwareCatalog | None = None
    addressing: Addressing | None = None
    groups: tuple[Group, ...] = ()
    devices: dict[Name, DeviceSettings] = Field(default_factory=dict)


class Waiver(Strict):
    """An accepted violation: policy id + subject, with a reason and an expiry."""

    policy: Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9._-]{0,63}$")]
    subject: Annotated[str, StringConstraints(min_length=1, max_length=200)]
    reason: Annotated[str, StringConstraints(min_length=1, max_length=500)]
    expires: date


class WaiversFile(Strict):
    waivers: tuple[Waiver, ...] = ()


SettingGlob = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9*?\[\]/._:-]{1,200}$")]


class ExternalOwner(Strict):
    """Fields another system writes: plumb observes and reports them, never writes them."""

    owner: Name
    paths: tuple[SettingGlob, ...] = Field(min_length=1)
    devices: tuple[Glob, ...] = ("*",)


class DriverRule(Strict):
    """Which driver reaches which devices; the first matching rule wins."""

    driver: Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_-]{0,31}$")]
    platforms: tuple[Platform, ...] | None = None
    roles: tuple[Role, ...] | None = None
    port: StrictInt | None = Field(None, ge=1, le=65535)
    options: dict[
        Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_]{0,31}$")], str | StrictInt | bool
    ] = Field(default_factory=dict)


class Defaults(Strict):
    link_speed_gbps: StrictInt = Field(400, gt=0, le=1600)


EnvName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")]


class StateConfig(Strict):
    """Where the fleet's lease, freeze, audit log, rollout journal and pins live.

    ``sqlite`` (the default) is one embedded file, by default ``<state_dir>/plumb.db``;
    ``path`` may put it elsewhere, outside the repo too. ``postgresql`` is one database
    shared by every clone and CI; its URL (which may hold a password) is never written
    here: it comes from the environment variable ``url_env`` or, when that is unset,
    from ``url_file``, a file only its owner may read (mode 0600)."""

    backend: Literal["sqlite", "postgresql"] = "sqlite"
    path: str | None = Field(None, min_length=1, max_length=4096)
    url_env: EnvName = "PLUMB_STATE_URL"
    url_file: str | None = Field(None, min_length=1, max_length=4096)
    lease_takeover_minutes: float | None = Field(
        5.0,
        ge=1,
        le=10_080,
        description="A lease whose holder's database session (PostgreSQL) or process "
        "(SQLite, this host) is gone and whose last heartbeat is older than this is taken "
        "over by the next writer, audited as a break; null: only `plumb lease break` ends it.",
    )

    @model_validator(mode="before")
    @classmethod
    def _no_url_in_yaml(cls, data: object) -> object:
        if isinstance(data, dict) and ("url" in data or "dsn" in data):
            raise ValueError(
                "the state database URL is never written in plumb.yaml (it may hold a"
                " password): name an environment variable (url_env) or a 0600 file (url_file)"
            )
        return data

    @model_validator(mode="after")
    def _options_of_the_backend(self) -> StateConfig:
        if self.backend == "postgresql" and self.path is not None:
            raise ValueError("path is for the sqlite backend; postgresql takes url_env/url_file")
        if self.backend == "sqlite" and self.url_file is not None:
            raise ValueError("url_file is for the postgresql backend; sqlite takes path")
        return self


class PlumbConfig(Strict):
    """``plumb.yaml`` at the root of a fleet repo."""

    fleet: Name
    state_dir: Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9._/-]{1,200}$")] = ".plumb"
    state: StateConfig = Field(default_factory=StateConfig)
    defaults: Defaults = Field(default_factory=Defaults)
    description: str | None = Field(None, max_length=2000)
    ownership: tuple[ExternalOwner, ...] = ()
    drivers: tuple[DriverRule, ...] = ()
    serve: ServeConfig = Field(default_factory=ServeConfig)
    sources: SourcesConfig = Field(default_factory=SourcesConfig)

    @field_validator("state_dir")
    @classmethod
    def _inside_repo(cls, value: str) -> str:
        if value.startswith("/") or ".." in value.split("/"):
            raise ValueError("state_dir must be a path inside the fleet repo")
        return value


__all__ = [
    "Addressing",
    "Asn",
    "BgpPlan",
    "BgpSettings",
    "BlockedCombination",
    "Bundle",
    "DeviceSettings",
    "DscpEntry",
    "EcnQueue",
    "FirmwareCatalog",
    "Group",
    "IntentFile",
    "MtuLayers",
    "Peering",
    "PlumbConfig",
    "QosSettings",
    "Selector",
    "StateConfig",
    "Waiver",
    "WaiversFile",
]
