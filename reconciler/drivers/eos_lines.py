"""Validated changes -> EOS configuration lines (pure): the rendering half of the EOS
driver.

Input is the device's own before-state (read just before the write) and the
changes as :class:`~reconciler.drivers.safevalues.Setting` objects; every value
that reaches a line, including values taken from the before-state (the other ECN
thresholds of a queue, the priorities PFC had, the AS number BGP runs), passes
:class:`~reconciler.drivers.safevalues.SafeValues` first.

Fleet-wide QoS (``qos/ecn/<prio>/*``, ``qos/pfc_headroom_kb``, ``qos/pfc_xoff_kb``)
is written to every Ethernet port, so the switch ends up uniform. The PFC buffer
lines (``priority-flow-control headroom|xoff-threshold N kbytes``) follow the SSH
simulator's syntax; a platform that sizes PFC buffers otherwise needs its own lines.
``system/nos_version`` is not a session line: the driver upgrades at commit.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from reconciler.drivers.eos_parse import natural
from reconciler.drivers.safevalues import ECN_FIELDS, SafeValues, Setting
from reconciler.errors import ConfigRejected
from reconciler.settings import Scalar

PORT_KINDS = ("mtu", "address", "pfc_priorities")
QOS_KINDS = ("pfc_headroom_kb", "pfc_xoff_kb", *(f"ecn_{f}" for f in ECN_FIELDS))
BGP_KINDS = ("asn", "router_id", "maximum_paths", "remote_as", "inbound_filter")


class Renderer:
    """Lines for one device, from its before-state and the validated changes."""

    def __init__(self, device: str, before: Mapping[str, Scalar], ports: Sequence[str]) -> None:
        self.device = device
        self.values = SafeValues(device)
        self.before = before
        self.ports = sorted(ports, key=natural)

    def was(self, path: str) -> Setting:
        """The before-state value of ``path``, validated like a change."""
        return self.values.setting(path, self.before.get(path))

    def lines(self, settings: Sequence[Setting]) -> list[str]:
        changed = {s.path: s for s in settings}
        out = self._interfaces(settings, changed)
        out += self._dscp([s for s in settings if s.kind == "dscp"])
        out += self._bgp([s for s in settings if s.kind in BGP_KINDS])
        return out

    def _after(self, path: str, changed: Mapping[str, Setting]) -> int | str | None:
        return changed[path].value if path in changed else self.was(path).value

    # -- interfaces and fleet-wide QoS ---------------------------------------------------

    def _interfaces(self, settings: Sequence[Setting], changed: Mapping[str, Setting]) -> list[str]:
        per_port: dict[str, list[str]] = {}
        for setting in settings:
            if setting.kind in PORT_KINDS:
                per_port.setdefault(setting.subject, []).extend(self._port_line(setting))
        qos = self._qos_lines(settings, changed)
        out: list[str] = []
        ports = self.ports if qos else []
        for port in sorted(set(per_port) | set(ports), key=natural):
            out += [f"interface {port}", *per_port.get(port, []), *qos]
        return out

    def _port_line(self, setting: Setting) -> list[str]:
        value = setting.value
        if setting.kind == "mtu":
            return ["no mtu"] if value is None else [f"mtu {value}"]
        if setting.kind == "address":
            return ["no ip address"] if value is None else ["no switchport", f"ip address {value}"]
        wanted = self.values.priorities(value, setting.path)
        if not wanted:
            return ["no priority-flow-control"]
        had = self.values.priorities(self.was(setting.path).value or "", setting.path)
        return [
            "priority-flow-control on",
            *(f"no priority-flow-control priority {p} no-drop" for p in had if p not in wanted),
            *(f"priority-flow-control priority {p} no-drop" for p in wanted if p not in had),
        ]

    def _qos_lines(self, settings: Sequence[Setting], changed: Mapping[str, Setting]) -> list[str]:
        out: list[str] = []
        kinds = {s.kind for s in settings}
        for kind, keyword in (("pfc_headroom_kb", "headroom"), ("pfc_xoff_kb", "xoff-threshold")):
            if kind in kinds:
                value = changed[f"qos/{kind}"].value
                out.append(
                    f"no priority-flow-control {keyword}"
                    if value is None
                    else f"priority-flow-control {keyword} {value} kbytes"
                )
        queues = sorted({int(s.subject) for s in settings if s.kind.startswith("ecn_")})
        for queue in queues:
            kmin, kmax, pmax = (self._after(f"qos/ecn/{queue}/{f}", changed) for f in ECN_FIELDS)
            out.append(f"tx-queue {queue}")
            if kmin is None and kmax is None and pmax is None:
                out.append("no random-detect ecn")
                continue
            if not (isinstance(kmin, int) and isinstance(kmax, int) and isinstance(pmax, int)):
                raise ConfigRejected(
                    self.device,
                    f"qos/ecn/{queue}: kmin_kb, kmax_kb and pmax_percent are set together",
                )
            if kmin > kmax:
                raise ConfigRejected(self.device, f"qos/ecn/{queue}: kmin_kb {kmin} > kmax_kb")
            out.append(
                f"random-detect ecn minimum-threshold {kmin} kbytes "
                f"maximum-threshold {kmax} kbytes max-mark-probability {pmax}"
            )
        return out

    # -- QoS maps and BGP ----------------------------------------------------------------

    def _dscp(self, settings: Sequence[Setting]) -> list[str]:
        out = []
        for setting in sorted(settings, key=lambda s: int(s.subject)):
            if setting.value is None:
                old = self.was(setting.path).value
                if old is not None:
                    out.append(f"no qos map dscp {setting.subject} to traffic-class {old}")
            else:
                out.append(f"qos map dscp {setting.subject} to traffic-class {setting.value}")
        return out

    def _bgp(self, settings: Sequence[Setting]) -> list[str]:
        if not settings:
            return []
        running = self.was("bgp/asn").value
        asn = next((s.value for s in settings if s.kind == "asn"), running)
        if running is not None and asn is None:
            return [f"no router bgp {running}"]
        if running is not None and asn != running:
            raise ConfigRejected(
                self.device,
                f"bgp/asn: BGP runs as AS {running}; the AS of a running BGP process "
                "is not changed in place",
            )
        if asn is None:
            raise ConfigRejected(self.device, "bgp: no AS number to configure BGP under")
        out = [f"router bgp {asn}"]
        for setting in settings:
            value = setting.value
            if setting.kind == "router_id":
                out.append("no router-id" if value is None else f"router-id {value}")
            elif setting.kind == "maximum_paths":
                out.append(
                    "no maximum-paths" if value is None else f"maximum-paths {value} ecmp {value}"
                )
        removed = {s.subject for s in settings if s.kind == "remote_as" and s.value is None}
        for setting in settings:
            if setting.kind == "remote_as":
                peer = setting.subject
                out.append(
                    f"no neighbor {peer}"
                    if setting.value is None
                    else f"neighbor {peer} remote-as {setting.value}"
                )
        for setting in settings:
            if setting.kind == "inbound_filter" and setting.subject not in removed:
                peer, name = setting.subject, setting.value
                out.append(
                    f"neighbor {peer} route-map {name} in"
                    if name
                    else f"no neighbor {peer} route-map in"
                )
        return out


def render_session(
    device: str, before: Mapping[str, Scalar], ports: Sequence[str], settings: Sequence[Setting]
) -> list[str]:
    """Configuration-session lines taking ``before`` to ``before + settings``."""
    session = [s for s in settings if s.kind != "nos_version"]
    return Renderer(device, before, ports).lines(session)


def eos_image(template: str, version: str) -> str:
    """The boot image for ``version`` (``flash:EOS-{version}.swi`` by default)."""
    return template.replace("{version}", version)
