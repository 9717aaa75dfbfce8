"""SONiC QoS and buffer tables as a release's default QoS templates lay them out.

Facts modelled (sonic-buildimage ``qos_config.j2`` / ``buffers_config.j2`` and
the per-HwSKU ``buffers_defaults_*.j2``):

- the AZURE maps: DSCP_TO_TC_MAP, TC_TO_QUEUE_MAP, TC_TO_PRIORITY_GROUP_MAP,
  MAP_PFC_PRIORITY_TO_QUEUE and PFC_PRIORITY_TO_PRIORITY_GROUP_MAP, bound to
  each active port in PORT_QOS_MAP with ``pfc_enable`` "3,4";
- only active ports (``admin_status`` up) get QUEUE, BUFFER_PG, BUFFER_QUEUE
  and PORT_QOS_MAP rows;
- PG 0 is lossy (``ingress_lossy_profile``); the lossless PGs are the
  ``pfc_to_pg_map`` images of the ``pfc_enable`` priorities.  With the
  traditional model buffermgrd gives each port the profile
  ``pg_lossless_<speed>_<cable>_profile`` made from the HwSKU's
  ``pg_profile_lookup.ini`` row for its speed and CABLE_LENGTH (``size``,
  ``xon``, ``xoff``, ``dynamic_th`` = the row's threshold): one profile per
  speed and cable, the ports alternating between the first two cable
  lengths the table has for their speed.  The table is the real one of the
  HwSKU (``pg_profile_lookup/``, from sonic-buildimage); a Spectrum table
  whose ``size`` is ``xon`` means a shared headroom pool, so the ingress
  lossless pool gets an ``xoff``.  A port whose state gives another
  headroom has that ``xoff`` in its profile, sized as the platform sizes
  (``size`` moves with ``xoff`` on Spectrum without a shared pool).  With
  the dynamic model they are ``"profile": "NULL"`` and buffermgrd sizes them
  from CABLE_LENGTH and the port speed;
- queues 3 and 4 reference the WRED profile AZURE_LOSSLESS (green, yellow
  and red thresholds and drop probabilities, ``ecn: ecn_all``).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from .model import EcnQueue, InterfaceState
from .sonic_profiles import SonicProfile

ConfigDb = dict[str, Any]
MAP = "AZURE"
WRED_LOSSLESS = "AZURE_LOSSLESS"
LOSSLESS_PRIORITIES = (3, 4)
CABLE = "5m"
AZURE_ECN = EcnQueue(kmin_kb=256, kmax_kb=2048, pmax_percent=5)
PFC_TO_PG = {"3": "3", "4": "4"}
_DSCP_SPECIAL = {3: 3, 4: 4, 5: 2, 8: 0, 46: 5, 48: 6}
AZURE_DSCP = {d: _DSCP_SPECIAL.get(d, 1) for d in range(64)}


LOOKUPS = Path(__file__).resolve().parent / "pg_profile_lookup"
Rows = dict[tuple[str, str], dict[str, str]]


@cache
def lookup_text(hwsku: str) -> str | None:
    """The HwSKU's ``pg_profile_lookup.ini``, if the simulator has it."""
    path = LOOKUPS / f"{hwsku}.ini"
    return path.read_text() if path.is_file() else None


def lookup_rows(hwsku: str) -> Rows:
    """(speed, cable) -> the columns of the HwSKU's lossless profile table."""
    rows: Rows = {}
    names = ["speed", "cable", "size", "xon", "xoff", "threshold"]
    for line in (lookup_text(hwsku) or "").splitlines():
        words = line.replace("#", " # ").split()
        if words[:1] == ["#"]:
            if words[1:3] == ["speed", "cable"]:
                names = words[1:]
            continue
        if len(words) >= 5 and words[0].isdigit():
            row = dict(zip(names, words, strict=False))
            rows[(row["speed"], row["cable"])] = row
    return rows


def cables(profile: SonicProfile) -> list[str]:
    """The cable lengths the simulated ports use: the first two the table has for the
    port speed (5m when the simulator has no table for the HwSKU)."""
    found = [cable for speed, cable in lookup_rows(profile.hwsku) if speed == profile.port_speed]
    return found[:2] or [CABLE]


def cable_of(profile: SonicProfile, port: str) -> str:
    index = int("".join(c for c in port if c.isdigit()) or 0) // 4
    lengths = cables(profile)
    return lengths[index % len(lengths)]


def shared_headroom(profile: SonicProfile) -> bool:
    """Spectrum tables whose size is xon draw xoff from a shared headroom pool; the
    Broadcom pools always carry an xoff."""
    if profile.asic_type != "mellanox":
        return True
    rows = lookup_rows(profile.hwsku)
    return not rows or all(r["size"] == r["xon"] for r in rows.values())


