"""State backend costs, SQLite vs PostgreSQL: creating the state database, opening an
existing one, the pre-write check (freeze + lease) and one target's journal step
(status + audited write) per target, and journaling a 4,096-target rollout (create,
record before-states, in flight, applied, per wave of 256).

    .venv/bin/python -m benchmarks.bench_state [--pg URL] [--base REV] [--this REV]
        [--repeat N]

Run as root it starts a throwaway PostgreSQL 15 on /dev/shm (``--pg`` names an existing
server's maintenance database instead: one fresh database is created there per run).
Creating is measured in a fresh interpreter (so it includes importing what creating a
database needs, as the first command on a fleet does), the rest in another that opens
the database the first made (as every later command does). Beside each wall figure: the CPU
seconds of the benchmark process and, on PostgreSQL, of the server process serving its
connection.

With ``--base REV`` the same measurements also run on that earlier commit (``git
archive`` into a temporary folder; this script, that tree's ``reconciler``), alternating
with this tree's (each first in every other run) ``--repeat`` times, and the figures are
printed side by side, then their medians; ``--this REV`` measures a commit instead of the
working tree.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
# The tree measured: this one, or an earlier commit's (see ``--base``).
TREE = Path(os.environ.get("BENCH_STATE_TREE") or ROOT)
sys.path.insert(0, str(TREE))
sys.path.insert(1, str(ROOT))

from benchmarks.baseline import checkout, describe, load_average  # noqa: E402

TARGETS, WAVE = 4096, 256
PHASES = (
    ("create", "create a state database", "s"),
    ("open", "open an existing one", "ms"),
    ("check", "pre-write check", "ms"),
    ("journal", "per-target journal step", "ms"),
    ("rollout", "4,096-target rollout journaled", "s"),
)

Figures = dict[str, float]


def _server_cpu(pid: int | None) -> float:
    """CPU seconds the server process ``pid`` has spent (0 without one)."""
    if pid is None:
        return 0.0
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@contextmanager
def _measured(found: Figures, name: str, pid: int | None, calls: int = 1) -> Iterator[None]:
    """Wall, CPU here and server CPU of the block, per call, under ``name``."""
    scale = 1e3 / calls if calls > 1 else 1.0
    wall, cpu, server = time.perf_counter(), time.process_time(), _server_cpu(pid)
    yield
    found[name] = (time.perf_counter() - wall) * scale
    found[f"{name}_cpu"] = (time.process_time() - cpu) * scale
    found[f"{name}_server_cpu"] = (_server_cpu(pid) - server) * scale


def _rollout(db: Any, rid: str, count: int) -> list[str]:
    from reconciler.state.journal import Lifecycle, NewTarget, NewWave, RolloutRow, RolloutStatus

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


def _backend_pid(db: Any) -> int | None:
    if db.dialect != "postgresql":
        return None
    with db.reading() as conn:
        return int(conn.execute("SELECT pg_backend_pid()").fetchone()[0])


def measure_create(location: str) -> Figures:
    """Creating the state database at ``location`` (a path or an empty database), in a
    process that has not opened one yet: what the first command on a fleet pays."""
    from reconciler.state.location import open_state

    found: Figures = {}
    with _measured(found, "create", None):
        open_state(location).close()
    return found


def measure(location: str) -> Figures:
    """The other phases on the existing state database at ``location``, in a process
    that did not create it: what every later command pays."""
    from reconciler.state.journal import TargetStatus as T
    from reconciler.state.location import open_state

    found: Figures = {}
    with _measured(found, "open", None, calls=50):
        for _ in range(50):
            open_state(location).close()
    with open_state(location) as db:
        pid = _backend_pid(db)
        token = db.lease.acquire("bench", "apply")
        with _measured(found, "check", pid, calls=500):
            for _ in range(500):
                db.check_write(token)
        names = _rollout(db, "per-target", 300)
        db.journal.record_before("per-target", {n: {"fw": "1"} for n in names})

        def step(i: int) -> None:
            db.journal.set_targets("per-target", [names[i]], T.in_flight)
            db.audit.append("write", actor="b", intent_commit=None, device=names[i], field="fw")
            db.journal.set_targets("per-target", [names[i]], T.applied, wrote=True)

        with _measured(found, "journal", pid, calls=300):
            for i in range(300):
                step(i)
        with _measured(found, "rollout", pid):
            names = _rollout(db, "big", TARGETS)
            for w in range(0, TARGETS, WAVE):
                wave = names[w : w + WAVE]
                db.journal.record_before("big", {n: {"fw": "1"} for n in wave})
                db.journal.set_targets("big", wave, T.in_flight)
                db.journal.set_targets("big", wave, T.applied, wrote=True)
        db.lease.release(token)
    found["load"] = os.getloadavg()[0]
    return found


def measure_in_child(tree: Path, location: str) -> Figures:
    """:func:`measure_create`, then :func:`measure`, each in a fresh interpreter
    importing ``tree``'s plumb."""
    figures: Figures = {}
    for phase in ("create", "use"):
        child = subprocess.run(
            [sys.executable, str(Path(__file__).resolve()), "--child", phase, location],
            env={**os.environ, "BENCH_STATE_TREE": str(tree), "PYTHONPATH": str(tree)},
            check=True,
            stdout=subprocess.PIPE,
            text=True,
        )
        figures |= json.loads(child.stdout.strip().splitlines()[-1])
    return figures


