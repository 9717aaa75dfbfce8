"""``plumb plan``, ``plumb apply`` and ``plumb drift``: the reconcile loop on the CLI."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from ci.planfile import SavedPlan, plan_hash
from ci.planfmt import apply_json, apply_summary, dumps, plan_json, plan_text
from intent.fleet import CONFIG_FILE
from plumb.app import HERE, FormatOpt, PathArg, SelectOpt, app, check_format, fail, fleet_root
from plumb.context import AuditToDb, DbGuard, FleetContext, fleet_context
from plumb.interrupted import settle_interrupted
from plumb.pendingcmd import DetailedExitCommand, DriftCommand
from plumb.savedplan import recheck
from reconciler.errors import FencedOut, Frozen
from reconciler.loop import ApplyReport, apply_plan, observe_all
from reconciler.plan import Plan, build_plan
from reconciler.render import render_desired
from reconciler.select import SelectError, neighbours, select_devices
from reconciler.settings import State
from reconciler.state.db import StateBusy
from reconciler.state.lease import LeaseHeld, LeaseToken
from reconciler.targets import TargetError, Targets

err = Console(stderr=True)


@contextmanager
def _progress(total: int, label: str, enabled: bool) -> Iterator[Progress | None]:
    if not enabled or total < 8:
        yield None
        return
    with Progress(
        TextColumn(label),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err,
        transient=True,
    ) as progress:
        yield progress


@contextmanager
def _errors_exit_with(code: int) -> Iterator[None]:
    """Give bad input and usage errors (exit 2) the exit ``code`` instead: for commands
    whose exit 2 means "changes pending" (``plan --detailed-exitcode``, ``drift``)."""
    try:
        yield
    except typer.Exit as exc:
        if exc.exit_code == 2:
            raise typer.Exit(code) from None
        raise


ConcurrencyOpt = Annotated[
    int,
    typer.Option(
        min=1,
        max=256,
        help="Devices talked to at once (EOS, SONiC and hosts side by side, sharing it).",
    ),
]


def make_plan(
    context: FleetContext,
    targets: Targets,
    select: str | None,
    *,
    show_progress: bool,
    concurrency: int = 16,
) -> Plan:
    fleet = context.fleet
    try:
        names = select_devices(fleet.devices.values(), select)
    except SelectError as exc:
        raise fail(str(exc)) from None
    if not names:
        raise fail(f"--select {select!r} matches no device")
    everyone = names + neighbours(fleet, names)
    with _progress(len(everyone), "observing", show_progress) as progress:
        task = progress.add_task("observe", total=len(everyone)) if progress else None

        def tick(_: object) -> None:
            if progress is not None and task is not None:
                progress.advance(task)

        try:
            observations = observe_all(targets, everyone, concurrency=concurrency, on_done=tick)
        except TargetError as exc:
            raise fail(str(exc)) from None
    observed: dict[str, State | None] = {n: o.state for n, o in observations.items()}
    errors = {n: o.error for n, o in observations.items() if o.error}
    desired = render_desired(fleet, names)
    holds = context.db.journal.holds()  # rollback pins: shown as HELD, never re-applied
    return build_plan(fleet, desired, observed, errors=errors, holds=holds)


def _audit_plan(context: FleetContext, the_plan: Plan) -> None:
    """Every plan, read-only or about to be applied, is an audit record."""
    context.audit(
        "plan",
        detail={
            "changes": the_plan.change_count(),
            "devices": len(the_plan.changes()),
            "unknown": len(the_plan.unknown()),
            "refused": the_plan.refused,
            "hash": plan_hash(the_plan, fleet=context.fleet.config.fleet),
        },
    )


ExpandOpt = Annotated[
    bool,
    typer.Option("--expand", help="List every device's changes (default: identical ones grouped)."),
]


def _plan_text(plan: Plan, context: FleetContext, expand: bool) -> str:
    roles = {name: d.role.value for name, d in context.fleet.devices.items()}
    return plan_text(plan, fleet=context.fleet.config.fleet, roles=roles, expand=expand)


def _print_plan(plan: Plan, context: FleetContext, format: str, expand: bool) -> None:
    name = context.fleet.config.fleet
    if format == "json":
        sys.stdout.write(dumps(plan_json(plan, fleet=name, commit=context.commit)))
    else:
        sys.stdout.write(_plan_text(plan, context, expand))


@app.command(cls=DetailedExitCommand)
def plan(
    path: PathArg = Path("."),
    select: SelectOpt = None,
    format: FormatOpt = "text",
    expand: ExpandOpt = False,
    detailed_exitcode: Annotated[
        bool,
        typer.Option("--detailed-exitcode", help="Exit 0 no changes, 2 changes pending, 1 error."),
    ] = False,
    against: Annotated[
        Path | None,
        typer.Option(help="Plan against a `plumb snapshot` file: no device is contacted."),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out", "-o", help="Also save the plan (plumb.plan/v1) for `plumb apply FILE`."
        ),
    ] = None,
    concurrency: ConcurrencyOpt = 16,
) -> None:
    """Observe the fleet and show what apply would change, in its safe order."""
    from plumb.cmd_snapshot import plan_against
    from plumb.savedplan import write_plan_file

    with _errors_exit_with(1 if detailed_exitcode else 2):
        check_format(format)
        with fleet_context(path) as context:
            if against is not None:  # recorded facts: nothing observed, nothing audited
                result = plan_against(context.fleet, against, select)
            else:
                targets = context.targets()
                try:
                    result = make_plan(
                        context,
                        targets,
                        select,
                        show_progress=format == "text",
                        concurrency=concurrency,
                    )
                finally:
                    targets.close()
                _audit_plan(context, result)
            _print_plan(result, context, format, expand)
            if out is not None:
                name, commit = context.fleet.config.fleet, context.commit
                write_plan_file(out, plan_json(result, fleet=name, commit=commit))
    if result.refused or result.unknown():
        raise typer.Exit(1)
    if detailed_exitcode and result.change_count():
        raise typer.Exit(2)


PlanOrRepoArg = Annotated[
    Path,
    typer.Argument(
        help="A plan saved by `plumb plan -o` (applied exactly as made), or the fleet repo"
        " (default: -C/--repo, $PLUMB_REPO, or the nearest directory upward with a plumb.yaml)."
    ),
]


def _repo_of_plan(plan_file: Path) -> Path:
    """The fleet a saved plan applies to: -C/--repo or the working directory's, else the
    nearest directory above the plan file with a plumb.yaml."""
    root = fleet_root(HERE)
    if (root / CONFIG_FILE).is_file():
        return root
    for directory in plan_file.resolve().parents:
        if (directory / CONFIG_FILE).is_file():
            return directory
    return root


@app.command()
def apply(
    path: PlanOrRepoArg = HERE,
    select: SelectOpt = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Stage and compare only.")] = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask.")] = False,
    format: FormatOpt = "text",
    expand: ExpandOpt = False,
    concurrency: ConcurrencyOpt = 16,
    confirm_within: Annotated[
        float,
        typer.Option(
            min=0.0,
            help="Commit-confirm window in seconds (devices revert unless confirmed); "
            "0 commits without a confirm window.",
        ),
    ] = 120.0,
) -> None:
    """Apply the whole plan in its safe order; a second plan afterwards is empty.

    Given a plan saved by `plumb plan -o`, apply exactly that plan, and refuse if any
    device no longer holds a value the plan was made against."""
    from plumb.savedplan import load_plan_file

    check_format(format)
    saved = None
    if path.is_file():
        if select is not None:
            raise fail("a saved plan is applied whole: --select does not apply to it")
        saved = load_plan_file(path)
        path = _repo_of_plan(path)
    with fleet_context(path) as context:
        targets = context.targets()
        try:
            report = _apply(
                context,
                targets,
                _Options(
                    select, dry_run, yes, format, expand, concurrency, confirm_within or None, saved
                ),
            )
        finally:
            targets.close()
    if not report.ok():
        raise typer.Exit(1)


def _apply(context: FleetContext, targets: Targets, options: _Options) -> ApplyReport:
    """A dry run plans and stages without the lease. A real apply takes the lease first,
    settles writes an interrupted run left open, and only then observes and plans (or
    checks a saved plan against the devices): a plan made or checked before the lease
    could be stale by the time it is applied."""
    if options.dry_run:
        return _plan_and_apply(context, targets, options, None)
    db = context.db
    try:
        db.freeze.check()
        with db.lease.held(context.holder, "apply") as token:
            for settled in settle_interrupted(db, targets, AuditToDb(context).record):
                err.print(
                    f"interrupted write on {settled.device}: {settled.message}",
                    highlight=False,
                    soft_wrap=True,
                )
            return _plan_and_apply(context, targets, options, token)
    except (Frozen, FencedOut, LeaseHeld, StateBusy) as exc:
        raise fail(str(exc), 1) from None


@dataclass(frozen=True)
class _Options:
    select: str | None
    dry_run: bool
    yes: bool
    format: str
    expand: bool
    concurrency: int
    confirm_within: float | None
    saved: SavedPlan | None = None


def _plan_and_apply(
    context: FleetContext, targets: Targets, options: _Options, token: LeaseToken | None
) -> ApplyReport:
    select, dry_run, yes, format = options.select, options.dry_run, options.yes, options.format
    if options.saved is not None:
        the_plan = recheck(context, targets, options.saved)
    else:
        the_plan = make_plan(
            context,
            targets,
            select,
            show_progress=format == "text",
            concurrency=options.concurrency,
        )
    _audit_plan(context, the_plan)
    if format == "text":
        sys.stdout.write(_plan_text(the_plan, context, options.expand))
    if the_plan.refused or the_plan.unknown():
        raise fail("not applying: the plan is refused or has unknown devices", 1)
    if the_plan.change_count() == 0:
        if format == "json":
            sys.stdout.write(
                dumps(
                    apply_json(ApplyReport(()), fleet=context.fleet.config.fleet, dry_run=dry_run)
                )
            )
        else:
            typer.echo("nothing to do: the fleet is at its intent")
        return ApplyReport(())
    if not dry_run and not yes:
        if not sys.stdin.isatty():
            raise fail("not applying without --yes: no terminal to ask on", 1)
        if not typer.confirm(f"apply {the_plan.change_count()} change(s)?"):
            raise fail("aborted", 1)
    report = _run(
        context,
        targets,
        the_plan,
        token,
        concurrency=options.concurrency,
        confirm_within=options.confirm_within,
        progress=format == "text",
    )
    if format == "json":
        sys.stdout.write(
            dumps(apply_json(report, fleet=context.fleet.config.fleet, dry_run=dry_run))
        )
    else:
        for result in report.results:
            if result.error:
                typer.echo(
                    f"{result.outcome.value.upper()} {result.device} (step {result.step}): "
                    f"{result.error}"
                )
        typer.echo(apply_summary(report, dry_run=dry_run), nl=False)
    return report


def _run(
    context: FleetContext,
    targets: Targets,
    the_plan: Plan,
    token: LeaseToken | None,
    *,
    concurrency: int,
    confirm_within: float | None,
    progress: bool,
) -> ApplyReport:
    """Apply under ``token`` (the lease the caller holds), or stage only when None."""
    total = sum(len(s.changes) for s in the_plan.steps)
    with _progress(total, "applying", progress) as bar:
        task = bar.add_task("apply", total=total) if bar else None

        def tick(_: object) -> None:
            if bar is not None and task is not None:
                bar.advance(task)

        if token is None:
            return apply_plan(
                the_plan, targets, dry_run=True, concurrency=concurrency, on_device=tick
            )
        context.audit("decision", detail={"apply": "start", "changes": the_plan.change_count()})
        return apply_plan(
            the_plan,
            targets,
            dry_run=False,
            guard=DbGuard(context.db, token),
            audit=AuditToDb(context),
            confirm_within=confirm_within,
            concurrency=concurrency,
            on_device=tick,
        )


@app.command(cls=DriftCommand)
def drift(
    path: PathArg = Path("."),
    select: SelectOpt = None,
    format: FormatOpt = "text",
    concurrency: ConcurrencyOpt = 16,
) -> None:
    """Report fields whose observed value differs from intent (exit 2 when there is drift,
    1 when a device is unknown or the command fails)."""
    with _errors_exit_with(1):
        check_format(format)
        with fleet_context(path) as context:
            targets = context.targets()
            try:
                result = make_plan(
                    context,
                    targets,
                    select,
                    show_progress=format == "text",
                    concurrency=concurrency,
                )
            finally:
                targets.close()
            if format == "json":
                sys.stdout.write(
                    dumps(
                        plan_json(result, fleet=context.fleet.config.fleet, commit=context.commit)
                    )
                )
            else:
                for name, dp in sorted(result.devices.items()):
                    for change in dp.changes:
                        typer.echo(
                            f"{name} {change.path}: is {change.before!r}, intent "
                            f"{change.after!r} [{change.owner}]"
                        )
                typer.echo(
                    f"drift: {result.change_count()} field(s) on {len(result.changes())} "
                    f"device(s); {len(result.unknown())} unknown"
                )
    if result.unknown():
        raise typer.Exit(1)
    if result.change_count():
        raise typer.Exit(2)
