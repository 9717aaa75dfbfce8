"""A SONiC switch: config_db documents, checkpoints, transient rollback timers, /tmp files.

Running and startup config_db, the checkpoints (``/etc/sonic/checkpoints``)
and the installed boot image persist; /tmp files and systemd-run timers are
volatile and vanish on reboot, as on a real switch.  Every store is bounded.
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
from pathlib import Path
from typing import Any

from .device import RECORD_FORMAT, Device, log, read_record, write_json_atomic
from .jsonpatch import PatchError, apply_patch
from .model import SwitchState, default_state, sonic_version_of
from .sonic_apply import PatchResult, apply_config_patch
from .sonic_bgp import frr_running_config
from .sonic_config import HOST, profile_state, render_profile_config
from .sonic_db import ConfigDb, merge_namespaces, project, render_config_db
from .sonic_profiles import SonicProfile, profile_named
from .sonic_qos import lookup_text
from .spec import DeviceSpec

MAX_CHECKPOINTS = 32
MAX_FILES = 32
MAX_FILE_BYTES = 1 << 20
MAX_TIMERS = 8
LEGACY_PLATFORM = "x86_64-generic-r0"
DEVICE_DIR = "/usr/share/sonic/device"


def legacy_asic_type(hwsku: str) -> str:
    """The ASIC a HwSKU name implies (NVIDIA Spectrum names, else Broadcom)."""
    return "mellanox" if hwsku.startswith(("Mellanox-", "ACS-M", "ACS-SN")) else "broadcom"


class SonicError(Exception):
    """A SONiC command failed; the message says why."""


class SonicDevice(Device):
    """SONiC config_db state and the machinery around it."""

    dialect = "sonic"

    def __init__(self, spec: DeviceSpec, path: Path) -> None:
        record = read_record(path, self.dialect)
        super().__init__(
            spec, path, write_count=0 if record is None else int(record["write_count"])
        )
        self.profile = profile_named(spec.profile)
        self.files: dict[str, bytes] = {}
        self.timers: dict[str, tuple[str, asyncio.TimerHandle | None]] = {}
        if record is None and self.profile.strict:
            state = spec.initial or profile_state(spec.name, self.profile)
            self.nos_version = self.profile.build_version
            self.boot_image = f"SONiC-OS-{self.nos_version}"
            dbs = render_profile_config(state, self.profile, self._mac)
            self.running: ConfigDb = dbs if self.profile.multi_asic else dbs[HOST]
            self.startup: ConfigDb = copy.deepcopy(self.running)
            self.checkpoints: dict[str, ConfigDb] = {}
            return
        if record is None:
            initial = spec.initial or default_state(spec.name, self.dialect)
            self.nos_version, self.boot_image = initial.nos_version, initial.boot_image
            self.running = render_config_db(initial)
            self.startup = copy.deepcopy(self.running)
            self.checkpoints = {}
            return
        self.nos_version, self.boot_image = str(record["nos_version"]), str(record["boot_image"])
        self.running, self.startup = record["running"], record["startup"]
        self.checkpoints = dict(record.get("checkpoints", {}))
        for pending in record.get("pending_rollbacks", [])[:1]:
            log.info(
                "%s: unconfirmed change (timer %s) rolled back on load", self.name, pending["unit"]
            )
            if pending["checkpoint"] in self.checkpoints:
                self.running = copy.deepcopy(self.checkpoints[pending["checkpoint"]])
                self.note_write()

    def record(self) -> dict[str, Any]:
        return {
            "nos_version": self.nos_version,
            "boot_image": self.boot_image,
            "running": self.running,
            "startup": self.startup,
            "checkpoints": self.checkpoints,
            "pending_rollbacks": [
                {"unit": u, "checkpoint": c} for u, (c, _h) in self.timers.items()
            ],
        }

    def state_view(self) -> SwitchState:
        if not self.profile.strict:
            return project(self.running, self.nos_version, self.boot_image)
        return project(self.flat_config(), self.nos_version, self.boot_image, bgpcfgd=True)

    def flat_config(self) -> ConfigDb:
        """The running config_db; on a multi-ASIC switch every namespace's rows in one."""
        return merge_namespaces(self.running) if self.profile.multi_asic else self.running

    def host_config(self) -> ConfigDb:
        """The host namespace's config_db."""
        return dict(self.running[HOST]) if self.profile.multi_asic else self.running

    @property
    def running_profile(self) -> SonicProfile:
        """The profile with the HwSKU the running config names: ``show version`` and the
        generic config updater read it from DEVICE_METADATA (sonic-py-common
        ``device_info.get_hwsku``); release, platform and ASIC type are the image's."""
        hwsku = self.host_config().get("DEVICE_METADATA", {}).get("localhost", {}).get("hwsku")
        if not self.profile.strict or not isinstance(hwsku, str) or not hwsku:
            return self.profile
        return dataclasses.replace(self.profile, hwsku=hwsku)

    @property
    def hostname(self) -> str:
        """The hostname in DEVICE_METADATA."""
        meta = self.host_config().get("DEVICE_METADATA", {}).get("localhost", {})
        return str(meta.get("hostname", "sonic"))

    def shown_running(self) -> Any:
        """What ``show runningconfiguration all`` prints, as JSON data."""
        if not self.profile.multi_asic:
            if not self.profile.bgpraw:
                return self.running
            frr = frr_running_config(self.running, self.profile.frr_version)
            return {**self.running, "bgpraw": frr}
        shown: dict[str, Any] = {}
        for namespace, db in self.running.items():
            shown[namespace] = dict(db)
            if namespace != HOST and self.profile.bgpraw:
                merged = {**db, "DEVICE_METADATA": self.host_config().get("DEVICE_METADATA", {})}
                merged["BGP_NEIGHBOR"] = db.get("BGP_NEIGHBOR", {})
                shown[namespace]["bgpraw"] = frr_running_config(merged, self.profile.frr_version)
        return shown

    def platform_file(self, path: str) -> str | None:
        """A file under ``/usr/share/sonic/device/<platform>/<hwsku>/`` the simulator has:
        the HwSKU's ``pg_profile_lookup.ini`` (in ``<n>/`` per ASIC on a multi-ASIC one)."""
        if self.profile.strict:
            platform, hwsku = self.profile.platform, self.running_profile.hwsku
        else:
            platform, hwsku = LEGACY_PLATFORM, self.state_view().model
        folder = f"{DEVICE_DIR}/{platform}/{hwsku}/"
        rest = path.removeprefix(folder) if path.startswith(folder) else None
        asics = [str(n) for n in range(len(self.profile.namespaces))]
        wanted = (
            ["pg_profile_lookup.ini"]
            if not asics
            else [f"{n}/pg_profile_lookup.ini" for n in asics]
        )
        if rest not in wanted:
            return None
        return lookup_text(hwsku)

    def apply_patch_strict(self, patch: Any) -> PatchResult:
        """``config apply-patch`` of a named profile; raises `PatchRefused`."""
        profile = self.running_profile
        return apply_config_patch(profile, self.running, self.shown_running(), patch)

    # -- configuration -------------------------------------------------------

    def patched(self, patch: Any) -> ConfigDb:
        """The running config with `patch` applied and validated (nothing is changed)."""
        try:
            candidate = apply_patch(self.running, patch)
            project(candidate, self.nos_version, self.boot_image)
        except (PatchError, ValueError, TypeError) as exc:
            raise SonicError(str(exc)) from exc
        if not isinstance(candidate, dict):
            raise SonicError("the patched config_db is not an object")
        return candidate

    def replace_running(self, config: ConfigDb) -> None:
        """Make `config` the running config_db."""
        self.running = config
        self.note_write()

    def checkpoint(self, name: str) -> None:
        """Save running config as checkpoint `name`."""
        if name not in self.checkpoints and len(self.checkpoints) >= MAX_CHECKPOINTS:
            raise SonicError(f"too many checkpoints (at most {MAX_CHECKPOINTS}); delete one first")
        self.checkpoints[name] = copy.deepcopy(self.running)
        self.save()

    def rollback(self, name: str) -> None:
        """Replace running config with checkpoint `name`."""
        if name not in self.checkpoints:
            raise SonicError(f"Checkpoint '{name}' does not exist")
        self.replace_running(copy.deepcopy(self.checkpoints[name]))

    def save_config(self) -> None:
        """``config save -y``: startup = running."""
        self.startup = copy.deepcopy(self.running)
        self.note_write()

    def reload_config(self) -> None:
        """``config reload -y``: running = startup."""
        self.replace_running(copy.deepcopy(self.startup))

    def write_file(self, path: str, data: bytes) -> None:
        """Store a /tmp file (bounded in count and size)."""
        if len(data) > MAX_FILE_BYTES:
            raise SonicError(f"{path}: File too large")
        if path not in self.files and len(self.files) >= MAX_FILES:
            raise SonicError(f"{path}: No space left on device")
        self.files[path] = data

    def install(self, image: str) -> str:
        """``sonic-installer install``: the image boots next; returns its installed name."""
        try:
            version = sonic_version_of(image)
        except ValueError as exc:
            raise SonicError(str(exc)) from exc
        self.boot_image = f"SONiC-OS-{version}"
        self.save()
        return self.boot_image

    # -- transient timers -----------------------------------------------------------

    def start_timer(self, unit: str, seconds: float, checkpoint: str) -> None:
        """``systemd-run --on-active``: roll back to `checkpoint` after `seconds`."""
        if unit in self.timers:
            raise SonicError(
                f"Failed to start transient timer unit: Unit {unit}.timer already exists."
            )
        if len(self.timers) >= MAX_TIMERS:
            raise SonicError("Failed to start transient timer unit: too many transient units")
        handle = asyncio.get_running_loop().call_later(seconds, self._fire, unit)
        self.timers[unit] = (checkpoint, handle)
        self.save()

    def stop_timer(self, unit: str) -> bool:
        """``systemctl stop UNIT.timer``; False if no such timer is loaded."""
        entry = self.timers.pop(unit, None)
        if entry is None:
            return False
        if entry[1] is not None:
            entry[1].cancel()
        self.save()
        return True

    def _fire(self, unit: str) -> None:
        checkpoint, _handle = self.timers.pop(unit, ("", None))
        log.info("%s: timer %s fired: config rollback %s", self.name, unit, checkpoint)
        try:
            self.rollback(checkpoint)
        except SonicError as exc:
            log.warning("%s: timer %s: rollback failed: %s", self.name, unit, exc)
            self.save()

    # -- lifecycle ---------------------------------------------------------------

    def cancel_timers(self) -> None:
        for _checkpoint, handle in self.timers.values():
            if handle is not None:
                handle.cancel()

    def begin_reboot(self) -> None:
        self.cancel_timers()
        self.timers.clear()
        self.files.clear()
        self.save()

    def finish_reboot(self) -> None:
        self.nos_version = sonic_version_of(self.boot_image)
        self.running = copy.deepcopy(self.startup)
        self.save()


