"""Command line: serve a fleet of simulated switches until SIGTERM.

    python -m tests.switchsim serve --spec devices.json --state-dir DIR --ready-file F

The spec file is JSON: ``{"devices": [DEVICE, ...], "generate": [GROUP, ...]}``
(either key may be absent; a bare list means ``devices``).  A DEVICE has
``name``, ``dialect`` and optionally ``username``, ``password``, ``port``,
``reboot_seconds``, ``enable_secret`` and ``initial`` (a `SwitchState` dict).
A GROUP such as ``{"count": 1000, "prefix": "leaf-", "dialect": "eos",
"username": "admin", "password": "pw"}`` adds ``leaf-1`` ... ``leaf-1000``
with default state.

Once every device listens, the ready file is written atomically:
``{"pid": ..., "host": ..., "start_seconds": ..., "devices": {NAME:
{"port": ..., "dialect": ..., "host_key_line": ...}}}``.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any

from .device import write_json_atomic
from .model import SwitchState
from .sim import SwitchSim
from .spec import DeviceSpec


def load_specs(path: Path) -> list[DeviceSpec]:
    """Device specs from a spec file (see the module docstring)."""
    data: Any = json.loads(path.read_text())
    if isinstance(data, list):
        data = {"devices": data}
    specs = [_device(entry) for entry in data.get("devices", [])]
    for group in data.get("generate", []):
        common = {k: v for k, v in group.items() if k not in ("count", "prefix", "start")}
        start = int(group.get("start", 1))
        for index in range(start, start + int(group["count"])):
            specs.append(_device({**common, "name": f"{group['prefix']}{index}"}))
    return specs


def _device(entry: dict[str, Any]) -> DeviceSpec:
    initial = entry.get("initial")
    return DeviceSpec(
        name=entry["name"],
        dialect=entry["dialect"],
        username=entry.get("username", "admin"),
        password=entry.get("password", "admin"),
        initial=None if initial is None else SwitchState.from_dict(initial),
        enable_secret=entry.get("enable_secret"),
        port=int(entry.get("port", 0)),
        reboot_seconds=float(entry.get("reboot_seconds", 1.0)),
        profile=str(entry.get("profile", "")),
        lldp=tuple((str(p), str(n), str(r)) for p, n, r in entry.get("lldp", [])),
    )


def serve(spec_file: Path, state_dir: Path, ready_file: Path, host: str) -> int:
    """Run the simulator until SIGTERM or SIGINT."""
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    began = time.perf_counter()
    sim = SwitchSim(state_dir, host=host)
    specs = load_specs(spec_file)
    for spec in specs:
        sim.add_device(spec)
    sim.start()
    devices = {
        spec.name: {
            "port": sim.port(spec.name),
            "dialect": spec.dialect,
            "host_key_line": sim.host_key_line(spec.name),
        }
        for spec in specs
    }
    ready = {
        "pid": os.getpid(),
        "host": host,
        "start_seconds": round(time.perf_counter() - began, 3),
        "devices": devices,
    }
    write_json_atomic(ready_file, ready)
    logging.getLogger("switchsim").info("serving %d devices", len(specs))
    stop.wait()
    sim.stop()
    return 0


def main(argv: list[str] | None = None) -> int:
    """Parse arguments and run the chosen command."""
    parser = argparse.ArgumentParser(prog="python -m tests.switchsim")
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("serve", help="serve simulated switches until SIGTERM")
    run.add_argument("--spec", type=Path, required=True, help="device spec JSON file")
    run.add_argument("--state-dir", type=Path, required=True, help="directory for per-device state")
    run.add_argument(
        "--ready-file", type=Path, required=True, help="written once every device listens"
    )
    run.add_argument("--host", default="127.0.0.1", help="loopback address to listen on")
    run.add_argument("--log-level", default="WARNING", help="logging level (default WARNING)")
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=args.log_level.upper(), format="%(asctime)s %(name)s %(levelname)s %(message)s"
    )
    return serve(args.spec, args.state_dir, args.ready_file, args.host)


if __name__ == "__main__":
    sys.exit(main())
