"""The switch simulator in a process of its own (``python -m tests.switchsim serve``),
for end-to-end tests and benchmarks: the simulator's CPU then stays off the client's
interpreter, as a real fleet's would.

Device state is read back from the simulator's per-device record files, which it
rewrites atomically after every change.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.switchsim import DeviceSpec, SwitchState

ROOT = Path(__file__).resolve().parent.parent


def spec_entry(spec: DeviceSpec) -> dict[str, Any]:
    """A DeviceSpec as a device entry of the simulator's spec file."""
    entry: dict[str, Any] = {
        "name": spec.name,
        "dialect": spec.dialect,
        "username": spec.username,
        "password": spec.password,
        "reboot_seconds": spec.reboot_seconds,
    }
    if spec.initial is not None:
        entry["initial"] = spec.initial.to_dict()
    if spec.profile:
        entry["profile"] = spec.profile
    if spec.lldp:
        entry["lldp"] = [list(neighbour) for neighbour in spec.lldp]
    return entry


@dataclass
class SimProcess:
    """A running simulator process and what its ready file says."""

    process: subprocess.Popen[bytes]
    state_dir: Path
    host: str
    devices: dict[str, dict[str, Any]]

    def port(self, name: str) -> int:
        return int(self.devices[name]["port"])

    def known_hosts(self) -> str:
        return "".join(d["host_key_line"] + "\n" for d in self.devices.values())

    def mgmt_map(self) -> dict[str, dict[str, Any]]:
        return {n: {"host": self.host, "port": d["port"]} for n, d in self.devices.items()}

    def running(self, name: str) -> SwitchState:
        """The device's running state from its record (EOS devices only)."""
        record = json.loads((self.state_dir / f"{name}.json").read_text())
        return SwitchState.from_dict(record["running"])

    def record(self, name: str) -> dict[str, Any]:
        data: dict[str, Any] = json.loads((self.state_dir / f"{name}.json").read_text())
        return data

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


@contextmanager
def serve(
    workdir: Path,
    devices: Sequence[DeviceSpec] = (),
    generate: Sequence[dict[str, Any]] = (),
    timeout: float = 60.0,
) -> Iterator[SimProcess]:
    """Start the simulator on ``devices`` (and generated groups); stop it afterwards."""
    workdir.mkdir(parents=True, exist_ok=True)
    spec = workdir / "spec.json"
    fd = os.open(spec, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as file:
        json.dump({"devices": [spec_entry(d) for d in devices], "generate": list(generate)}, file)
    ready, state_dir = workdir / "ready.json", workdir / "state"
    log = (workdir / "sim.log").open("wb")
    command = [sys.executable, "-m", "tests.switchsim", "serve", "--spec", str(spec)]
    process = subprocess.Popen(
        [*command, "--state-dir", str(state_dir), "--ready-file", str(ready)],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=log,
    )
    running = SimProcess(process, state_dir, "127.0.0.1", {})
    deadline = time.monotonic() + timeout
    try:
        while not ready.exists():
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"simulator did not start: see {workdir / 'sim.log'}")
            time.sleep(0.05)
        info = json.loads(ready.read_text())
        running.host, running.devices = info["host"], info["devices"]
        yield running
    finally:
        running.stop()
        log.close()
