"""The SONiC driver: netmiko ``linux`` to the switch's shell, config_db JSON patches,
checkpoints and a systemd timer as commit-confirm.

=========  =============================================================================
observe    ``show version`` + ``show runningconfiguration all`` (config_db JSON)
           -> flat state (:mod:`.sonic_parse`)
stage      read the before-state (kept as ``candidate.before``), build the JSON patch
           (:mod:`.sonic_patch`), write it with
           ``echo BASE64 | base64 -d > /tmp/plumb-<id>.json``
compare    ``sudo config apply-patch --dry-run FILE``, then a fresh read with the patch
           applied locally and parsed back into changes
commit     ``sudo config checkpoint plumb-<id>``; with ``confirm_within`` first
           ``sudo systemd-run --unit=plumb-confirm-<id> --on-active=SECONDS
           /usr/local/bin/config rollback plumb-<id>`` (armed *before* the patch, so a
           vanished controller is rolled back), then ``sudo config apply-patch FILE``
confirm    ``sudo systemctl stop plumb-confirm-<id>.timer`` + ``sudo config save -y``
discard    ``rm -f FILE``
=========  =============================================================================

Every command is followed by ``echo $?``; a non-zero status is ConfigRejected (a
failed apply-patch is first rolled back to the checkpoint). Once saved, the
checkpoint and the patch file are deleted (SONiC keeps few checkpoints). A NOS
change runs ``sudo sonic-installer install -y <image>`` (option ``image``, a URL
with ``{version}``), saves, reboots and waits for the new version.
"""

from __future__ import annotations

import base64
import json
import math
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from reconciler.drivers.base import DeviceRef
from reconciler.drivers.netmiko_common import DeviceSession, Dialect, Phase, SwitchDriver
from reconciler.drivers.safevalues import IMAGE_URL, SafeValues
from reconciler.drivers.sonic_parse import observed_state, parse_config_db
from reconciler.drivers.sonic_patch import apply_json_patch, edit_config_db, json_patch
from reconciler.drivers.switch_access import Credentials, SwitchOptions
from reconciler.errors import ConfigRejected, DeviceError
from reconciler.settings import Change, Scalar

SONIC = Dialect("linux", r"[^\n]*[$#]\s*$", enable=False)
CONFIG = "/usr/local/bin/config"


@dataclass
class SonicCandidate:
    """A patch file on the switch and the before-state read just before writing it."""

    device: str
    ident: str
    changes: tuple[Change, ...]
    before: dict[str, Scalar] = field(repr=False)
    patch: list[dict[str, Any]] = field(repr=False)
    image: str | None = None
    nos_version: str | None = None
    timed: bool = False
    discarded: bool = False

    @property
    def file(self) -> str:
        return f"/tmp/{self.ident}.json"

    @property
    def timer(self) -> str:
        return self.ident.replace("plumb-", "plumb-confirm-")


