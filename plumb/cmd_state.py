"""``plumb state``: the fleet's state database itself.

* ``plumb state upgrade``: bring the database (SQLite or PostgreSQL, whichever
  ``plumb.yaml`` names) to this plumb's schema version, saying from which;
* ``plumb state migrate``: move a fleet's state (lease history, freeze, audit chain,
  rollout journal, pins) from its SQLite file to the PostgreSQL database it will share.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from plumb.app import PathArg, fail, fleet_context, fleet_root, read_config

state_app = typer.Typer(help="The fleet's state database: where it lives.", no_args_is_help=True)


@state_app.command("migrate")
def state_migrate(
    path: PathArg = Path("."),
    to: Annotated[
        str | None,
        typer.Option(
            "--to",
            help="Target PostgreSQL URL; by default the one plumb.yaml's state: names"
            " (its url_env variable, else its url_file).",
        ),
    ] = None,
) -> None:
    """Copy the SQLite state into an empty PostgreSQL database; verify the chain there."""
    from reconciler.state.location import (
        is_postgres_url,
        open_state,
        sqlite_path,
        state_url,
    )
    from reconciler.state.migrate import NOT_MIGRATED, migrate_state

    with fleet_context(path) as context:
        fleet = context.fleet
        source_path = sqlite_path(fleet.root, fleet.config)
        if not source_path.is_file():
            raise fail(f"no SQLite state to migrate at {source_path}", 1)
        target_url = to or state_url(fleet.root, fleet.config.state)
        if not is_postgres_url(target_url):
            raise fail("--to takes a postgresql:// URL", 2)
        with (
            open_state(str(source_path)) as source,
            open_state(target_url, then=NOT_MIGRATED) as target,
        ):
            moved = migrate_state(source, target, actor=context.actor)
            where = target.location
    counts = ", ".join(f"{table} {count}" for table, count in moved.rows.items())
    typer.echo(f"migrated {source_path} -> {where}: {counts}")
    typer.echo(
        f"audit chain verified on arrival: {moved.audit_rows} records, head"
        f" {moved.head_seq} {moved.head_hash[:16]}"
    )
    typer.echo("now set `state: {backend: postgresql}` in plumb.yaml (the file is left as it was)")


@state_app.command("upgrade")
def state_upgrade(path: PathArg = Path(".")) -> None:
    """Bring the state database to this plumb's schema version (a no-op when current)."""
    from reconciler.state.location import fleet_state_location, upgrade_state

    root = fleet_root(path)
    location = fleet_state_location(root, read_config(root))
    done = upgrade_state(location)
    shown = done.location
    if done.before == 0:
        typer.echo(f"created the state schema in {shown}: schema version {done.after}")
    elif done.before != done.after:
        typer.echo(f"upgraded {shown}: schema version {done.before} -> {done.after}")
    elif done.stamped:
        typer.echo(
            f"{shown} is at schema version {done.after}, the current one; its revision is"
            " now recorded for later upgrades"
        )
    else:
        typer.echo(f"{shown} is at schema version {done.after}, the current one: nothing to do")


@state_app.command("new-history")
def state_new_history(
    path: PathArg = Path("."),
    reason: Annotated[
        str, typer.Option(help="Why the old state database is not coming back (audited).")
    ] = "",
) -> None:
    """Start a new state history where the database file was deleted: the old audit
    log, freeze, journal and pins are not recovered; the new log's first record says
    who started it and why."""
    from reconciler.state.dbfile import history_marker
    from reconciler.state.location import fleet_state_location, is_postgres_url

    if not reason.strip():
        raise fail("--reason is required: starting a new state history is audited")
    root = fleet_root(path)
    location = fleet_state_location(root, read_config(root))
    if is_postgres_url(location):
        raise fail("a PostgreSQL state database keeps its history: nothing to start afresh")
    database = Path(location)
    if database.exists():
        raise fail(f"{database} is there: its history goes on (nothing to do)", 1)
    history_marker(database).unlink(missing_ok=True)
    with fleet_context(path) as context:
        context.audit("decision", detail={"state": "new history", "reason": reason})
    typer.echo(f"started a new state history in {database}: {reason}")
