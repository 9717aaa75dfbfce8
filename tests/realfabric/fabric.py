"""A real-network lab for tests: the generated 4-node fleet (8 leaves, 4 spines, one
frontend switch, 4 GPU nodes) brought up once per test process with
:func:`lab.realfabric.build.bring_up`, torn down and its directory deleted at exit.
Where it cannot be built the tests skip with the reason, except under ``CI=true``,
where they fail."""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from typer.testing import CliRunner

from benchmarks.genfleet import generate_fleet
from intent.fleet import Fleet, load_fleet
from lab.realfabric.build import bring_up, missing_prerequisites, tear_down
from lab.realfabric.layout import expected_peers
from lab.realfabric.probes import wait_for_bgp
from lab.realfabric.state import FabricState, load_state
from plumb.app import app
from reconciler.drivers.base import DeviceRef


@dataclass
class Fabric:
    fleet: Fleet
    state_dir: Path
    state: FabricState

    def ref(self, name: str) -> DeviceRef:
        device = self.fleet.devices[name]
        return DeviceRef(name, device.platform.value, device.role.value, host="")


_SHARED: list[Fabric] = []


def require_real_lab() -> None:
    """Skip (fail under CI=true) where the real-network lab cannot be built."""
    reason = missing_prerequisites()
    if reason is None:
        return
    if os.environ.get("CI") == "true":
        pytest.fail(f"real-network lab unavailable under CI: {reason}")
    pytest.skip(reason)


def build_fabric(root: Path, nodes: int = 4) -> Fabric:
    """A generated fleet under ``root`` (``nodes`` 0: the fleet already there) with its
    real-network lab up and BGP converged."""
    if nodes:
        generate_fleet(root, nodes)
    fleet = load_fleet(root)
    state_dir = root / fleet.config.state_dir
    bring_up(fleet, state_dir)
    state = load_state(state_dir)
    assert state is not None
    bgp = wait_for_bgp(state, expected_peers(fleet), timeout=90)
    assert bgp.converged, {d.device: sorted(d.missing) for d in bgp.devices.values()}
    return Fabric(fleet, state_dir, state)


def remove_fabric(top: Path) -> None:
    """Tear down the fabric of the fleet under ``top`` and delete ``top``."""
    try:
        tear_down(top / "fleet" / ".plumb")
    finally:
        shutil.rmtree(top, ignore_errors=True)


def shared_fabric() -> Fabric:
    """The process's test fabric (built on first use)."""
    require_real_lab()
    if not _SHARED:
        top = Path(tempfile.mkdtemp(prefix="plumb-realfabric-"))
        atexit.register(remove_fabric, top)
        _SHARED.append(build_fabric(top / "fleet"))
    return _SHARED[0]


def run_plumb(root: Path, *args: str) -> tuple[int, str]:
    """``plumb ARGS`` in ``root``: the exit code and what it printed."""
    with contextlib.chdir(root):
        result = CliRunner().invoke(app, list(args))
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout + result.stderr


@contextlib.contextmanager
def fabric_up(root: Path) -> Iterator[Path]:
    """The fleet already written under ``root`` with its real-network lab up (BGP
    converged), torn down on leaving."""
    try:
        build_fabric(root, nodes=0)
        yield root
    finally:
        tear_down(root / ".plumb")


def lab_state(root: Path) -> FabricState:
    """The recorded real-network lab of the fleet under ``root``."""
    state = load_state(root / ".plumb")
    assert state is not None
    return state
