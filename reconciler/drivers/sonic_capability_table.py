"""The SONiC rows of docs/drivers.md "Capabilities", as data next to the rules (pure),
and the matrix of what each release's config updater lets plumb write per ASIC family,
rendered from the upstream rule files (:mod:`.sonic_gcu`).

Each row says how a setting path is read and written on SONiC and when
:class:`~reconciler.drivers.sonic_caps.SonicChecker` refuses it, with examples (a path,
an observed state, and a phrase the refusal must contain, or None when the path is
expressible there); ``tests/drivers/test_sonic_capability_table.py`` checks every
example against the rule and that the documentation holds what :func:`markdown_rows`
and :func:`release_rows` render, so neither can drift from the code.

Releases covered: 201911 to master (``config apply-patch`` from 202106; field rules
as shipped for 202205, 202305, 202311, 202405, 202411, 202505, 202511, 202605 and
master); ASIC families as the updater names them (Spectrum ``spc1``-``spc5``, the
Broadcom families it lists, ``cisco-8000`` by ``asic_type``).
"""

from __future__ import annotations

from collections.abc import Sequence

from reconciler.drivers.eos_capability_table import Row
from reconciler.drivers.sonic_buffers import headroom_ops
from reconciler.drivers.sonic_caps import ecn_ops
from reconciler.drivers.sonic_gcu import Op, asic_name, refusal, releases, shipped
from reconciler.settings import Scalar

SN5600_202411: dict[str, Scalar] = {"system/model": "ACS-SN5600", "system/nos_version": "202411"}
TH5_202405: dict[str, Scalar] = {
    "system/model": "Arista-7060X6-64PE",
    "system/nos_version": "202405",
}

LAG_MEMBER: dict[str, Scalar] = {"interfaces/Ethernet0/mode": "lag-member"}
VLAN_MEMBER: dict[str, Scalar] = {"interfaces/Ethernet0/mode": "switched"}


