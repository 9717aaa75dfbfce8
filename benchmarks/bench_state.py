"""State backend costs, SQLite vs PostgreSQL: the pre-write check (freeze + lease) and
one target's journal step (status + audited write) per target, and journaling a
4,096-target rollout (create, record before-states, in flight, applied, per wave of 256).

Run: ``.venv/bin/python -m benchmarks.bench_state`` (as root: starts a throwaway
PostgreSQL 15 on /dev/shm), or ``--pg URL`` for an existing empty database.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from reconciler.state.db import StateDB
from reconciler.state.journal import Lifecycle, NewTarget, NewWave, RolloutRow, RolloutStatus
from reconciler.state.journal import TargetStatus as T
from reconciler.state.location import open_state

TARGETS, WAVE = 4096, 256


def _per_call(fn: Callable[[int], None], n: int) -> float:
    started = time.perf_counter()
    for i in range(n):
        fn(i)
    return (time.perf_counter() - started) / n * 1e3


def _rollout(db: StateDB, rid: str, count: int) -> list[str]:
    names = [f"gpu-{i:05d}" for i in range(count)]
    waves = [NewWave(w + 1, w == 0, 0.0) for w in range((count + WAVE - 1) // WAVE)]
    targets = [
        NewTarget(n, i // WAVE + 1, {"fw": "2"}, Lifecycle.in_service) for i, n in enumerate(names)
    ]
    row = RolloutRow(
        rid, rid, "r.yaml", "0" * 64, None, None, RolloutStatus.running, None, "b", "", "", {}
    )
    db.journal.create(row, waves, targets)
    return names


def measure(location: str) -> dict[str, float]:
    with open_state(location) as db:
        token = db.lease.acquire("bench", "apply")
        check = _per_call(lambda i: db.check_write(token), 500)
        names = _rollout(db, "per-target", 300)
        db.journal.record_before("per-target", {n: {"fw": "1"} for n in names})

        def step(i: int) -> None:
            db.journal.set_targets("per-target", [names[i]], T.in_flight)
            db.audit.append("write", actor="b", intent_commit=None, device=names[i], field="fw")
            db.journal.set_targets("per-target", [names[i]], T.applied, wrote=True)

        journal = _per_call(step, 300)
        started = time.perf_counter()
        names = _rollout(db, "big", TARGETS)
        for w in range(0, TARGETS, WAVE):
            wave = names[w : w + WAVE]
            db.journal.record_before("big", {n: {"fw": "1"} for n in wave})
            db.journal.set_targets("big", wave, T.in_flight)
            db.journal.set_targets("big", wave, T.applied, wrote=True)
        big = time.perf_counter() - started
        db.lease.release(token)
    return {"check_ms": check, "journal_ms": journal, "rollout_s": big, "per_s": TARGETS / big}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pg", help="an empty PostgreSQL database URL")
    args = parser.parse_args()
    server = None
    if args.pg is None:
        from tests.pgserver import PgServer

        server = PgServer().start()
    try:
        pg = args.pg or (server.new_database() if server else "")
        with tempfile.TemporaryDirectory() as tmp:
            for name, where in (("sqlite", str(Path(tmp) / "plumb.db")), ("postgresql", pg)):
                r = measure(where)
                print(
                    f"{name:<10} pre-write check {r['check_ms']:.2f} ms  per-target journal"
                    f" step {r['journal_ms']:.2f} ms  4,096-target rollout journaled in"
                    f" {r['rollout_s']:.2f} s ({r['per_s']:.0f} targets/s)"
                )
    finally:
        if server is not None:
            server.stop()


if __name__ == "__main__":
    main()
