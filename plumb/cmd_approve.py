"""``plumb rollout approve SPEC-or-ID`` and ``plumb rollout promote ID --wave N``: what a
person allows the controller (``plumb serve``) to do with a rollout, journaled with
who and when and bound to the spec's content hash and commit, and audited in the same
transaction (docs/serve.md). The controller acts on them at its next turn.

:mod:`plumb.cmd_rollout` registers both on the ``plumb rollout`` group, after its own
commands.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Annotated

import typer

from plumb.app import PathArg, fail, fleet_arg, fleet_context
from plumb.rolloutapp import IdArg, load_spec_or_exit
from reconciler.state.journal import RolloutRow, WaveStatus
from reconciler.state.journal_approvals import ApprovalKind, ApprovalState, NewApproval
from service.context import FleetContext


def _record_approval(context: FleetContext, new: NewApproval, event: str) -> None:
    """The approval in the journal and its audit record, in one transaction."""
    with context.db.transaction() as conn:
        context.db.approvals.add(conn, new)
        context.audit(
            "rollout",
            detail={
                "rollout": new.rollout,
                "event": event,
                "kind": new.kind.value,
                "spec": new.spec_path,
                "spec_sha256": new.spec_sha256,
                "spec_commit": new.spec_commit,
                **({"wave": new.wave} if new.wave is not None else {}),
            },
        )


def _approve_spec(context: FleetContext, spec: str) -> NewApproval:
    from rollouts.gitpin import NotDeclared, declared

    loaded = load_spec_or_exit(context.fleet, spec)
    spec_rel = Path(loaded.doc.path).as_posix()
    try:
        declaration = declared(context.fleet.root, spec_rel)
    except NotDeclared as exc:
        raise fail(f"not approving: {exc}") from None
    text = (context.fleet.root / spec_rel).read_bytes()
    return NewApproval(
        ApprovalKind.start,
        spec_rel,
        hashlib.sha256(text).hexdigest(),
        declaration.spec_commit,
        context.actor,
    )


def _approve_rollout(context: FleetContext, row: RolloutRow) -> NewApproval:
    if not row.status.active:
        raise fail(f"rollout {row.id} is {row.status.value}: nothing to hand over", 1)
    return NewApproval(
        ApprovalKind.drive,
        row.spec_path,
        row.spec_sha256,
        row.spec_commit,
        context.actor,
        rollout=row.id,
    )


def rollout_approve(
    what: Annotated[
        str,
        typer.Argument(
            metavar="SPEC-or-ID",
            help="A committed spec (rollouts/NAME.yaml or its name) to start, or the id "
            "of a held or stopped rollout to hand to the controller.",
        ),
    ],
    path: PathArg = Path("."),
) -> None:
    """Approve a rollout for the controller (plumb serve) to start and drive: bound to
    the spec's content and commit, so a spec changed since needs a new approval.
    Journaled and audited; the controller acts on it at its next turn."""
    with fleet_context(path) as context:
        journal = context.db.journal
        row = journal.get(what)
        new = _approve_rollout(context, row) if row is not None else _approve_spec(context, what)
        pending = context.db.approvals.rows(state=ApprovalState.pending)
        if any(
            (a.kind, a.spec_sha256, a.spec_commit, a.rollout)
            == (new.kind, new.spec_sha256, new.spec_commit, new.rollout)
            for a in pending
        ):
            typer.echo(f"{what} is approved already; the controller has not acted on it yet")
            return
        _record_approval(context, new, "approved")
        at = (new.spec_commit or "?")[:12]
        target = f"rollout {new.rollout}" if new.rollout else f"{new.spec_path} @ {at}"
        typer.echo(f"approved {target} (sha256 {new.spec_sha256[:12]}) for plumb serve")


def rollout_promote(
    rollout: IdArg,
    path: PathArg = Path("."),
    wave: Annotated[int, typer.Option("--wave", min=1, help="The wave to let start.")] = 0,
) -> None:
    """Let a wave that the spec's approval.before_waves holds back start (journaled,
    audited); the controller, or `plumb rollout resume`, then runs it."""
    if wave < 1:
        raise fail("--wave N is required (the wave to promote)")
    with fleet_context(path) as context:
        journal = context.db.journal
        row = journal.get(rollout)
        if row is None:
            raise fail(
                f"no rollout {rollout!r} (see `plumb rollout list {fleet_arg(context.fleet.root)}`)"
            )
        gated = tuple(row.plan["spec"].get("approval", {}).get("before_waves", ()))
        if wave not in gated:
            listed = ", ".join(str(n) for n in gated) or "none"
            raise fail(f"wave {wave} of {rollout} does not wait for promotion (waits: {listed})", 1)
        if not row.status.active:
            raise fail(f"rollout {rollout} is {row.status.value}: nothing to promote", 1)
        waves = journal.waves(rollout)
        if wave > len(waves) or waves[wave - 1].status is not WaveStatus.pending:
            raise fail(f"wave {wave} of {rollout} has started already (or does not exist)", 1)
        if wave in context.db.approvals.promoted(rollout):
            typer.echo(f"wave {wave} of {rollout} is promoted already")
            return
        new = NewApproval(
            ApprovalKind.promote,
            row.spec_path,
            row.spec_sha256,
            row.spec_commit,
            context.actor,
            rollout=rollout,
            wave=wave,
        )
        _record_approval(context, new, "promoted")
        typer.echo(f"wave {wave} of {rollout} promoted by {context.actor}")
