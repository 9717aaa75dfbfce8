"""``plumb rollout plan SPEC [PATH]``: the waves of a rollout spec against the fleet's
observed state (the lab fleet unless ``plumb.yaml`` names other drivers).

Exit codes: 0 planned (or nothing to roll out), 1 the spec cannot be planned (a cap
makes the canary impossible, a target is unknown, the reconcile plan is refused),
2 bad input or usage (spec errors as ``file:line:col``, no lab fleet yet).
"""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ci.planfmt import dumps
from intent.fleet import Fleet
from lab.fleet import lab_db_path
from plumb.app import (
    ConcurrencyOpt,
    FormatOpt,
    PathArg,
    check_format,
    fail,
    fleet_arg,
    fleet_context,
    format_option,
)
from plumb.cmd_approve import rollout_approve, rollout_promote
from plumb.completion import rollout_ids
from plumb.progress import ConsoleReporter
from plumb.rolloutapp import IdArg, SpecArg, load_spec_or_exit, rollout_app
from reconciler.errors import FencedOut, Frozen
from reconciler.select import select_devices
from reconciler.state.db import StateBusy
from reconciler.state.journal import RolloutStatus, WaveStatus
from reconciler.state.lease import LeaseHeld, LeaseToken
from reconciler.targets import rule_for
from rollouts.caps import PlanError
from rollouts.load import LoadedSpec
from service.context import FleetContext
from service.owned import NO_OWNERSHIP
from service.planning import make_plan
from service.rollback import finish_rollback
from service.runtime import rollout_runtime

if TYPE_CHECKING:
    from rollouts.planning import RolloutPlan


def _checked_select(fleet: Fleet, loaded: LoadedSpec) -> str:
    """The spec's selection, refused at its line when it selects nothing, with a
    warning at its line for every alternative that matches no device."""
    from rollouts.selection import check_selection

    where = loaded.where("targets", "select")
    try:
        warnings = check_selection(fleet.devices.values(), loaded.spec.targets.select)
    except PlanError as exc:
        typer.echo(f"{where}: {exc.message}", err=True)
        raise typer.Exit(1) from None
    for warning in warnings:
        typer.echo(f"{where}: warning: {warning}", err=True)
    return loaded.spec.targets.select


def _needs_lab(fleet: Fleet, select: str) -> bool:
    names = select_devices(fleet.devices.values(), select)
    rules = fleet.config.drivers
    return any(rule_for(rules, fleet.devices[n]).driver == "lab" for n in names)


@rollout_app.command("plan")
def rollout_plan(
    spec: SpecArg,
    path: PathArg = Path("."),
    format: Annotated[str, format_option(*ROLLOUT_PLAN_FORMATS)] = "text",
) -> None:
    """Plan a rollout: strata, canary and waves within the caps, bake, stalled work."""
    # scipy (bake sizing) takes seconds to import: only this command pays for it.
    from rollouts.planning import NothingToRollOut, plan_rollout
    from service.begin import drain_preflight

    check_format(format, ROLLOUT_PLAN_FORMATS)
    with fleet_context(path) as context:
        fleet = context.fleet
        loaded = load_spec_or_exit(fleet, spec)
        select = _checked_select(fleet, loaded)
        if _needs_lab(fleet, select) and not lab_db_path(fleet).exists():
            raise fail(
                f"no lab fleet at {lab_db_path(fleet)}: a rollout plan needs the targets' "
                f"current versions; run `plumb lab init {path}` first"
            )
        targets = context.targets()
        try:
            progress = format == "text" and sys.stderr.isatty()
            observed = make_plan(  # what the spec would change, whoever owns it now
                context,
                targets,
                select,
                progress=ConsoleReporter(enabled=progress, minimum=8),
                ownership=NO_OWNERSHIP,
            )
        finally:
            targets.close()
        try:
            result = plan_rollout(fleet, loaded.spec, observed)
        except NothingToRollOut as exc:
            typer.echo(f"{loaded.doc.path}: {exc.message}")
            if exc.unreachable:  # nothing to do, and yet not at intent
                raise typer.Exit(1) from None
            return
        except PlanError as exc:
            typer.echo(f"{loaded.where(*exc.field)}: {exc.message}", err=True)
            raise typer.Exit(1) from None
        _print(result, loaded, fleet, context.commit, format)
        _warn_unjudgeable(result, loaded)
        preflight = drain_preflight(loaded.spec, result.targets)
        for problem in preflight:
            typer.echo(f"{loaded.where('drain', 'via')}: cannot start here: {problem}", err=True)
    if preflight:
        raise typer.Exit(1)
    if observed.refused:
        typer.echo(f"REFUSED: the reconcile plan is unsafe: {observed.refused}", err=True)
        raise typer.Exit(1)
    if result.unknown:
        raise typer.Exit(1)


