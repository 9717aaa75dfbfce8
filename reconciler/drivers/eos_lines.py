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
* an ECN line is written whole, ``max-mark-probability`` always stated (no reliance
  on an unverified default) and the line's other options (``weight N``) repeated, as
  EOS resets what a re-entered line leaves out;
* AS numbers are written in the device's notation (asdot or asplain);
* a neighbour's ``remote-as`` equal to what its peer group gives is inherited (a
  per-neighbour line that restated it is removed, none is added); a different value
  overrides it on the neighbour, never on the peer group, which other neighbours
  share;
* an IPv4 neighbour's inbound route map is written where the one in force lives
  (:meth:`~reconciler.drivers.eos_bgp_parse.BgpConfig.levels`): its own line under
  ``address-family ipv4`` is replaced there; over its peer group's line under the
  family it is overridden on the neighbour under the family (a router-level line
  would not be in force); else at router level as before. Clearing a route map a
  peer group gives is refused.

PFC headroom and xoff threshold have no EOS command and are refused (see
:mod:`~reconciler.drivers.eos_caps`). ``system/nos_version`` is not a session line:
the driver upgrades at commit.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from reconciler.drivers.eos_bgp_parse import peer_family
from reconciler.drivers.eos_parse import Ecn, EosConfig, format_asn, natural
from reconciler.drivers.eos_unnumbered import UnnumberedPeers, is_port
from reconciler.drivers.safevalues import ECN_FIELDS, SafeValues, Setting
from reconciler.errors import ConfigRejected
from reconciler.settings import Scalar

