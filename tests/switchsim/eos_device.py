"""An EOS switch: running and startup `SwitchState`, named configuration sessions.

Sessions follow EOS: ``configure session NAME`` copies running config into
the session; ``commit`` replaces running config with it; ``commit timer
HH:MM:SS`` does the same but restores the pre-commit config when the timer
expires unless ``configure session NAME commit`` confirms first.  At most
`MAX_PENDING` uncommitted sessions exist at once and only one commit timer
may be pending, as on EOS; the timer runs on the event loop's clock.
"""

from __future__ import annotations

import asyncio
import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .device import Device, log, read_record
from .model import SwitchState, default_state, eos_version_of
from .replies import CliError
from .spec import DeviceSpec

MAX_PENDING = 5
MAX_FINISHED = 8
PENDING = "pending"
PENDING_TIMER = "pendingCommitTimer"
COMPLETED = "completed"
ABORTED = "aborted"


@dataclass
class EosSession:
    """A named configuration session and its staged config."""

    name: str
    state: SwitchState
    status: str = PENDING
    before: SwitchState | None = None
    timer: asyncio.TimerHandle | None = None


class EosDevice(Device):
    """EOS running/startup configuration and sessions."""

    dialect = "eos"

    def __init__(self, spec: DeviceSpec, path: Path) -> None:
        record = read_record(path, self.dialect)
        super().__init__(
            spec, path, write_count=0 if record is None else int(record["write_count"])
        )
        self.sessions: dict[str, EosSession] = {}
        if record is None:
            initial = spec.initial or default_state(spec.name, self.dialect)
            self.running = initial.clone()
            self.startup = initial.clone()
            return
        self.running = SwitchState.from_dict(record["running"])
        self.startup = SwitchState.from_dict(record["startup"])
        pending = record.get("pending_revert")
        if pending is not None:
            log.info(
                "%s: unconfirmed commit of session %s rolled back on load",
                self.name,
                pending["session"],
            )
            self.running = SwitchState.from_dict(pending["before"])
            self.note_write()

    def record(self) -> dict[str, Any]:
        timed = [
            s for s in self.sessions.values() if s.status == PENDING_TIMER and s.before is not None
        ]
        pending = None
        if timed and timed[0].before is not None:
            pending = {"session": timed[0].name, "before": timed[0].before.to_dict()}
        return {
            "running": self.running.to_dict(),
            "startup": self.startup.to_dict(),
            "pending_revert": pending,
        }

    def state_view(self) -> SwitchState:
        return self.running.clone()

    # -- writes ------------------------------------------------------------

    def replace_running(self, new: SwitchState) -> None:
        """Make `new` the running config (boot image also goes to boot-config)."""
        new = new.clone()
        new.nos_version = self.running.nos_version
        if new.boot_image != self.running.boot_image:
            self.startup.boot_image = new.boot_image
        self.running = new
        self.note_write()

    def write_memory(self) -> None:
        """``copy running-config startup-config``."""
        self.startup = self.running.clone()
        self.note_write()

    # -- sessions ------------------------------------------------------------

    def open_session(self, name: str) -> EosSession:
        """Enter (or re-enter) session `name`."""
        session = self.sessions.get(name)
        if session is not None and session.status == PENDING:
            return session
        if session is not None and session.status == PENDING_TIMER:
            raise CliError(
                f"% Session {name} has a pending commit timer; confirm or abort it first"
            )
        if sum(s.status == PENDING for s in self.sessions.values()) >= MAX_PENDING:
            raise CliError("% Maximum number of pending sessions has been reached")
        self.sessions.pop(name, None)
        session = EosSession(name=name, state=self.running.clone())
        self.sessions[name] = session
        self._prune()
        return session

    def commit(self, name: str) -> None:
        """Commit a pending session, or confirm one whose commit timer runs."""
        session = self._session(name)
        if session.status == PENDING_TIMER:
            self._finish(session, COMPLETED)
            self.save()
            return
        if session.status != PENDING:
            raise CliError(f"% Session {name} is {session.status}")
        session.status = COMPLETED
        self.replace_running(session.state)

    def commit_with_timer(self, name: str, seconds: float) -> None:
        """Commit now; restore the pre-commit config after `seconds` unless confirmed."""
        session = self._session(name)
        if session.status != PENDING:
            raise CliError(f"% Session {name} is {session.status}")
        others = [s.name for s in self.sessions.values() if s.status == PENDING_TIMER]
        if others:
            raise CliError(f"% Session {others[0]} already has a pending commit timer")
        session.before = self.running.clone()
        session.status = PENDING_TIMER
        session.timer = asyncio.get_running_loop().call_later(seconds, self._expire, name)
        self.replace_running(session.state)

    def abort(self, name: str) -> None:
        """Discard a pending session, or roll back a timed commit now."""
        session = self._session(name)
        if session.status == PENDING_TIMER:
            self._expire(name)
        elif session.status == PENDING:
            self._finish(session, ABORTED)
        else:
            raise CliError(f"% Session {name} is {session.status}")

    def _expire(self, name: str) -> None:
        session = self.sessions.get(name)
        if session is None or session.status != PENDING_TIMER or session.before is None:
            return
        log.info(
            "%s: commit timer of session %s expired; restoring previous config", self.name, name
        )
        before = session.before
        self._finish(session, ABORTED)
        self.replace_running(before)

    def _finish(self, session: EosSession, status: str) -> None:
        if session.timer is not None:
            session.timer.cancel()
        session.timer = None
        session.before = None
        session.status = status

    def _session(self, name: str) -> EosSession:
        session = self.sessions.get(name)
        if session is None:
            raise CliError(f"% Session {name} does not exist")
        return session

    def _prune(self) -> None:
        finished = [n for n, s in self.sessions.items() if s.status in (COMPLETED, ABORTED)]
        for name in finished[: max(0, len(finished) - MAX_FINISHED)]:
            del self.sessions[name]

    # -- lifecycle -------------------------------------------------------------

    def cancel_timers(self) -> None:
        for session in self.sessions.values():
            if session.timer is not None:
                session.timer.cancel()

    def begin_reboot(self) -> None:
        self.cancel_timers()
        self.sessions.clear()
        self.save()

    def finish_reboot(self) -> None:
        running = self.startup.clone()
        running.nos_version = eos_version_of(self.startup.boot_image)
        self.startup = dataclasses.replace(self.startup, nos_version=running.nos_version)
        self.running = running
        self.save()