def _warn_unjudgeable(result: RolloutPlan, loaded: LoadedSpec) -> None:
    """Waves whose abort conditions can never be judged: they would hold for ever."""
    from rollouts.judgeable import unjudgeable

    sizes = [len(w.targets) for w in result.waves.waves]
    for found in unjudgeable(loaded.spec.abort, sizes):
        where = loaded.where("abort", "metrics", found.metric, "min_samples")
        typer.echo(f"{where}: warning: {found.message()}", err=True)


ROLLOUT_PLAN_FORMATS = ("text", "json", "svg", "html", "mermaid")


def _print(
    result: RolloutPlan,
    loaded: LoadedSpec,
    fleet: Fleet,
    commit: str | None,
    format: str,
) -> None:
    from ci.rolloutfmt import rollout_plan_json, rollout_plan_text

    name = fleet.config.fleet
    if format == "json":
        document = rollout_plan_json(result, fleet=name, commit=commit, spec_file=loaded.doc.path)
        sys.stdout.write(dumps(document))
    elif format == "mermaid":
        from ci.diagrams import waves_gantt

        sys.stdout.write(waves_gantt(result))
    elif format in ("svg", "html"):
        from ci.wavesvg import wave_plan_html, wave_plan_svg

        racks = {n: d.rack for n, d in fleet.devices.items()}
        text = rollout_plan_text(result, fleet=name)
        sys.stdout.write(
            wave_plan_svg(result, racks, fleet=name)
            if format == "svg"
            else wave_plan_html(result, racks, fleet=name, text=text)
        )
    else:
        sys.stdout.write(rollout_plan_text(result, fleet=name))


# -- execution ----------------------------------------------------------------------------

EXIT_HELD = 3


def _exit_for(status: RolloutStatus) -> int:
    if status is RolloutStatus.completed:
        return 0
    if status in (RolloutStatus.held, RolloutStatus.awaiting_promotion):
        return EXIT_HELD
    return 1


@contextmanager
def _lease(context: FleetContext, purpose: str) -> Iterator[LeaseToken]:
    try:
        held = context.db.lease.held(context.holder, purpose)
        token = held.__enter__()
    except (LeaseHeld, StateBusy) as exc:
        raise fail(str(exc), 1) from None  # it says who holds it and what can be done
    try:
        yield token
    finally:
        held.__exit__(None, None, None)


def _show_status(context: FleetContext, rollout: str, format: str) -> None:
    from ci.journalfmt import status_json, status_text

    journal = context.db.journal
    row = journal.get(rollout)
    if row is None:
        raise fail(
            f"no rollout {rollout!r} (see `plumb rollout list {fleet_arg(context.fleet.root)}`)"
        )
    args = (row, journal.waves(rollout), journal.targets(rollout), journal.pins(rollout))
    if format == "json":
        sys.stdout.write(dumps(status_json(*args)))
    else:
        sys.stdout.write(status_text(*args))


def _drive(
    context: FleetContext, rollout: str, token: LeaseToken, show: bool, concurrency: int = 16
) -> RolloutStatus:
    from rollouts.execute import drive
    from rollouts.spec import RolloutSpec
    from rollouts.targetops import RolloutStopped

    journal = context.db.journal
    names = [t.device for t in journal.targets(rollout)]
    row = journal.get(rollout)
    spec = RolloutSpec.model_validate(row.plan["spec"]) if row is not None else None
    with rollout_runtime(
        context, token, names, reporter=ConsoleReporter(enabled=show), spec=spec
    ) as runtime:
        runtime.concurrency = concurrency
        try:
            return drive(runtime, rollout)
        except (RolloutStopped, Frozen, FencedOut) as exc:
            context.db.journal.set_status(rollout, RolloutStatus.held, f"stopped: {exc}")
            typer.echo(
                f"stopped: {exc}; resume with: plumb rollout resume {rollout}"
                f" {fleet_arg(context.fleet.root)}",
                err=True,
            )
            return RolloutStatus.held


def _refuse_active(context: FleetContext) -> None:
    for row in context.db.journal.all():
        if row.status.active:
            raise fail(
                f"rollout {row.id} is {row.status.value}: resume it (plumb rollout resume"
                f" {row.id} {fleet_arg(context.fleet.root)}) or abort it first",
                1,
            )


@dataclass(frozen=True)
class Launched:
    rollout: str
    status: RolloutStatus
    plan: RolloutPlan


