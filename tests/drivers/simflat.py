"""The switch simulator's model <-> plumb's flat state, written independently of the
drivers' parsers: it builds simulated switches from a desired state and serves as the
oracle the parsers' golden fixtures are checked against."""

from __future__ import annotations

import re
from collections.abc import Mapping

from reconciler.settings import Scalar
from tests.switchsim import BgpNeighbor, BgpState, EcnQueue, InterfaceState, SwitchState

ECN = ("kmin_kb", "kmax_kb", "pmax_percent")


def _natural(name: str) -> tuple[int, ...]:
    return tuple(int(n) for n in re.findall(r"\d+", name))


def state_from_flat(
    flat: Mapping[str, Scalar], *, hostname: str, dialect: str, model: str
) -> SwitchState:
    """A simulated switch holding ``flat`` (fleet-wide QoS on every port)."""
    version = str(flat["system/nos_version"])
    image = f"flash:EOS-{version}.swi" if dialect == "eos" else f"SONiC-OS-{version}"
    ports: dict[str, InterfaceState] = {}
    for path, value in flat.items():
        parts = path.split("/")
        if parts[0] != "interfaces":
            continue
        port = ports.setdefault(parts[1], InterfaceState())
        if parts[2] == "mtu" and isinstance(value, int):
            port.mtu = value
        elif parts[2] == "address":
            port.ipv4 = str(value) if value else None
        elif parts[2] == "pfc_priorities":
            port.pfc_priorities = [int(p) for p in str(value or "").split(",") if p]
    for queue in range(8):
        values = [flat.get(f"qos/ecn/{queue}/{f}") for f in ECN]
        if all(isinstance(v, int) for v in values):
            kmin, kmax, pmax = (int(v) for v in values if isinstance(v, int))
            for port in ports.values():
                port.ecn[queue] = EcnQueue(kmin, kmax, pmax)
    for port in ports.values():
        headroom, xoff = flat.get("qos/pfc_headroom_kb"), flat.get("qos/pfc_xoff_kb")
        port.pfc_headroom_kb = headroom if isinstance(headroom, int) else None
        port.pfc_xoff_kb = xoff if isinstance(xoff, int) else None
    dscp = {
        int(p.split("/")[2]): int(v)
        for p, v in flat.items()
        if p.startswith("qos/dscp/") and isinstance(v, int)
    }
    bgp = None
    if isinstance(flat.get("bgp/asn"), int):
        neighbors: dict[str, BgpNeighbor] = {}
        for path, value in flat.items():
            parts = path.split("/")
            if parts[:2] == ["bgp", "neighbors"] and parts[3] == "remote_as" and value:
                route_map = flat.get(f"bgp/neighbors/{parts[2]}/inbound_filter") or None
                neighbors[parts[2]] = BgpNeighbor(
                    int(value), None if route_map is None else str(route_map)
                )
        router_id = flat.get("bgp/router_id")
        bgp = BgpState(
            asn=int(flat["bgp/asn"] or 0),
            router_id=None if router_id is None else str(router_id),
            maximum_paths=int(flat.get("bgp/maximum_paths") or 1),
            neighbors=neighbors,
        )
    return SwitchState(
        hostname=hostname,
        model=model,
        nos_version=version,
        boot_image=image,
        interfaces=dict(sorted(ports.items(), key=lambda kv: _natural(kv[0]))),
        dscp_to_tc=dscp,
        bgp=bgp,
    )


def _shared(values: list[object]) -> object:
    return values[0] if values and all(v == values[0] for v in values) else None


def flat_from_state(state: SwitchState) -> dict[str, Scalar]:
    """What a driver must observe on a simulated switch, path by path."""
    out: dict[str, Scalar] = {
        "system/nos_version": state.nos_version,
        "system/model": state.model,
        "system/hostname": state.hostname,
    }
    ports = list(state.interfaces.values())
    for name, port in state.interfaces.items():
        out[f"interfaces/{name}/mtu"] = port.mtu
        out[f"interfaces/{name}/address"] = port.ipv4
        out[f"interfaces/{name}/pfc_priorities"] = ",".join(map(str, sorted(port.pfc_priorities)))
        out[f"interfaces/{name}/description"] = port.description
    for number in range(64):
        out[f"qos/dscp/{number}"] = state.dscp_to_tc.get(number)
    for queue in range(8):
        shared = _shared([p.ecn.get(queue) for p in ports])
        for field in ECN:
            out[f"qos/ecn/{queue}/{field}"] = (
                None if not isinstance(shared, EcnQueue) else getattr(shared, field)
            )
    if state.boot_image.startswith("flash:"):
        out.update(_eos_only(state))
    else:
        headroom = _shared([p.pfc_headroom_kb for p in ports])
        xoff = _shared([p.pfc_xoff_kb for p in ports])
        out["qos/pfc_headroom_kb"] = headroom if isinstance(headroom, int) else None
        out["qos/pfc_xoff_kb"] = xoff if isinstance(xoff, int) else None
    bgp = state.bgp
    out["bgp/asn"] = None if bgp is None else bgp.asn
    out["bgp/router_id"] = None if bgp is None else bgp.router_id
    out["bgp/maximum_paths"] = None if bgp is None else bgp.maximum_paths
    for peer, neighbor in bgp.neighbors.items() if bgp is not None else []:
        out[f"bgp/neighbors/{peer}/remote_as"] = neighbor.remote_as
        out[f"bgp/neighbors/{peer}/inbound_filter"] = neighbor.route_map_in or ""
    return out


def _eos_only(state: SwitchState) -> dict[str, Scalar]:
    """What EOS reports beyond the shared namespace: the full build, each port's mode
    (a port with an address is routed), the unit of shared ECN thresholds. EOS has
    no PFC headroom or xoff command, so those are never reported."""
    out: dict[str, Scalar] = {"system/nos_build": state.nos_version}
    for name, port in state.interfaces.items():
        out[f"interfaces/{name}/mode"] = "routed" if port.ipv4 else "switched"
    for queue in range(8):
        used = any(queue in p.ecn for p in state.interfaces.values())
        out[f"qos/ecn/{queue}/threshold_unit"] = "kbytes" if used else None
    return out
