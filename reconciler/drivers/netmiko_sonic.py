"""The SONiC driver: SSH exec channels to the switch's shell, config_db JSON patches
through ``config apply-patch``, checkpoints and a systemd timer as commit-confirm.

=========  =============================================================================
observe    ``show version`` + ``show runningconfiguration all`` (config_db JSON, per
           namespace on multi-ASIC switches) -> flat state (:mod:`.sonic_parse`),
           plus ``docker exec lldp lldpctl -f json`` (neighbours; none if it fails)
stage      read the before-state (kept as ``candidate.before``), for a headroom change
           ``cat`` the HwSKU's ``pg_profile_lookup.ini`` (:mod:`.sonic_buffers`),
           refuse what the platform cannot express (:mod:`.sonic_caps`), build the patches
           (:mod:`.sonic_patch`: one, or two when a BGP peer is deleted and re-added),
           write each with ``echo BASE64 | base64 -d > /tmp/plumb-<id>-<n>.json``
compare    ``sudo config apply-patch --dry-run FILE`` for the first patch (the device's
           own reason when it refuses; a re-add after a removal cannot be dry-run
           against the running config and is checked when applied), then a fresh read
           with the patches applied locally and parsed back into changes
commit     ``sudo config checkpoint plumb-<id>``; with ``confirm_within`` first
           ``sudo systemd-run --unit=plumb-confirm-<id> --on-active=SECONDS
           /usr/local/bin/config rollback plumb-<id>`` (armed *before* the patch, so a
           vanished controller is rolled back), then ``sudo config apply-patch FILE``
           for each patch in turn
confirm    ``sudo systemctl stop plumb-confirm-<id>.timer`` + ``sudo config save -y``
discard    ``rm -f FILES``
=========  =============================================================================

Each command runs on its own exec channel (:mod:`.ssh_exec`); a non-zero exit
status is ConfigRejected with the command's last error line (a failed apply-patch is
first rolled back to the checkpoint). Output that cannot be parsed is that device's
ConfigRejected, never the batch's. Once saved, the checkpoint and the patch files are
deleted (SONiC keeps few checkpoints). A NOS change runs ``sudo sonic-installer install
-y <image>`` (option ``image``, a URL with ``{version}``), saves, reboots and waits for
the new version.
"""

from __future__ import annotations

import base64
import json
import math
import re
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from reconciler.drivers.base import DeviceRef, checked_candidate
from reconciler.drivers.lldp_parse import parse_sonic_lldp
from reconciler.drivers.netmiko_common import Dialect, Phase, SwitchDriver
from reconciler.drivers.safevalues import IMAGE_URL, SafeValues
from reconciler.drivers.sonic_buffers import lookup_path
from reconciler.drivers.sonic_jsonpatch import Patch, apply_json_patch
from reconciler.drivers.sonic_parse import namespaces, observed_state, parse_running
from reconciler.drivers.sonic_patch import patch_steps
from reconciler.drivers.ssh_exec import ExecPool, ExecSession
from reconciler.drivers.switch_access import Credentials, SwitchOptions
from reconciler.errors import ConfigRejected, DeviceError
from reconciler.settings import Change, Scalar

SONIC = Dialect("linux", r"[^\n]*[$#]\s*$", enable=False)
CONFIG = "/usr/local/bin/config"
LLDP = "docker exec lldp lldpctl -f json"
PARSE_ERRORS = (ValueError, KeyError, TypeError, AttributeError, IndexError)
_DIRECTORY = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]{0,80}$")


@dataclass
class SonicCandidate:
    """Patch files on the switch and the before-state read just before writing them."""

    device: str
    ident: str
    changes: tuple[Change, ...]
    before: dict[str, Scalar] = field(repr=False)
    patches: list[Patch] = field(repr=False)
    image: str | None = None
    nos_version: str | None = None
    timed: bool = False
    discarded: bool = False

    @property
    def files(self) -> list[str]:
        return [f"/tmp/{self.ident}-{n}.json" for n in range(1, len(self.patches) + 1)]

    @property
    def timer(self) -> str:
        return self.ident.replace("plumb-", "plumb-confirm-")


