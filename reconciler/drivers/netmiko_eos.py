"""The Arista EOS driver: netmiko ``arista_eos`` over SSH, configuration sessions and
commit timers.

=========  =============================================================================
observe    ``show version | json``, ``show interfaces | json``,
           ``show running-config | json`` -> flat state (:mod:`.eos_parse`)
stage      read the before-state (kept as ``candidate.before``), abort leftover
           ``plumb-*`` sessions, then ``configure session plumb-<uuid8>`` and the
           rendered lines (:mod:`.eos_lines`, values through :mod:`.safevalues`),
           pasted at once; one ``% `` answer refuses the whole candidate
compare    ``show running-config`` + ``show session-config named NAME diffs``: the diff
           applied to the running text and parsed back into changes
commit     ``configure session NAME`` then ``commit timer HH:MM:SS`` with
           ``confirm_within`` (the switch restores the old config by itself unless
           confirmed), else ``commit`` + ``write memory``
confirm    ``configure session NAME commit`` + ``write memory``
discard    ``configure session NAME abort``
=========  =============================================================================

A NOS version change is not part of a session: at commit the driver sets
``boot system <image>`` (option ``image``, default ``flash:EOS-{version}.swi``),
saves, sends ``reload now`` and waits (``reload_timeout``) until the switch answers
on the new version. A reload ends any commit timer, so such a commit is never timed.
"""

from __future__ import annotations

import json
import math
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from reconciler.drivers.base import DeviceRef
from reconciler.drivers.eos_lines import eos_image, render_session
from reconciler.drivers.eos_parse import (
    apply_unified_diff,
    diff_paths,
    observed_state,
    parse_config,
    text_tree,
)
from reconciler.drivers.netmiko_common import DeviceSession, Dialect, Phase, SwitchDriver
from reconciler.drivers.safevalues import EOS_IMAGE, SafeValues
from reconciler.drivers.switch_access import Credentials, SwitchOptions
from reconciler.errors import ConfigRejected, DeviceError
from reconciler.settings import Change, Scalar

EOS = Dialect("arista_eos", r"(?:\([^)\n]*\))?[>#]\s*$", enable=True)
DEFAULT_IMAGE = "flash:EOS-{version}.swi"
MAX_TIMER = 24 * 3600 - 1


@dataclass
class EosCandidate:
    """A staged configuration session and the before-state read just before it."""

    device: str
    session: str
    changes: tuple[Change, ...]
    before: dict[str, Scalar] = field(repr=False)
    lines: tuple[str, ...]
    image: str | None = None
    nos_version: str | None = None
    timed: bool = False
    discarded: bool = False


def commit_timer(seconds: float) -> str:
    """``HH:MM:SS`` for EOS's ``commit timer`` (rounded up to whole seconds)."""
    total = math.ceil(seconds)
    if not 1 <= total <= MAX_TIMER:
        raise ValueError(f"confirm_within {seconds} s is outside 1 s .. 24 h")
    return f"{total // 3600:02d}:{total % 3600 // 60:02d}:{total % 60:02d}"


