"""MTU policies: the three layers (switch port, host netdev, RDMA path) must agree.

A mismatch blackholes large frames while BGP stays up, and one probe tests only one
ECMP path, so these are checked on every cabled port, not sampled.
"""

from __future__ import annotations

from collections.abc import Iterator

from intent.fleet import Fleet
from inventory.models import Platform, Role
from policies.builtin.ports import classes_of
from policies.engine import Finding, policy
from policies.views import ETHERNET_OVERHEAD, RDMA_OVERHEAD, VERBS_MTUS, where


@policy(
    "mtu.defined",
    title="Every cabled port has an MTU for its link class",
    rationale="A port whose MTU is not declared keeps whatever the device had, which is "
    "how one path in N ends up at 1500 while the rest run jumbo frames.",
    remediation="Add the link class and layer to intent/mtu.yaml (or a group override).",
)
def mtu_defined(fleet: Fleet) -> Iterator[Finding]:
    for name, device in fleet.devices.items():
        layer = "host" if device.role is Role.gpu_node else "switch_port"
        intent = fleet.intent[name]
        missing = sorted(
            cls.value
            for cls in classes_of(fleet, name)
            if intent.value("mtu", cls.value, layer) is None
        )
        for link_class in missing:
            yield Finding(
                name,
                f"no {layer} MTU for link class {link_class} on {name}",
                (fleet.where.devices[name],),
                (name,),
            )


@policy(
    "mtu.host-fits-port",
    title="host_mtu + 22 <= port_mtu of the cabled switch port",
    rationale="A host frame is its MTU plus 14 B Ethernet header, 4 B 802.1Q tag and 4 B FCS; "
    "if that exceeds the switch port MTU the switch drops it silently.",
    remediation="Lower the host MTU or raise the switch port MTU of that link class.",
)
def host_fits_port(fleet: Fleet) -> Iterator[Finding]:
    cabling = fleet.cabling
    for name in (d.name for d in fleet.devices.values() if d.role is Role.gpu_node):
        intent = fleet.intent[name]
        for end in cabling.ends(name).values():
            cls = cabling.class_of(end).value
            host = intent.get("mtu", cls, "host")
            port = fleet.intent[cabling.end_device[end ^ 1]].get("mtu", cls, "switch_port")
            if host is None or port is None or host.value is None or port.value is None:
                continue
            if host.value + ETHERNET_OVERHEAD > port.value:
                local, peer = cabling.endpoint(end), cabling.endpoint(end ^ 1)
                yield Finding(
                    f"{local}",
                    f"{local} host MTU {host.value} + {ETHERNET_OVERHEAD} > {port.value}, "
                    f"the MTU of switch port {peer} ({cls})",
                    where(host, port),
                    (str(local), str(peer)),
                )


@policy(
    "mtu.rdma-fits-host",
    title="rdma_mtu + 64 <= host_mtu, and rdma_mtu is a verbs MTU",
    rationale="RoCEv2 carries the RDMA payload inside the host frame with its own headers; "
    "verbs only accept 256, 512, 1024, 2048 or 4096.",
    remediation="Use RDMA path MTU 4096 with a host MTU of at least 4160 (ORION: 9000).",
)
def rdma_fits_host(fleet: Fleet) -> Iterator[Finding]:
    for name in (d.name for d in fleet.devices.values() if d.role is Role.gpu_node):
        intent = fleet.intent[name]
        classes = sorted(cls.value for cls in classes_of(fleet, name))
        for cls in classes:
            rdma = intent.get("mtu", cls, "rdma")
            if rdma is None or rdma.value is None:
                continue
            if rdma.value not in VERBS_MTUS:
                yield Finding(
                    name,
                    f"mtu.{cls}.rdma: {rdma.value} is not a verbs MTU "
                    f"({', '.join(map(str, VERBS_MTUS))})",
                    where(rdma),
                    (name,),
                )
                continue
            host = intent.get("mtu", cls, "host")
            if (
                host is not None
                and host.value is not None
                and rdma.value + RDMA_OVERHEAD > host.value
            ):
                yield Finding(
                    name,
                    f"mtu.{cls}.rdma: {rdma.value} + {RDMA_OVERHEAD} > {host.value} (host MTU)",
                    where(rdma, host),
                    (name,),
                )


@policy(
    "mtu.fabric-ends-equal",
    title="Both ends of every switch-to-switch link have the same MTU",
    rationale="Unequal ends drop the larger frames in one direction only: BGP stays up "
    "and traffic on that ECMP path blackholes.",
    remediation="Set the same switch_port MTU for the link class on both switches.",
)
def fabric_ends_equal(fleet: Fleet) -> Iterator[Finding]:
    devices, intents = fleet.devices, fleet.intent
    for index, link in enumerate(fleet.links):
        a, b = devices.get(link.a), devices.get(link.b)
        if a is None or b is None or a.role is Role.gpu_node or b.role is Role.gpu_node:
            continue
        cls = link.link_class.value
        mtu_a = intents[link.a].get("mtu", cls, "switch_port")
        mtu_b = intents[link.b].get("mtu", cls, "switch_port")
        if mtu_a is None or mtu_b is None or mtu_a is mtu_b or mtu_a.value == mtu_b.value:
            continue
        yield Finding(
            f"{link.a}:{link.a_port}",
            f"{link.a}:{link.a_port} MTU {mtu_a.value} != {link.b}:{link.b_port} MTU {mtu_b.value}",
            (*where(mtu_a, mtu_b), fleet.where.links[index]),
            (f"{link.a}:{link.a_port}", f"{link.b}:{link.b_port}"),
        )


PORT_MTU_RANGE: dict[Platform, tuple[int, int]] = {
    Platform.eos: (68, 9214),  # interface `mtu`: the L3 MTU, 68-9214
    Platform.sonic: (68, 9216),  # config_db PORT `mtu` (sonic-port YANG)
    Platform.linux_frr: (68, 9216),  # the switch ASIC's jumbo limit, as on SONiC
}
"""The switch port MTUs each switch platform accepts."""


@policy(
    "mtu.platform-range",
    title="Each switch port MTU is one its platform accepts",
    rationale="EOS refuses an `mtu` above 9214 and SONiC a PORT mtu above 9216: a value the "
    "platform cannot take is refused by every configuration session that carries it, so "
    "nothing else in that change is applied either.",
    remediation="Use a switch port MTU every platform on the link class accepts (9214 fits "
    "EOS and SONiC alike).",
)
def platform_range(fleet: Fleet) -> Iterator[Finding]:
    for name, device in fleet.devices.items():
        limits = PORT_MTU_RANGE.get(device.platform)
        if limits is None or not device.role.is_switch:
            continue
        intent = fleet.intent[name]
        for link_class in sorted(cls.value for cls in classes_of(fleet, name)):
            mtu = intent.get("mtu", link_class, "switch_port")
            if mtu is None or mtu.value is None or limits[0] <= mtu.value <= limits[1]:
                continue
            yield Finding(
                f"{name}:{link_class}",
                f"{name} ({device.platform.value}): switch port MTU {mtu.value} for "
                f"{link_class} is outside {device.platform.value}'s {limits[0]}-{limits[1]}",
                where(mtu),
                (name,),
            )