ROWS = (
    Row(
        "`interfaces/<port>/mtu`",
        "`PORT` `mtu` (9100 when unset)",
        "replace `PORT/<port>/mtu`",
        "a release before 202106 (no `config apply-patch`); a PortChannel member (teammgrd "
        "gives it the PortChannel's MTU; `config interface mtu` refuses it); above 9216 (at "
        "validate: `mtu.platform-range`)",
        (
            ("interfaces/Ethernet0/mtu", SN5600_202411, None),
            ("interfaces/Ethernet0/mtu", {"system/nos_version": "202012"}, "202106"),
            ("interfaces/Ethernet0/mtu", SN5600_202411 | LAG_MEMBER, "PortChannel member"),
            ("interfaces/Ethernet0/mtu", SN5600_202411 | VLAN_MEMBER, None),
        ),
    ),
    Row(
        "`interfaces/<port>/address`",
        "the port's IPv4 `INTERFACE` key",
        "remove the old IPv4 key, add the new one; IPv6 keys of the port kept",
        "a PortChannel or VLAN member (`config interface ip add` refuses both)",
        (
            ("interfaces/Ethernet0/address", SN5600_202411, None),
            ("interfaces/Ethernet0/address", SN5600_202411 | LAG_MEMBER, "PortChannel member"),
            ("interfaces/Ethernet0/address", SN5600_202411 | VLAN_MEMBER, "VLAN member"),
        ),
    ),
    Row(
        "`interfaces/<port>/pfc_priorities`",
        "`PORT_QOS_MAP` `pfc_enable`",
        "replace `pfc_enable` (plumb does not carve buffers: priority-group rows are not "
        "added or removed)",
        "never in the plan; at stage, on the static buffer model, a paused priority whose "
        "priority group has no lossless profile (no `xoff` headroom)",
        (("interfaces/Ethernet0/pfc_priorities", SN5600_202411, None),),
    ),
    Row(
        "`qos/dscp/<d>`",
        "the `DSCP_TO_TC_MAP` the ports carrying QoS use (their own, else the global one)",
        "that map's entry, on every map in use; bound (`PORT_QOS_MAP` `dscp_to_tc_map`) only "
        "on a port that carries QoS (`QUEUE` or `BUFFER_PG` rows) and names none",
        "never in the plan; at stage, a switch where no port carries QoS (plumb does not "
        "turn QoS on: `config qos reload` first)",
        (("qos/dscp/26", SN5600_202411, None),),
    ),
    Row(
        "`qos/pfc_xoff_kb`",
        "not observed",
        "never",
        "always (a design input, never drift): lossless profiles follow `dynamic_th`; SONiC "
        "has no static pause threshold",
        (("qos/pfc_xoff_kb", SN5600_202411, "no static PFC pause threshold"),),
    ),
    Row(
        "`qos/pfc_headroom_kb`",
        "`xoff` of the lossless PGs' `BUFFER_PROFILE` (static model), `None` on the dynamic model",
        "a consistent lossless profile per speed and cable (`size`, `xon`, `xoff` as the "
        "platform sizes them), never below what the platform computes for the cable",
        "dynamic buffer model (buffermgrd computes headroom); a vendor whose sizing plumb "
        "does not know; a HwSKU / release whose updater refuses the profile's fields (see "
        "the matrix below)",
        (
            ("qos/pfc_headroom_kb", {"system/buffer_model": "dynamic"}, "buffermgrd"),
            ("qos/pfc_headroom_kb", SN5600_202411, None),
            ("qos/pfc_headroom_kb", TH5_202405, "refuses a consistent lossless profile"),
        ),
    ),
    Row(
        "`qos/ecn/<q>/{kmin_kb,kmax_kb,pmax_percent}`",
        "green thresholds of the `WRED_PROFILE` queue `q` references, over ports carrying QoS",
        "replace those three fields of that profile",
        "a HwSKU / release whose updater refuses the profile's green fields (see the matrix "
        "below); at stage, a profile that also serves a queue meant to keep other values "
        "(plumb creates no profile: same ECN for both queues, or bind the queue to a "
        "profile of its own first)",
        (
            ("qos/ecn/3/kmin_kb", SN5600_202411, None),
            ("qos/ecn/3/kmin_kb", TH5_202405, "refuses replacing WRED_PROFILE"),
        ),
    ),
    Row(
        "`bgp/router_id`, `bgp/maximum_paths`",
        "`bgpraw` (bgpcfgd), `BGP_GLOBALS*` (frrcfgd)",
        "`BGP_GLOBALS*` (frrcfgd only)",
        "bgpcfgd mode: taken from templates, no config_db field",
        (
            ("bgp/router_id", {"system/bgp_config": "bgpcfgd"}, "bgpcfgd"),
            ("bgp/maximum_paths", {"system/bgp_config": "frrcfgd"}, None),
        ),
    ),
    Row(
        "`bgp/neighbors/<peer>/inbound_filter`",
        "`bgpraw` peer or peer group (bgpcfgd), `BGP_NEIGHBOR_AF` (frrcfgd); the peer's "
        "family: `ipv6_unicast` for an IPv6 peer, `ipv4_unicast` for an IPv4 or interface one",
        "`BGP_NEIGHBOR_AF\\|default\\|<peer>\\|<family>` `route_map_in` (frrcfgd only)",
        "bgpcfgd mode: route-maps sit on template peer groups",
        (
            ("bgp/neighbors/10.0.0.1/inbound_filter", {"system/bgp_config": "bgpcfgd"}, "peer"),
            ("bgp/neighbors/10.0.0.1/inbound_filter", {"system/bgp_config": "frrcfgd"}, None),
            ("bgp/neighbors/fc00::1/inbound_filter", {"system/bgp_config": "frrcfgd"}, None),
            ("bgp/neighbors/Ethernet0/inbound_filter", {"system/bgp_config": "frrcfgd"}, None),
        ),
    ),
    Row(
        "`bgp/asn`, `bgp/neighbors/<ipv4>/remote_as`, `bgp/neighbors/<ipv6>/remote_as`",
        "`bgp_asn` + `BGP_NEIGHBOR` (bgpcfgd), `BGP_GLOBALS` + `BGP_NEIGHBOR` (frrcfgd)",
        "same; an AS change of a peer is delete + re-add; a new IPv6 peer is activated in "
        "`ipv6_unicast` (frrcfgd)",
        "never (changing the AS of running BGP is refused at stage)",
        (
            ("bgp/neighbors/10.0.0.1/remote_as", SN5600_202411, None),
            ("bgp/neighbors/fc00::1/remote_as", SN5600_202411, None),
        ),
    ),
    Row(
        "`bgp/neighbors/<interface>/remote_as` (unnumbered)",
        "`BGP_NEIGHBOR` interface keys: `asn`, else `peer_type`",
        "`BGP_NEIGHBOR\\|default\\|<port>` `asn` (frrcfgd: FRR's `neighbor <port> interface "
        "remote-as N`), the port's `INTERFACE` row `ipv6_use_link_local_only: enable`",
        "bgpcfgd mode: its templates render peers by address",
        (
            ("bgp/neighbors/Ethernet0/remote_as", {"system/bgp_config": "bgpcfgd"}, "interface"),
            ("bgp/neighbors/Ethernet0/remote_as", {"system/bgp_config": "frrcfgd"}, None),
        ),
    ),
    Row(
        "`bgp/neighbors/<link-local>/*`",
        "`BGP_NEIGHBOR` link-local keys",
        "never",
        "always: an unnumbered peer is keyed by its interface",
        (("bgp/neighbors/fe80::1/remote_as", SN5600_202411, "link-local"),),
    ),
)


