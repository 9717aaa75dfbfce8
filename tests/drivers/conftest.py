"""Fixtures for the switch driver tests: one in-process simulator per module, fresh
devices per test, drivers built with known_hosts and credentials like the factory's."""

from __future__ import annotations

import itertools
import json
import secrets
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from reconciler.drivers.base import DeviceRef
from reconciler.drivers.netmiko_common import SwitchDriver
from reconciler.drivers.netmiko_eos import EosDriver
from reconciler.drivers.netmiko_sonic import SonicDriver
from reconciler.drivers.switch_access import Credentials, parse_options
from tests.switchsim import DeviceSpec, SwitchSim, SwitchState
from tests.switchsim_process import SimProcess, serve

_names = itertools.count(1)


class Switches:
    """Devices on the shared simulator, and drivers that reach them."""

    def __init__(self, sim: SwitchSim, tmp: Path) -> None:
        self.sim = sim
        self.tmp = tmp
        self.known_hosts = tmp / "known_hosts"
        self.known_hosts.touch()
        self.password = "sw-" + secrets.token_hex(12)
        self.drivers: list[SwitchDriver] = []

    def add(self, dialect: str, initial: SwitchState | None = None, **extra: Any) -> DeviceRef:
        """A fresh device (its host key trusted); ``extra`` goes to its DeviceSpec."""
        name = f"{dialect}-{next(_names)}"
        spec = DeviceSpec(
            name=name,
            dialect=dialect,
            username="plumb-ops",
            password=self.password,
            initial=None if initial is None else initial.clone(),
            reboot_seconds=extra.pop("reboot_seconds", 0.3),
            **extra,
        )
        port = self.sim.add_device(spec)
        with self.known_hosts.open("a") as file:
            file.write(self.sim.host_key_line(name) + "\n")
        return DeviceRef(name, dialect, "leaf", self.sim.host, port)

    def driver(self, dialect: str, password: str | None = None, **options: Any) -> Any:
        """An EOS or SONiC driver; options as a ``drivers:`` rule would give them."""
        settings = {"known_hosts": str(self.known_hosts), "reload_poll": "0.2"} | options
        credentials = Credentials("plumb-ops", password or self.password)
        made: SwitchDriver = (EosDriver if dialect == "eos" else SonicDriver)(
            parse_options(settings), credentials
        )
        self.drivers.append(made)
        return made

    def close(self) -> None:
        for made in self.drivers:
            made.close()


@pytest.fixture
def switches(sim: SwitchSim, tmp_path: Path) -> Iterator[Switches]:
    made = Switches(sim, tmp_path)
    yield made
    made.close()


# -- one end-to-end run of the plumb CLI against simulated ORION switches ---------------


@dataclass
class CliRun:
    """What ``plumb`` printed and returned for one command."""

    args: list[str]
    exit_code: int
    output: str


@dataclass
class FleetRun:
    """ORION with all 13 switches simulated (the selected ones drifted), after
    plan / apply / plan of the selection."""

    repo: Path
    outside: Path  # known_hosts, mgmt_map and session logs: outside the fleet repo
    password: str
    sim: SimProcess
    runs: dict[str, CliRun] = field(default_factory=dict)

    @property
    def state_dir(self) -> Path:
        return self.repo / ".plumb"


SWITCHES = "name=leaf-r0|leaf-r1|spine-1"  # one EOS leaf, one SONiC leaf, one spine


@pytest.fixture(scope="session")
def fleet_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FleetRun]:
    from typer.testing import CliRunner

    from plumb.cli import app
    from tests.conformance.switch_harness import (
        PASSWORD_ENV,
        USER_ENV,
        USERNAME,
        driver_rule,
        simulated_leaf,
    )
    from tests.fleetcopy import copy_orion

    tmp = tmp_path_factory.mktemp("e2e")
    copy = copy_orion(tmp)
    fleet = copy.load()
    password = "sw-" + secrets.token_hex(12)
    names = [n for n, d in fleet.devices.items() if d.platform.value in ("eos", "sonic")]
    outside = tmp / "outside"
    chosen = SWITCHES.removeprefix("name=").split("|")
    specs = [simulated_leaf(fleet, n, password, drift=n in chosen) for n in names]
    with serve(tmp / "sim", specs) as running:
        outside.mkdir()
        (outside / "known_hosts").write_text(running.known_hosts())
        (outside / "mgmt.json").write_text(json.dumps(running.mgmt_map()))
        logs = f"      session_log_dir: {outside / 'logs'}\n"
        rules = [driver_rule(d, d, outside, logs, commit_timeout=60) for d in ("eos", "sonic")]
        copy.set_drivers("drivers:\n" + "".join(rules))
        run = FleetRun(copy.path, outside, password, running)
        env = {USER_ENV: USERNAME, PASSWORD_ENV: password}
        commands = {
            "lab": ["lab", "init", str(copy.path)],
            "plan_json": ["plan", str(copy.path), "--select", SWITCHES, "--format", "json"],
            "apply": ["apply", str(copy.path), "--yes", "--select", SWITCHES],
            "plan_after": ["plan", str(copy.path), "--select", SWITCHES, "--detailed-exitcode"],
        }
        for key, args in commands.items():
            result = CliRunner().invoke(app, args, env=env)
            run.runs[key] = CliRun(args, result.exit_code, result.output)
        yield run