class SonicDriver(SwitchDriver):
    """SONiC switches through config_db patches."""

    name = "sonic"

    def __init__(self, options: SwitchOptions, credentials: Credentials) -> None:
        super().__init__(SONIC, options, credentials)

    def _shell(
        self, session: DeviceSession, command: str, what: str, phase: Phase = Phase.read
    ) -> str:
        """Run ``command``, then ``echo $?``; a non-zero status is ConfigRejected."""
        timeout = self.options.commit_timeout if phase is Phase.write else None
        output = session.run(command, phase=phase, timeout=timeout)
        status = session.run("echo $?", phase=phase).strip()
        if status != "0":
            tail = " | ".join(output.strip().splitlines()[-2:])[:200]
            raise ConfigRejected(session.name, f"{what}: exit status {status[:8]}: {tail}")
        return output

    def _config_db(self, session: DeviceSession) -> dict[str, Any]:
        output = self._shell(session, "show runningconfiguration all", "read config_db")
        try:
            data = json.loads(output)
        except ValueError:
            raise ConfigRejected(session.name, "config_db: the answer is not JSON") from None
        if not isinstance(data, dict):
            raise ConfigRejected(session.name, "config_db: not a JSON object")
        return data

    def _read(self, session: DeviceSession) -> tuple[dict[str, Scalar], dict[str, Any]]:
        version = self._shell(session, "show version", "show version")
        db = self._config_db(session)
        try:
            return observed_state(version, db), db
        except (ValueError, KeyError, TypeError) as exc:
            raise ConfigRejected(session.name, f"config_db: cannot parse ({exc})") from None

    def observe(self, device: DeviceRef) -> dict[str, Scalar]:
        with self.pool.session(device) as session:
            return self._read(session)[0]

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
        with self.pool.session(device) as session:
            before, db = self._read(session)
            patch = json_patch(db, edit_config_db(device.name, db, before, settings))
            candidate = SonicCandidate(
                device.name, ident, tuple(changes), before, patch, image, nos
            )
            if patch:
                payload = base64.b64encode(json.dumps(patch).encode()).decode()
                command = f"echo {payload} | base64 -d > {candidate.file}"
                self._shell(session, command, "write patch file")
        return candidate

    def _candidate(self, device: DeviceRef, candidate: object) -> SonicCandidate:
        return self.checked(device, candidate, SonicCandidate, "a SONiC")

    def compare(self, device: DeviceRef, candidate: object) -> list[Change]:
        staged = self._candidate(device, candidate)
        changes: list[Change] = []
        if staged.patch:
            with self.pool.session(device) as session:
                dry = f"sudo {CONFIG} apply-patch --dry-run {staged.file}"
                self._shell(session, dry, "apply-patch --dry-run")
                db = self._config_db(session)
            try:
                now = parse_config_db(db)
                after = parse_config_db(apply_json_patch(db, staged.patch))
            except (ValueError, KeyError, TypeError) as exc:
                raise ConfigRejected(
                    device.name, f"compare: patch does not apply ({exc})"
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
        timed = confirm_within is not None and staged.nos_version is None and bool(staged.patch)
        with self.pool.session(device) as session:
            if staged.patch:
                self._apply(session, staged, confirm_within if timed else None)
            if staged.nos_version is None or staged.image is None:
                return
            install = f"sudo sonic-installer install -y {staged.image}"
            self._shell(session, install, "install", Phase.write)
            self._shell(session, f"sudo {CONFIG} save -y", "save", Phase.write)
            session.send_and_leave("sudo reboot")
        self.wait_for_version(device, staged.nos_version)

    def _apply(self, session: DeviceSession, staged: SonicCandidate, window: float | None) -> None:
        checkpoint = f"sudo {CONFIG} checkpoint {staged.ident}"
        self._shell(session, checkpoint, "checkpoint")
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
            apply = f"sudo {CONFIG} apply-patch {staged.file}"
            self._shell(session, apply, "apply-patch", Phase.write)
        except ConfigRejected:
            self._undo(session, staged)
            raise
        if window is None:
            self._finish(session, staged)

    def _undo(self, session: DeviceSession, staged: SonicCandidate) -> None:
        """After a refused apply: back to the checkpoint, timer stopped."""
        session.run(f"sudo {CONFIG} rollback {staged.ident}", phase=Phase.write)
        if staged.timed:
            session.run(f"sudo systemctl stop {staged.timer}.timer", phase=Phase.write)
            self.remember(staged.device, None)
        session.run(f"sudo {CONFIG} delete-checkpoint {staged.ident}")

    def _finish(self, session: DeviceSession, staged: SonicCandidate) -> None:
        """Keep the change: save it, then drop the checkpoint and the patch file."""
        if self.options.persist:
            self._shell(session, f"sudo {CONFIG} save -y", "save", Phase.write)
        session.run(f"sudo {CONFIG} delete-checkpoint {staged.ident}")
        session.run(f"rm -f {staged.file}")

    def confirm(self, device: DeviceRef, candidate: object) -> None:
        staged = candidate if isinstance(candidate, SonicCandidate) else self.awaiting(device.name)
        if not isinstance(staged, SonicCandidate):
            raise ConfigRejected(device.name, "confirm: no commit of this process awaits it")
        if not staged.timed:
            return  # committed without a timer: nothing awaits confirmation
        with self.pool.session(device) as session:
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
        """Remove the patch file; best effort, as it may run after any failure."""
        if not isinstance(candidate, SonicCandidate) or candidate.discarded:
            return
        candidate.discarded = True
        if not candidate.patch:
            return
        try:
            with self.pool.session(device) as session:
                session.run(f"rm -f {candidate.file}")
        except DeviceError:
            pass  # a stray /tmp file is harmless and gone at the next reboot
