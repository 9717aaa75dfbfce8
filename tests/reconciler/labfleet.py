"""A lab fleet for reconciler tests: a writable ORION copy, its lab database, and the
reconcile loop over it (observe -> plan -> apply), plus ``plumb`` as a subprocess."""

from __future__ import annotations

import os
import random
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from intent.fleet import Fleet
from lab.driver import create_lab
from lab.fleet import lab_db_path
from lab.store import LabStore
from reconciler.loop import ApplyReport, apply_plan, observe_all
from reconciler.plan import Holds, Plan, build_plan
from reconciler.render import render_desired
from reconciler.settings import Change, Scalar, State
from reconciler.state.db import StateDB, open_state_db
from reconciler.targets import Targets
from service.context import AuditToDb, DbGuard, FleetContext
from tests.fleetcopy import FleetCopy

PLUMB = Path(sys.executable).with_name("plumb")
ACTOR = "tester@ci"


@dataclass
class LabFleet:
    """An ORION copy with a lab; ``fleet`` is the intent as last loaded."""

    copy: FleetCopy
    fleet: Fleet = field(repr=False)
    store: LabStore = field(repr=False)

    @classmethod
    def create(
        cls,
        copy: FleetCopy,
        *,
        seed: int = 0,
        drift: int = 6,
        older_firmware: bool = True,
    ) -> LabFleet:
        """Build the lab from the copy's current intent."""
        fleet = copy.load()
        store = LabStore(lab_db_path(fleet))
        create_lab(store, fleet, seed=seed, drift=drift, older_firmware=older_firmware)
        return cls(copy, fleet, store)

    @property
    def root(self) -> Path:
        return self.copy.path

    def reload(self) -> Fleet:
        """Read the intent again (after the test edited it)."""
        self.fleet = self.copy.load()
        return self.fleet

    def plan(self, *, holds: Holds | None = None) -> Plan:
        """Observe every device and plan the whole fleet, as ``plumb plan`` does."""
        names = list(self.fleet.devices)
        targets = Targets.for_fleet(self.fleet)
        try:
            observations = observe_all(targets, names)
        finally:
            targets.close()
        observed: dict[str, State | None] = {n: o.state for n, o in observations.items()}
        errors = {n: o.error for n, o in observations.items() if o.error}
        desired = render_desired(self.fleet, names)
        return build_plan(self.fleet, desired, observed, errors=errors, holds=holds)

    def apply(
        self,
        plan: Plan,
        *,
        dry_run: bool = False,
        confirm_within: float | None = None,
        concurrency: int = 16,
        db: StateDB | None = None,
    ) -> ApplyReport:
        """Apply ``plan``; with ``db``, under its lease, freeze check and audit log."""
        targets = Targets.for_fleet(self.fleet)
        try:
            if db is None:
                return apply_plan(
                    plan,
                    targets,
                    dry_run=dry_run,
                    confirm_within=confirm_within,
                    concurrency=concurrency,
                )
            context = FleetContext(self.fleet, ACTOR, None, db)
            with db.lease.held(ACTOR, "test apply") as token:
                return apply_plan(
                    plan,
                    targets,
                    dry_run=dry_run,
                    guard=DbGuard(db, token),
                    audit=AuditToDb(context),
                    confirm_within=confirm_within,
                    concurrency=concurrency,
                )
        finally:
            targets.close()

    def state_db(self) -> StateDB:
        return open_state_db(self.root / self.fleet.config.state_dir / "plumb.db")

    def running(self) -> dict[str, dict[str, Scalar]]:
        return self.store.read_all_running()

    def writes(self) -> int:
        return self.store.write_count()

    def close(self) -> None:
        self.store.close()


def in_place(state: Mapping[str, Scalar], changes: Sequence[Change]) -> list[bool]:
    """For each change, whether ``state`` holds its new value."""
    return [state.get(c.path) == c.after for c in changes]


def seed_firing_at(pattern: Sequence[bool], probability: float = 0.5) -> int:
    """A fault seed whose draws 0, 1, 2, ... fire exactly as ``pattern`` says.

    The lab draws a fault's n-th decision from ``random.Random(f"{seed}/{n}")``
    (docs/lab.md, Determinism), so this picks *when* a fault fires."""
    for seed in range(100_000):
        draws = (random.Random(f"{seed}/{n}").random() < probability for n in range(len(pattern)))
        if all(fired == wanted for fired, wanted in zip(draws, pattern, strict=True)):
            return seed
    raise AssertionError(f"no seed fires as {pattern}")


def run_plumb(cwd: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run the ``plumb`` console script in ``cwd`` with no terminal on stdin."""
    return subprocess.run(
        [str(PLUMB), *args],
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=plumb_env(),
        check=False,
    )


def start_plumb(cwd: Path, *args: str) -> subprocess.Popen[str]:
    """Start ``plumb`` in the background (stdout and stderr captured)."""
    return subprocess.Popen(
        [str(PLUMB), *args],
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=plumb_env(),
    )


def plumb_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PLUMB_ACTOR"] = ACTOR
    env.pop("PLUMB_DEBUG", None)
    env["COLUMNS"] = "200"
    return env
