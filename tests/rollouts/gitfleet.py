"""An ORION copy committed in a real git repository, with a lab fleet: what a rollout
starts from. ``plumb`` runs in-process (typer's runner) or as a subprocess."""

from __future__ import annotations

import contextlib
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from typer.testing import CliRunner

from lab.clock import attach_defect
from lab.store import LabStore
from plumb.cli import app
from reconciler.settings import Scalar
from reconciler.state.db import StateDB, open_state_db
from reconciler.state.journal import TargetRow
from reconciler.state.location import open_state
from tests.fleetcopy import FleetCopy, copy_orion

FIRMWARE = "firmware-hx8-2026-09"
B0_DEFECT = "firmware/nic_firmware=28.43.1014,label.nic_revision=B0"
GIT_ID = ["-c", "user.name=plumb tests", "-c", "user.email=tests@plumb.invalid"]


@dataclass(frozen=True)
class Run:
    exit_code: int
    stdout: str
    stderr: str


def git(root: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", *GIT_ID, *args], cwd=root, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


@dataclass
class GitFleet:
    copy: FleetCopy
    base: str = ""
    change: str = ""

    @property
    def root(self) -> Path:
        return self.copy.path

    @classmethod
    def create(cls, tmp: Path) -> GitFleet:
        """The GitOps story: the fleet runs hx8-2026.06 as declared; then a commit moves
        the HX8 nodes to hx8-2026.09, which a rollout carries out."""
        copy = copy_orion(tmp)
        copy.write(".gitignore", ".plumb/\n")
        copy.replace("intent/groups.yaml", "bundle: hx8-2026.09", "bundle: hx8-2026.06")
        git(copy.path, "init", "-q", "-b", "main")
        fleet = cls(copy)
        fleet.base = fleet.commit("ORION intent on hx8-2026.06")
        assert fleet.plumb("lab", "init", ".", "--current-firmware").exit_code == 0
        copy.replace("intent/groups.yaml", "bundle: hx8-2026.06", "bundle: hx8-2026.09")
        fleet.change = fleet.commit("HX8 nodes to hx8-2026.09")
        return fleet

    def commit(self, message: str) -> str:
        git(self.root, "add", "-A")
        git(self.root, "commit", "-qm", message)
        return git(self.root, "rev-parse", "HEAD")

    def plumb(self, *args: str) -> Run:
        with contextlib.chdir(self.root):
            result = CliRunner().invoke(app, list(args))
        if result.exception is not None and not isinstance(result.exception, SystemExit):
            raise result.exception
        return Run(result.exit_code, result.stdout, result.stderr)

    def hide_b0_defect(self, **effects: float) -> None:
        """B0 NICs on the new NIC firmware: slower steps and uncorrectable FEC."""
        attach_defect(self.lab_path, B0_DEFECT, effects or {"fec_rate": 2.0}, "B0 NICs on 28.43")

    @property
    def lab_path(self) -> Path:
        return self.root / ".plumb" / "lab.db"

    def lab(self) -> LabStore:
        return LabStore(self.lab_path)

    def running(self) -> dict[str, dict[str, Scalar]]:
        store = self.lab()
        try:
            return store.read_all_running()
        finally:
            store.close()

    def device_writes(self) -> dict[str, int]:
        store = self.lab()
        try:
            return store.device_writes()
        finally:
            store.close()

    def db(self) -> StateDB:
        """The fleet's state: its SQLite file, or the shared PostgreSQL database when
        plumb.yaml says so (the URL in $PLUMB_STATE_URL)."""
        if "backend: postgresql" in (self.root / "plumb.yaml").read_text():
            return open_state(os.environ["PLUMB_STATE_URL"])
        return open_state_db(self.root / ".plumb" / "plumb.db")

    def only_rollout(self) -> str:
        with self.db() as db:
            rows = db.journal.all()
        assert len(rows) == 1, [r.id for r in rows]
        return rows[0].id

    def targets(self, rollout: str) -> list[TargetRow]:
        with self.db() as db:
            return db.journal.targets(rollout)
