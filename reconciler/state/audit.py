"""The append-only, hash-chained audit log in ``plumb.db``: every plan, device write,
result, decision, lease and freeze event, and rollback, in the order it happened.

Each row's ``hash`` is the sha256 of the canonical JSON of the row, ``prev_hash``
included, and ``prev_hash`` is the previous row's ``hash`` (64 zeros for the first), so
changing, removing or reordering a row breaks the chain and :meth:`Audit.verify` names
the row. Triggers refuse UPDATE and DELETE (and, on PostgreSQL, TRUNCATE); the chain
catches what gets past them (someone who drops the triggers, or edits the file). Appends
run in the database's single-writer transaction, so concurrent writers, threads or
processes or clones on other hosts, still make one chain. Values of fields named like
secrets are refused outright: the log is read by many and kept forever.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

from reconciler.settings import Scalar
from reconciler.state.conn import StateStore

GENESIS = "0" * 64
SECRET_FIELD = re.compile(r"password|secret|token|key", re.IGNORECASE)
GUARD_TRIGGERS = ("audit_no_update", "audit_no_delete")
_COLUMNS = "seq, at, kind, actor, intent_commit, device, field, before, after, detail"


class AuditKind(StrEnum):
    plan = "plan"
    write = "write"
    result = "result"
    decision = "decision"
    lease = "lease"
    freeze = "freeze"
    rollback = "rollback"
    rollout = "rollout"
    lifecycle = "lifecycle"
    pin = "pin"


class AuditFault(StrEnum):
    hash_mismatch = "hash mismatch"  # the row's content is not what was hashed
    broken_link = "broken link"  # prev_hash is not the previous row's hash
    gap = "gap in seq"  # rows are missing before this one
    bad_text = "not UTF-8"  # a column holds bytes that are no text: written behind plumb's back


@dataclass(frozen=True, slots=True)
class AuditRecord:
    seq: int
    at: datetime
    kind: AuditKind
    actor: str
    intent_commit: str | None
    device: str | None
    field: str | None
    before: Scalar
    after: Scalar
    detail: Mapping[str, Any]
    prev_hash: str
    hash: str


@dataclass(frozen=True, slots=True)
class AuditProblem:
    seq: int
    fault: AuditFault
    message: str

    def __str__(self) -> str:
        return f"seq {self.seq}: {self.fault}: {self.message}"


@dataclass(frozen=True, slots=True)
class AuditVerdict:
    """What :meth:`Audit.verify` found; ``head_hash`` is worth keeping outside the file."""

    rows: int
    head_seq: int
    head_hash: str
    problems: tuple[AuditProblem, ...]
    missing_guards: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return not self.problems and not self.missing_guards

    def bad_seqs(self) -> list[int]:
        return sorted({problem.seq for problem in self.problems})


def canonical_json(value: object) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def row_hash(row: Mapping[str, object], prev_hash: str) -> str:
    """sha256 of the canonical serialisation of one row's stored columns and ``prev_hash``."""
    payload = canonical_json({**row, "prev_hash": prev_hash})
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def _encode_scalar(name: str, value: Scalar) -> str:
    if value is not None and not isinstance(value, str | int | float | bool):
        raise TypeError(f"audit {name} must be a scalar, not {type(value).__name__}")
    return canonical_json(value)


