"""What ``config apply-patch`` lets a SONiC release write (pure): the generic config
updater's field-operation validators, applied to the upstream rule files.

sonic-utilities checks every operation of ``jsonpatch.from_diff(old, new)`` against
``gcu_field_operation_validators.conf.json`` before it writes anything. plumb ships that
file for each release branch (``gcu_rules/<release>.json``, Apache-2.0, commits in
``gcu_rules/SOURCES.json``) and applies it as the branch's
``field_operation_validators.py`` does:

- **ASIC** (``get_asic_name``): ``asic_type`` ``cisco-8000`` (and, from 202511,
  ``marvell-teralynx``) is the family itself; on ``mellanox`` the HwSKU is looked up
  exactly (any case) in the Spectrum lists the branch's code reads (spc1-spc4 through
  202411, spc5 from 202505, spc6 on master); on ``broadcom`` a listed name contained in
  the HwSKU gives the family. Anything else is ``unknown`` and every guarded write is
  refused.
- **Field** of an operation: the path's elements after the table, lower-cased. The
  ``rdma_config_update_validator`` drops elements holding a digit
  (``/BUFFER_PROFILE/pg_lossless_100000_5m_profile/xoff`` is ``xoff``,
  ``/WRED_PROFILE/AZURE_LOSSLESS/green_min_threshold`` stays
  ``azure_lossless/green_min_threshold``) and matches a scenario's field exactly; the
  ``wred_profile_config_update_validator`` (202505) and
  ``buffer_profile_config_update_validator`` (from 202511) match the last element only,
  so any profile qualifies; the latter also lets a whole profile be added, replaced or
  removed. A dict value counts each of its keys as a field.
- **Scenario**: the operation must be one it lists, the ASIC must be listed with a
  non-empty release, and when the build version holds an eight-digit part
  (``20220531.45``) that part must not be below the listed one (community builds such
  as ``202405.12-abc`` are not version-checked).

Releases 202106-202211 have ``config apply-patch`` without these validators (only
removing ``/PFC_WD/GLOBAL`` or ``/LOOPBACK_INTERFACE/Loopback0`` is refused); releases
before 202106 have no ``config apply-patch`` at all. A release newer than every shipped
branch is judged by master's file.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent / "gcu_rules"
ILLEGAL_REMOVALS = (
    "/PFC_WD/GLOBAL/POLL_INTERVAL",
    "/PFC_WD/GLOBAL",
    "/LOOPBACK_INTERFACE/Loopback0",
)
_EIGHT_DIGITS = re.compile(r"^\d{8}$")
Op = Mapping[str, Any]


@dataclass(frozen=True)
class Rules:
    """One release's updater: its rule file (None: no field validators) and code facts."""

    release: str
    conf: Mapping[str, Any] | None
    mellanox_families: tuple[str, ...] = ()
    asic_types: tuple[str, ...] = ()
    source: str = ""


@cache
def sources() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((DATA / "SOURCES.json").read_text())
    return data


@cache
def shipped(release: str) -> Rules:
    """The rules of a release branch plumb ships a file for."""
    entry = sources()["releases"][release]
    conf = json.loads((DATA / entry["file"]).read_text())
    where = f"{sources()['repository']} {entry['branch']} {entry['commit'][:10]}"
    return Rules(
        release, conf, tuple(entry["mellanox_families"]), tuple(entry["asic_types"]), where
    )


def releases() -> list[str]:
    """The release branches plumb ships rules for, oldest first (master last)."""
    return sorted(sources()["releases"], key=lambda r: (r == "master", r))


def rules_for(release: str | None) -> Rules | None:
    """The updater of ``release`` (``202405``, ``master``); None when plumb cannot tell
    which one a switch runs. A release before ``config apply-patch`` existed gives
    :data:`NO_APPLY_PATCH`."""
    if release is None:
        return None
    if release in sources()["releases"]:
        return shipped(release)
    if not re.fullmatch(r"20\d{4}", release):
        return None
    if release < sources()["apply_patch_from"]:
        return Rules(release, None, source="none")
    known = [r for r in releases() if r != "master"]
    bare = [r for r in sources()["without_validators"] if r <= release]
    older = [r for r in known if r <= release]
    if release > known[-1]:
        return shipped("master")
    if bare and (not older or max(bare) > max(older)):
        return Rules(release, None, source="no field-operation validators")
    return shipped(max(older)) if older else None


def writable(rules: Rules) -> bool:
    """Whether the release has ``config apply-patch`` at all."""
    return rules.source != "none"