class EosDriver(SwitchDriver):
    """Arista EOS switches through configuration sessions."""

    name = "eos"

    def __init__(self, options: SwitchOptions, credentials: Credentials) -> None:
        super().__init__(EOS, options, credentials)
        self.image_template = options.image or DEFAULT_IMAGE

    def _json(self, session: DeviceSession, command: str) -> Any:
        output = session.run(command)
        try:
            return json.loads(output)
        except ValueError:
            session.refused(output, command)
            raise ConfigRejected(session.name, f"{command}: the answer is not JSON") from None

    def _read(self, session: DeviceSession) -> dict[str, Scalar]:
        return observed_state(
            self._json(session, "show version | json"),
            self._json(session, "show interfaces | json"),
            self._json(session, "show running-config | json"),
        )

    def _sessions(self, session: DeviceSession, state: str) -> list[str]:
        found = self._json(session, "show configuration sessions | json").get("sessions", {})
        return sorted(n for n, s in found.items() if n.startswith("plumb-") and s["state"] == state)

    def observe(self, device: DeviceRef) -> dict[str, Scalar]:
        with self.pool.session(device) as session:
            return self._read(session)

    def stage(self, device: DeviceRef, changes: Sequence[Change]) -> EosCandidate:
        values = SafeValues(device.name)
        settings = [values.setting(c.path, c.after) for c in changes]
        name = values.object_name(f"plumb-{uuid.uuid4().hex[:8]}", "session")
        nos = next((str(s.value) for s in settings if s.kind == "nos_version"), None)
        image = None
        if nos is not None:
            image = values.image(
                eos_image(self.image_template, nos), "system/nos_version", EOS_IMAGE
            )
        with self.pool.session(device) as session:
            before = self._read(session)
            ports = [
                p.split("/")[1]
                for p in before
                if p.startswith("interfaces/") and p.endswith("/mtu")
            ]
            lines = render_session(device.name, before, ports, settings)
            candidate = EosCandidate(
                device.name, name, tuple(changes), before, tuple(lines), image, nos
            )
            for stale in self._sessions(session, "pending"):
                session.run(f"configure session {stale} abort")
            if not lines:
                return candidate
            error: DeviceError | None = None
            try:
                self._paste(session, name, lines)
            except DeviceError as exc:
                session.spent = True  # may be left in configuration mode
                error = exc
        if error is not None:
            candidate.discarded = True
            self._abort(device, name)
            raise error
        return candidate

    def _paste(self, session: DeviceSession, name: str, lines: Sequence[str]) -> None:
        """Enter session ``name``, paste the lines, leave; any ``% `` answer refuses."""
        session.refused(session.run(f"configure session {name}"), "stage")
        in_session = rf"{session.base}\(config-s-{name}[^)\n]*\)#"
        output = session.paste(lines, in_session)
        session.refused(output, "stage", pasted=True)
        session.run("end")

    def _candidate(self, device: DeviceRef, candidate: object) -> EosCandidate:
        return self.checked(device, candidate, EosCandidate, "an EOS")

    def compare(self, device: DeviceRef, candidate: object) -> list[Change]:
        staged = self._candidate(device, candidate)
        changes: list[Change] = []
        if staged.lines:
            with self.pool.session(device) as session:
                running = session.run("show running-config")
                diff = session.run(f"show session-config named {staged.session} diffs")
                session.refused(diff, "compare")
            try:
                proposed = apply_unified_diff(running, diff)
            except ValueError as exc:
                raise ConfigRejected(device.name, f"compare: {exc}") from None
            now = parse_config(text_tree(running))
            for path, value in diff_paths(now, parse_config(text_tree(proposed))).items():
                changes.append(Change(path, now.get(path), value))
        if staged.nos_version is not None:
            was = staged.before.get("system/nos_version")
            changes.append(Change("system/nos_version", was, staged.nos_version))
        return changes

    def commit(self, device: DeviceRef, candidate: object, confirm_within: float | None) -> None:
        staged = self._candidate(device, candidate)
        timed = confirm_within is not None and staged.nos_version is None
        try:
            timer = commit_timer(confirm_within) if timed and confirm_within else ""
        except ValueError as exc:
            raise ConfigRejected(device.name, f"commit: {exc}") from None
        with self.pool.session(device) as session:
            if staged.lines:
                session.refused(session.run(f"configure session {staged.session}"), "commit")
                if timed:
                    staged.timed = True
                    self.remember(device.name, staged)
                command = f"commit timer {timer}" if timed else "commit"
                timeout = self.options.commit_timeout
                session.refused(session.run(command, phase=Phase.write, timeout=timeout), "commit")
                if not timed and self.options.persist:
                    session.run("write memory", phase=Phase.write)
            if staged.nos_version is None or staged.image is None:
                return
            session.configure([f"boot system {staged.image}"], "configure terminal", Phase.write)
            session.refused(session.run("write memory", phase=Phase.write), "save")
            session.send_and_leave("reload now")
        self.wait_for_version(device, staged.nos_version)

    def confirm(self, device: DeviceRef, candidate: object) -> None:
        staged = candidate if isinstance(candidate, EosCandidate) else self.awaiting(device.name)
        if isinstance(staged, EosCandidate) and not staged.timed:
            return  # committed without a timer: nothing awaits confirmation
        with self.pool.session(device) as session:
            if isinstance(staged, EosCandidate):
                names = [staged.session]
            else:
                names = self._sessions(session, "pendingCommitTimer")
            if not names:
                raise ConfigRejected(device.name, "confirm: no commit is awaiting confirmation")
            for name in names:
                answer = session.run(f"configure session {name} commit", phase=Phase.write)
                session.refused(answer, "confirm (the commit timer may have expired)")
            if self.options.persist:
                session.run("write memory", phase=Phase.write)
        self.remember(device.name, None)

    def _abort(self, device: DeviceRef, name: str) -> None:
        try:
            with self.pool.session(device) as session:
                session.run(f"configure session {name} abort")
        except DeviceError:
            pass  # a session left pending is aborted by the next stage

    def discard(self, device: DeviceRef, candidate: object) -> None:
        """Abort the session; best effort, as it may run after any failure."""
        if not isinstance(candidate, EosCandidate) or candidate.discarded:
            return
        candidate.discarded = True
        if candidate.lines:
            self._abort(device, candidate.session)