def launch(
    context: FleetContext,
    loaded: LoadedSpec,
    *,
    show: bool,
    concurrency: int = 16,
    accept_unjudgeable: str | None = None,
) -> Launched | None:
    """Plan, journal and drive a rollout of a committed spec (None: nothing to roll
    out). Raises typer.Exit with a message for anything that refuses the start."""
    from rollouts.gitpin import NotDeclared, declared
    from service.begin import NothingToStart, StartRefused, begin_rollout

    spec_rel = Path(loaded.doc.path).as_posix()
    try:
        declaration = declared(context.fleet.root, spec_rel)
    except NotDeclared as exc:
        raise fail(f"not starting: {exc}") from None
    _refuse_active(context)
    with _lease(context, f"rollout {loaded.spec.name}") as token:
        select = _checked_select(context.fleet, loaded)
        try:
            begun = begin_rollout(
                context,
                loaded,
                token,
                declaration,
                select=select,
                warn=lambda line: typer.echo(line, err=True),
                concurrency=concurrency,
                accept_unjudgeable=accept_unjudgeable,
            )
        except NothingToStart as exc:
            typer.echo(str(exc))
            return None
        except StartRefused as exc:
            raise fail(exc.message, 1) from None
        rollout, result = begun.rollout, begun.plan
        if show:
            typer.echo(
                f"started rollout {rollout}: {len(result.targets)} targets in "
                f"{len(result.reports)} waves (spec @ {declaration.spec_commit[:12]}, "
                f"intent @ {declaration.intent_commit[:12]})"
            )
        status = _drive(context, rollout, token, show=show, concurrency=concurrency)
    return Launched(rollout, status, result)


@rollout_app.command("start")
def rollout_start(
    spec: SpecArg,
    path: PathArg = Path("."),
    format: FormatOpt = "text",
    concurrency: ConcurrencyOpt = 16,
    accept_unjudgeable: Annotated[
        str | None,
        typer.Option(
            "--accept-unjudgeable",
            metavar="WHY",
            help="Start although a wave can never be judged (its plan says so), for this"
            " reason (audited); otherwise such a start is refused.",
        ),
    ] = None,
) -> None:
    """Start a rollout from a committed spec and intent: waves, bake, judgment, and
    automatic rollback on abort when the spec says so.

    Exit 0 completed, 1 aborted (rolled back or not) or refused, 2 bad input,
    3 held (resume later)."""
    check_format(format)
    with fleet_context(path) as context:
        launched = launch(
            context,
            load_spec_or_exit(context.fleet, spec),
            show=format == "text",
            concurrency=concurrency,
            accept_unjudgeable=accept_unjudgeable,
        )
        if launched is None:
            return
        _show_status(context, launched.rollout, format)
    raise typer.Exit(_exit_for(launched.status))


@rollout_app.command("resume")
def rollout_resume(
    rollout: IdArg,
    path: PathArg = Path("."),
    format: FormatOpt = "text",
    accept_held: Annotated[
        str | None,
        typer.Option(
            "--accept-held",
            metavar="WHY",
            help="Pass the held wave without its judgment, for this reason (journal, audit).",
        ),
    ] = None,
    concurrency: ConcurrencyOpt = 16,
) -> None:
    """Resume a rollout after a crash, a hold or a stop: targets that were in flight are
    re-observed before anything is written. Refused if the spec changed since start.

    A held wave bakes once more and is judged again; with ``--accept-held WHY`` the
    operator passes it instead (a wave that can never be judged, e.g. no controls)."""
    from rollouts.gitpin import spec_changed_since

    check_format(format)
    with fleet_context(path) as context:
        row = context.db.journal.get(rollout)
        if row is None:
            raise fail(
                f"no rollout {rollout!r} (see `plumb rollout list {fleet_arg(context.fleet.root)}`)"
            )
        if accept_held is not None and row.status is not RolloutStatus.held:
            raise fail(f"rollout {rollout} is {row.status.value}: no held wave to accept", 1)
        if not row.status.active:
            raise fail(f"rollout {rollout} is {row.status.value}: nothing to resume", 1)
        spec_file = context.fleet.root / row.spec_path
        current = spec_file.read_bytes() if spec_file.is_file() else b""
        edited = hashlib.sha256(current).hexdigest() != row.spec_sha256
        if not edited and row.spec_commit:
            edited = spec_changed_since(context.fleet.root, row.spec_path, row.spec_commit)
        if edited:
            raise fail(
                f"{row.spec_path} was edited since rollout {rollout} started (spec @ "
                f"{(row.spec_commit or '?')[:12]}): a rollout runs the spec it was declared "
                f"with. Abort it (plumb rollout abort {rollout}"
                f" {fleet_arg(context.fleet.root)} --reason ...) and start a new one."
            )
        with _lease(context, f"rollout {rollout}") as token:
            context.audit("rollout", detail={"rollout": rollout, "event": "resumed"})
            if accept_held is not None:
                _accept_held(context, rollout, accept_held)
            text = format == "text"
            if row.status is RolloutStatus.rolling_back:
                status = _finish_rollback(
                    context, rollout, token, show=text, concurrency=concurrency
                )
            else:
                status = _drive(context, rollout, token, show=text, concurrency=concurrency)
        _show_status(context, rollout, format)
    raise typer.Exit(_exit_for(status))


