"""``plumb rollout plan SPEC [PATH]``: the waves of a rollout spec against the fleet's
observed state (the lab fleet unless ``plumb.yaml`` names other drivers).

Exit codes: 0 planned (or nothing to roll out), 1 the spec cannot be planned (a cap
makes the canary impossible, a target is unknown, the reconcile plan is refused),
2 bad input or usage (spec errors as ``file:line:col``, no lab fleet yet).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ci.planfmt import dumps
from intent.fleet import Fleet
from inventory.problems import InputError
from plumb.app import FormatOpt, PathArg, app, check_format, fail
from plumb.cmd_reconcile import make_plan
from plumb.context import fleet_context
from reconciler.lab import lab_db_path
from reconciler.select import select_devices
from reconciler.targets import rule_for
from rollouts.caps import PlanError
from rollouts.load import LoadedSpec, load_rollout

if TYPE_CHECKING:
    from rollouts.planning import RolloutPlan

rollout_app = typer.Typer(
    help="Rollouts: stratified canary waves within caps, bake and price.", no_args_is_help=True
)
app.add_typer(rollout_app, name="rollout")

SpecArg = Annotated[str, typer.Argument(help="Spec name (rollouts/NAME.yaml) or its path.")]


def _load_spec(fleet: Fleet, spec: str) -> LoadedSpec:
    try:
        return load_rollout(fleet.root, spec)
    except InputError as exc:
        for problem in exc.problems:
            typer.echo(str(problem), err=True)
        raise typer.Exit(2) from None


def _needs_lab(fleet: Fleet, select: str) -> bool:
    names = select_devices(fleet.devices.values(), select)
    rules = fleet.config.drivers
    return any(rule_for(rules, fleet.devices[n]).driver == "lab" for n in names)


@rollout_app.command("plan")
def rollout_plan(
    spec: SpecArg,
    path: PathArg = Path("."),
    format: FormatOpt = "text",
) -> None:
    """Plan a rollout: strata, canary and waves within the caps, bake, stalled work."""
    # scipy (bake sizing) takes seconds to import: only this command pays for it.
    from rollouts.planning import NothingToRollOut, plan_rollout

    check_format(format)
    with fleet_context(path) as context:
        fleet = context.fleet
        loaded = _load_spec(fleet, spec)
        select = loaded.spec.targets.select
        if _needs_lab(fleet, select) and not lab_db_path(fleet).exists():
            raise fail(
                f"no lab fleet at {lab_db_path(fleet)}: a rollout plan needs the targets' "
                f"current versions; run `plumb lab init {path}` first"
            )
        targets = context.targets()
        try:
            progress = format == "text" and sys.stderr.isatty()
            observed = make_plan(context, targets, select, show_progress=progress)
        finally:
            targets.close()
        try:
            result = plan_rollout(fleet, loaded.spec, observed)
        except NothingToRollOut as exc:
            typer.echo(f"{loaded.doc.path}: {exc.message}")
            return
        except PlanError as exc:
            typer.echo(f"{loaded.where(*exc.field)}: {exc.message}", err=True)
            raise typer.Exit(1) from None
        _print(result, loaded, fleet.config.fleet, context.commit, format)
    if observed.refused:
        typer.echo(f"REFUSED: the reconcile plan is unsafe: {observed.refused}", err=True)
        raise typer.Exit(1)
    if result.unknown:
        raise typer.Exit(1)


def _print(
    result: RolloutPlan, loaded: LoadedSpec, fleet: str, commit: str | None, format: str
) -> None:
    from ci.rolloutfmt import rollout_plan_json, rollout_plan_text

    if format == "json":
        document = rollout_plan_json(result, fleet=fleet, commit=commit, spec_file=loaded.doc.path)
        sys.stdout.write(dumps(document))
    else:
        sys.stdout.write(rollout_plan_text(result, fleet=fleet))