def loaded_config_db(doc: Any) -> ConfigDb:
    """What ``config load`` (sonic-cfggen ``--write-to-db``) keeps of a config_db.json
    document: ConfigDBConnector stores every field as text (``str(value)``; a list as
    ``field@`` and read back as a list), and a table without rows is not stored.
    ValueError for a document ``config load`` cannot write (a table that is not an object
    of objects)."""
    if not isinstance(doc, dict):
        raise ValueError("config_db must be a JSON object")
    db: ConfigDb = {}
    for table, rows in doc.items():
        if not isinstance(rows, dict) or not all(isinstance(f, dict) for f in rows.values()):
            raise ValueError(f"table {table} must be an object of objects")
        if rows:
            db[table] = {
                key: {
                    name: [str(v) for v in value] if isinstance(value, list) else str(value)
                    for name, value in fields.items()
                }
                for key, fields in rows.items()
            }
    return db


def write_boot_record(path: Path, name: str, doc: Any, profile: SonicProfile) -> None:
    """Make `path` the saved record of a SONiC switch of `profile` that booted the
    config_db.json document `doc` (``{namespace: config_db}`` on a multi-ASIC profile) as
    running and startup config; `SwitchSim.add_device` then starts the device from it."""
    if profile.multi_asic:
        if not isinstance(doc, dict) or HOST not in doc:
            raise ValueError("a multi-ASIC switch boots one config_db per namespace")
        running: Any = {space: loaded_config_db(db) for space, db in doc.items()}
    else:
        running = loaded_config_db(doc)
    write_json_atomic(
        path,
        {
            "format": RECORD_FORMAT,
            "name": name,
            "dialect": "sonic",
            "write_count": 0,
            "nos_version": profile.build_version,
            "boot_image": f"SONiC-OS-{profile.build_version}",
            "running": running,
            "startup": copy.deepcopy(running),
            "checkpoints": {},
            "pending_rollbacks": [],
        },
    )
