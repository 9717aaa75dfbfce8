"""observe_all across driver groups: each driver's devices are observed at the same
time as the other drivers' (one kind of switch never waits for another), results
keep the order asked for, every device is reported once and the drivers share the
concurrency; every command that talks
to devices takes ``--concurrency``."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from reconciler.drivers.base import DeviceRef
from reconciler.errors import DeviceError, DeviceTimeout
from reconciler.loop import Observation, observe_all
from reconciler.settings import Scalar
from tests.reconciler.labfleet import run_plumb

WAIT = 10.0  # seconds a group waits for the other before the test fails


class MeetingDriver:
    """A driver whose bulk observe only returns once the other driver's has begun."""

    def __init__(self, kind: str, mine: threading.Event, other: threading.Event) -> None:
        self.kind, self.mine, self.other = kind, mine, other
        self.concurrency: list[int] = []

    def observe_many(
        self, devices: Sequence[DeviceRef], concurrency: int = 16
    ) -> dict[str, dict[str, Scalar] | DeviceError]:
        self.concurrency.append(concurrency)
        self.mine.set()
        met = self.other.wait(WAIT)
        out: dict[str, dict[str, Scalar] | DeviceError] = {}
        for ref in devices:
            if not met:
                out[ref.name] = DeviceTimeout(ref.name, "observed alone")
            elif ref.name.endswith("-2"):
                out[ref.name] = DeviceTimeout(ref.name, "no answer")
            else:
                out[ref.name] = {"system/kind": self.kind}
        return out


class TwoKinds:
    """Targets of two driver rules: ``eos-*`` and ``sonic-*`` devices."""

    def __init__(self) -> None:
        eos, sonic = threading.Event(), threading.Event()
        self.drivers = {
            "eos": MeetingDriver("eos", eos, sonic),
            "sonic": MeetingDriver("sonic", sonic, eos),
        }

    def driver(self, name: str) -> MeetingDriver:
        return self.drivers[name.split("-")[0]]

    def ref(self, name: str) -> DeviceRef:
        return DeviceRef(name, name.split("-")[0], "leaf", "192.0.2.1")


def test_driver_groups_are_observed_at_the_same_time() -> None:
    """Each group waits for the other to begin: run one after the other, neither
    would meet the other and every device would come back 'observed alone'."""
    names = ["eos-1", "sonic-1", "eos-2", "sonic-2", "eos-3"]
    targets: Any = TwoKinds()
    done: list[Observation] = []
    found = observe_all(targets, names, concurrency=7, on_done=done.append)
    assert [o.error for o in found.values() if o.error and "alone" in o.error] == []
    assert found["eos-1"].state == {"system/kind": "eos"}
    assert found["sonic-1"].state == {"system/kind": "sonic"}
    assert found["sonic-2"].state is None and "no answer" in (found["sonic-2"].error or "")
    assert sorted(o.device for o in done) == sorted(names)
    assert list(found) == ["eos-1", "eos-2", "eos-3", "sonic-1", "sonic-2"]
    assert [d.concurrency for d in targets.drivers.values()] == [[4], [2]]  # 7 x 3/5, 7 x 2/5


COMMANDS = (
    ("plan",),
    ("drift",),
    ("apply",),
    ("rollout", "start", "spec.yaml"),
    ("rollout", "resume", "r-1"),
    ("rollback", "r-1"),
)


def test_every_command_that_talks_to_devices_takes_concurrency(tmp_path: Path) -> None:
    """plan, drift, apply, rollout start/resume and rollback accept --concurrency and
    refuse a value below 1 as a usage error before touching any device (exit 2; 1 for
    drift, whose exit 2 means drift found)."""
    for command in COMMANDS:
        shown = run_plumb(tmp_path, *command[: 2 if command[0] == "rollout" else 1], "--help")
        assert "--concurrency" in shown.stdout, command
        refused = run_plumb(tmp_path, *command, "--concurrency", "0")
        assert refused.returncode == (1 if command == ("drift",) else 2), (command, refused.stderr)
        assert "concurrency" in refused.stderr, command
