"""An EOS switch: running and startup `EosConfig`, named configuration sessions.

Sessions follow EOS: ``configure session NAME`` copies running config into
the session; ``commit`` replaces running config with it; ``commit timer
HH:MM:SS`` does the same but restores the pre-commit config when the timer
expires unless ``configure session NAME commit`` confirms first.  A session
in which a line was refused cannot be committed (EOS rejects the whole
session).  At most `MAX_PENDING` uncommitted sessions exist at once, one
finished session is kept (`MAX_SAVED`) and only one commit timer may be
pending, as on EOS; the timer runs on the event loop's clock.

The record on disk holds the running and startup configuration as their
``show running-config`` text, which is read back through the grammar, and
the `SwitchState` view of running config for readers that want values.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .device import RECORD_FORMAT, Device, log, read_record, write_json_atomic
from .eos_config import Grammar
from .eos_model import EosConfig
from .eos_profiles import EosProfile, eos_profile
from .eos_render import running_config
from .eos_view import boot_config, config_from_state, parse_config, state_view
from .model import SwitchState, default_state, eos_version_of
from .replies import CliError
from .spec import DeviceSpec

MAX_PENDING = 5
MAX_SAVED = 1
PENDING = "pending"
PENDING_TIMER = "pendingCommitTimer"
COMPLETED = "completed"
ABORTED = "aborted"


@dataclass
class EosSession:
    """A named configuration session and its staged config."""

    name: str
    config: EosConfig
    status: str = PENDING
    errors: int = 0
    before: EosConfig | None = None
    timer: asyncio.TimerHandle | None = None
    completed_time: float | None = None
    commit_by: float | None = None
    finished_at: float = 0.0


class EosDevice(Device):
    """EOS running/startup configuration and sessions."""

    dialect = "eos"

    def __init__(self, spec: DeviceSpec, path: Path) -> None:
        record = read_record(path, self.dialect)
        super().__init__(
            spec, path, write_count=0 if record is None else int(record["write_count"])
        )
        self.profile: EosProfile = eos_profile(spec.profile)
        self.grammar = Grammar(queue_kinds=self.profile.queue_kinds)
        self.sessions: dict[str, EosSession] = {}
        if record is None:
            self.model, self.version, self.running = self._initial()
            self.startup = self.running.clone()
            return
        self.model, self.version = str(record["model"]), str(record["nos_version"])
        self.running = self._load(record["running_config"])
        self.startup = self._load(record["startup_config"])
        pending = record.get("pending_revert")
        if pending is not None:
            log.info(
                "%s: unconfirmed commit of session %s rolled back on load",
                self.name,
                pending["session"],
            )
            self.running = self._load(pending["before_config"])
            self.note_write()

    def _initial(self) -> tuple[str, str, EosConfig]:
        spec, profile = self.spec, self.profile
        if spec.initial is not None:
            state = spec.initial
            config = config_from_state(state, profile.queue_kinds[0])
            return state.model, state.nos_version, config
        if profile.initial_config is not None:
            config = parse_config(
                profile.initial_config.format(hostname=spec.name), profile.queue_kinds
            )
            config.boot_image = profile.boot_image
            return profile.model, profile.version, config
        state = default_state(spec.name, self.dialect)
        if profile.name:
            state.boot_image = profile.boot_image
            return profile.model, profile.version, config_from_state(state)
        return state.model, state.nos_version, config_from_state(state)

    def _load(self, text: str) -> EosConfig:
        """A saved configuration, booted as EOS boots one: a line the platform refuses
        is logged and skipped."""
        config, refused = boot_config(text, self.profile.queue_kinds)
        for line, reason in refused:
            log.warning("%s: configuration line %r refused on boot: %s", self.name, line, reason)
        return config

    def text(self, config: EosConfig) -> str:
        """``show running-config`` text of `config` on this device."""
        return running_config(config, self.model, self.version)

    def record(self) -> dict[str, Any]:
        timed = [
            s for s in self.sessions.values() if s.status == PENDING_TIMER and s.before is not None
        ]
        pending = None
        if timed and timed[0].before is not None:
            pending = {"session": timed[0].name, "before_config": self.text(timed[0].before)}
        return {
            "model": self.model,
            "nos_version": self.version,
            "running_config": self.text(self.running),
            "startup_config": self.text(self.startup),
            "running": self.state_view().to_dict(),
            "pending_revert": pending,
        }

    def state_view(self) -> SwitchState:
        return state_view(self.running, self.model, self.version)

    # -- writes ------------------------------------------------------------

    def replace_running(self, new: EosConfig) -> None:
        """Make `new` the running config (a boot image also goes to boot-config)."""
        new = new.clone()
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
        session = EosSession(name=name, config=self.running.clone())
        self.sessions[name] = session
        return session

    def commit(self, name: str) -> None:
        """Commit a pending session, or confirm one whose commit timer runs."""
        session = self._session(name)
        if session.status == PENDING_TIMER:
            self._finish(session, COMPLETED)
            self.save()
            return
        self._check_committable(session)
        self._finish(session, COMPLETED)
        self.replace_running(session.config)

    def commit_with_timer(self, name: str, seconds: float) -> None:
        """Commit now; restore the pre-commit config after `seconds` unless confirmed."""
        session = self._session(name)
        self._check_committable(session)
        others = [s.name for s in self.sessions.values() if s.status == PENDING_TIMER]
        if others:
            raise CliError(f"% Session {others[0]} already has a pending commit timer")
        session.before = self.running.clone()
        session.status = PENDING_TIMER
        session.completed_time = time.time()
        session.commit_by = session.completed_time + seconds
        session.timer = asyncio.get_running_loop().call_later(seconds, self._expire, name)
        self.replace_running(session.config)

    def abort(self, name: str) -> None:
        """Discard a pending session, or roll back a timed commit now."""
        session = self._session(name)
        if session.status == PENDING_TIMER:
            self._expire(name)
        elif session.status == PENDING:
            self._finish(session, ABORTED)
        else:
            raise CliError(f"% Session {name} is {session.status}")

    def _check_committable(self, session: EosSession) -> None:
        if session.status != PENDING:
            raise CliError(f"% Session {session.name} is {session.status}")
        if session.errors:
            raise CliError(
                f"% Cannot commit session {session.name}: "
                f"{session.errors} command(s) in it were rejected; abort it"
            )

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
        session.commit_by = None
        session.status = status
        session.finished_at = time.monotonic()
        if status == COMPLETED and session.completed_time is None:
            session.completed_time = time.time()
        finished = sorted(
            (s for s in self.sessions.values() if s.status in (COMPLETED, ABORTED)),
            key=lambda s: s.finished_at,
        )
        for old in finished[: max(0, len(finished) - MAX_SAVED)]:
            del self.sessions[old.name]

    def _session(self, name: str) -> EosSession:
        session = self.sessions.get(name)
        if session is None:
            raise CliError(f"% Session {name} does not exist")
        return session

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
        self.running = self.startup.clone()
        self.version = eos_version_of(self.startup.boot_image)
        self.save()


def write_boot_record(
    path: Path, name: str, config: str, model: str, version: str, boot_image: str
) -> None:
    """Make `path` the saved record of an EOS switch that boots `config` (a ``show
    running-config`` text, a real switch's or a test's) as running and startup
    configuration; `SwitchSim.add_device` then starts the device from it."""
    header = f"! boot system {boot_image}\n"
    write_json_atomic(
        path,
        {
            "format": RECORD_FORMAT,
            "name": name,
            "dialect": "eos",
            "write_count": 0,
            "model": model,
            "nos_version": version,
            "running_config": header + config,
            "startup_config": header + config,
            "pending_revert": None,
        },
    )
