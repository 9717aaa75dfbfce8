"""Validated changes -> EOS configuration lines (pure): the rendering half of the EOS
driver.

Input is the device's own before-state (read just before the write), the parsed
running config (:class:`~reconciler.drivers.eos_parse.EosConfig`: the structure the
lines must keep) and the changes as :class:`~reconciler.drivers.safevalues.Setting`
objects; every value that reaches a line, including values taken from the
before-state, passes :class:`~reconciler.drivers.safevalues.SafeValues` first.

The device's structure is kept:

* fleet-wide ECN (``qos/ecn/<q>/*``) goes into the ``qos profile`` every Ethernet
  port applies, when there is one (a port's own line for that queue, which would
  shadow it, is removed), else onto every port; with the queue keyword the device
  uses (``uc-tx-queue`` or ``tx-queue``);
* a PFC priority a port inherits from its profile is turned off on the port
  (``priority-flow-control priority P drop``), never in the shared profile;
* AS numbers are written in the device's notation (asdot or asplain);
* a neighbour's ``remote-as`` or inbound route map equal to what its peer group
  gives is inherited (a per-neighbour line that restated it is removed, none is
  added); a different value overrides it on the neighbour, never on the peer group,
  which other neighbours share. Clearing a route map a peer group gives is refused.

PFC headroom and xoff threshold have no EOS command and are refused (see
:mod:`~reconciler.drivers.eos_caps`). ``system/nos_version`` is not a session line:
the driver upgrades at commit.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from reconciler.drivers.eos_parse import EosConfig, format_asn, natural
from reconciler.drivers.safevalues import ECN_FIELDS, SafeValues, Setting
from reconciler.errors import ConfigRejected
from reconciler.settings import Scalar

PORT_KINDS = ("mtu", "address", "pfc_priorities")
BGP_KINDS = ("asn", "router_id", "maximum_paths", "remote_as", "inbound_filter")
UNRENDERED = ("pfc_headroom_kb", "pfc_xoff_kb")
MAX_L3_MTU = 9214  # EOS's `mtu` takes 68-9214


class Renderer:
    """Lines for one device, from its before-state, its config and the changes."""

    def __init__(self, device: str, before: Mapping[str, Scalar], config: EosConfig) -> None:
        self.device = device
        self.values = SafeValues(device)
        self.before = before
        self.config = config
        self.ports = sorted(config.ports, key=natural)

    def was(self, path: str) -> Setting:
        """The before-state value of ``path``, validated like a change."""
        return self.values.setting(path, self.before.get(path))

    def lines(self, settings: Sequence[Setting]) -> list[str]:
        for setting in settings:
            if setting.kind in UNRENDERED:
                raise ConfigRejected(self.device, f"{setting.path}: EOS has no command for it")
        changed = {s.path: s for s in settings}
        per_port: dict[str, list[str]] = {}
        for setting in settings:
            if setting.kind in PORT_KINDS:
                per_port.setdefault(setting.subject, []).extend(self._port_line(setting))
        profile = self._ecn(settings, changed, per_port)
        out = profile + [
            line
            for port in sorted(per_port, key=natural)
            for line in (f"interface {port}", *per_port[port])
        ]
        out += self._dscp([s for s in settings if s.kind == "dscp"])
        out += self._bgp([s for s in settings if s.kind in BGP_KINDS])
        return out

    def _after(self, path: str, changed: Mapping[str, Setting]) -> int | str | None:
        return changed[path].value if path in changed else self.was(path).value

    # -- ports ---------------------------------------------------------------------------

    def _port_line(self, setting: Setting) -> list[str]:
        value = setting.value
        if setting.kind == "mtu":
            if isinstance(value, int) and value > MAX_L3_MTU:
                raise ConfigRejected(
                    self.device, f"{setting.path}: EOS's L3 MTU is at most {MAX_L3_MTU}"
                )
            return ["no mtu"] if value is None else [f"mtu {value}"]
        if setting.kind == "address":
            return ["no ip address"] if value is None else [f"ip address {value}"]
        return self._pfc(setting.subject, self.values.priorities(value, setting.path))

    def _pfc(self, port: str, wanted: list[int]) -> list[str]:
        if port not in self.config.ports:
            raise ConfigRejected(self.device, f"interfaces/{port}: no such port in the config")
        on = self.config.pfc_on(port)
        had = self.config.lossless(port)
        inherited = self.config.profile_of(port).priorities
        out = ["priority-flow-control on"] if wanted and not on else []
        for prio in had:
            if prio in wanted or not (on or wanted):
                continue
            own = self.config.ports[port].priorities.get(prio)
            if own is None or inherited.get(prio):
                out.append(f"priority-flow-control priority {prio} drop")
            else:
                out.append(f"no priority-flow-control priority {prio} no-drop")
        out += [f"priority-flow-control priority {p} no-drop" for p in wanted if p not in had]
        return out

    # -- fleet-wide ECN ------------------------------------------------------------------

    def _ecn_line(self, queue: int, changed: Mapping[str, Setting]) -> str:
        kmin, kmax, pmax = (self._after(f"qos/ecn/{queue}/{f}", changed) for f in ECN_FIELDS)
        if kmin is None and kmax is None and pmax is None:
            return "no random-detect ecn"
        if not (isinstance(kmin, int) and isinstance(kmax, int) and isinstance(pmax, int)):
            raise ConfigRejected(
                self.device, f"qos/ecn/{queue}: kmin_kb, kmax_kb and pmax_percent are set together"
            )
        if kmin > kmax:
            raise ConfigRejected(self.device, f"qos/ecn/{queue}: kmin_kb {kmin} > kmax_kb")
        return (
            f"random-detect ecn minimum-threshold {kmin} kbytes "
            f"maximum-threshold {kmax} kbytes max-mark-probability {pmax}"
        )

    def _ecn(
        self,
        settings: Sequence[Setting],
        changed: Mapping[str, Setting],
        per_port: dict[str, list[str]],
    ) -> list[str]:
        """Profile lines (returned) and per-port lines (added to ``per_port``)."""
        queues = sorted({int(s.subject) for s in settings if s.kind.startswith("ecn_")})
        profile = self.config.shared_profile()
        out: list[str] = []
        for queue in queues:
            line = self._ecn_line(queue, changed)
            word = self.config.queue_word(queue)
            if profile is not None:
                out += [f"qos profile {profile}", f"{word} {queue}", line]
            for port in self.ports:
                config = self.config.ports[port]
                own = config.queue_words.get(queue, word)
                if profile is None:
                    per_port.setdefault(port, []).extend([f"{own} {queue}", line])
                elif queue in config.ecn:
                    per_port.setdefault(port, []).extend([f"{own} {queue}", "no random-detect ecn"])
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

    def _asn(self, asn: int | str | None) -> str:
        return format_asn(int(asn or 0), self.config.asdot)

    def _bgp(self, settings: Sequence[Setting]) -> list[str]:
        if not settings:
            return []
        running = self.was("bgp/asn").value
        asn = next((s.value for s in settings if s.kind == "asn"), running)
        if running is not None and asn is None:
            return [f"no router bgp {self._asn(running)}"]
        if running is not None and asn != running:
            raise ConfigRejected(
                self.device,
                f"bgp/asn: BGP runs as AS {running}; the AS of a running BGP process "
                "is not changed in place",
            )
        if asn is None:
            raise ConfigRejected(self.device, "bgp: no AS number to configure BGP under")
        out = [f"router bgp {self._asn(asn)}"]
        for setting in settings:
            value = setting.value
            if setting.kind == "router_id":
                out.append("no router-id" if value is None else f"router-id {value}")
            elif setting.kind == "maximum_paths":
                out.append(
                    "no maximum-paths" if value is None else f"maximum-paths {value} ecmp {value}"
                )
        removed = {s.subject for s in settings if s.kind == "remote_as" and s.value is None}
        out += [self._remote_as(s) for s in settings if s.kind == "remote_as"]
        out += [
            line
            for s in settings
            if s.kind == "inbound_filter" and s.subject not in removed
            for line in self._route_map(s)
        ]
        return out

    def _group(self, peer: str) -> tuple[str | None, int | None, str | None]:
        """The peer group of ``peer`` and what it gives (remote-as, route map in)."""
        if peer not in self.config.peers:
            return None, None, None
        group = self.config.inherited(peer)
        return self.config.peers[peer].group, group.remote_as, group.route_map_in

    def _remote_as(self, setting: Setting) -> str:
        peer, value = setting.subject, setting.value
        if value is None:
            return f"no neighbor {peer}"
        _, inherited, _ = self._group(peer)
        if inherited == value:
            return f"no neighbor {peer} remote-as"
        return f"neighbor {peer} remote-as {self._asn(value)}"

    def _route_map(self, setting: Setting) -> list[str]:
        peer, name = setting.subject, setting.value
        group, _, inherited = self._group(peer)
        if name and name != inherited:
            return [f"neighbor {peer} route-map {name} in"]
        if inherited and not name:
            raise ConfigRejected(
                self.device,
                f"{setting.path}: route map {inherited} comes from peer group {group}; "
                "clearing it would change every member of the group",
            )
        own = self.config.peers[peer].route_map_in if peer in self.config.peers else None
        return [f"no neighbor {peer} route-map {own} in"] if own else []


def render_session(
    device: str, before: Mapping[str, Scalar], config: EosConfig, settings: Sequence[Setting]
) -> list[str]:
    """Configuration-session lines taking ``before`` to ``before + settings``."""
    session = [s for s in settings if s.kind != "nos_version"]
    return Renderer(device, before, config).lines(session)


def eos_image(template: str, version: str) -> str:
    """The boot image for ``version`` (``flash:EOS-{version}.swi`` by default)."""
    return template.replace("{version}", version)