class Audit:
    """The audit log of one state database; get it as ``db.audit``."""

    def __init__(self, db: StateStore) -> None:
        self._db = db

    def append(
        self,
        kind: AuditKind | str,
        *,
        actor: str,
        intent_commit: str | None,
        device: str | None = None,
        field: str | None = None,
        before: Scalar = None,
        after: Scalar = None,
        detail: Mapping[str, Any] | None = None,
    ) -> AuditRecord:
        """Append one record at the head of the chain (serialised across threads/processes)."""
        kind = AuditKind(kind)  # a plain string is accepted if it names a kind
        if not actor:
            raise ValueError("audit record needs an actor")
        if field is not None and SECRET_FIELD.search(field) and (before, after) != (None, None):
            raise ValueError(
                f"refusing to store a value for {field!r} in the audit log: its name says"
                " it is a secret (password/secret/token/key)"
            )
        row: dict[str, object] = {
            "kind": str(kind),
            "actor": actor,
            "intent_commit": intent_commit,
            "device": device,
            "field": field,
            "before": _encode_scalar("before", before),
            "after": _encode_scalar("after", after),
            "detail": canonical_json(dict(detail or {})),
        }
        with self._db.transaction() as conn:
            head = conn.execute("SELECT seq, hash FROM audit ORDER BY seq DESC LIMIT 1").fetchone()
            seq, prev_hash = (head[0] + 1, head[1]) if head else (1, GENESIS)
            row["seq"] = seq
            row["at"] = self._db.now().isoformat()
            digest = row_hash(row, prev_hash)
            conn.execute(
                f"INSERT INTO audit ({_COLUMNS}, prev_hash, hash)"
                " VALUES (:seq, :at, :kind, :actor, :intent_commit, :device, :field,"
                " :before, :after, :detail, :prev_hash, :hash)",
                {**row, "prev_hash": prev_hash, "hash": digest},
            )
        return _record({**row, "prev_hash": prev_hash, "hash": digest})

    def records(
        self, limit: int = 50, *, device: str | None = None, kind: AuditKind | str | None = None
    ) -> list[AuditRecord]:
        """The newest ``limit`` records matching the filters, oldest first."""
        where, params = [], []
        if device is not None:
            where.append("device = ?")
            params.append(device)
        if kind is not None:
            where.append("kind = ?")
            params.append(str(AuditKind(kind)))
        sql = f"SELECT {_COLUMNS}, prev_hash, hash FROM audit"
        sql += f" WHERE {' AND '.join(where)}" if where else ""
        with self._db.reading() as conn:
            cursor = conn.execute(f"{sql} ORDER BY seq DESC LIMIT ?", (*params, limit))
            names = [column[0] for column in cursor.description]
            rows = [dict(zip(names, values, strict=True)) for values in cursor.fetchall()]
        return [_record(row) for row in reversed(rows)]

    def after(self, seq: int, limit: int = 500) -> list[AuditRecord]:
        """Up to ``limit`` records with a sequence number above ``seq``, oldest first."""
        with self._db.reading() as conn:
            cursor = conn.execute(
                f"SELECT {_COLUMNS}, prev_hash, hash FROM audit WHERE seq > ? ORDER BY seq"
                " LIMIT ?",
                (seq, limit),
            )
            names = [column[0] for column in cursor.description]
            rows = [dict(zip(names, values, strict=True)) for values in cursor.fetchall()]
        return [_record(row) for row in rows]

    def open_writes(self) -> dict[str, list[AuditRecord]]:
        """Per device, the ``write`` records no ``result`` record followed: writes a run
        that died (crash, kill) left with an unknown outcome, oldest first."""
        with self._db.reading() as conn:
            cursor = conn.execute(
                f"SELECT {_COLUMNS}, prev_hash, hash FROM audit AS w WHERE kind = 'write'"
                " AND seq > coalesce((SELECT max(seq) FROM audit AS r WHERE r.kind = 'result'"
                " AND r.device = w.device), 0) ORDER BY seq"
            )
            names = [column[0] for column in cursor.description]
            rows = [dict(zip(names, values, strict=True)) for values in cursor.fetchall()]
        found: dict[str, list[AuditRecord]] = {}
        for row in rows:
            record = _record(row)
            found.setdefault(record.device or "", []).append(record)
        return found

    def verify(self) -> AuditVerdict:
        """Recompute the whole chain; name every row whose hash, link or seq is wrong."""
        problems: list[AuditProblem] = []
        prev_seq, prev_hash, rows = 0, GENESIS, 0
        with self._db.reading() as conn:
            # SQLite keeps whatever bytes a column was given: read them raw and say so if
            # they are no text. PostgreSQL refuses bytes that are not UTF-8 on the way in.
            columns = (
                f"{_AS_BLOBS}, CAST(prev_hash AS BLOB), CAST(hash AS BLOB)"
                if self._db.dialect == "sqlite"
                else f"{_COLUMNS}, prev_hash, hash"
            )
            cursor = conn.execute(f"SELECT {columns} FROM audit ORDER BY seq")
            names = [*_COLUMNS.split(", "), "prev_hash", "hash"]
            for values in cursor:
                row, undecodable = _decoded(dict(zip(names, values, strict=True)))
                if undecodable:
                    problems.append(
                        AuditProblem(
                            row["seq"],
                            AuditFault.bad_text,
                            f"column(s) {', '.join(undecodable)} hold bytes that are not UTF-8"
                            " text: the row was written behind plumb's back",
                        )
                    )
                stored_prev, stored_hash = row.pop("prev_hash"), row.pop("hash")
                seq, rows = row["seq"], rows + 1
                if seq != prev_seq + 1:
                    missing = f"{prev_seq + 1}" + (f"..{seq - 1}" if seq - 1 > prev_seq + 1 else "")
                    problems.append(AuditProblem(seq, AuditFault.gap, f"seq {missing} missing"))
                elif stored_prev != prev_hash:
                    problems.append(
                        AuditProblem(
                            seq,
                            AuditFault.broken_link,
                            f"prev_hash {stored_prev[:12]}… is not seq {prev_seq}'s hash",
                        )
                    )
                if row_hash(row, stored_prev) != stored_hash:
                    problems.append(
                        AuditProblem(
                            seq, AuditFault.hash_mismatch, "row content differs from its hash"
                        )
                    )
                prev_seq, prev_hash = seq, stored_hash
        present = self._db.audit_guards()
        missing_guards = tuple(n for n in self._db.audit_guard_names if n not in present)
        return AuditVerdict(rows, prev_seq, prev_hash, tuple(problems), missing_guards)


_AS_BLOBS = ", ".join(
    name if name == "seq" else f"CAST({name} AS BLOB)" for name in _COLUMNS.split(", ")
)


def _decoded(raw: Mapping[str, object]) -> tuple[dict[str, Any], list[str]]:
    """The row with its text columns decoded; bytes that are not UTF-8 are kept as
    replacement characters (so the hash check fails too) and their columns named."""
    row: dict[str, Any] = {}
    undecodable: list[str] = []
    for name, value in raw.items():
        row[name] = value
        if isinstance(value, bytes):
            try:
                row[name] = value.decode("utf-8")
            except UnicodeDecodeError:
                undecodable.append(name)
                row[name] = value.decode("utf-8", errors="replace")
    return row, undecodable


def _record(row: Mapping[str, Any]) -> AuditRecord:
    return AuditRecord(
        seq=row["seq"],
        at=datetime.fromisoformat(row["at"]),
        kind=AuditKind(row["kind"]),
        actor=row["actor"],
        intent_commit=row["intent_commit"],
        device=row["device"],
        field=row["field"],
        before=json.loads(row["before"]),
        after=json.loads(row["after"]),
        detail=json.loads(row["detail"]),
        prev_hash=row["prev_hash"],
        hash=row["hash"],
    )
