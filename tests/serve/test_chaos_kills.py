"""The leader SIGKILLed at random points of served rollouts, 100 times in a run: each
``plumb serve`` process dies at a random pass through a journal commit or a device
write (``PLUMB_FAILPOINT``), a new one takes over, and the rollouts go on. At the end
every rollout completed, no target was written twice in a rollout, no before-state
was lost, and the audit chain verifies."""

from __future__ import annotations

import os
import random
import signal
import subprocess
from pathlib import Path

import pytest

from reconciler.state.db import StateDB, open_state_db
from reconciler.state.journal import RolloutStatus
from tests.prometheus.server import free_port
from tests.serve.servefleet import PLUMB, Repos, git, make_repos, wait_until
from tests.serve.test_chaos_state import UNATTENDED
from tests.serve.test_rollouts_serve import lab_writes

pytestmark = pytest.mark.slow

SERVE = """
serve:
  poll_seconds: 1
  interval_seconds: 3600
"""
KILLS = 100
BUNDLES = ("hx8-2026.06", "hx8-2026.09")  # the HX8 nodes go back and forth
SEED = 20261207


def _db(repos: Repos) -> StateDB:
    return open_state_db(repos.controller / ".plumb" / "plumb.db")


def _next_rollout(repos: Repos, number: int) -> None:
    """Move the HX8 bundle (the other one of the two) and push a spec that rolls it out;
    the controller's clone is brought up to date and the spec approved."""
    groups_path = repos.author / "intent" / "groups.yaml"
    groups = groups_path.read_text()
    now, then = (BUNDLES[0], BUNDLES[1]) if number % 2 else (BUNDLES[1], BUNDLES[0])
    repos.push("intent/groups.yaml", groups.replace(f"bundle: {then}", f"bundle: {now}"), now)
    name = f"hx8-chaos-{number}"
    repos.push(f"rollouts/{name}.yaml", UNATTENDED.replace("hx8-serve", name), name)
    git(repos.controller, "pull", "-q", "--ff-only")
    done = subprocess.run(
        [str(PLUMB), "rollout", "approve", name, "."],
        cwd=repos.controller,
        env={**os.environ, "PLUMB_ACTOR": "alice@test"},
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr


def _finished(repos: Repos, count: int) -> bool:
    """Have ``count`` rollouts been journaled, the last one no longer moving?"""
    with _db(repos) as db:
        rows = db.journal.all()
    return len(rows) == count and all(
        r.status in (RolloutStatus.completed, RolloutStatus.held) for r in rows
    )


@pytest.mark.timeout(1500)  # a hundred processes started and killed, one after another
def test_a_hundred_leader_kills_lose_nothing(tmp_path: Path) -> None:
    rng = random.Random(SEED)
    repos = make_repos(tmp_path, SERVE)
    log = tmp_path / "serve.log"
    kills, rollouts, sites = 0, 0, {"journal": 0, "write": 0}
    while kills < KILLS:
        if rollouts == 0 or _finished(repos, rollouts):
            rollouts += 1
            _next_rollout(repos, rollouts)
        site = rng.choice(("journal", "write"))
        point = rng.randint(1, 30 if site == "journal" else 12)
        with log.open("ab") as out:
            process = subprocess.Popen(
                [
                    *(str(PLUMB), "serve", str(repos.controller)),
                    *("--listen", f"127.0.0.1:{free_port()}", "--lab-pace", "120"),
                ],
                env={
                    **os.environ,
                    "PLUMB_ACTOR": "controller@test",
                    "PLUMB_FAILPOINT": f"{site}:{point}",
                },
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        try:
            wait_until(
                lambda p=process, n=rollouts: p.poll() is not None or _finished(repos, n),
                120,
                f"a kill at {site}:{point} or the end of rollout {rollouts}",
            )
        finally:
            if process.poll() is None:
                process.terminate()
                process.wait(timeout=30)
            elif process.returncode == -signal.SIGKILL:
                kills += 1
                sites[site] += 1
        assert process.returncode in (-signal.SIGKILL, 0), log.read_text()[-3000:]
    # let the last rollout finish without a fail point
    with log.open("ab") as out:
        process = subprocess.Popen(
            [
                *(str(PLUMB), "serve", str(repos.controller)),
                *("--listen", f"127.0.0.1:{free_port()}", "--lab-pace", "120"),
            ],
            env={**os.environ, "PLUMB_ACTOR": "controller@test"},
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        wait_until(lambda: _finished(repos, rollouts), 120, "the last rollout")
    finally:
        process.terminate()
        process.wait(timeout=30)

    print(f"{kills} kills ({sites}) over {rollouts} rollouts")
    assert "Traceback" not in log.read_text()
    with _db(repos) as db:
        rows = db.journal.all()
        assert len(rows) == rollouts
        for row in rows:
            assert row.status is RolloutStatus.completed or row.reason, row
            targets = db.journal.targets(row.id)
            assert len(targets) == 32
            assert all(t.before is not None for t in targets if t.writes)  # none lost
            assert all(t.writes <= 1 for t in targets)  # none written twice
        assert db.audit.verify().ok
    completed = sum(r.status is RolloutStatus.completed for r in rows)
    writes = lab_writes(repos)
    # each completed rollout wrote each HX8 node once: as many writes as rollouts
    assert len(writes) == 32 and set(writes.values()) == {completed}
