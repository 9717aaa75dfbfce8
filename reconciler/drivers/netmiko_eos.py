"""The Arista EOS driver: netmiko ``arista_eos`` over SSH, configuration sessions and
commit timers.

=========  =============================================================================
observe    ``show version | json``, ``show interfaces | json``,
           ``show running-config | json`` -> flat state (:mod:`.eos_parse`), with BGP
           ``show bgp neighbors vrf all | json revision 2`` (the route maps in force
           per neighbour, :mod:`.eos_bgp_parse`; a switch that refuses it has them
           inferred from config), and ``show lldp neighbors detail | json``
           (:mod:`.lldp_parse`; a switch that refuses it reports no neighbours)
stage      read the before-state and the config's structure (kept on the candidate),
           refuse paths EOS cannot express (:mod:`.eos_caps`), abort leftover
           ``plumb-*`` sessions, then ``configure session plumb-<uuid8>`` and the
           rendered lines (:mod:`.eos_lines`, values through :mod:`.safevalues`),
           pasted at once; one ``% `` answer refuses the whole candidate
compare    ``show running-config`` + ``show session-config named NAME`` (the whole
           candidate: newer EOS prints session diffs without ``@@`` hunks), both
           parsed, the writable paths that differ are the candidate's changes
commit     ``configure session NAME`` then ``commit timer HH:MM:SS`` with
           ``confirm_within`` (the switch restores the old config by itself unless
           confirmed), else ``commit`` + ``write memory``
confirm    ``configure session NAME commit`` + ``write memory``; after a restart the
           session comes from ``show configuration sessions detail | json``
           (``pendingCommitTimer`` before EOS 4.32, ``commitTimerSessionName`` after)
discard    ``configure session NAME abort``
=========  =============================================================================

A NOS version change is not part of a session: at commit the driver sets
``boot system <image>`` (option ``image``, default ``flash:EOS-{version}.swi``),
saves, sends ``reload now`` and waits (``reload_timeout``) until the switch answers
on the new version. A reload ends any commit timer, so such a commit is never timed.
Output plumb cannot read is :class:`~.eos_parse.UnexpectedOutput` for that device.
"""

from __future__ import annotations

import json
import math
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from reconciler.drivers.base import DeviceRef, checked_candidate
from reconciler.drivers.eos_bgp_parse import parse_bgp_peers
from reconciler.drivers.eos_caps import eos_inexpressible
from reconciler.drivers.eos_lines import eos_image, render_session
from reconciler.drivers.eos_parse import (
    EosConfig,
    UnexpectedOutput,
    config_state,
    diff_paths,
    observed_state,
    read_config,
    text_tree,
    timed_sessions,
    writable,
)
from reconciler.drivers.lldp_parse import parse_eos_lldp
from reconciler.drivers.netmiko_common import DeviceSession, Dialect, Phase, SwitchDriver
from reconciler.drivers.safevalues import EOS_IMAGE, SafeValues
from reconciler.drivers.switch_access import Credentials, SwitchOptions
from reconciler.errors import ConfigRejected, DeviceError
from reconciler.settings import Change, Scalar

EOS = Dialect("arista_eos", r"(?:\([^)\n]*\))?[>#]\s*$", enable=True)
DEFAULT_IMAGE = "flash:EOS-{version}.swi"
MAX_TIMER = 24 * 3600 - 1
POLICIES = "show bgp neighbors vrf all | json revision 2"


@dataclass
class EosCandidate:
    """A staged configuration session and the before-state read just before it."""

    device: str
    session: str
    changes: tuple[Change, ...]
    before: dict[str, Scalar] = field(repr=False)
    lines: tuple[str, ...]
    config: EosConfig = field(default_factory=EosConfig, repr=False)
    image: str | None = None
    nos_version: str | None = None
    timed: bool = False
    discarded: bool = False