PORT_KINDS = ("mtu", "address", "ipv6_address", "pfc_priorities")
BGP_KINDS = ("asn", "router_id", "maximum_paths", "remote_as", "inbound_filter")
UNRENDERED = ("pfc_headroom_kb", "pfc_xoff_kb")
MAX_L3_MTU = 9214  # EOS's `mtu` takes 68-9214
WORD = (0, 65535)  # numeric option values of an ECN line (weight 0-15)


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
        if setting.kind == "ipv6_address":  # a port holds several: replace, not add
            old = self.was(setting.path).value
            out = [f"no ipv6 address {old}"] if old is not None and old != value else []
            return out + ([f"ipv6 address {value}"] if value is not None and value != old else [])
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

    def _ecn_line(
        self, queue: int, changed: Mapping[str, Setting], options: tuple[tuple[str, str], ...]
    ) -> str:
        kmin, kmax, pmax = (self._after(f"qos/ecn/{queue}/{f}", changed) for f in ECN_FIELDS)
        if kmin is None and kmax is None and pmax is None:
            return "no random-detect ecn"
        if not (isinstance(kmin, int) and isinstance(kmax, int) and isinstance(pmax, int)):
            raise ConfigRejected(
                self.device, f"qos/ecn/{queue}: kmin_kb, kmax_kb and pmax_percent are set together"
            )
        if kmin > kmax:
            raise ConfigRejected(self.device, f"qos/ecn/{queue}: kmin_kb {kmin} > kmax_kb")
        field = f"qos/ecn/{queue}"
        kept = "".join(
            f" {self.values.keyword(name, field)} {self.values.number_token(value, field, WORD)}"
            for name, value in options
        )
        return (
            f"random-detect ecn minimum-threshold {kmin} kbytes "
            f"maximum-threshold {kmax} kbytes max-mark-probability {pmax}{kept}"
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
            word = self.config.queue_word(queue, str(self.before.get("system/model") or ""))
            if profile is not None:
                line = self._ecn_line(queue, changed, self._profile_options(profile, queue))
                out += [f"qos profile {profile}", f"{word} {queue}", line]
            for port in self.ports:
                config = self.config.ports[port]
                own = config.queue_words.get(queue, word)
                if profile is None:
                    mine = config.ecn.get(queue)
                    line = self._ecn_line(queue, changed, () if mine is None else mine.options)
                    per_port.setdefault(port, []).extend([f"{own} {queue}", line])
                elif queue in config.ecn:
                    per_port.setdefault(port, []).extend([f"{own} {queue}", "no random-detect ecn"])
        return out

    def _profile_options(self, profile: str, queue: int) -> tuple[tuple[str, str], ...]:
        """The options the profile's line carries, else those of the port lines it takes
        over (which must agree: plumb does not choose between them)."""
        own: Ecn | None = self.config.profiles[profile].ecn.get(queue)
        if own is not None:
            return own.options
        found = {ecn.options for p in self.ports if (ecn := self.config.ports[p].ecn.get(queue))}
        if len(found) > 1:
            raise ConfigRejected(
                self.device,
                f"qos/ecn/{queue}: the ports' ECN lines carry different options "
                f"({' / '.join(sorted(' '.join(map(' '.join, o)) or '-' for o in found))}); "
                "plumb does not choose one for the shared qos profile",
            )
        return found.pop() if found else ()

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
        return format_asn(int(asn or 0), self.config.bgp.asdot)

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
        families: dict[str, list[str]] = {"ipv4": [], "ipv6": []}
        unnumbered = UnnumberedPeers(self.device, self.config.bgp, self.before, settings)
        for setting in settings:
            if setting.kind != "remote_as":
                continue
            if is_port(setting.subject):
                out += unnumbered.remote_as(setting, self._asn, families["ipv4"])
            else:
                out += self._remote_as(setting, families["ipv6"])
        for setting in settings:
            if setting.kind == "inbound_filter" and setting.subject not in removed:
                if is_port(setting.subject):
                    families["ipv4"] += unnumbered.route_map(setting)
                    continue
                router, block = self._route_map(setting)
                out += router
                families[peer_family(setting.subject)] += block
        for family, lines in families.items():
            out += [f"address-family {family}", *lines] if lines else []
        return out

    def _remote_as(self, setting: Setting, ipv6: list[str]) -> list[str]:
        """The neighbour's ``remote-as``; an IPv6 neighbour new to the switch is also
        activated in ``address-family ipv6`` (EOS activates only IPv4 by default)."""
        peer, value = setting.subject, setting.value
        if value is None:
            return [f"no neighbor {peer}"]
        bgp = self.config.bgp
        if peer_family(peer) == "ipv6" and not bgp.activated(peer, "ipv6"):
            ipv6.append(f"neighbor {peer} activate")
        inherited = bgp.inherited(peer).remote_as if peer in bgp.peers else None
        if inherited == value:
            return [f"no neighbor {peer} remote-as"]
        return [f"neighbor {peer} remote-as {self._asn(value)}"]

    def _route_map(self, setting: Setting) -> tuple[list[str], list[str]]:
        """(router-level lines, lines of the neighbour's address family) putting
        ``setting``'s inbound route map in force, written where the one in force is
        configured."""
        peer, name = setting.subject, str(setting.value or "")
        family = peer_family(peer)
        levels = list(self.config.bgp.levels(peer, family, "in"))
        own = {where: value for (where, who), value in levels if who == peer}
        held = [(where, who, value) for (where, who), value in levels if value]
        if not name:
            given = [(who, value) for _where, who, value in held if who != peer]
            if given:
                who, value = given[0]
                raise ConfigRejected(
                    self.device,
                    f"{setting.path}: route map {value} comes from peer group {who}; "
                    "clearing it would change every member of the group",
                )
            router, block = own.get("router"), own.get(f"address-family {family}")
            return (
                [f"no neighbor {peer} route-map {router} in"] if router else [],
                [f"no neighbor {peer} route-map {block} in"] if block else [],
            )
        line = f"neighbor {peer} route-map {name} in"
        if not held:
            return [line], []
        where, who, value = held[0]
        if where.startswith("address-family"):
            return [], ([] if value == name else [line])
        if who != peer:  # the group's router-level route map is in force
            return ([] if value == name else [line]), []
        below = next((v for _w, p, v in held[1:] if p != peer), None)
        if below == name:  # the group gives it: inherit instead of restating
            return [f"no neighbor {peer} route-map {value} in"], []
        return [line], []


def render_session(
    device: str, before: Mapping[str, Scalar], config: EosConfig, settings: Sequence[Setting]
) -> list[str]:
    """Configuration-session lines taking ``before`` to ``before + settings``."""
    session = [s for s in settings if s.kind != "nos_version"]
    return Renderer(device, before, config).lines(session)


def eos_image(template: str, version: str) -> str:
    """The boot image for ``version`` (``flash:EOS-{version}.swi`` by default)."""
    return template.replace("{version}", version)