def _figures(found: Figures, phase: str, unit: str) -> tuple[str, str, str]:
    digits = 3 if unit == "s" else 2
    server = found[f"{phase}_server_cpu"]
    return (
        f"{found[phase]:.{digits}f}",
        f"{found[f'{phase}_cpu']:.{digits}f}",
        f"{server:.{digits}f}" if server else "-",
    )


def report(rows: list[tuple[str, str, Figures]]) -> None:
    """One line per tree, backend and phase: wall, CPU here, server CPU, load."""
    from ci.texttable import Column, table_text  # here: an earlier tree measured may lack it

    lines = [
        (title, backend, label, *_figures(found, phase, unit), unit, f"{found['load']:.1f}")
        for phase, title, unit in PHASES
        for label, backend, found in rows
    ]
    columns = (Column("phase"), Column("backend"), Column("tree"))
    columns += tuple(Column(h, "right") for h in ("wall", "cpu", "server", "unit", "load"))
    print(table_text(columns, lines), end="")


def medians(rows: list[tuple[str, str, Figures]]) -> None:
    """Per phase, backend and tree: the median of each figure over the runs, and the
    lowest CPU (the run the shared machine disturbed least)."""
    from ci.texttable import Column, table_text

    print(f"\nmedians of {len(rows) // 4} runs (lowest cpu in brackets)")
    lines = []
    for phase, title, unit in PHASES:
        for backend in ("sqlite", "postgresql"):
            for label in ("base", "this"):
                runs = [f for tree, b, f in rows if (tree, b) == (label, backend)]
                if not runs:
                    continue
                wall, cpu, server = (
                    statistics.median(f[key] for f in runs)
                    for key in (phase, f"{phase}_cpu", f"{phase}_server_cpu")
                )
                low = min(f[f"{phase}_cpu"] for f in runs)
                shown = f"{server:.3f}" if server else "-"
                lines.append(
                    (
                        title,
                        backend,
                        label,
                        f"{wall:.3f}",
                        f"{cpu:.3f}",
                        f"({low:.3f})",
                        shown,
                        unit,
                    )
                )
    columns = (Column("phase"), Column("backend"), Column("tree"))
    columns += tuple(Column(h, "right") for h in ("wall", "cpu", "lowest", "server", "unit"))
    print(table_text(columns, lines), end="")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pg", help="a PostgreSQL maintenance database URL (default: start one)")
    parser.add_argument("--base", default=None, help="Also measure this earlier commit.")
    parser.add_argument("--this", default=None, help="Measure this commit, not the working tree.")
    parser.add_argument("--repeat", type=int, default=1, help="runs per tree and backend")
    parser.add_argument("--child", nargs=2, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        phase, location = args.child
        found = measure_create(location) if phase == "create" else measure(location)
        print(json.dumps(found), flush=True)
        return
    with contextlib.ExitStack() as stack:
        new_database = _databases(stack, args.pg)
        trees: list[tuple[str, Path]] = []
        if args.base is not None:
            print(f"base: {describe(args.base)}", flush=True)
            trees.append(("base", stack.enter_context(checkout(args.base))))
        this = ROOT if args.this is None else stack.enter_context(checkout(args.this))
        print(f"this: {describe(args.this) if args.this else 'the working tree'}", flush=True)
        trees.append(("this", this))
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="bench-state-")))
        rows: list[tuple[str, str, Figures]] = []
        for run in range(args.repeat):
            # Alternate which tree goes first: the machine is shared, and its disk too.
            for label, tree in trees if run % 2 == 0 else trees[::-1]:
                for backend in ("sqlite", "postgresql"):
                    where = (
                        str(tmp / f"{label}-{run}" / "plumb.db")
                        if backend == "sqlite"
                        else new_database()
                    )
                    rows.append((label, backend, measure_in_child(tree, where)))
                    print(f"  {label} {backend} run {run + 1} done (load {load_average()})")
        report(sorted(rows, key=lambda r: (r[1] != "sqlite", r[0] != "base")))
        if args.repeat > 1:
            medians(rows)


def _databases(stack: contextlib.ExitStack, url: str | None) -> Callable[[], str]:
    """A maker of fresh, empty PostgreSQL databases: on ``url``'s server, or on a
    throwaway server started here."""
    if url is None:
        from tests.pgserver import PgServer

        server = PgServer().start()
        stack.callback(server.stop)
        os.environ["PLUMB_STATE_NONDURABLE"] = "accept"  # fsync off: a throwaway server
        return server.new_database
    import psycopg

    names = iter(range(1_000_000))

    def new_database() -> str:
        name = f"bench_state_{os.getpid()}_{next(names)}"
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')  # type: ignore[arg-type]
        return f"{url.rsplit('/', 1)[0]}/{name}"

    return new_database


if __name__ == "__main__":
    main()
