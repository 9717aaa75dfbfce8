"""EOS interface neighbours (BGP unnumbered, EOS 4.30+) -> configuration lines (pure).

Part of the rendering half of the EOS driver (:mod:`~reconciler.drivers.eos_lines`
writes the rest of ``router bgp``). An unnumbered session is keyed by its port
(``bgp/neighbors/Ethernet1/...``) and written as EOS holds it:

* ``neighbor interface Ethernet1 peer-group G remote-as N`` (``no neighbor interface
  Ethernet1`` to remove it). G is the port's own group, else the one group the switch's
  interface neighbours already share, else ``UNNUMBERED``, which plumb then creates,
  activated in ``address-family ipv4`` with ``next-hop address-family ipv6 originate``
  (IPv4 routes over the IPv6 link-local session, RFC 8950). Interface neighbours in
  several groups leave the choice open: refused.
* The inbound route map: an interface neighbour has no lines of its own, so the one in
  force is its group's (IPv4 family). plumb writes it on the group under ``address-family
  ipv4`` when every member of the group wants the same after the change, and refuses
  otherwise (it would change neighbours the change does not name), as it refuses
  clearing a route map the group holds at router level.

The switch's own base configuration (``ipv6 enable`` on the ports, ``ipv6
unicast-routing``) is not plumb's: without it the sessions stay idle.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from reconciler.drivers.eos_bgp_parse import BgpConfig
from reconciler.drivers.safevalues import Setting
from reconciler.errors import ConfigRejected
from reconciler.settings import Scalar

UNNUMBERED_GROUP = "UNNUMBERED"
"""The peer group plumb creates for interface neighbours when the switch has none."""


def is_port(peer: str) -> bool:
    """Whether a neighbour (a validated setting's subject) is an interface."""
    return peer.startswith("Ethernet")


class UnnumberedPeers:
    """Lines for the interface neighbours one change names."""

    def __init__(
        self,
        device: str,
        bgp: BgpConfig,
        before: Mapping[str, Scalar],
        settings: Sequence[Setting],
    ) -> None:
        self.device = device
        self.bgp = bgp
        self.before = before
        self.changed = {s.path: s.value for s in settings}
        self.group_of: dict[str, str] = {}  # ports this change puts in a group
        self.written: set[str] = set()

    def _group(self, port: str) -> str:
        own = self.bgp.peers.get(port)
        if own is not None and own.interface and own.group:
            return own.group
        groups = sorted({p.group for p in self.bgp.peers.values() if p.interface and p.group})
        if len(groups) > 1:
            raise ConfigRejected(
                self.device,
                f"bgp/neighbors/{port}/remote_as: the switch's interface neighbours sit in "
                f"peer groups {', '.join(groups)}; plumb does not choose one for {port}",
            )
        return groups[0] if groups else UNNUMBERED_GROUP

    def remote_as(
        self, setting: Setting, asn: Callable[[int | str | None], str], ipv4: list[str]
    ) -> list[str]:
        """``neighbor interface`` lines (router level); creating the group adds its
        ``address-family ipv4`` lines to ``ipv4``."""
        port, value = setting.subject, setting.value
        if value is None:
            return [f"no neighbor interface {port}"]
        group = self.group_of[port] = self._group(port)
        out: list[str] = []
        if group not in self.bgp.peers and group not in self.written:
            self.written.add(group)
            out.append(f"neighbor {group} peer group")
            ipv4 += [
                f"neighbor {group} activate",
                f"neighbor {group} next-hop address-family ipv6 originate",
            ]
        return [*out, f"neighbor interface {port} peer-group {group} remote-as {asn(value)}"]

    def _wanted(self, port: str) -> Scalar:
        """The inbound route map a member wants after the change (None: leaving)."""
        if self.changed.get(f"bgp/neighbors/{port}/remote_as", 0) is None:
            return None
        path = f"bgp/neighbors/{port}/inbound_filter"
        return self.changed[path] if path in self.changed else self.before.get(path)

    def route_map(self, setting: Setting) -> list[str]:
        """``address-family ipv4`` lines giving the port's group the route map."""
        port, name = setting.subject, str(setting.value or "")
        group = self.group_of.get(port) or self._group(port)
        members = {p for p, v in self.bgp.peers.items() if v.interface and v.group == group}
        members |= {p for p, g in self.group_of.items() if g == group}
        for other in sorted(members - {port}):
            wanted = self._wanted(other)
            if wanted is not None and str(wanted) != name:
                raise ConfigRejected(
                    self.device,
                    f"{setting.path}: the route map of interface neighbours is their peer "
                    f"group {group}'s, and {other} in that group keeps {wanted or 'none'}",
                )
        held = self.bgp.holder(group, "ipv4", "in") if group in self.bgp.peers else None
        in_force = "" if held is None else held[1]
        if in_force == name:
            return []
        if not name:
            assert held is not None
            if held[0][0] == "router":
                raise ConfigRejected(
                    self.device,
                    f"{setting.path}: route map {in_force} is peer group {group}'s at router "
                    "level; plumb clears only its address-family ipv4 line",
                )
            line = f"no neighbor {group} route-map {in_force} in"
        else:
            line = f"neighbor {group} route-map {name} in"
        if line in self.written:
            return []
        self.written.add(line)
        return [line]
