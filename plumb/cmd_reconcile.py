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

from ci.planfile import SavedPlan
from ci.planfmt import apply_json, apply_summary, dumps, plan_json, plan_text
from intent.fleet import CONFIG_FILE
from plumb.app import (
    HERE,
    ConcurrencyOpt,
    FormatOpt,
    PathArg,
    SelectOpt,
    app,
    check_format,
    fail,
    fleet_context,
    fleet_root,
    format_option,
)
from plumb.pendingcmd import DetailedExitCommand, DriftCommand
from plumb.progress import ConsoleReporter
from reconciler.loop import ApplyReport
from reconciler.plan import Plan
from reconciler.targets import Targets
from service.applying import ApplyRequest, apply_fleet, audit_plan
from service.context import FleetContext
from service.interrupted import Settled
from service.planning import make_plan

err = Console(stderr=True)


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


ExpandOpt = Annotated[
    bool,
    typer.Option("--expand", help="List every device's changes (default: identical ones grouped)."),
]


def _plan_text(plan: Plan, context: FleetContext, expand: bool) -> str:
    roles = {name: d.role.value for name, d in context.fleet.devices.items()}
    return plan_text(plan, fleet=context.fleet.config.fleet, roles=roles, expand=expand)


PLAN_FORMATS = ("text", "json", "mermaid", "dot")


def _print_plan(plan: Plan, context: FleetContext, format: str, expand: bool) -> None:
    name = context.fleet.config.fleet
    if format == "json":
        sys.stdout.write(dumps(plan_json(plan, fleet=name, commit=context.commit)))
    elif format in ("mermaid", "dot"):
        from ci.diagrams import plan_dot, plan_mermaid

        roles = {n: d.role.value for n, d in context.fleet.devices.items()}
        picture = (
            plan_mermaid(plan, roles) if format == "mermaid" else plan_dot(plan, roles, name=name)
        )
        sys.stdout.write(picture)
    else:
        sys.stdout.write(_plan_text(plan, context, expand))


@app.command(cls=DetailedExitCommand)
def plan(
    path: PathArg = Path("."),
    select: SelectOpt = None,
    format: Annotated[str, format_option(*PLAN_FORMATS)] = "text",
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
    from service.savedplan import write_plan_file

    with _errors_exit_with(1 if detailed_exitcode else 2):
        check_format(format, PLAN_FORMATS)
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
                        progress=ConsoleReporter(enabled=format == "text", minimum=8),
                        concurrency=concurrency,
                    )
                finally:
                    targets.close()
                audit_plan(context, result)
            _print_plan(result, context, format, expand)
            frozen = context.db.freeze.status() if against is None else None
            if frozen is not None and format == "text":
                typer.echo(
                    f"note: {frozen.describe()}: `plumb apply` refuses until `plumb unfreeze`",
                    err=True,
                )
            if out is not None:
                name, commit = context.fleet.config.fleet, context.commit
                document = plan_json(result, fleet=name, commit=commit)
                document["fleet_root"] = str(context.fleet.root.resolve())
                write_plan_file(out, document)
    if result.refused or result.unknown():
        raise typer.Exit(1)
    if detailed_exitcode and (result.change_count() or result.unreachable()):
        raise typer.Exit(2)  # not at intent, whether plumb can write the rest or not


PlanOrRepoArg = Annotated[
    Path,
    typer.Argument(
        help="A plan saved by `plumb plan -o` (applied exactly as made), or the fleet repo"
        " (default: -C/--repo, $PLUMB_REPO, or the nearest directory upward with a plumb.yaml)."
    ),
]