def markdown_rows() -> list[str]:
    """The SONiC rows of the Capabilities table, as docs/drivers.md holds them."""
    return [f"| sonic | {r.paths} | {r.read} | {r.written} | {r.refused} |" for r in ROWS]


def _families(release: str) -> list[tuple[str, str, str | None]]:
    """(family, a HwSKU of it, asic_type) for every ASIC family the release's rules name."""
    rules = shipped(release)
    found: list[tuple[str, str, str | None]] = []
    if rules.conf is not None:
        mapping = rules.conf["helper_data"]["rdma_config_update_validator"]
        spectrum = mapping.get("mellanox_asics", {})
        for family in rules.mellanox_families:
            names = spectrum.get(family, [])
            if names:
                found.append((family, sorted(names)[0], "mellanox"))
        for family, names in sorted(mapping.get("broadcom_asics", {}).items()):
            if names:
                found.append((str(family), sorted(names)[0], "broadcom"))
    for asic_type in rules.asic_types:
        found.append((asic_type, asic_type, asic_type))
    return found


def _verdict(release: str, hwsku: str, asic_type: str | None, ops: Sequence[Op]) -> str:
    rules = shipped(release)
    if asic_name(rules, hwsku, asic_type) == "unknown":
        return "no"
    return "yes" if refusal(rules, ops, hwsku, asic_type, "") is None else "no"


def release_rows() -> list[str]:
    """One row per shipped release: the ASIC families whose HwSKUs the updater lets plumb
    write ECN into ``AZURE_LOSSLESS``, ECN into another profile, and lossless headroom,
    from the upstream rule files."""
    rows = []
    for release in releases():
        families = _families(release)
        columns: list[list[str]] = [[], [], []]
        for family, hwsku, asic_type in families:
            vendor = "broadcom" if asic_type == "broadcom" else "mellanox"
            asked: tuple[Sequence[Op], ...] = (
                ecn_ops("AZURE_LOSSLESS"),
                ecn_ops("ROCE_ONLY"),
                headroom_ops(vendor, ["pg_lossless_400000_5m_profile"], True),
            )
            for column, ops in zip(columns, asked, strict=True):
                if _verdict(release, hwsku, asic_type, ops) == "yes":
                    column.append(family)
        cells = [_listed(c, [f for f, _, _ in families]) for c in columns]
        rows.append(f"| {release} | {' | '.join(cells)} |")
    return rows


def _listed(allowed: list[str], every: list[str]) -> str:
    if not allowed:
        return "none"
    if len(allowed) == len(every):
        return f"all {len(every)}: {', '.join(every)}"
    missing = [f for f in every if f not in allowed]
    return f"all but {', '.join(missing)}"
