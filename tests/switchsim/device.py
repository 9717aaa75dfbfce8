"""What every simulated device shares: identity, faults, write counter and persistence.

A device's whole record (running and startup configuration, counters and any
unconfirmed change) is one JSON file, ``<state_dir>/<name>.json``, rewritten
atomically after every change, so a restarted simulator resumes where the
last one stopped.  A device that was never changed has no file yet: it
starts from its spec's initial state, which is the same thing.  An
unconfirmed change (EOS commit timer, SONiC rollback timer) does not survive
a restart: it is rolled back on load, as its timer can no longer fire.

Dialect subclasses (`EosDevice`, `SonicDevice`) hold the configuration; all
their methods run on the simulator's event-loop thread.
"""

from __future__ import annotations

import abc
import hashlib
import json
import logging
import os
import time
from pathlib import Path
from typing import Any

from .model import DeviceFacts, SwitchState
from .spec import DeviceSpec, Fault

log = logging.getLogger("switchsim")
RECORD_FORMAT = 1


def write_json_atomic(path: Path, data: dict[str, Any]) -> None:
    """Write `data` to `path` so that readers never see a partial file."""
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(data, sort_keys=True, separators=(",", ":")))
    os.replace(tmp, path)


def read_record(path: Path, dialect: str) -> dict[str, Any] | None:
    """The saved record at `path`, or None if there is none."""
    if not path.exists():
        return None
    data: dict[str, Any] = json.loads(path.read_text())
    if data.get("format") != RECORD_FORMAT or data.get("dialect") != dialect:
        raise ValueError(f"{path}: not a {dialect} device record of format {RECORD_FORMAT}")
    return data


class Device(abc.ABC):
    """A simulated switch, independent of how it is reached."""

    dialect: str = ""

    def __init__(self, spec: DeviceSpec, path: Path, write_count: int) -> None:
        self.spec = spec
        self.path = path
        self.fault = Fault()
        self.write_count = write_count
        self.boot_time = time.time()
        digest = hashlib.sha256(spec.name.encode()).hexdigest()
        self._serial = "SSJ" + digest[:8].upper()
        self._mac = "00:1c:73:" + ":".join(digest[i : i + 2] for i in range(8, 14, 2))

    @property
    def name(self) -> str:
        """The device name from its spec."""
        return self.spec.name

    def facts(self) -> DeviceFacts:
        """Identity values for show commands."""
        return DeviceFacts(
            serial=self._serial, mac=self._mac, boot_time=self.boot_time, now=time.time()
        )

    def save(self) -> None:
        """Persist the whole record."""
        record = self.record()
        record.update(
            format=RECORD_FORMAT, name=self.name, dialect=self.dialect, write_count=self.write_count
        )
        write_json_atomic(self.path, record)

    def note_write(self) -> None:
        """Count one write to running or startup configuration and persist."""
        self.write_count += 1
        self.save()

    @abc.abstractmethod
    def record(self) -> dict[str, Any]:
        """Dialect part of the persisted record."""

    @abc.abstractmethod
    def state_view(self) -> SwitchState:
        """The running state in the dialect-neutral model (a copy)."""

    @abc.abstractmethod
    def begin_reboot(self) -> None:
        """Forget everything volatile: sessions, timers, temporary files."""

    @abc.abstractmethod
    def finish_reboot(self) -> None:
        """Come back up: running = startup, version = boot image's version."""

    @abc.abstractmethod
    def cancel_timers(self) -> None:
        """Cancel pending timers without acting on them (simulator shutdown)."""