def _repo_of_plan(plan_file: Path, saved: SavedPlan) -> Path:
    """The fleet a saved plan applies to: -C/--repo or the working directory's, else the
    fleet repo the plan names (where it was made), else the nearest directory above the
    plan file with a plumb.yaml. Loading it checks the fleet's name against the plan's."""
    root = fleet_root(HERE)
    if (root / CONFIG_FILE).is_file():
        return root
    if saved.fleet_root is not None and (Path(saved.fleet_root) / CONFIG_FILE).is_file():
        return Path(saved.fleet_root)
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
    take_over: Annotated[
        str | None,
        typer.Option(
            "--take-over",
            metavar="ROLLOUT",
            help="Also write the changes this active or approved rollout owns (they are"
            " otherwise left to its waves); needs --reason, audited.",
        ),
    ] = None,
    reason: Annotated[
        str | None, typer.Option(help="Why --take-over writes a rollout's fields now.")
    ] = None,
) -> None:
    """Apply the whole plan in its safe order; a second plan afterwards is empty.

    Given a plan saved by `plumb plan -o`, apply exactly that plan, and refuse if any
    device no longer holds a value the plan was made against. Changes an active or
    approved rollout owns are shown as OWNED and never written (one writer per field)."""
    from service.savedplan import load_plan_file

    check_format(format)
    saved = None
    if path.is_file():
        if select is not None:
            raise fail("a saved plan is applied whole: --select does not apply to it")
        saved = load_plan_file(path)
        path = _repo_of_plan(path, saved)
    with fleet_context(path) as context:
        targets = context.targets()
        try:
            report = _apply(
                context,
                targets,
                _Options(
                    select,
                    dry_run,
                    yes,
                    format,
                    expand,
                    concurrency,
                    confirm_within or None,
                    saved,
                    take_over,
                    reason,
                ),
            )
        finally:
            targets.close()
    if not report.ok():
        raise typer.Exit(1)


class _CliHooks:
    """The terminal's part in an apply: settled writes and the plan shown, the
    confirmation asked unless --yes."""

    def __init__(self, context: FleetContext, options: _Options) -> None:
        self.context = context
        self.options = options

    def settled(self, settled: Settled) -> None:
        err.print(
            f"interrupted write on {settled.device}: {settled.message}",
            highlight=False,
            soft_wrap=True,
        )

    def planned(self, plan: Plan) -> None:
        if self.options.format == "text":
            sys.stdout.write(_plan_text(plan, self.context, self.options.expand))

    def confirm(self, plan: Plan) -> bool:
        if self.options.yes:
            return True
        if not sys.stdin.isatty():
            raise fail("not applying without --yes: no terminal to ask on", 1)
        return typer.confirm(f"apply {plan.change_count()} change(s)?")

    def progress(self) -> ConsoleReporter:
        return ConsoleReporter(enabled=self.options.format == "text", minimum=8)


def _apply(context: FleetContext, targets: Targets, options: _Options) -> ApplyReport:
    """Apply through the service floor's one apply path; print what it did."""
    request = ApplyRequest(
        select=options.select,
        saved=options.saved,
        dry_run=options.dry_run,
        concurrency=options.concurrency,
        confirm_within=options.confirm_within,
        take_over=options.take_over,
        take_over_reason=options.reason,
    )
    the_plan, report = apply_fleet(context, targets, request, _CliHooks(context, options))
    name, dry_run = context.fleet.config.fleet, options.dry_run
    if options.format == "json":
        sys.stdout.write(dumps(apply_json(report, fleet=name, dry_run=dry_run)))
    elif the_plan.change_count() == 0:
        typer.echo(_nothing_to_do(the_plan, options.select))
    else:
        for result in report.results:
            if result.error:
                typer.echo(
                    f"{result.outcome.value.upper()} {result.device} (step {result.step}): "
                    f"{result.error}"
                )
        typer.echo(apply_summary(report, dry_run=dry_run), nl=False)
    return report


def _nothing_to_do(plan: Plan, select: str | None) -> str:
    """Why an apply wrote nothing, without claiming more than was planned."""
    owned = len(plan.claimed())
    if select is not None:
        said = f"nothing to do on --select {select!r}: its devices are at their intent"
    else:
        said = "nothing to do: the fleet is at its intent"
    if owned:
        said += f" (but {owned} change(s) owned by a rollout: see OWNED above)"
    return said


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
    take_over: str | None = None
    reason: str | None = None


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
                    progress=ConsoleReporter(enabled=format == "text", minimum=8),
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
                    for item in dp.inexpressible:
                        if item.unreachable():
                            typer.echo(
                                f"{name} {item.path}: is {item.observed!r}, intent "
                                f"{item.value!r} [{item.owner}] (cannot be written here:"
                                f" {item.reason})"
                            )
                unreachable = result.unreachable()
                drifted = result.changes().keys() | {i.device for i in unreachable}
                unwritable = f", {len(unreachable)} not writable by plumb" if unreachable else ""
                typer.echo(
                    f"drift: {result.change_count() + len(unreachable)} field(s) on"
                    f" {len(drifted)} device(s){unwritable}; {len(result.unknown())} unknown"
                )
    if result.unknown():
        raise typer.Exit(1)
    if result.change_count() or result.unreachable():
        raise typer.Exit(2)