def _accept_held(context: FleetContext, rollout: str, why: str) -> None:
    """The operator passes the held wave: decision ``accepted``, the judgment it had
    kept beside the reason, audited."""
    journal = context.db.journal
    held = [w for w in journal.waves(rollout) if w.status is WaveStatus.held]
    if not held:
        raise fail(f"rollout {rollout} has no held wave to accept", 1)
    wave = held[0]
    accepted = {"by": context.actor, "reason": why, "was": wave.decision}
    journal.update_wave(
        rollout,
        wave.number,
        status=WaveStatus.passed,
        decision="accepted",
        evidence={**(wave.evidence or {}), "accepted": accepted},
    )
    context.audit(
        "rollout",
        detail={"rollout": rollout, "wave": wave.number, "event": "accepted", "reason": why},
    )
    typer.echo(f"wave {wave.number} accepted by {context.actor}: {why}", err=True)


def _finish_rollback(
    context: FleetContext, rollout: str, token: LeaseToken, *, show: bool, concurrency: int = 16
) -> RolloutStatus:
    """A rollback that a crash interrupted: run it again (restores are idempotent)."""
    names = [t.device for t in context.db.journal.targets(rollout)]
    with rollout_runtime(context, token, names, reporter=ConsoleReporter(enabled=show)) as runtime:
        runtime.concurrency = concurrency
        return finish_rollback(context, runtime, rollout)


@rollout_app.command("status")
def rollout_status(
    rollout: Annotated[
        str | None,
        typer.Argument(help="Rollout id; default: the latest.", autocompletion=rollout_ids),
    ] = None,
    path: PathArg = Path("."),
    format: FormatOpt = "text",
) -> None:
    """Waves, each decision with its evidence and numbers, strata, cost so far."""
    check_format(format)
    with fleet_context(path) as context:
        if rollout is None:
            rows = context.db.journal.all()
            if not rows:
                raise fail("no rollouts recorded yet", 1)
            rollout = rows[-1].id
        _show_status(context, rollout, format)


@rollout_app.command("list")
def rollout_list(path: PathArg = Path("."), format: FormatOpt = "text") -> None:
    """Every recorded rollout with its status, then the approvals queued for plumb serve."""
    from ci.journalfmt import list_text, queued_json, queued_text
    from ci.statefmt import rollout_list_json
    from service.approvals import queued_starts

    check_format(format)
    with fleet_context(path) as context:
        journal = context.db.journal
        rows = journal.all()
        waves = {r.id: journal.waves(r.id) for r in rows}
        queued = queued_starts(context)
        if format == "json":
            doc = rollout_list_json(rows, waves)
            sys.stdout.write(dumps({**doc, "queued": queued_json(queued)}))
        else:
            sys.stdout.write(list_text(rows, waves) + queued_text(queued))


@rollout_app.command("abort")
def rollout_abort(
    rollout: IdArg,
    path: PathArg = Path("."),
    reason: Annotated[
        str, typer.Option(help="Why (kept in the journal and audit).")
    ] = "aborted by operator",
) -> None:
    """Stop a rollout: nothing more is applied (a running process stops before its next
    step). Its changed targets stay as they are; `plumb rollback ID` restores them."""
    with fleet_context(path) as context:
        row = context.db.journal.get(rollout)
        if row is None:
            raise fail(
                f"no rollout {rollout!r} (see `plumb rollout list {fleet_arg(context.fleet.root)}`)"
            )
        if not row.status.active:
            raise fail(f"rollout {rollout} is {row.status.value} already", 1)
        context.db.journal.set_status(rollout, RolloutStatus.aborted, reason)
        context.audit(
            "rollout",
            detail={"rollout": rollout, "event": "aborted", "reason": reason, "by": "operator"},
        )
        written = [t.device for t in context.db.journal.targets(rollout) if t.status.written]
        typer.echo(
            f"rollout {rollout} aborted; {len(written)} target(s) were changed: "
            f"roll them back with `plumb rollback {rollout} {fleet_arg(context.fleet.root)}`"
        )


# plumb/cmd_approve.py: listed after the commands above in `plumb rollout --help`
rollout_app.command("approve")(rollout_approve)
rollout_app.command("promote")(rollout_promote)
