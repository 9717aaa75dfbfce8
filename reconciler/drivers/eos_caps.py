"""Setting paths EOS cannot express (pure); see :mod:`reconciler.capabilities`.

The same rule runs twice: at plan time against the observed state (the path is
refused in the plan, with the reason) and in the EOS driver's ``stage`` against the
before-state it reads (``ConfigRejected``), so a refused value never reaches a
session even when a caller skips the plan.
"""

from __future__ import annotations

from collections.abc import Mapping

from reconciler.settings import Scalar

_REFUSED = {
    "qos/pfc_headroom_kb": (
        "EOS has no command for PFC headroom: the platform sizes it from the port speed "
        "and its buffer profile; the value stays a design input of the headroom policy"
    ),
    "qos/pfc_xoff_kb": (
        "EOS has no command for a PFC pause (xoff) threshold: the platform derives it; "
        "the value stays a design input of the ECN-below-Xoff policy"
    ),
}
DESIGN_INPUTS = tuple(_REFUSED)
"""What EOS derives itself (never drift): the intent's values feed policies only."""
_BYTE_UNITS = ("bytes", "kbytes", "mbytes")


def _port_rule(port: str, field: str, observed: Mapping[str, Scalar]) -> str | None:
    mode = observed.get(f"interfaces/{port}/mode")
    if mode == "lag-member" and field in ("mtu", "address", "ipv6_address"):
        return (
            f"{port} is a Port-Channel member (channel-group): its {field} is the "
            "Port-Channel's, which plumb does not manage"
        )
    if mode != "switched":
        return None
    if field == "mtu":
        return (
            f"{port} is a switchport: EOS's `mtu` sets only the L3 MTU of routed ports, and "
            "a switchport forwards frames up to the platform's L2 MTU (9214)"
        )
    if field in ("address", "ipv6_address"):
        return (
            f"{port} is a switchport: an address needs `no switchport`, which changes the "
            "port's forwarding mode; plumb never changes it implicitly"
        )
    return None


def _ecn_rule(queue: str, observed: Mapping[str, Scalar], has_ethernet: bool) -> str | None:
    if not has_ethernet:
        return "the switch reports no Ethernet port to configure ECN on"
    units = str(observed.get(f"qos/ecn/{queue}/threshold_unit") or "").split(",")
    other = [u for u in units if u and u not in _BYTE_UNITS]
    if not other:
        return None
    if "unreadable" in other:
        return (
            f"a `random-detect ecn` line of queue {queue} is not one plumb can read; plumb "
            "does not replace what it cannot compare"
        )
    return (
        f"queue {queue}'s ECN thresholds are configured in {', '.join(other)}, which have "
        "no size in kbytes to compare with; plumb does not silently replace them"
    )


class EosChecker:
    """:func:`eos_inexpressible` for one device: whether the switch reports an Ethernet
    port is read from the observed state once, not once per ECN path."""

    def __init__(self, observed: Mapping[str, Scalar]) -> None:
        self.observed = observed
        self._has_ethernet: bool | None = None

    def __call__(self, path: str) -> str | None:
        """Why EOS (as observed) cannot take ``path``, or None."""
        if path.startswith("interfaces/"):  # most paths: split once, from the right
            port, _, field = path[len("interfaces/") :].rpartition("/")
            return _port_rule(port, field, self.observed) if port else None
        parts = path.split("/")
        match parts:
            case ["qos", "ecn", queue, ("kmin_kb" | "kmax_kb" | "pmax_percent")]:
                if self._has_ethernet is None:
                    self._has_ethernet = any(
                        p.startswith("interfaces/Ethernet") for p in self.observed
                    )
                return _ecn_rule(queue, self.observed, self._has_ethernet)
            case ["bgp", "neighbors", peer, _] if "%" in peer:
                return (
                    "a link-local neighbour configured by address is reported, never written: "
                    "plumb writes the interface (neighbor interface)"
                )
        return _REFUSED.get(path)


def eos_inexpressible(path: str, observed: Mapping[str, Scalar]) -> str | None:
    """Why EOS (as observed) cannot take ``path``, or None."""
    return EosChecker(observed)(path)