def _reason(text: str) -> str:
    """The device's own reason: its last ``Error:`` line with the ``- SCOPE: why`` lines
    that follow it (``config apply-patch`` on 202405 lists its failures per namespace
    under ``Failed to apply patch on the following scopes:``), else its last lines."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    errors = [n for n, line in enumerate(lines) if line.lower().startswith(("error", "failed"))]
    if not errors:
        return " | ".join(lines[-2:])[:400]
    found = [lines[errors[-1]]]
    for line in lines[errors[-1] + 1 :]:
        if not line.startswith("- "):
            break
        found.append(line)
    return " ".join(found)[:400]


class SonicDriver(SwitchDriver):
    """SONiC switches through config_db patches."""

    name = "sonic"

    def __init__(self, options: SwitchOptions, credentials: Credentials) -> None:
        super().__init__(SONIC, options, credentials)
        self.exec = ExecPool(options, credentials)

    def _shell(
        self, session: ExecSession, command: str, what: str, phase: Phase = Phase.read
    ) -> str:
        """Run ``command``; a non-zero exit status is ConfigRejected with the reason."""
        timeout = self.options.commit_timeout if phase is Phase.write else None
        result = session.run(command, phase=phase, timeout=timeout)
        if result.status != 0:
            reason = _reason(result.stderr + "\n" + result.stdout)
            raise ConfigRejected(session.name, f"{what}: exit status {result.status}: {reason}")
        return result.stdout

    def _running(self, session: ExecSession) -> dict[str, Any]:
        output = self._shell(session, "show runningconfiguration all", "read config_db")
        try:
            data = json.loads(output)
        except ValueError:
            raise ConfigRejected(session.name, "config_db: the answer is not JSON") from None
        if not isinstance(data, dict):
            raise ConfigRejected(session.name, "config_db: not a JSON object")
        return data

    def _read(self, session: ExecSession) -> tuple[dict[str, Scalar], dict[str, Any]]:
        version = self._shell(session, "show version", "show version")
        data = self._running(session)
        try:
            return observed_state(version, data), data
        except PARSE_ERRORS as exc:
            raise ConfigRejected(
                session.name, f"cannot parse the switch's answer ({exc!r})"
            ) from None

    def observe(self, device: DeviceRef) -> dict[str, Scalar]:
        with self.exec.session(device) as session:
            state = self._read(session)[0]
            state.update(self._lldp(session))
        return dict(sorted(state.items()))

    @staticmethod
    def _lldp(session: ExecSession) -> dict[str, Scalar]:
        """LLDP neighbours; a switch without the LLDP container (or answer) has none."""
        result = session.run(LLDP)
        if result.status != 0:
            return {}
        try:
            return parse_sonic_lldp(json.loads(result.stdout))
        except PARSE_ERRORS:
            return {}

    def stage(self, device: DeviceRef, changes: Sequence[Change]) -> SonicCandidate:
        values = SafeValues(device.name)
        settings = [values.setting(c.path, c.after) for c in changes]
        ident = values.object_name(f"plumb-{uuid.uuid4().hex[:8]}", "patch")
        nos = next((str(s.value) for s in settings if s.kind == "nos_version"), None)
        image = None
        if nos is not None:
            if not self.options.image:
                raise ConfigRejected(device.name, "system/nos_version: set the driver option image")
            url = self.options.image.replace("{version}", nos)
            image = values.image(url, "system/nos_version", IMAGE_URL)
        with self.exec.session(device) as session:
            before, data = self._read(session)
            headroom = any(s.kind == "pfc_headroom_kb" for s in settings)
            lookup = self._lookup(session, before, data) if headroom else None
            try:
                patches = patch_steps(device.name, data, before, settings, lookup)
            except PARSE_ERRORS as exc:
                raise ConfigRejected(device.name, f"cannot edit config_db ({exc!r})") from None
            candidate = SonicCandidate(
                device.name, ident, tuple(changes), before, patches, image, nos
            )
            for patch, file in zip(patches, candidate.files, strict=True):
                payload = base64.b64encode(json.dumps(patch).encode()).decode()
                self._shell(session, f"echo {payload} | base64 -d > {file}", "write patch file")
        return candidate

    @staticmethod
    def _lookup(
        session: ExecSession, before: dict[str, Scalar], data: dict[str, Any]
    ) -> dict[str, str | None]:
        """The HwSKU's ``pg_profile_lookup.ini`` (what the platform computes per speed
        and cable) per namespace (``asicN`` reads ``<hwsku>/N/``), None where unreadable."""
        platform, hwsku = str(before.get("system/platform")), str(before.get("system/model"))
        if not (_DIRECTORY.match(platform) and _DIRECTORY.match(hwsku)):
            return {}
        found: dict[str, str | None] = {}
        for space in namespaces(data):
            where = lookup_path(platform, hwsku, space.removeprefix("asic") or None)
            result = session.run(f"cat {where}") if space != "localhost" else None
            found[space] = result.stdout if result is not None and result.status == 0 else None
        return found

    def _candidate(self, device: DeviceRef, candidate: object) -> SonicCandidate:
        return checked_candidate(device, candidate, SonicCandidate, "a SONiC")

    def compare(self, device: DeviceRef, candidate: object) -> list[Change]:
        staged = self._candidate(device, candidate)
        changes: list[Change] = []
        if staged.patches:
            with self.exec.session(device) as session:
                # a dry run checks a patch against the running config: only the first
                # patch can be; a re-add that follows a removal is checked when applied
                dry = f"sudo {CONFIG} apply-patch --dry-run {staged.files[0]}"
                self._shell(session, dry, "apply-patch --dry-run")
                data = self._running(session)
            try:
                now = parse_running(data)
                for patch in staged.patches:
                    data = apply_json_patch(data, patch)
                after = parse_running(data)
            except PARSE_ERRORS as exc:
                raise ConfigRejected(
                    device.name, f"compare: patch does not apply ({exc!r})"
                ) from None
            paths = sorted(set(now) | set(after))
            changes += [
                Change(p, now.get(p), after.get(p)) for p in paths if now.get(p) != after.get(p)
            ]
        if staged.nos_version is not None:
            was = staged.before.get("system/nos_version")
            changes.append(Change("system/nos_version", was, staged.nos_version))
        return changes

    def commit(self, device: DeviceRef, candidate: object, confirm_within: float | None) -> None:
        staged = self._candidate(device, candidate)
        timed = confirm_within is not None and staged.nos_version is None and bool(staged.patches)
        with self.exec.session(device) as session:
            if staged.patches:
                self._apply(session, staged, confirm_within if timed else None)
            if staged.nos_version is None or staged.image is None:
                return
            install = f"sudo sonic-installer install -y {staged.image}"
            self._shell(session, install, "install", Phase.write)
            self._shell(session, f"sudo {CONFIG} save -y", "save", Phase.write)
            session.start_and_leave("sudo reboot")
        self.wait_for_version(device, staged.nos_version)

    def _apply(self, session: ExecSession, staged: SonicCandidate, window: float | None) -> None:
        self._shell(session, f"sudo {CONFIG} checkpoint {staged.ident}", "checkpoint")
        if window is not None:
            seconds = max(1, math.ceil(window))
            staged.timed = True
            self.remember(staged.device, staged)
            arm = (
                f"sudo systemd-run --unit={staged.timer} --on-active={seconds} "
                f"{CONFIG} rollback {staged.ident}"
            )
            self._shell(session, arm, "arm the rollback timer", Phase.write)
        try:
            for file in staged.files:
                self._shell(
                    session, f"sudo {CONFIG} apply-patch {file}", "apply-patch", Phase.write
                )
        except ConfigRejected:
            self._undo(session, staged)
            raise
        if window is None:
            self._finish(session, staged)

    def _undo(self, session: ExecSession, staged: SonicCandidate) -> None:
        """After a refused apply: back to the checkpoint, timer stopped."""
        session.run(f"sudo {CONFIG} rollback {staged.ident}", phase=Phase.write)
        if staged.timed:
            session.run(f"sudo systemctl stop {staged.timer}.timer", phase=Phase.write)
            self.remember(staged.device, None)
        session.run(f"sudo {CONFIG} delete-checkpoint {staged.ident}")

    def _finish(self, session: ExecSession, staged: SonicCandidate) -> None:
        """Keep the change: save it, then drop the checkpoint and the patch files."""
        if self.options.persist:
            self._shell(session, f"sudo {CONFIG} save -y", "save", Phase.write)
        session.run(f"sudo {CONFIG} delete-checkpoint {staged.ident}")
        session.run("rm -f " + " ".join(staged.files))

    def confirm(self, device: DeviceRef, candidate: object) -> None:
        staged = candidate if isinstance(candidate, SonicCandidate) else self.awaiting(device.name)
        if not isinstance(staged, SonicCandidate):
            raise ConfigRejected(device.name, "confirm: no commit of this process awaits it")
        if not staged.timed:
            return  # committed without a timer: nothing awaits confirmation
        with self.exec.session(device) as session:
            stop = f"sudo systemctl stop {staged.timer}.timer"
            try:
                self._shell(session, stop, "confirm", Phase.write)
            except ConfigRejected as exc:
                raise ConfigRejected(
                    device.name, f"{exc.detail} (the rollback timer already fired)"
                ) from None
            self._finish(session, staged)
        self.remember(device.name, None)

    def discard(self, device: DeviceRef, candidate: object) -> None:
        """Remove the patch files; best effort, as it may run after any failure."""
        if not isinstance(candidate, SonicCandidate) or candidate.discarded:
            return
        candidate.discarded = True
        if not candidate.patches:
            return
        try:
            with self.exec.session(device) as session:
                session.run("rm -f " + " ".join(candidate.files))
        except DeviceError:
            pass  # a stray /tmp file is harmless and gone at the next reboot

    def close(self) -> None:
        self.exec.close()
        super().close()
