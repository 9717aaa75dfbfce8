"""Setting paths a Linux + FRR switch, and a namespaced lab host, cannot express (pure);
see :mod:`reconciler.capabilities`. The linux-frr driver reports which of the two a
device is as ``system/platform`` and the facts the rules read:

* ECN thresholds are the kernel's RED qdisc with ECN marking under a ``prio`` root
  (:mod:`.linux_qos`). Whether the kernel has both is asked of the kernel: the driver
  tries the rendered lines in a throwaway network namespace once
  (``system/qdisc_red``); a kernel without them (``"no"``, tc's answer in
  ``system/qdisc_probe``) has no way to mark, and plumb does not pretend.
* PFC is set through DCB (``dcb pfc``) on ports whose NIC has it; a veth or a port that
  answers no DCB query (no ``interfaces/<port>/pfc_priorities`` observed, dcb's error in
  ``interfaces/<port>/dcb``) cannot take it.
* BGP session state (``bgp_session/...``) is observed only.
* A BGP neighbour is an IPv4 or global IPv6 address, or a port of the switch (an
  interface neighbour, BGP unnumbered); a link-local address is written as its
  interface.
* The DSCP-to-priority map and the NOS version are not written on this platform; PFC
  pause and headroom thresholds are what the ASIC's buffer manager derives (design
  inputs, as on EOS).
"""

from __future__ import annotations

from collections.abc import Mapping
from ipaddress import IPv6Address

from reconciler.drivers.linux_frr_config import neighbor_kind
from reconciler.settings import Scalar

LINUX_FRR = "linux-frr"
LINUX_NETNS = "linux-netns"
RUNS_PLATFORM = "system/runs_platform"
"""The observed fact naming the plumb platform a device runs when it is not the
inventory's (a real-network lab switch inventoried as EOS runs Linux + FRR). Not
``system/platform``: SONiC reports its hardware platform string there."""

_DESIGN = {
    "qos/pfc_headroom_kb": (
        "Linux has no PFC headroom setting: the switch ASIC's buffer manager sizes it; the "
        "value stays a design input of the headroom policy"
    ),
    "qos/pfc_xoff_kb": (
        "Linux has no PFC pause (xoff) threshold setting: the value stays a design input of "
        "the ECN-below-Xoff policy"
    ),
}
DESIGN_INPUTS = tuple(_DESIGN)

NO_RED = "ECN marking cannot be configured on this device, so the thresholds are never written"


class LinuxFrrChecker:
    """Why one linux-frr switch (as observed) cannot take a path, or None."""

    def __init__(self, observed: Mapping[str, Scalar]) -> None:
        self.observed = observed

    def __call__(self, path: str) -> str | None:
        parts = path.split("/")
        match parts:
            case ["interfaces", port, "pfc_priorities"]:
                if path in self.observed:
                    return None
                kind = self.observed.get(f"interfaces/{port}/link_kind") or "a port"
                error = self.observed.get(f"interfaces/{port}/dcb")
                why = f" ({error})" if error else ""
                return f"{port} ({kind}) has no DCB: PFC cannot be set on it{why}"
            case ["qos", "ecn", _, _]:
                if self.observed.get("system/qdisc_red") == "yes":
                    return None
                probe = self.observed.get("system/qdisc_probe") or "the kernel was not probed"
                return f"{probe}: {NO_RED}"
            case ["bgp_session", _, _]:
                return "BGP session state is observed, never written"
            case ["qos", "dscp", _]:
                return "plumb writes no DSCP-to-priority map on linux-frr"
            case ["system", "nos_version"]:
                return (
                    "linux-frr runs distribution packages: plumb installs no NOS image there "
                    "(system/frr_version reports what runs)"
                )
            case ["bgp", "neighbors", *peer, ("remote_as" | "inbound_filter")] if peer:
                return self._neighbor("/".join(peer))
        return _DESIGN.get(path)

    def _neighbor(self, peer: str) -> str | None:
        """Why FRR cannot be given this neighbour: a link-local address names no peer
        without its interface, and an interface neighbour needs the port."""
        kind = neighbor_kind(peer.split("%")[0])
        if kind == "ipv6" and (IPv6Address(peer.split("%")[0]).is_link_local or "%" in peer):
            return "a link-local neighbour is written as its interface (unnumbered)"
        if kind == "interface" and f"interfaces/{peer}/mtu" not in self.observed:
            return f"an interface neighbour needs its port, and the switch has no {peer}"
        return None


class NetnsHostChecker:
    """A GPU node of the real-network lab is a network namespace: only its NICs' MTU
    and address exist there."""

    def __init__(self, observed: Mapping[str, Scalar]) -> None:
        self.observed = observed

    def __call__(self, path: str) -> str | None:
        parts = path.split("/")
        if len(parts) == 3 and parts[0] == "nics" and parts[2] in ("mtu", "address"):
            return None
        return (
            "a GPU node of the real-network lab is a network namespace: it has no firmware, "
            "RDMA or DCB settings, only its NICs' MTU and address"
        )