def platform_profile(profile: SonicProfile, cable: str) -> dict[str, str]:
    """The lossless profile buffermgrd makes for the profile's port speed and ``cable``."""
    row = lookup_rows(profile.hwsku).get((profile.port_speed, cable))
    if row is None:
        return lossless_profile(profile, 48 if profile.asic_type == "mellanox" else 110)
    return {
        "dynamic_th": row.get("threshold", "0"),
        "pool": "ingress_lossless_pool",
        "size": row["size"],
        "xoff": row["xoff"],
        "xon": row["xon"],
    }


def default_headroom_kb(profile: SonicProfile) -> int | None:
    """The platform's lossless ``xoff`` in KB on the first cable (None: the dynamic model
    computes it)."""
    if profile.buffer_model == "dynamic":
        return None
    return -(-int(platform_profile(profile, cables(profile)[0])["xoff"]) // 1024)


def _pools(profile: SonicProfile) -> ConfigDb:
    if profile.buffer_model == "dynamic":
        return {
            "ingress_lossless_pool": {"mode": "dynamic", "type": "ingress"},
            "egress_lossless_pool": {"mode": "dynamic", "size": "60817392", "type": "egress"},
            "egress_lossy_pool": {"mode": "dynamic", "type": "egress"},
        }
    if profile.asic_type == "mellanox":
        pool = {"mode": "dynamic", "size": "24219648", "type": "ingress"}
        return {
            "ingress_lossless_pool": pool
            | ({"xoff": "4399104"} if shared_headroom(profile) else {}),
            "egress_lossless_pool": {"mode": "dynamic", "size": "60817392", "type": "egress"},
            "egress_lossy_pool": {"mode": "dynamic", "size": "24219648", "type": "egress"},
        }
    return {
        "ingress_lossless_pool": {
            "mode": "dynamic",
            "size": "104726528",
            "type": "ingress",
            "xoff": "20520960",
        },
        "egress_lossless_pool": {"mode": "static", "size": "130153472", "type": "egress"},
        "egress_lossy_pool": {"mode": "dynamic", "size": "84205568", "type": "egress"},
    }


def _base_profiles(profile: SonicProfile) -> ConfigDb:
    return {
        "ingress_lossless_profile": {
            "dynamic_th": "7",
            "pool": "ingress_lossless_pool",
            "size": "0",
        },
        "ingress_lossy_profile": {
            "dynamic_th": "3",
            "pool": "ingress_lossless_pool",
            "size": "0",
        },
        "egress_lossless_profile": {"dynamic_th": "7", "pool": "egress_lossless_pool", "size": "0"},
        "egress_lossy_profile": {"dynamic_th": "7", "pool": "egress_lossy_pool", "size": "9216"},
        "q_lossy_profile": {"dynamic_th": "3", "pool": "egress_lossy_pool", "size": "0"},
    }


def lossless_profile_name(speed: str, cable: str = CABLE) -> str:
    """The traditional model's PG profile name: ``pg_lossless_<speed>_<cable>_profile``."""
    return f"pg_lossless_{speed}_{cable}_profile"


def _with_xoff(profile: SonicProfile, fields: dict[str, str], xoff: int) -> dict[str, str]:
    """``fields`` with another ``xoff``; on Spectrum without a shared pool size follows."""
    new = dict(fields, xoff=str(xoff))
    if profile.asic_type == "mellanox" and not shared_headroom(profile):
        new["size"] = str(int(fields["size"]) + xoff - int(fields["xoff"]))
    return new


def lossless_profile(profile: SonicProfile, xoff_kb: int) -> dict[str, str]:
    """A lossless PG profile with ``xoff`` of `xoff_kb` KB, sized as the platform sizes."""
    xoff = xoff_kb * 1024
    if profile.asic_type == "mellanox":
        xon = 19456
        return {
            "dynamic_th": "0",
            "pool": "ingress_lossless_pool",
            "size": str(xon if shared_headroom(profile) else xon + xoff),
            "xoff": str(xoff),
            "xon": str(xon),
        }
    return {
        "dynamic_th": "0",
        "pool": "ingress_lossless_pool",
        "size": "1270",
        "xoff": str(xoff),
        "xon": "0",
    }


def wred_profile(ecn: EcnQueue) -> dict[str, str]:
    """A WRED profile marking ECN between the green thresholds of `ecn`; yellow and red
    keep the values of SONiC's AZURE_LOSSLESS template (1 MiB to 2 MiB, 5 %), so each
    color's minimum stays below its maximum whatever the green thresholds are."""
    return {
        "ecn": "ecn_all",
        "green_drop_probability": str(ecn.pmax_percent),
        "green_max_threshold": str(ecn.kmax_kb * 1024),
        "green_min_threshold": str(ecn.kmin_kb * 1024),
        "red_drop_probability": "5",
        "red_max_threshold": str(2 * 1024 * 1024),
        "red_min_threshold": str(1024 * 1024),
        "wred_green_enable": "true",
        "wred_red_enable": "true",
        "wred_yellow_enable": "true",
        "yellow_drop_probability": "5",
        "yellow_max_threshold": str(2 * 1024 * 1024),
        "yellow_min_threshold": str(1024 * 1024),
    }


def _pg_keys(priorities: list[int]) -> list[str]:
    groups = sorted({int(PFC_TO_PG.get(str(p), str(p))) for p in priorities})
    if groups and groups == list(range(groups[0], groups[-1] + 1)) and len(groups) > 1:
        return [f"{groups[0]}-{groups[-1]}"]
    return [str(g) for g in groups]


def qos_tables(
    profile: SonicProfile, ports: dict[str, InterfaceState], active: set[str], dscp: dict[int, int]
) -> ConfigDb:
    """Every QoS and buffer table for `ports`, of which `active` are admin up."""
    db: ConfigDb = {
        "BUFFER_POOL": _pools(profile),
        "BUFFER_PROFILE": _base_profiles(profile),
        "DSCP_TO_TC_MAP": {MAP: {str(d): str(t) for d, t in sorted(dscp.items())}},
        "TC_TO_QUEUE_MAP": {MAP: {str(t): str(t) for t in range(8)}},
        "TC_TO_PRIORITY_GROUP_MAP": {MAP: {str(t): str(t if t in (3, 4) else 0) for t in range(8)}},
        "MAP_PFC_PRIORITY_TO_QUEUE": {MAP: {str(p): str(p) for p in range(8)}},
        "PFC_PRIORITY_TO_PRIORITY_GROUP_MAP": {MAP: dict(PFC_TO_PG)},
        "SCHEDULER": {
            "scheduler.0": {"type": "DWRR", "weight": "14"},
            "scheduler.1": {"type": "DWRR", "weight": "15"},
        },
        "WRED_PROFILE": {},
        "CABLE_LENGTH": {MAP: {name: cable_of(profile, name) for name in ports}},
        "PORT_QOS_MAP": {},
        "QUEUE": {},
        "BUFFER_PG": {},
        "BUFFER_QUEUE": {},
    }
    if profile.buffer_model == "dynamic":
        db["DEFAULT_LOSSLESS_BUFFER_PARAMETER"] = {MAP: {"default_dynamic_th": "0"}}
        db["LOSSLESS_TRAFFIC_PATTERN"] = {MAP: {"mtu": "1024", "small_packet_percentage": "100"}}
    wred_names: dict[tuple[int, int, int], str] = {}
    for name in sorted(active):
        port = ports[name]
        priorities = port.pfc_priorities
        qos = {
            "dscp_to_tc_map": MAP,
            "tc_to_queue_map": MAP,
            "tc_to_pg_map": MAP,
            "pfc_to_queue_map": MAP,
            "pfc_to_pg_map": MAP,
        }
        if priorities:
            qos["pfc_enable"] = ",".join(map(str, priorities))
            qos["pfcwd_sw_enable"] = qos["pfc_enable"]
        db["PORT_QOS_MAP"][name] = qos
        for queue in range(8):
            row: dict[str, str] = {"scheduler": "scheduler.1" if queue in (3, 4) else "scheduler.0"}
            ecn = port.ecn.get(queue)
            if ecn is not None:
                key = (ecn.kmin_kb, ecn.kmax_kb, ecn.pmax_percent)
                if key not in wred_names:
                    wred_names[key] = (
                        WRED_LOSSLESS if not wred_names else f"{WRED_LOSSLESS}_{len(wred_names)}"
                    )
                    db["WRED_PROFILE"][wred_names[key]] = wred_profile(ecn)
                row["wred_profile"] = wred_names[key]
            db["QUEUE"][f"{name}|{queue}"] = row
        db["BUFFER_PG"][f"{name}|0"] = {"profile": "ingress_lossy_profile"}
        for pgs in _pg_keys(priorities):
            if profile.buffer_model == "dynamic" and port.pfc_headroom_kb is None:
                db["BUFFER_PG"][f"{name}|{pgs}"] = {"profile": "NULL"}
                continue
            cable = cable_of(profile, name)
            pg_profile = lossless_profile_name(profile.port_speed, cable)
            fields = platform_profile(profile, cable)
            if port.pfc_headroom_kb is not None:
                fields = _with_xoff(profile, fields, port.pfc_headroom_kb * 1024)
            taken = db["BUFFER_PROFILE"].get(pg_profile)
            if taken is not None and taken != fields:
                pg_profile = pg_profile.replace("_profile", f"_{port.pfc_headroom_kb}k_profile")
            db["BUFFER_PROFILE"][pg_profile] = fields
            db["BUFFER_PG"][f"{name}|{pgs}"] = {"profile": pg_profile}
        db["BUFFER_QUEUE"][f"{name}|3-4"] = {"profile": "egress_lossless_profile"}
        db["BUFFER_QUEUE"][f"{name}|0-2"] = {"profile": "q_lossy_profile"}
        db["BUFFER_QUEUE"][f"{name}|5-6"] = {"profile": "q_lossy_profile"}
    return {table: rows for table, rows in db.items() if rows}
