"""The lab fleet's side of a running rollout: its virtual clock for bakes, node
maintenance (a reboot keeps only saved configuration; acceptance is the lab's hourly
acceptance run, which a defect can fail), and its metrics source.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from intent.fleet import Fleet
from lab.clock import LabClock
from lab.fleet import FaultKind
from lab.metrics import Signal, Window, lab_time, series, target_attributes
from lab.source import inventory_attributes
from lab.store import LabStore

ACCEPTANCE_WINDOW_MINUTES = 60.0  # holds exactly one of the lab's hourly acceptance runs


class LabBakeClock:
    """The lab's virtual clock as a :class:`~rollouts.runtime.BakeClock`."""

    def __init__(self, clock: LabClock) -> None:
        self.clock = clock

    def now(self) -> float:
        return self.clock.now()

    def advance(self, minutes: float) -> float:
        return self.clock.advance(max(0.0, minutes))

    def time(self, minutes: float) -> datetime:
        return lab_time(minutes)


class LabMaintenance:
    """Reboot and acceptance on lab nodes."""

    def __init__(self, fleet: Fleet, store: LabStore, clock: LabClock) -> None:
        self.fleet = fleet
        self.store = store
        self.clock = clock

    def _silent(self) -> set[str]:
        return {f.device for f in self.store.faults_for(None) if f.kind is FaultKind.unreachable}

    def reboot(self, devices: Sequence[str]) -> dict[str, str | None]:
        silent = self._silent()
        out: dict[str, str | None] = {}
        for name in devices:
            if name in silent:
                out[name] = "did not come back from the reboot (unreachable)"
                continue
            self.store.reboot(name)
            out[name] = None
        return out

    def acceptance(self, devices: Sequence[str]) -> dict[str, str | None]:
        """The acceptance run of the last hour of virtual time, per node, with the
        node's current firmware (so a defect of the new bundle shows here)."""
        now = self.clock.now()
        window = Window(now - ACCEPTANCE_WINDOW_MINUTES, now)
        silent = self._silent()
        running = self.store.read_all_running()
        defects = self.clock.defects()
        seed = self.clock.seed
        out: dict[str, str | None] = {}
        for name in devices:
            if name in silent or name not in running:
                out[name] = "acceptance could not run: node unreachable"
                continue
            fields, labels = inventory_attributes(self.fleet, name)
            attributes = target_attributes(fields, labels, running[name])
            runs = series(seed, name, attributes, Signal.acceptance, window, defects)
            failed = [r for r in runs if r < 1.0]
            out[name] = f"acceptance run failed ({len(failed)} of {len(runs)})" if failed else None
        return out
