"""The generic config updater (``config apply-patch``) of one SONiC release, for one namespace.

Steps and messages follow sonic-utilities' ``generic_config_updater``
(``PatchApplier.apply``) of the profile's release:

1. simulate the patch on the running config (RFC 6902, `jsonpatch`);
2. field-operation validation on ``jsonpatch.from_diff(old, target)``:
   removing ``/PFC_WD/GLOBAL``, its ``POLL_INTERVAL`` or
   ``/LOOPBACK_INTERFACE/Loopback0`` is illegal; every table the release's
   ``gcu_field_operation_validators.conf.json`` lists runs its validators
   (the upstream file of that branch, which plumb ships in
   ``reconciler/drivers/gcu_rules``; read here as data, matched by this
   module's own code after the branch's ``field_operation_validators.py``):
   ``rdma_config_update_validator`` (path elements holding a digit dropped,
   exact field match), ``wred_profile_config_update_validator`` (202505:
   last element), ``buffer_profile_config_update_validator`` (from 202511:
   whole profiles pass, fields by last element) and
   ``port_config_update_validator`` (``speed``/``fec`` the port supports).
   The ASIC family comes from ``asic_type`` (``cisco-8000``,
   ``marvell-teralynx`` from 202511) or the HwSKU: exact on Spectrum, for the
   families the branch's code reads (spc1-4, spc5 from 202505, spc6 on
   master), contained on Broadcom.  A family must be listed with a non-empty
   release no newer than the build's eight-digit part (when it has one).
   202106-202211 have no such validators;
3. no table may become empty;
4. the whole target config must pass the YANG checks (`sonic_yang`).
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path
from typing import Any

from .sonic_profiles import SonicProfile

ConfigDb = dict[str, Any]
RULES = Path(__file__).resolve().parents[2] / "reconciler" / "drivers" / "gcu_rules"
_SPECTRUM = {"202505": 5, "202511": 5, "202605": 5, "master": 6}
_SHIPPED = ("202205", "202305", "202311", "202405", "202411", "202505", "202511", "202605")


_ILLEGAL_REMOVALS = (
    "/PFC_WD/GLOBAL/POLL_INTERVAL",
    "/PFC_WD/GLOBAL",
    "/LOOPBACK_INTERFACE/Loopback0",
)
_VALIDATOR = "generic_config_updater.field_operation_validators.{}"


class GcuError(ValueError):
    """``config apply-patch`` refused the change; the message is the updater's."""


def has_apply_patch(profile: SonicProfile) -> bool:
    """``config apply-patch`` first ships in 202106."""
    return profile.release == "master" or profile.release >= "202106"


def rule_file(release: str) -> str | None:
    """Which upstream file a release runs (None: no field-operation validators)."""
    if release == "master" or release > _SHIPPED[-1]:
        return "master"
    older = [r for r in _SHIPPED if r <= release]
    if not older or ("202211" <= release < "202305"):
        return None
    return older[-1]


@cache
def conf_of(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((RULES / f"{name}.json").read_text())
    return data


def asic_family(profile: SonicProfile) -> str:
    """``get_asic_name`` of the profile's release: the ASIC family, or ``unknown``."""
    name = rule_file(profile.release)
    if name is None:
        return "unknown"
    if profile.asic_type == "cisco-8000":
        return "cisco-8000"
    if profile.asic_type == "marvell-teralynx" and (name == "master" or name >= "202511"):
        return "marvell-teralynx"
    mapping = conf_of(name)["helper_data"]["rdma_config_update_validator"]
    hwsku = profile.hwsku.lower()
    if profile.asic_type in ("mellanox", "vs"):
        for number in range(1, _SPECTRUM.get(name, 4) + 1):
            skus = mapping["mellanox_asics"].get(f"spc{number}", [])
            if hwsku in (s.lower() for s in skus):
                return f"spc{number}"
    if profile.asic_type in ("broadcom", "vs"):
        for family, skus in mapping["broadcom_asics"].items():
            if any(s.lower() in hwsku for s in skus):
                return str(family)
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


def _tokens(path: str) -> list[str]:
    return [p.replace("~1", "/").replace("~0", "~") for p in path.split("/")[1:]]


def _cleaned_fields(element: dict[str, Any], drop_digits: bool) -> list[str]:
    parts = _tokens(element["path"])[1:]
    if drop_digits:
        parts = [p for p in parts if not any(c.isdigit() for c in p)]
    field = "/".join(parts).lower()
    value = element.get("value")
    if isinstance(value, dict):
        return [f"{field}/{key}" if field else key for key in value]
    return [field]


def _scenarios_allow(
    profile: SonicProfile, table: str, element: dict[str, Any], exact: bool, drop_digits: bool
) -> bool:
    asic = asic_family(profile)
    if asic == "unknown":
        return False
    name = rule_file(profile.release)
    assert name is not None
    scenarios = conf_of(name)["tables"][table]["validator_data"]["rdma_config_update_validator"]
    branch = branch_version(profile.build_version)
    for field in _cleaned_fields(element, drop_digits):
        last = field.split("/")[-1]
        scenario = next(
            (
                s
                for s in scenarios.values()
                if any(field == g if exact else last == g for g in s["fields"])
            ),
            None,
        )
        if scenario is None or not scenario["platforms"].get(asic):
            return False
        if element["op"] not in scenario["operations"]:
            return False
        if branch is not None and branch < scenario["platforms"][asic]:
            return False
    return True


def _validator_allows(
    profile: SonicProfile, method: str, table: str, element: dict[str, Any]
) -> bool:
    if method == "rdma_config_update_validator":
        return _scenarios_allow(profile, table, element, exact=True, drop_digits=True)
    if method == "wred_profile_config_update_validator":
        return _scenarios_allow(profile, table, element, exact=False, drop_digits=False)
    if method == "buffer_profile_config_update_validator":
        if len(_tokens(element["path"])) == 2:
            return element["op"] in ("add", "remove", "replace")
        return _scenarios_allow(profile, table, element, exact=False, drop_digits=False)
    if method == "port_config_update_validator":
        return _port_allows(profile, element)
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
    name = rule_file(profile.release)
    if name is None:
        return
    tables = conf_of(name)["tables"]
    for element in changes:
        table = element["path"].split("/")[1]
        for validator in tables.get(table, {}).get("field_operation_validators", []):
            method = validator.rsplit(".", 1)[-1]
            if not _validator_allows(profile, method, table, element):
                raise _illegal(table, method)


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