@contextmanager
def unexpected(device: str, what: str) -> Iterator[None]:
    """Output of a shape the parsers do not know becomes that device's error."""
    try:
        yield
    except (KeyError, IndexError, TypeError, ValueError, AttributeError) as exc:
        detail = f"{type(exc).__name__}: {exc}"[:200]
        raise UnexpectedOutput(device, f"{what}: unexpected output ({detail})") from exc


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
            data = json.loads(output)
        except ValueError:
            session.refused(output, command)
            raise UnexpectedOutput(session.name, f"{command}: the answer is not JSON") from None
        if not isinstance(data, dict):
            raise UnexpectedOutput(session.name, f"{command}: the answer is not a JSON object")
        return data

    def _read(self, session: DeviceSession) -> tuple[dict[str, Scalar], EosConfig]:
        """The flat state and the parsed running config, read in one go."""
        version = self._json(session, "show version | json")
        interfaces = self._json(session, "show interfaces | json")
        running = self._json(session, "show running-config | json")
        with unexpected(session.name, "reading the device"):
            config = read_config(running)
        policies = self._policies(session) if config.bgp.asn is not None else None
        with unexpected(session.name, "reading the device"):
            return observed_state(version, interfaces, running, policies), config

    def _policies(self, session: DeviceSession) -> dict[str, tuple[str, str]] | None:
        """The route maps each BGP neighbour has in force, as the device reports them;
        None where the switch does not answer the command (inferred from config then)."""
        output = session.run(POLICIES)
        if output.lstrip().startswith("%"):
            return None
        try:
            data = json.loads(output)
        except ValueError:
            raise UnexpectedOutput(session.name, f"{POLICIES}: the answer is not JSON") from None
        with unexpected(session.name, POLICIES):
            return parse_bgp_peers(data)

    def _lldp(self, session: DeviceSession) -> dict[str, Scalar]:
        command = "show lldp neighbors detail | json"
        output = session.run(command)
        if output.lstrip().startswith("%"):
            return {}  # LLDP not running: no neighbours to report
        try:
            data = json.loads(output)
        except ValueError:
            raise UnexpectedOutput(session.name, f"{command}: the answer is not JSON") from None
        with unexpected(session.name, command):
            return parse_eos_lldp(data)

    def _sessions(self, session: DeviceSession, state: str) -> list[str]:
        found = self._json(session, "show configuration sessions | json").get("sessions", {})
        with unexpected(session.name, "show configuration sessions"):
            return sorted(
                n for n, s in found.items() if n.startswith("plumb-") and s["state"] == state
            )

    def _timed(self, session: DeviceSession) -> list[str]:
        data = self._json(session, "show configuration sessions detail | json")
        with unexpected(session.name, "show configuration sessions detail"):
            return [n for n in timed_sessions(data) if n.startswith("plumb-")]

    def observe(self, device: DeviceRef) -> dict[str, Scalar]:
        with self.pool.session(device) as session:
            state, _ = self._read(session)
            state.update(self._lldp(session))
        return dict(sorted(state.items()))

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
            before, config = self._read(session)
            for change in changes:
                reason = eos_inexpressible(change.path, before)
                if reason is not None:
                    raise ConfigRejected(device.name, f"{change.path}: {reason}")
            lines = render_session(device.name, before, config, settings)
            candidate = EosCandidate(
                device.name, name, tuple(changes), before, tuple(lines), config, image, nos
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
        return checked_candidate(device, candidate, EosCandidate, "an EOS")

    def compare(self, device: DeviceRef, candidate: object) -> list[Change]:
        staged = self._candidate(device, candidate)
        changes: list[Change] = []
        if staged.lines:
            with self.pool.session(device) as session:
                running = session.run("show running-config")
                session.refused(running, "compare")
                proposed = session.run(f"show session-config named {staged.session}")
                session.refused(proposed, "compare")
            with unexpected(device.name, "compare"):
                now = config_state(read_config(text_tree(running)))
                then = config_state(read_config(text_tree(proposed)))
            for path, value in diff_paths(now, then).items():
                if writable(path):
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
            names = [staged.session] if isinstance(staged, EosCandidate) else self._timed(session)
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
