"""The state database as a file: a fresh one is created whole (so processes racing to
create it all succeed), an empty or foreign file is refused rather than replaced, and a
tampered audit row that is not even text is named by ``verify``."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from reconciler.state.audit import AuditFault, AuditKind
from reconciler.state.db import (
    SchemaTooNew,
    StateDamaged,
    StateError,
    open_state_db,
)

ROOT = Path(__file__).resolve().parent.parent


def test_an_empty_state_file_is_refused_not_recreated(tmp_path: Path) -> None:
    """A 0-byte plumb.db (a truncation, a failed copy) is damage: refused, left as it is."""
    path = tmp_path / "plumb.db"
    path.write_bytes(b"")
    with pytest.raises(StateDamaged, match=r"is empty \(0 bytes\).*Restore it from a backup"):
        open_state_db(path)
    assert path.stat().st_size == 0


def test_a_file_that_is_not_a_database_is_refused(tmp_path: Path) -> None:
    """A plumb.db that is not SQLite is reported as damaged, naming the file."""
    path = tmp_path / "plumb.db"
    path.write_bytes(b"this is not a database, just text that was copied here\n" * 100)
    with pytest.raises(StateDamaged, match=f"state database {path} is damaged"):
        open_state_db(path)


def test_a_sqlite_file_of_another_program_is_refused(tmp_path: Path) -> None:
    """A SQLite file without plumb's schema is not adopted."""
    path = tmp_path / "plumb.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE photos (id INTEGER)")
    conn.commit()
    conn.close()
    with pytest.raises(StateDamaged, match="not a plumb state database"):
        open_state_db(path)


def test_a_newer_schema_is_a_state_error(tmp_path: Path) -> None:
    """SchemaTooNew is one of the state errors the command line reports with exit 2."""
    path = tmp_path / "plumb.db"
    open_state_db(path).close()
    conn = sqlite3.connect(path)
    conn.execute("UPDATE plumb_revision SET version_num = '0999'")
    conn.commit()
    conn.close()
    with pytest.raises(SchemaTooNew) as caught:
        open_state_db(path)
    assert isinstance(caught.value, StateError)


def test_processes_creating_the_state_database_at_once_all_succeed(tmp_path: Path) -> None:
    """Eight processes opening a plumb.db that does not exist yet each open it and append
    a record; none sees "database is locked" or a half-made schema."""
    for round_ in range(3):
        path = tmp_path / f"r{round_}" / ".plumb" / "plumb.db"
        code = textwrap.dedent(
            """
            import sys, time
            from pathlib import Path
            from reconciler.state.db import open_state_db
            start = float(sys.argv[2])
            while time.time() < start:
                pass
            with open_state_db(Path(sys.argv[1])) as db:
                db.audit.append("decision", actor=f"p{sys.argv[3]}", intent_commit=None)
            """
        )
        import time

        start = str(time.time() + 1.0)
        procs = [
            subprocess.Popen(
                [sys.executable, "-c", code, str(path), start, str(n)],
                cwd=ROOT,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for n in range(8)
        ]
        errors = [p.communicate(timeout=60)[1] for p in procs]
        assert [p.returncode for p in procs] == [0] * 8, errors
        with open_state_db(path) as db:
            verdict = db.audit.verify()
            assert verdict.ok and verdict.rows == 8
        assert not list(path.parent.glob("*.new*"))  # no temporary file left behind


def test_verify_names_a_row_that_is_not_utf8(tmp_path: Path) -> None:
    """A row whose column holds bytes that are not UTF-8 is named, not a crash."""
    path = tmp_path / "plumb.db"
    with open_state_db(path) as db:
        for n in range(5):
            db.audit.append(AuditKind.write, actor="a@h", intent_commit=None, device=f"d{n}")
    conn = sqlite3.connect(path)
    conn.execute("DROP TRIGGER audit_no_update")
    conn.execute("UPDATE audit SET actor = CAST(x'61ff40fe68' AS TEXT) WHERE seq = 3")
    conn.commit()
    conn.close()
    with open_state_db(path) as db:
        verdict = db.audit.verify()
    faults = [(p.seq, p.fault) for p in verdict.problems]
    assert (3, AuditFault.bad_text) in faults
    assert (3, AuditFault.hash_mismatch) in faults
    assert "actor" in str(verdict.problems[0])
    assert verdict.bad_seqs() == [3]
