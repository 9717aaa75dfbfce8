"""FRR's BGP sessions as read-only observed facts (pure), from ``vtysh -c 'show bgp
summary json'``: one object per address family that has peers (``ipv4Unicast``,
``ipv6Unicast``, ...), each with ``peers`` keyed by address or, for BGP unnumbered, by
interface name::

    {"ipv4Unicast": {"routerId": "10.0.1.1", "as": 65001, "peers": {
        "10.101.1.0": {"remoteAs": 65100, "state": "Established", "pfxRcd": 2, ...},
        "s2": {"remoteAs": 65100, "state": "Established", "pfxRcd": 2, ...}}}}

In flat state (never rendered, so never diffed or written; the capability rule calls
them read-only), an interface peer under its inventory port, as its neighbour is::

    bgp_session/<peer>/state               FRR's state: Established, Active, Connect...
    bgp_session/<peer>/prefixes_received   prefixes received, summed over the families

A peer in several families is one session: its state is the same in each.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass

from reconciler.settings import Scalar

ESTABLISHED = "Established"
PREFIX = "bgp_session/"


@dataclass(frozen=True)
class Session:
    peer: str
    state: str  # FRR's name: Established, Active, Connect, OpenSent...
    prefixes_received: int


def parse_summary(text: str) -> dict[str, Session]:
    """``show bgp summary json`` -> peer -> session (every address family)."""
    try:
        data = json.loads(text or "{}")
    except ValueError as exc:
        raise ValueError(f"show bgp summary json: not JSON ({exc})") from None
    if not isinstance(data, dict):
        raise ValueError("show bgp summary json: expected an object")
    sessions: dict[str, Session] = {}
    for family in data.values():
        peers = family.get("peers", {}) if isinstance(family, dict) else {}
        for peer, info in peers.items() if isinstance(peers, dict) else ():
            if not isinstance(info, dict):
                continue
            received = int(info.get("pfxRcd", 0) or 0)
            seen = sessions.get(peer)
            total = received + (seen.prefixes_received if seen else 0)
            sessions[peer] = Session(peer, str(info.get("state", "")), total)
    return sessions


def sessions_state(
    sessions: dict[str, Session], port_of: Mapping[str, str] | None = None
) -> dict[str, Scalar]:
    """The sessions as flat, read-only state; ``port_of`` names an interface peer's
    port by its Linux name."""
    state: dict[str, Scalar] = {}
    for peer, session in sorted(sessions.items()):
        key = (port_of or {}).get(peer, peer)
        state[f"{PREFIX}{key}/state"] = session.state
        state[f"{PREFIX}{key}/prefixes_received"] = session.prefixes_received
    return state