def asic_name(rules: Rules, hwsku: str, asic_type: str | None) -> str:
    """``get_asic_name``: the updater's ASIC family, or ``unknown``. An ``asic_type`` of
    None (not observed) tries the Spectrum lists, then the Broadcom ones."""
    if asic_type in rules.asic_types:
        return asic_type
    if rules.conf is None:
        return "unknown"
    mapping = rules.conf["helper_data"]["rdma_config_update_validator"]
    if asic_type in ("mellanox", "vs", None):
        spectrum = mapping.get("mellanox_asics", {})
        for family in rules.mellanox_families:
            if hwsku.lower() in (name.lower() for name in spectrum.get(family, [])):
                return family
    if asic_type in ("broadcom", "vs", None):
        for family, names in mapping.get("broadcom_asics", {}).items():
            if any(name.lower() in hwsku.lower() for name in names):
                return str(family)
    return "unknown"


def branch_version(build: str) -> str | None:
    """The eight-digit part of a build version (``20220531`` of ``20220531.45``)."""
    found = None
    for part in build.split("."):
        if part.isdigit() and _EIGHT_DIGITS.match(part):
            found = part
    return found


def _parts(path: str) -> list[str]:
    return [p.replace("~1", "/").replace("~0", "~") for p in path.split("/")[1:]]


def _fields(op: Op, drop_digits: bool) -> list[str]:
    elements = _parts(str(op["path"]))[1:]
    if drop_digits:
        elements = [e for e in elements if not any(c.isdigit() for c in e)]
    cleaned = "/".join(elements).lower()
    value = op.get("value")
    if isinstance(value, dict):
        return [f"{cleaned}/{key}" if cleaned else str(key) for key in value]
    return [cleaned]


def _scenario_refusal(
    rules: Rules, op: Op, asic: str, build: str, exact: bool, drop_digits: bool
) -> str | None:
    table = _parts(str(op["path"]))[0]
    if asic == "unknown":
        return f"{table}: the HwSKU maps to no ASIC family the updater lists"
    assert rules.conf is not None
    scenarios = rules.conf["tables"][table]["validator_data"]["rdma_config_update_validator"]
    branch = branch_version(build)
    for field in _fields(op, drop_digits):
        last = field.split("/")[-1]
        title, scenario = next(
            (
                (t, s)
                for t, s in scenarios.items()
                if any((field == g) if exact else (last == g) for g in s["fields"])
            ),
            ("", None),
        )
        if scenario is None:
            allowed = sorted({g for s in scenarios.values() for g in s["fields"]} - {""})
            return f"{table} field {field!r} is in no scenario (allowed: {', '.join(allowed)})"
        since = scenario["platforms"].get(asic)
        if not since:
            return f'{table} "{title}" does not list ASIC {asic}'
        if op["op"] not in scenario["operations"]:
            return f'{table} "{title}" allows {"/".join(scenario["operations"])}, not {op["op"]}'
        if branch is not None and branch < since:
            return f'{table} "{title}" allows {asic} from build {since}; this is {branch}'
    return None


def _validator_refusal(rules: Rules, name: str, op: Op, asic: str, build: str) -> str | None:
    method = name.rsplit(".", 1)[-1]
    if method == "rdma_config_update_validator":
        return _scenario_refusal(rules, op, asic, build, exact=True, drop_digits=True)
    if method == "wred_profile_config_update_validator":
        return _scenario_refusal(rules, op, asic, build, exact=False, drop_digits=False)
    if method == "buffer_profile_config_update_validator":
        if len(_parts(str(op["path"]))) == 2:  # a whole profile: add, replace, remove
            return None if op["op"] in ("add", "remove", "replace") else f"{op['op']} refused"
        return _scenario_refusal(rules, op, asic, build, exact=False, drop_digits=False)
    return None  # port_config_update_validator: speed and fec, which plumb never writes


def refusal(
    rules: Rules, ops: Sequence[Op], hwsku: str, asic_type: str | None, build: str
) -> str | None:
    """Why the release's ``config apply-patch`` refuses the operations, or None."""
    for op in ops:
        if op["op"] == "remove" and op["path"] in ILLEGAL_REMOVALS:
            return f"removing {op['path']} is illegal"
    if rules.conf is None:
        return None
    asic = asic_name(rules, hwsku, asic_type)
    tables = rules.conf["tables"]
    for op in ops:
        table = _parts(str(op["path"]))[0]
        for name in tables.get(table, {}).get("field_operation_validators", []):
            reason = _validator_refusal(rules, name, op, asic, build)
            if reason is not None:
                return reason
    return None
