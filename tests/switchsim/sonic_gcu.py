"""The generic config updater (``config apply-patch``) of one SONiC release, for one namespace.

Steps and messages follow sonic-utilities' ``generic_config_updater``
(``PatchApplier.apply``) of the profile's release:

1. simulate the patch on the running config (RFC 6902, `jsonpatch`);
2. field-operation validation on ``jsonpatch.from_diff(old, target)``:
   removing ``/PFC_WD/GLOBAL``, its ``POLL_INTERVAL`` or
   ``/LOOPBACK_INTERFACE/Loopback0`` is illegal; tables listed in
   ``gcu_field_operation_validators.conf.json`` accept a change only if its
   field (path elements containing digits dropped, lower-cased) is one of a
   scenario's fields, the operation is allowed and the HwSKU's ASIC family
   is listed with a branch version <= the build's 8-digit version (when the
   build version has one).  BUFFER_PROFILE: ``replace`` of ``dynamic_th``
   and, "PG headroom modification", of ``xoff``; WRED_PROFILE:
   ``replace`` of AZURE_LOSSLESS's green thresholds and probability;
   BUFFER_POOL: replace of the pools' sizes; PORT (202405): ``speed`` and
   ``fec`` only to values the port supports;
3. no table may become empty;
4. the whole target config must pass the YANG checks (`sonic_yang`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from .sonic_profiles import SonicProfile

ConfigDb = dict[str, Any]
Platforms = dict[str, str]

_SPC3 = [
    "ACS-MSN4700",
    "ACS-MSN4600",
    "ACS-MSN4600C",
    "ACS-MSN4410",
    "Mellanox-SN4600C-D112C8",
    "Mellanox-SN4600C-C64",
    "Mellanox-SN4700-O8C48",
]
MELLANOX_ASICS: dict[str, dict[str, list[str]]] = {
    "202205": {
        "spc1": [
            "ACS-MSN2700",
            "ACS-MSN2740",
            "ACS-MSN2100",
            "ACS-MSN2410",
            "ACS-MSN2010",
            "Mellanox-SN2700",
            "Mellanox-SN2700-D48C8",
        ],
        "spc2": ["ACS-MSN3800", "Mellanox-SN3800-D112C8"],
        "spc3": _SPC3,
        "spc4": ["ACS-SN5600"],
    },
    "202405": {
        "spc1": [
            "ACS-MSN2700",
            "ACS-MSN2740",
            "ACS-MSN2100",
            "ACS-MSN2410",
            "ACS-MSN2010",
            "Mellanox-SN2700",
            "Mellanox-SN2700-D48C8",
        ],
        "spc2": [
            "ACS-MSN3800",
            "Mellanox-SN3800-D112C8",
            "ACS-MSN3420",
            "ACS-MSN3700C",
            "ACS-MSN3700",
            "Mellanox-SN3800-C64",
        ],
        "spc3": [
            *_SPC3,
            "Mellanox-SN4600C-D100C12S2",
            "Mellanox-SN4600C-D48C40",
            "Mellanox-SN4700-O32",
            "Mellanox-SN4700-V64",
            "ACS-SN4280",
        ],
        "spc4": ["ACS-SN5600", "Mellanox-SN5600-O128", "Mellanox-SN5600-V256", "ACS-SN5400"],
    },
}
BROADCOM_ASICS: dict[str, dict[str, list[str]]] = {
    "202205": {
        "th": ["Force10-S6100", "Arista-7060CX-32S-C32", "Celestica-DX010-C32", "Seastone-DX010"],
        "th2": ["Arista-7260CX3-D108C8", "Arista-7260CX3-C64", "Arista-7260CX3-Q64"],
        "td2": ["Force10-S6000", "Force10-S6000-Q24S32", "Arista-7050-QX32", "Nexus-3164"],
        "td3": ["Arista-7050CX3-32S-C32", "Arista-7050CX3-32S-D48C8"],
    },
    "202405": {
        "th": ["Force10-S6100", "Arista-7060CX-32S-C32", "Celestica-DX010-C32", "Seastone-DX010"],
        "th2": ["Arista-7260CX3-D108C10", "Arista-7260CX3-D108C8", "Arista-7260CX3-C64"],
        "th3": ["Nokia-IXR7220-H3"],
        "th4": ["Nokia-IXR7220-H4-64D", "Nokia-IXR7220-H4-32D"],
        "th5": ["Nokia-IXR7220-H5-64D"],
        "td2": ["Force10-S6000", "Force10-S6000-Q24S32", "Arista-7050-QX32", "Nexus-3164"],
        "td3": ["Arista-7050CX3-32S-C32", "Arista-7050CX3-32S-D48C8", "Arista-7050CX3-32S-C28S4"],
        "j2c+": ["Nokia-IXR7250E-36x100G", "Nokia-IXR7250E-36x400G"],
    },
}

_OLD: Platforms = {
    "spc1": "20181100",
    "spc2": "20191100",
    "spc3": "20220500",
    "spc4": "20221100",
    "td2": "20181100",
    "th": "20181100",
    "th2": "20181100",
    "td3": "20201200",
}
_OLD_HEADROOM: Platforms = {
    "spc1": "20191100",
    "spc2": "20191100",
    "spc3": "20220500",
    "spc4": "20221100",
    "td2": "",
    "th": "20221100",
    "th2": "20221100",
    "td3": "20221100",
}
_NEW = {"th3": "20240500", "th4": "20240500", "th5": "20240500", "j2c+": "20220500"}


@dataclass(frozen=True)
class Scenario:
    """One permitted kind of change: fields, operations, ASIC family -> first branch version."""

    title: str
    fields: tuple[str, ...]
    operations: tuple[str, ...]
    platforms: Platforms


def _rules(release: str) -> dict[str, tuple[Scenario, ...]]:
    new = release >= "202405"
    extra = _NEW if new else {}
    cisco = {"cisco-8000": "20201200" if new else ""}
    return {
        "BUFFER_POOL": (
            Scenario(
                "Shared/headroom pool size changes",
                (
                    "ingress_lossless_pool/xoff",
                    "ingress_lossless_pool/size",
                    "egress_lossy_pool/size",
                ),
                ("replace",),
                {**_OLD_HEADROOM, **extra, **cisco},
            ),
        ),
        "BUFFER_PROFILE": (
            Scenario(
                "Dynamic threshold tuning",
                ("dynamic_th",),
                ("replace",),
                {**_OLD, **extra, **cisco},
            ),
            Scenario(
                "PG headroom modification",
                ("xoff",),
                ("replace",),
                {**_OLD_HEADROOM, **extra, **cisco},
            ),
        ),
        "WRED_PROFILE": (
            Scenario(
                "ECN tuning",
                (
                    "azure_lossless/green_min_threshold",
                    "azure_lossless/green_max_threshold",
                    "azure_lossless/green_drop_probability",
                ),
                ("replace",),
                {**_OLD, **extra, **cisco},
            ),
        ),
        "PFC_WD": (
            Scenario(
                "PFCWD enable/disable",
                ("restoration_time", "detection_time", "action", "global/poll_interval", ""),
                ("remove", "add", "replace"),
                {**_OLD, **extra, "cisco-8000": "20201200"},
            ),
        ),
    }


_ILLEGAL_REMOVALS = (
    "/PFC_WD/GLOBAL/POLL_INTERVAL",
    "/PFC_WD/GLOBAL",
    "/LOOPBACK_INTERFACE/Loopback0",
)
_VALIDATOR = "generic_config_updater.field_operation_validators.{}"


class GcuError(ValueError):
    """``config apply-patch`` refused the change; the message is the updater's."""


