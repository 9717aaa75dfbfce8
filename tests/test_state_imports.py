"""What the state package imports: the backends (``db``, ``pgdb``) import the modules of
each table, which know the database only through ``conn.StateStore`` and never reach a
backend; and opening a database that is already current loads neither SQLAlchemy nor
Alembic (they load only when a database is created or upgraded)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

import pytest

from tests.test_layering import import_graph

ROOT = Path(__file__).resolve().parent.parent
STATE = "reconciler.state"
TABLE_MODULES = ("audit", "lease", "freeze", "journal", "journal_approvals", "outbox", "drifttold")
BACKENDS = {f"{STATE}.db", f"{STATE}.pgdb", f"{STATE}.upgrade"}

OPEN_AND_CHECK = """
import json, sys
from reconciler.state.location import open_state
with open_state(sys.argv[1]) as db:
    token = db.lease.acquire("tester", "apply")
    db.check_write(token)
    db.audit.append("decision", actor="tester", intent_commit=None)
    db.lease.release(token)
print(json.dumps(sorted({m.split(".")[0] for m in sys.modules})))
"""


def _reached(graph: Mapping[str, Mapping[str, int]], start: str) -> set[str]:
    seen, todo = set(), [start]
    while todo:
        for target in graph.get(todo.pop(), {}):
            if target not in seen:
                seen.add(target)
                todo.append(target)
    return seen


def test_the_table_modules_never_reach_a_backend() -> None:
    """Following every import from a table module (type-checking and function-level ones
    counted) never arrives at db, pgdb or the upgrade."""
    graph = import_graph(ROOT, ["reconciler"])
    assert f"{STATE}.audit" in graph[f"{STATE}.db"]  # the graph is real
    for module in TABLE_MODULES:
        assert not _reached(graph, f"{STATE}.{module}") & BACKENDS, module


def _top_level_imports(location: str) -> set[str]:
    done = subprocess.run(
        [sys.executable, "-c", OPEN_AND_CHECK, location],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return set(json.loads(done.stdout.strip().splitlines()[-1]))


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_a_current_database_is_used_without_sqlalchemy(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """A fresh process that opens an existing, current state database, takes the lease,
    checks a write and appends to the audit log imports neither SQLAlchemy nor Alembic;
    the process that created the database did."""
    if backend == "sqlite":
        location = str(tmp_path / "plumb.db")
    else:
        location = str(request.getfixturevalue("pg_url"))
    assert {"sqlalchemy", "alembic"} <= _top_level_imports(location)
    assert not {"sqlalchemy", "alembic"} & _top_level_imports(location)
