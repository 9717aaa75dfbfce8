"""``plumb freeze|unfreeze``, ``plumb audit show|verify``, ``plumb lease show|break``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from reconciler.state.db import StateDB

from plumb.app import FormatOpt, PathArg, app, check_format, fail, fleet_context


def _print_json(document: dict[str, object]) -> None:
    from ci.planfmt import dumps

    typer.echo(dumps(document), nl=False)


audit_app = typer.Typer(help="The append-only, hash-chained audit log.", no_args_is_help=True)
lease_app = typer.Typer(help="The single-writer lease of the fleet.", no_args_is_help=True)


@app.command()
def freeze(
    path: PathArg = Path("."),
    reason: Annotated[str, typer.Option(help="Why; shown to everyone who is refused.")] = "",
    format: FormatOpt = "text",
) -> None:
    """Kill switch: refuse every write from now on; in-flight applies stop at the next device."""
    from ci.statefmt import freeze_json

    check_format(format)
    if not reason.strip():
        raise fail("--reason is required")
    with fleet_context(path) as context:
        status = context.db.freeze.freeze(context.actor, reason)
    if format == "json":
        _print_json(freeze_json("freeze", status))
    else:
        typer.echo(status.describe())


@app.command()
def unfreeze(path: PathArg = Path("."), format: FormatOpt = "text") -> None:
    """Lift the kill switch."""
    from ci.statefmt import freeze_json

    check_format(format)
    with fleet_context(path) as context:
        previous = context.db.freeze.unfreeze(context.actor)
    if format == "json":
        _print_json(freeze_json("unfreeze", None, lifted=previous))
    else:
        typer.echo("unfrozen" if previous else "was not frozen")


@audit_app.command("show")
def audit_show(
    path: PathArg = Path("."),
    limit: Annotated[int, typer.Option(min=1, help="How many of the newest records.")] = 50,
    device: Annotated[str | None, typer.Option(help="Only records about this device.")] = None,
    kind: Annotated[
        str | None, typer.Option(help="Only records of this kind (plan, write, lease, ...).")
    ] = None,
    format: FormatOpt = "text",
    as_json: Annotated[
        bool, typer.Option("--json", help="One JSON record per line (JSON Lines).")
    ] = False,
) -> None:
    """The newest audit records, oldest first."""
    from ci.statefmt import audit_json, audit_record_json, audit_text

    check_format(format)
    with fleet_context(path) as context:
        records = context.db.audit.records(limit, device=device, kind=kind)
        if format == "json":
            _print_json(audit_json(records))
            return
        if as_json:
            for r in records:
                typer.echo(json.dumps(audit_record_json(r)))
            return
        typer.echo(audit_text(records), nl=False)


@audit_app.command("verify")
def audit_verify(path: PathArg = Path("."), format: FormatOpt = "text") -> None:
    """Recompute the hash chain; name every row that was edited, removed or reordered."""
    from ci.statefmt import audit_verify_json

    check_format(format)
    with fleet_context(path) as context:
        verdict = context.db.audit.verify()
    if format == "json":
        _print_json(audit_verify_json(verdict))
        raise typer.Exit(0 if verdict.ok else 1)
    for problem in verdict.problems:
        typer.echo(f"BAD {problem}")
    for guard in verdict.missing_guards:
        typer.echo(f"BAD append-only guard missing: {guard}")
    if not verdict.ok:
        raise typer.Exit(1)
    typer.echo(
        f"audit chain ok: {verdict.rows} records, head {verdict.head_seq} {verdict.head_hash[:16]}"
    )


@lease_app.command("show")
def lease_show(path: PathArg = Path("."), format: FormatOpt = "text") -> None:
    """Who holds the fleet's lease, and since when."""
    from ci.statefmt import lease_json

    check_format(format)
    with fleet_context(path) as context:
        current = context.db.lease.current()
        if format == "json":
            _print_json(lease_json(current, context.db.now()))
            return
        typer.echo("no lease held" if current is None else current.describe(context.db.now()))
        for line in _active_rollouts(context.db, held=current is not None):
            typer.echo(line)


def _active_rollouts(db: StateDB, *, held: bool) -> list[str]:
    """Rollouts under way: a driven one takes the lease only while a step runs."""
    from service.ownership import IN_PROGRESS

    lines = []
    for row in db.journal.all():
        if not row.status.active:
            continue
        waves = db.journal.waves(row.id)
        going = [w for w in waves if w.status in IN_PROGRESS]
        where = f"wave {going[0].number} {going[0].status.value}" if going else "between waves"
        between = "" if held else ": no lease is held between its steps"
        lines.append(f"rollout {row.id} is {row.status.value} ({where}){between}")
    return lines


@lease_app.command("break")
def lease_break(
    path: PathArg = Path("."),
    reason: Annotated[str, typer.Option(help="Why the holder is known to be gone.")] = "",
) -> None:
    """Break a stale lease explicitly; the old holder's fencing token stops its writes."""
    if not reason.strip():
        raise fail("--reason is required: breaking a lease is audited")
    with fleet_context(path) as context:
        old = context.db.lease.break_lease(context.actor, reason)
        typer.echo(
            "no lease held" if old is None else f"broke lease of {old.holder} (token {old.token})"
        )
