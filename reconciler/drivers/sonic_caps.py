"""Setting paths SONiC cannot express (pure); see :mod:`reconciler.capabilities`.

Three kinds of refusal, each decided from the observed state:

- never: a PFC pause (xoff) threshold (lossless profiles follow ``dynamic_th``), and
  IPv6 peers (reported, never written);
- by configuration mode: in bgpcfgd mode (SONiC's default, ``system/bgp_config``)
  router-id, maximum-paths and inbound route-maps come from bgpcfgd's templates and
  config_db has no field for them; on the dynamic buffer model (``system/buffer_model``)
  headroom is computed by buffermgrd;
- by platform: ``config apply-patch`` (the generic config updater's
  ``gcu_field_operation_validators.conf.json``, as shipped in 202205-202405) lets
  ``BUFFER_PROFILE`` ``xoff`` and ``WRED_PROFILE`` green thresholds be replaced only on
  known ASIC families, each from a minimum release. The family comes from the HwSKU
  (``system/model``: exact names for NVIDIA Spectrum, a contained name for Broadcom);
  an unknown HwSKU is refused, as the updater refuses it. The minimum release is
  compared only when the build version has an eight-digit release part
  (``20220532.70``), as the updater does; community builds (``202405.123-abc``) are
  not version-checked.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from reconciler.drivers.sonic_bgp import is_address
from reconciler.settings import Scalar

_ALWAYS = {
    "qos/pfc_xoff_kb": (
        "SONiC has no static PFC pause threshold for lossless priority groups: it follows "
        "the buffer profile's dynamic_th; the value stays a design input of the "
        "ECN-below-Xoff policy"
    ),
}
_BGPCFGD = (
    "SONiC's default bgpcfgd mode takes {what} from its FRR templates, not from "
    "config_db; it is expressible only with frr_mgmt_framework_config (frrcfgd mode)"
)

# HwSKU -> ASIC family, after the updater's helper data (202405).
SPECTRUM: dict[str, tuple[str, ...]] = {
    "spc1": (
        "ACS-MSN2700",
        "ACS-MSN2740",
        "ACS-MSN2100",
        "ACS-MSN2410",
        "ACS-MSN2010",
        "Mellanox-SN2700",
        "Mellanox-SN2700-D48C8",
        "ACS-MSN2700-A1",
        "Mellanox-SN2700-A1",
    ),
    "spc2": (
        "ACS-MSN3800",
        "ACS-MSN3420",
        "ACS-MSN3700C",
        "ACS-MSN3700",
        "Mellanox-SN3800-C64",
        "Mellanox-SN3800-D112C8",
        "Mellanox-SN3800-D28C50",
    ),
    "spc3": (
        "ACS-MSN4700",
        "ACS-MSN4600",
        "ACS-MSN4600C",
        "ACS-MSN4410",
        "ACS-SN4280",
        "Mellanox-SN4600C-C64",
        "Mellanox-SN4600C-D112C8",
        "Mellanox-SN4700-O8C48",
        "Mellanox-SN4700-O32",
        "Mellanox-SN4700-V64",
        "Mellanox-SN4700-C128",
    ),
    "spc4": (
        "ACS-SN5600",
        "Mellanox-SN5600-O128",
        "Mellanox-SN5600-V256",
        "Mellanox-SN5600-C256S1",
        "ACS-SN5400",
        "Mellanox-SN5600-C224O8",
    ),
}
BROADCOM: dict[str, tuple[str, ...]] = {
    "th": (
        "Force10-S6100",
        "Arista-7060CX-32S-C32",
        "Arista-7060CX-32S-D48C8",
        "Celestica-DX010-C32",
        "Seastone-DX010",
    ),
    "th2": (
        "Arista-7260CX3-D108C10",
        "Arista-7260CX3-D108C8",
        "Arista-7260CX3-C64",
        "Arista-7260CX3-Q64",
    ),
    "th3": ("Nokia-IXR7220-H3",),
    "th4": ("Nokia-IXR7220-H4-64D", "Nokia-IXR7220-H4-32D"),
    "th5": ("Nokia-IXR7220-H5-64D",),
    "td2": (
        "Force10-S6000",
        "Force10-S6000-Q24S32",
        "Arista-7050-QX32",
        "Arista-7050-QX-32S",
        "Nexus-3164",
        "Arista-7050QX32S-Q32",
    ),
    "td3": ("Arista-7050CX3-32S-C32", "Arista-7050CX3-32S-D48C8", "Arista-7050CX3-32S-C28S4"),
    "j2c+": ("Nokia-IXR7250E-36x100G", "Nokia-IXR7250E-36x400G"),
}
_FROM = {"spc1": "20191100", "spc2": "20191100", "spc3": "20220500", "spc4": "20221100",
         "th": "20221100", "th2": "20221100", "th3": "20240500", "th4": "20240500",
         "th5": "20240500", "td3": "20221100", "j2c+": "20220500"}  # fmt: skip
# Minimum release per family: "PG headroom modification" (BUFFER_PROFILE xoff) and
# "ECN tuning" (WRED_PROFILE green thresholds); a family absent is refused.
XOFF_FROM = _FROM  # td2: "" (never)
ECN_FROM = _FROM | {"spc1": "20181100", "td2": "20181100", "th": "20181100",
                    "th2": "20181100", "td3": "20201200"}  # fmt: skip
_RELEASE = re.compile(r"(?:^|\.)([0-9]{8})(?=\.|-|$)")


def asic_family(hwsku: str) -> str | None:
    """The updater's ASIC family of a HwSKU, or None (unknown: writes refused)."""
    for family, names in SPECTRUM.items():
        if hwsku.lower() in (n.lower() for n in names):
            return family
    for family, names in BROADCOM.items():
        if any(n.lower() in hwsku.lower() for n in names):
            return family
    return None


