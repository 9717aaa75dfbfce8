"""``config apply-patch`` of a named SONiC profile: checks, log lines and the result, without I/O.

202405 (sonic-utilities ``config/main.py``): the patch is first applied to the
whole ``show runningconfiguration all`` document (per namespace on multi-ASIC
switches, ``bgpraw`` included) and each namespace's result YANG-validated
(``Failed validating patch:...``); then the operations are grouped by scope
(``/asicN/...``, ``/localhost/...``, or unprefixed for the host) and each
scope runs the patch applier, failures collected as ``Failed to apply patch
on the following scopes:`` / ``- SCOPE: MESSAGE``.  202205 runs the patch
applier once, without scopes.  The applier's steps and messages are in
`sonic_gcu`; the log lines ("Patch Applier: ...") are what it prints.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from typing import Any

from .jsonpatch import PatchError, apply_patch, parse_pointer
from .sonic_bgp import BgpcfgdError, check_bgpcfgd_change
from .sonic_gcu import GcuError, check_no_empty_tables, validate_field_operations
from .sonic_profiles import SonicProfile
from .sonic_yang import YangError, validate_config

ConfigDb = dict[str, Any]
HOST = "localhost"


@dataclass
class PatchRefused(Exception):
    """The patch was refused: what was printed before, and the error message."""

    log: list[str]
    message: str


@dataclass
class PatchResult:
    """The new running document and the lines the applier printed."""

    running: Any
    log: list[str] = field(default_factory=list)


def _patch_text(patch: list[Any]) -> str:
    return json.dumps(patch)


def _applier(
    profile: SonicProfile, scope: str, old: ConfigDb, patch: list[Any], log: list[str]
) -> ConfigDb:
    """One scope's PatchApplier.apply: the new config of that namespace."""
    new = profile.release >= "202405"

    def note(text: str) -> None:
        log.append(f"Patch Applier: {text}")

    note(f"{scope}: Patch application starting." if new else "Patch application starting.")
    note(f"{scope}: Patch: {_patch_text(patch)}" if new else f"Patch: {_patch_text(patch)}")
    note(f"{scope} getting current config db." if new else "Getting current config db.")
    try:
        target = apply_patch(old, patch)
    except PatchError as exc:
        raise GcuError(str(exc)) from exc
    if not isinstance(target, dict):
        raise GcuError("the patched config_db is not an object")
    note(
        f"{scope}: validating all JsonPatch operations are permitted on the specified fields"
        if new
        else "Validating all JsonPatch operations are permitted on the specified fields"
    )
    validate_field_operations(profile, old, target)
    check_no_empty_tables(profile, scope, target)
    note(f"{scope}: sorting patch updates." if new else "Sorting patch updates.")
    try:
        validate_config(target, profile.release)
    except YangError as exc:
        raise GcuError(f"Given patch will produce invalid config. Error: {exc}") from exc
    check_bgpcfgd_change(old, target)
    count = len(patch)
    plural = "s" if count != 1 else ""
    colon = ":" if count else "."
    changes = [f"  * [{json.dumps(op)}]" for op in patch]
    if new:
        note(f"The {scope} patch was converted into {count} change{plural}{colon}")
        note(f"{scope}: applying {count} change{plural} in order{colon}")
        log.extend(f"Patch Applier: {line}" for line in changes)
        note(f"{scope}: verifying patch updates are reflected on ConfigDB.")
        note(f"{scope} patch application completed.")
    else:
        note(f"The patch was sorted into {count} change{plural}{colon}")
        log.extend(f"Patch Applier: {line}" for line in changes)
        note(f"Applying {count} change{plural} in order{colon}")
        log.extend(f"Patch Applier: {line}" for line in changes)
        note("Verifying patch updates are reflected on ConfigDB.")
        note("Patch application completed.")
    return target


def _split_scopes(profile: SonicProfile, patch: list[Any]) -> dict[str, list[Any]]:
    scopes: dict[str, list[Any]] = {}
    for op in patch:
        if not isinstance(op, dict) or not isinstance(op.get("path"), str) or not op["path"]:
            raise GcuError("Wrong patch with empty path.")
        tokens = parse_pointer(op["path"])
        scope, rest = "", op["path"]
        if tokens and tokens[0].startswith("asic"):
            if not tokens[0][4:].isdigit():
                raise GcuError(
                    f"Error resolving path: '{op['path']}' due to incorrect ASIC number."
                )
            scope, rest = tokens[0], "/" + op["path"].split("/", 2)[2]
        elif tokens and tokens[0] == HOST:
            scope, rest = HOST, "/" + op["path"].split("/", 2)[2]
        scopes.setdefault(scope, []).append({**op, "path": rest})
    return scopes


def apply_config_patch(profile: SonicProfile, running: Any, shown: Any, patch: Any) -> PatchResult:
    """Run ``config apply-patch``; `shown` is ``show runningconfiguration all``'s document."""
    if not isinstance(patch, list):
        raise PatchRefused([], "a JSON patch must be an array of operations")
    if profile.release < "202405":
        log: list[str] = []
        try:
            return PatchResult(_applier(profile, HOST, running, patch, log), log)
        except (GcuError, BgpcfgdError, PatchError) as exc:
            raise PatchRefused(log, str(exc)) from exc
    _validate_whole(profile, shown, patch)
    try:
        scopes = _split_scopes(profile, patch)
    except (GcuError, PatchError) as exc:
        raise PatchRefused([], str(exc)) from exc
    if not scopes:
        scopes = {ns: [] for ns in ["", *profile.namespaces]}
    result = copy.deepcopy(running)
    log = []
    failures: list[str] = []
    for scope, changes in scopes.items():
        name = scope or HOST
        if profile.multi_asic and name not in result:
            failures.append(f"- {name}: namespace {name} does not exist")
            continue
        old = result[name] if profile.multi_asic else result
        try:
            new = _applier(profile, name, old, changes, log)
        except (GcuError, BgpcfgdError, PatchError) as exc:
            failures.append(f"- {name}: {exc}")
            continue
        if profile.multi_asic:
            result[name] = new
        else:
            result = new
    if failures:
        raise PatchRefused(
            log, "Failed to apply patch on the following scopes:\n" + "\n".join(failures)
        )
    return PatchResult(result, log)


def _validate_whole(profile: SonicProfile, shown: Any, patch: list[Any]) -> None:
    text = _patch_text(patch)
    try:
        target = apply_patch(shown, patch)
    except PatchError as exc:
        raise PatchRefused([], f"Validate json patch: {text} failed due to:{exc}") from exc
    parts = [target[ns] for ns in target] if profile.multi_asic else [target]
    for part in parts:
        config = (
            {k: v for k, v in part.items() if k != "bgpraw"} if isinstance(part, dict) else part
        )
        try:
            validate_config(config, profile.release)
        except (YangError, AttributeError, TypeError) as exc:
            raise PatchRefused([str(exc)], f"Failed validating patch:{text}") from exc
