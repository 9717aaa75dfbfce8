"""``plumb freeze|unfreeze``, ``plumb audit show|verify``, ``plumb lease show|break``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from plumb.app import PathArg, app, fail
from plumb.context import fleet_context

audit_app = typer.Typer(help="The append-only, hash-chained audit log.", no_args_is_help=True)
lease_app = typer.Typer(help="The single-writer lease of the fleet.", no_args_is_help=True)


@app.command()
def freeze(
    path: PathArg = Path("."),
    reason: Annotated[str, typer.Option(help="Why; shown to everyone who is refused.")] = "",
) -> None:
    """Kill switch: refuse every write from now on; in-flight applies stop at the next device."""
    if not reason.strip():
        raise fail("--reason is required")
    with fleet_context(path) as context:
        status = context.db.freeze.freeze(context.actor, reason)
        typer.echo(status.describe())


@app.command()
def unfreeze(path: PathArg = Path(".")) -> None:
    """Lift the kill switch."""
    with fleet_context(path) as context:
        previous = context.db.freeze.unfreeze(context.actor)
        typer.echo("unfrozen" if previous else "was not frozen")


@audit_app.command("show")
def audit_show(
    path: PathArg = Path("."),
    limit: Annotated[int, typer.Option(min=1)] = 50,
    device: str | None = None,
    kind: str | None = None,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """The newest audit records, oldest first."""
    with fleet_context(path) as context:
        records = context.db.audit.records(limit, device=device, kind=kind)
        for r in records:
            if as_json:
                typer.echo(
                    json.dumps(
                        {
                            "seq": r.seq,
                            "at": r.at.isoformat(),
                            "kind": r.kind.value,
                            "actor": r.actor,
                            "intent_commit": r.intent_commit,
                            "device": r.device,
                            "field": r.field,
                            "before": r.before,
                            "after": r.after,
                            "detail": dict(r.detail),
                        }
                    )
                )
                continue
            what = f"{r.device or ''} {r.field or ''}".strip()
            change = f" {r.before!r} -> {r.after!r}" if r.field else ""
            detail = f" {json.dumps(dict(r.detail), sort_keys=True)}" if r.detail else ""
            typer.echo(
                f"{r.seq:>6} {r.at.isoformat(timespec='seconds')} {r.kind.value:<8} "
                f"{r.actor} {what}{change}{detail}"
            )


@audit_app.command("verify")
def audit_verify(path: PathArg = Path(".")) -> None:
    """Recompute the hash chain; name every row that was edited, removed or reordered."""
    with fleet_context(path) as context:
        verdict = context.db.audit.verify()
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
def lease_show(path: PathArg = Path(".")) -> None:
    """Who holds the fleet's lease, and since when."""
    with fleet_context(path) as context:
        current = context.db.lease.current()
        typer.echo("no lease held" if current is None else current.describe(context.db.now()))


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
