"""What a state database's schema is, read from the database's own catalogue (SQLite's
pragmas and ``sqlite_master``, PostgreSQL's ``information_schema`` and ``pg_catalog``),
not from plumb's code: tables, columns in order, primary and foreign keys, checks,
indexes and triggers, so two databases can be compared however they were made.

:func:`describe` keeps each dialect's own types and collations; :func:`portable` maps
them to what both dialects share, to compare a SQLite file with a PostgreSQL database.
"""

from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass, replace
from typing import Any

import psycopg


@dataclass(frozen=True)
class Column:
    name: str
    type: str
    not_null: bool
    default: str | None
    numbered: bool  # the database hands out its values (AUTOINCREMENT, identity)
    collation: str | None = None


@dataclass(frozen=True)
class Index:
    name: str
    keys: str  # the key columns or expressions, squeezed: "device,path"
    unique: bool
    where: str | None


_INDEX = re.compile(
    r"^CREATE (UNIQUE )?INDEX .*? ON \S+?(?: USING \w+)? ?\((.*?)\)(?: WHERE (.*))?$"
)


def _index(name: str, definition: str) -> Index:
    """An index from its ``CREATE INDEX`` statement (each catalogue gives one)."""
    match = _INDEX.match(" ".join(definition.split()))
    assert match is not None, definition
    unique, keys, where = match.groups()
    return Index(name, _squeeze(keys), unique is not None, where and _squeeze(where))


@dataclass(frozen=True)
class Table:
    columns: tuple[Column, ...]
    primary_key: tuple[str, ...]
    foreign_keys: frozenset[tuple[tuple[str, ...], str, tuple[str, ...]]]
    checks: frozenset[str]
    indexes: frozenset[Index]
    triggers: frozenset[str]


Schema = dict[str, Table]


def _squeeze(sql: str) -> str:
    """An expression without parentheses, spaces and case: ``(id = 1)`` -> ``id=1``."""
    return re.sub(r"[()\s\"]", "", sql).lower()


def describe(location: str) -> Schema:
    """The schema of the state database at ``location`` (file path or URL)."""
    if location.startswith("postgresql://"):
        with psycopg.connect(location) as conn:
            return _postgresql(conn)
    conn = sqlite3.connect(f"file:{location}?mode=ro", uri=True)
    try:
        return _sqlite(conn)
    finally:
        conn.close()


def _sqlite(conn: sqlite3.Connection) -> Schema:
    schema: Schema = {}
    tables = conn.execute(
        "SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name != 'sqlite_sequence'"
    ).fetchall()
    for table, sql in tables:
        info = conn.execute(f'PRAGMA table_info("{table}")').fetchall()
        primary = tuple(name for *_, name in sorted((pk, n) for _, n, _, _, _, pk in info if pk))
        counted = "AUTOINCREMENT" in sql.upper()
        columns = tuple(
            Column(
                name,
                type_.lower(),
                # A primary key column never holds NULL in plumb's tables; SQLite only
                # says so where NOT NULL is written out, which the schema from before
                # Alembic did not (statelegacy.py).
                bool(notnull) or bool(pk),
                default,
                counted and bool(pk),
            )
            for _, name, type_, notnull, default, pk in info
        )
        keys: dict[int, tuple[list[str], str, list[str]]] = {}
        for key, _, parent, source, target, *_ in conn.execute(
            f'PRAGMA foreign_key_list("{table}")'
        ):
            entry = keys.setdefault(key, ([], parent, []))
            entry[0].append(source)
            entry[2].append(target)
        checks = frozenset(_squeeze(m) for m in re.findall(r"CHECK\s*(\(.*?\))\s*[,)\n]", sql))
        indexes = frozenset(
            _index(name, definition)
            for name, definition in conn.execute(
                "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = ?"
                " AND sql IS NOT NULL",  # not the ones SQLite makes for keys
                (table,),
            )
        )
        triggers = frozenset(
            name
            for (name,) in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = ?", (table,)
            )
        )
        schema[table] = Table(
            columns,
            primary,
            frozenset((tuple(s), p, tuple(t)) for s, p, t in keys.values()),
            checks,
            indexes,
            triggers,
        )
    return schema


def _postgresql(conn: psycopg.Connection[Any]) -> Schema:
    schema: Schema = {}
    tables = conn.execute(
        "SELECT table_name FROM information_schema.tables"
        " WHERE table_schema = 'public' AND table_type = 'BASE TABLE'"
    ).fetchall()
    for (table,) in tables:
        rows = conn.execute(
            "SELECT column_name, data_type, is_nullable, column_default, is_identity,"
            " collation_name FROM information_schema.columns"
            " WHERE table_schema = 'public' AND table_name = %s ORDER BY ordinal_position",
            (table,),
        ).fetchall()
        columns = tuple(
            Column(name, type_, nullable == "NO", default, identity == "YES", collation)
            for name, type_, nullable, default, identity, collation in rows
        )
        constraints = conn.execute(
            "SELECT contype, pg_get_constraintdef(oid) FROM pg_constraint"
            " WHERE conrelid = to_regclass(%s)",
            (f'"{table}"',),
        ).fetchall()
        primary: tuple[str, ...] = ()
        foreign = set()
        checks = set()
        for kind, definition in constraints:
            if kind == "p":
                primary = tuple(
                    c.strip() for c in re.findall(r"\((.*)\)", definition)[0].split(",")
                )
            elif kind == "f":
                source, parent, target = re.findall(
                    r"FOREIGN KEY \((.*?)\) REFERENCES (\w+)\((.*?)\)", definition
                )[0]
                foreign.add(
                    (
                        tuple(c.strip() for c in source.split(",")),
                        parent,
                        tuple(c.strip() for c in target.split(",")),
                    )
                )
            elif kind == "c":
                checks.add(_squeeze(definition.removeprefix("CHECK ")))
        indexes = frozenset(
            _index(name, definition)
            for name, definition in conn.execute(
                "SELECT i.relname, pg_get_indexdef(x.indexrelid) FROM pg_index x"
                " JOIN pg_class i ON i.oid = x.indexrelid"
                " WHERE x.indrelid = to_regclass(%s) AND NOT x.indisprimary",
                (f'"{table}"',),
            )
        )
        triggers = frozenset(
            name
            for (name,) in conn.execute(
                "SELECT tgname FROM pg_trigger WHERE tgrelid = to_regclass(%s)"
                " AND NOT tgisinternal",
                (f'"{table}"',),
            )
        )
        schema[table] = Table(
            columns,
            primary,
            frozenset(foreign),
            frozenset(checks),
            indexes,
            triggers,
        )
    return schema


_TYPES = {
    "integer": "integer",
    "bigint": "integer",
    "text": "text",
    "varchar(32)": "text",
    "character varying": "text",
    "real": "real",
    "double precision": "real",
}


def portable(schema: Schema) -> Schema:
    """``schema`` in the terms both dialects share: one name per type family, no
    collations (PostgreSQL sorts some text in the ``C`` collation, which is SQLite's
    byte order already), and defaults as bare values."""
    return {
        name: replace(
            table,
            columns=tuple(
                replace(
                    column,
                    type=_TYPES[column.type],
                    collation=None,
                    default=None if column.default is None else _squeeze(column.default),
                )
                for column in table.columns
            ),
        )
        for name, table in schema.items()
    }
