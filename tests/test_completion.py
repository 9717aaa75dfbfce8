"""Shell completion (bash, through the console script as the shell calls it) of output
formats, rollout spec names and rollout ids; nothing completes where nothing is known,
and a completion never creates the state database."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from reconciler.state.db import open_state_db
from tests.fleetcopy import FleetCopy
from tests.test_journal import _rollout

PLUMB = Path(sys.executable).with_name("plumb")


def complete(cwd: Path, line: str) -> list[str]:
    words = line.split(" ")
    env = {
        **os.environ,
        "_PLUMB_COMPLETE": "complete_bash",
        "COMP_WORDS": line,
        "COMP_CWORD": str(len(words) - 1),
    }
    done = subprocess.run([str(PLUMB)], cwd=cwd, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def test_formats_complete(orion: FleetCopy) -> None:
    assert complete(orion.path, "plumb plan --format ") == ["text", "json", "mermaid", "dot"]
    assert complete(orion.path, "plumb rollout plan x -f s") == ["svg"]
    assert complete(orion.path, "plumb drift -f j") == ["json"]


def test_spec_names_complete_from_the_fleet_repo(orion: FleetCopy) -> None:
    assert complete(orion.path, "plumb rollout plan ") == ["firmware-hx8-2026-09", "qos-mtu-tune"]
    assert complete(orion.path, "plumb rollout start q") == ["qos-mtu-tune"]


def test_rollout_ids_complete_from_the_state_without_creating_it(orion: FleetCopy) -> None:
    state = orion.path / ".plumb" / "plumb.db"
    assert complete(orion.path, "plumb rollout status ") == []
    assert not state.exists()  # completing did not make a state database
    with open_state_db(state) as db:
        rollout = _rollout(db)
    assert complete(orion.path, "plumb rollout status ") == [rollout]
    assert complete(orion.path, f"plumb rollout abort {rollout[:2]}") == [rollout]
