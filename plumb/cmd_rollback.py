"""``plumb rollback ID``: restore a rollout's recorded before-states, verify them, and
pin the restored fields; ``plumb pins list|release``: the pins that keep the
level-triggered reconciler from re-applying rolled-back intent.

Exit codes: 0 restored and verified, 1 some target could not be restored (named),
2 bad input.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from plumb.app import FormatOpt, PathArg, app, check_format, fail, fleet_arg, fleet_context
from plumb.cmd_rollout import _lease, _show_status
from plumb.progress import ConsoleReporter
from plumb.rolloutapp import IdArg
from reconciler.errors import FencedOut, Frozen
from reconciler.state.journal import RolloutStatus, TargetRow, WaveRow, WaveStatus
from rollouts.spec import RollbackScope
from service.context import FleetContext
from service.runtime import rollout_runtime

if TYPE_CHECKING:
    from rollouts.rollback import RollbackReport

pins_app = typer.Typer(
    help="Rollback pins: fields held at their before-state.", no_args_is_help=True
)


@app.command("rollback")
def rollback_command(
    rollout: IdArg,
    path: PathArg = Path("."),
    scope: Annotated[
        RollbackScope | None,
        typer.Option(help="target | wave | rollout (default: the spec's rollback scope)."),
    ] = None,
    target: Annotated[
        list[str] | None, typer.Option("--target", "-t", help="Restore this target (repeat).")
    ] = None,
    wave: Annotated[int | None, typer.Option(help="The wave for scope wave/target.")] = None,
    emergency: Annotated[
        bool,
        typer.Option(help="Every written target at once, in parallel; no waiting between waves."),
    ] = False,
    only_safe: Annotated[
        bool,
        typer.Option(
            help="When restoring every chosen target together is unsafe (a drifted "
            "before-state), restore the targets that are safe and keep the others as they are."
        ),
    ] = False,
    reason: Annotated[str, typer.Option(help="Why (journal, audit, pins).")] = "operator rollback",
    revert_branch: Annotated[
        str | None,
        typer.Option(help="Also commit a git revert of the intent change on this new branch."),
    ] = None,
    format: FormatOpt = "text",
    concurrency: Annotated[
        int,
        typer.Option(
            min=1,
            max=256,
            help="Devices restored at once (--emergency: at least 64).",
        ),
    ] = 16,
) -> None:
    """Restore the recorded before-states, verify by re-observe, pin the fields."""
    from rollouts.execute import load_context
    from rollouts.gitpin import NotDeclared, intent_change
    from rollouts.gitpin import revert_branch as make_branch
    from rollouts.rollback import RollbackError, rollback
    from rollouts.targetops import RolloutStopped

    check_format(format)
    text = format == "text"
    with fleet_context(path) as context:
        journal = context.db.journal
        row = journal.get(rollout)
        if row is None:
            raise fail(
                f"no rollout {rollout!r} (see `plumb rollout list {fleet_arg(context.fleet.root)}`)"
            )
        names = [t.device for t in journal.targets(rollout)]
        with (
            _lease(context, f"rollback {rollout}") as token,
            rollout_runtime(
                context, token, names, reporter=ConsoleReporter(enabled=text)
            ) as runtime,
        ):
            runtime.concurrency = concurrency
            spec = load_context(runtime, rollout).spec
            if row.status.active and row.status is not RolloutStatus.rolling_back:
                journal.set_status(rollout, RolloutStatus.aborted, reason)
            chosen_scope = RollbackScope.target if target else (scope or spec.rollback.scope)
            if wave is None and chosen_scope in (RollbackScope.wave, RollbackScope.target):
                wave, why = _picked_wave(journal.waves(rollout), journal.targets(rollout))
                if wave is not None and not target and not emergency and text:
                    typer.echo(f"rolling back wave {wave} ({why}; --wave N picks another)")
            try:
                report = rollback(
                    runtime,
                    rollout,
                    scope=chosen_scope,
                    wave=wave,
                    names=target or (),
                    emergency=emergency,
                    only_safe=only_safe,
                    reason=reason,
                )
            except RollbackError as exc:
                raise fail(str(exc)) from None
            except (RolloutStopped, Frozen, FencedOut) as exc:
                raise fail(f"rollback stopped: {exc}; run it again once cleared", 1) from None
        if text:
            typer.echo(f"{report.summary()}; {report.pinned} field(s) pinned")
        for line in grouped_lines("FAILED", report.failed):
            typer.echo(line, err=True)
        for line in grouped_lines("KEPT at the intended state", report.kept):
            typer.echo(line, err=True)
        if report.skipped:
            typer.echo(f"  NOT ATTEMPTED: {', '.join(sorted(report.skipped))}", err=True)
        if report.refused:
            typer.echo(f"  REFUSED: {report.refused}", err=True)
            if not only_safe:
                typer.echo(
                    _next_step(rollout, chosen_scope, emergency, target or [], context.fleet.root),
                    err=True,
                )
        revert: dict[str, str] | None = None
        if revert_branch:
            change = intent_change(context.fleet.root, row.intent_commit or "HEAD")
            if change is None:
                typer.echo("no intent commit to revert", err=True)
            else:
                try:
                    made = make_branch(context.fleet.root, change, revert_branch)
                except NotDeclared as exc:
                    raise fail(str(exc), 1) from None
                context.audit(
                    "rollback",
                    detail={"rollout": rollout, "revert_branch": revert_branch, "commit": made},
                )
                revert = {"branch": revert_branch, "reverts": change, "commit": made}
                if text:
                    typer.echo(
                        f"wrote a revert of {change[:12]} on branch {revert_branch} "
                        f"({made[:12]}) for review; your checkout is unchanged"
                    )
        if text:
            _show_status(context, rollout, "text")
        else:
            _print_rollback_json(context, rollout, report, revert)
    if not report.ok:
        raise typer.Exit(1)


def _print_rollback_json(
    context: FleetContext, rollout: str, report: RollbackReport, revert: dict[str, str] | None
) -> None:
    from ci.journalfmt import status_json
    from ci.planfmt import dumps
    from ci.statefmt import rollback_json

    journal = context.db.journal
    row = journal.get(rollout)
    assert row is not None  # it was there when the rollback began; rows are never deleted
    status = status_json(
        row, journal.waves(rollout), journal.targets(rollout), journal.pins(rollout)
    )
    typer.echo(dumps(rollback_json(rollout, report, revert, status)), nl=False)


def _picked_wave(waves: list[WaveRow], targets: list[TargetRow]) -> tuple[int | None, str]:
    """The wave a rollback without --wave takes: the aborted one, else the latest
    wave with a written target; and why, to say so."""
    aborted = [w.number for w in waves if w.status is WaveStatus.aborted]
    if aborted:
        return aborted[-1], "the aborted wave"
    written = [t.wave for t in targets if t.status.written and t.before is not None]
    if written:
        return max(written), "the latest wave with written targets"
    return None, "no wave was written"


def grouped_lines(label: str, reasons: dict[str, str]) -> list[str]:
    """One block per reason: ``label`` with how many, the reason once (wrapped), then
    the devices, instead of the same sentence per device."""
    import textwrap

    by_reason: dict[str, list[str]] = {}
    for name, why in reasons.items():
        by_reason.setdefault(why, []).append(name)
    lines: list[str] = []
    for why, names in sorted(by_reason.items(), key=lambda item: (-len(item[1]), item[0])):
        lines.append(f"  {label}: {len(names)} target(s)")
        lines += textwrap.wrap(why, 96, initial_indent="    why: ", subsequent_indent="         ")
        lines += textwrap.wrap(", ".join(sorted(names)), 96, initial_indent="    ")
    return lines


def _next_step(
    rollout: str, scope: RollbackScope, emergency: bool, targets: list[str], root: Path
) -> str:
    """A refused restore (a before-state the safety proof rejects, typically drift
    recorded before the rollout): the way on."""
    how = "--emergency" if emergency else f"--scope {scope}"
    if targets and not emergency:
        how = " ".join(f"-t {t}" for t in targets)
    again = f"plumb rollback {rollout} {fleet_arg(root)} {how}"
    return (
        "  next: a before-state that disagrees with its peers (drift recorded before the "
        "rollout) cannot be restored safely; restore the targets that can be and keep the "
        f"others at the intended state: {again} --only-safe"
    )


@pins_app.command("list")
def pins_list(path: PathArg = Path("."), format: FormatOpt = "text") -> None:
    """Active pins: device, field, held value, reason."""
    from ci.planfmt import dumps
    from ci.statefmt import pins_json

    check_format(format)
    with fleet_context(path) as context:
        pins = context.db.journal.pins()
        if format == "json":
            typer.echo(dumps(pins_json(pins)), nl=False)
            return
        if not pins:
            typer.echo("no active pins")
            return
        for pin in pins:
            typer.echo(f"{pin.device} {pin.path} = {pin.value!r}  ({pin.reason})")


@pins_app.command("release")
def pins_release(
    path: PathArg = Path("."),
    rollout: Annotated[str | None, typer.Option(help="Release the pins of this rollout.")] = None,
    device: Annotated[str | None, typer.Option(help="Release the pins of this device.")] = None,
    format: FormatOpt = "text",
) -> None:
    """Release pins once the intent is fixed: the reconciler owns the fields again."""
    from ci.planfmt import dumps
    from ci.statefmt import pins_release_json

    check_format(format)
    if rollout is None and device is None:
        raise fail("name --rollout or --device")
    with fleet_context(path) as context:
        count = context.db.journal.release_pins(context.actor, rollout=rollout, device=device)
        context.audit("pin", detail={"released": count, "rollout": rollout, "device": device})
        if format == "json":
            typer.echo(dumps(pins_release_json(count, rollout, device)), nl=False)
        else:
            typer.echo(f"released {count} pin(s)")


app.add_typer(pins_app, name="pins")