def _platform(observed: Mapping[str, Scalar], what: str, table: Mapping[str, str]) -> str | None:
    if not observed.get("system/model"):
        return None  # not observed: the switch's dry run decides
    hwsku = str(observed.get("system/model"))
    family = asic_family(hwsku)
    if family is None or family not in table:
        known = "an ASIC family it does not list" if family else "an unknown ASIC family"
        return (
            f"config apply-patch refuses {what} on HwSKU {hwsku or '(none)'} "
            f"({known}); the platform's buffer and WRED tables are not GCU-writable"
        )
    build = str(observed.get("system/nos_build") or "")
    found = _RELEASE.search(build)
    if found is not None and found.group(1) < table[family]:
        return (
            f"config apply-patch allows {what} on {family} from release {table[family]}; "
            f"this switch runs {build}"
        )
    return None


def sonic_inexpressible(path: str, observed: Mapping[str, Scalar]) -> str | None:
    """Why SONiC cannot express ``path`` (on this device), or None."""
    if path in _ALWAYS:
        return _ALWAYS[path]
    if (
        path == "system/nos_version"
        and observed.get("system/nos_build")
        and (observed.get("system/nos_version") is None)
    ):
        return (
            f"the running build {str(observed['system/nos_build'])[:60]!r} names no branch "
            "plumb can read, so it cannot tell whether an install is due"
        )
    parts = path.split("/")
    if parts[:2] == ["bgp", "neighbors"] and ":" in parts[2]:
        return "IPv6 BGP peers are reported, never written"
    if parts[:2] == ["bgp", "neighbors"] and not is_address(parts[2]):
        return "BGP peers keyed by an interface (unnumbered) are reported, never written"
    # A fact the state does not hold (a plan from rendered intent, an old snapshot)
    # decides nothing: the switch's own dry run still refuses what it cannot take.
    bgpcfgd = observed.get("system/bgp_config", "frrcfgd") != "frrcfgd"
    if path in ("bgp/router_id", "bgp/maximum_paths") and bgpcfgd:
        return _BGPCFGD.format(what=path.split("/")[1].replace("_", "-"))
    if path.endswith("/inbound_filter") and bgpcfgd:
        return _BGPCFGD.format(what="inbound route-maps (set on its peer groups)")
    if path == "qos/pfc_headroom_kb":
        if observed.get("system/buffer_model") == "dynamic":
            return (
                "on the dynamic buffer model buffermgrd computes lossless headroom from "
                "port speed and cable length; there is no xoff to set"
            )
        return _platform(observed, "replacing BUFFER_PROFILE xoff", XOFF_FROM)
    if path.startswith("qos/ecn/"):
        return _platform(observed, "replacing WRED_PROFILE green thresholds", ECN_FROM)
    return None