def asic_family(profile: SonicProfile) -> str:
    """The GCU ASIC family of the profile's HwSKU, or ``unknown``."""
    hwsku = profile.hwsku.lower()
    release = "202405" if profile.release >= "202405" else "202205"
    if profile.asic_type == "mellanox":
        for family, skus in MELLANOX_ASICS[release].items():
            if hwsku in (s.lower() for s in skus):
                return family
    if profile.asic_type == "broadcom":
        for family, skus in BROADCOM_ASICS[release].items():
            if any(s.lower() in hwsku for s in skus):
                return family
    return "unknown"


def branch_version(build_version: str) -> str | None:
    """The 8-digit branch version in a build version (``20220531.45``), if it has one."""
    found = None
    for part in build_version.split("."):
        if re.fullmatch(r"\d{8}", part):
            found = part
    return found


def _escape(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


def diff(old: Any, new: Any, path: str = "") -> list[dict[str, Any]]:
    """A JSON patch turning `old` into `new` (objects recursively; other values replaced)."""
    if isinstance(old, dict) and isinstance(new, dict):
        ops: list[dict[str, Any]] = []
        for key in old:
            if key not in new:
                ops.append({"op": "remove", "path": f"{path}/{_escape(key)}"})
        for key, value in new.items():
            where = f"{path}/{_escape(key)}"
            if key not in old:
                ops.append({"op": "add", "path": where, "value": value})
            elif old[key] != value:
                ops.extend(diff(old[key], value, where))
        return ops
    return [] if old == new else [{"op": "replace", "path": path, "value": new}]


def _cleaned_fields(element: dict[str, Any]) -> list[str]:
    parts = [p.replace("~1", "/").replace("~0", "~") for p in element["path"].split("/")[2:]]
    field = "/".join(p for p in parts if not any(c.isdigit() for c in p)).lower()
    value = element.get("value")
    if isinstance(value, dict):
        return [f"{field}/{key}" if field else key for key in value]
    return [field]


def _rdma_allows(
    profile: SonicProfile, scenarios: tuple[Scenario, ...], element: dict[str, Any]
) -> bool:
    asic = asic_family(profile)
    if asic == "unknown":
        return False
    branch = branch_version(profile.build_version)
    for field in _cleaned_fields(element):
        scenario = next((s for s in scenarios if field in s.fields), None)
        if scenario is None or not scenario.platforms.get(asic):
            return False
        if element["op"] not in scenario.operations:
            return False
        if branch is not None and branch < scenario.platforms[asic]:
            return False
    return True


def supported_speeds(profile: SonicProfile) -> set[str]:
    """Speeds a front-panel port of the profile's HwSKU supports (STATE_DB supported_speeds)."""
    if profile.port_speed == "400000":
        return {"400000", "200000", "100000", "40000"}
    return {"100000", "50000", "40000", "25000", "10000"}


def _port_allows(profile: SonicProfile, element: dict[str, Any]) -> bool:
    if element["op"] == "remove":
        return True
    value = element.get("value")
    field = element["path"].rsplit("/", 1)[-1]
    values = value if isinstance(value, dict) else {field: value}
    speed, fec = values.get("speed"), values.get("fec")
    if speed is not None and str(speed) not in supported_speeds(profile):
        return False
    return fec is None or str(fec).strip() in ("rs", "fc", "none", "auto")


def validate_field_operations(profile: SonicProfile, old: ConfigDb, target: ConfigDb) -> None:
    """Raise `GcuError` if the change old -> target breaks a field-operation rule."""
    changes = diff(old, target)
    for element in changes:
        if element["op"] == "remove" and element["path"] in _ILLEGAL_REMOVALS:
            raise GcuError(
                "Given patch operation is invalid. Operation: remove is illegal on field: "
                + element["path"]
            )
    rules = _rules(profile.release)
    for element in changes:
        table = element["path"].split("/")[1]
        if table in rules and not _rdma_allows(profile, rules[table], element):
            raise _illegal(table, "rdma_config_update_validator")
        port_rule = table == "PORT" and profile.release >= "202405"
        if port_rule and not _port_allows(profile, element):
            raise _illegal(table, "port_config_update_validator")


def _illegal(table: str, function: str) -> GcuError:
    return GcuError(
        f"Modification of {table} table is illegal- validating function "
        f"{_VALIDATOR.format(function)} returned False"
    )


def check_no_empty_tables(profile: SonicProfile, scope: str, target: ConfigDb) -> None:
    """Raise `GcuError` if the target config has an empty table (ConfigDb cannot hold one)."""
    empty = [table for table, rows in target.items() if isinstance(rows, dict) and not rows]
    if not empty:
        return
    plural = "s" if len(empty) != 1 else ""
    names = ", ".join(empty)
    if profile.release >= "202405":
        pad = " " * 32
        raise GcuError(
            f"{scope}: given patch is not valid because it will result in empty tables "
            f"{pad}which is not allowed in ConfigDb. {pad}Table{plural}: {names}"
        )
    raise GcuError(
        "Given patch is not valid because it will result in empty tables "
        f"which is not allowed in ConfigDb. Table{plural}: {names}"
    )
