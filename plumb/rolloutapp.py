"""The ``plumb rollout`` command group and what its commands share: the typer sub-app,
the spec and rollout-id arguments, and loading a spec or exiting with its problems.

The commands themselves live in :mod:`plumb.cmd_rollout` (plan, start, status, resume,
abort, list) and :mod:`plumb.cmd_approve` (approve, promote); both build on this
module, and importing :mod:`plumb.cmd_rollout` registers them all.
"""

from __future__ import annotations

from typing import Annotated

import typer

from intent.fleet import Fleet
from inventory.problems import InputError
from plumb.app import app
from plumb.completion import rollout_ids, spec_names
from rollouts.load import LoadedSpec, load_rollout

rollout_app = typer.Typer(
    help="Rollouts: stratified canary waves within caps, bake and price.", no_args_is_help=True
)
app.add_typer(rollout_app, name="rollout")

SpecArg = Annotated[
    str,
    typer.Argument(help="Spec name (rollouts/NAME.yaml) or its path.", autocompletion=spec_names),
]
IdArg = Annotated[
    str,
    typer.Argument(help="Rollout id (see `plumb rollout list`).", autocompletion=rollout_ids),
]


def load_spec_or_exit(fleet: Fleet, spec: str) -> LoadedSpec:
    """The spec ``spec`` names, or every problem in it as file:line:col and exit 2."""
    try:
        return load_rollout(fleet.root, spec)
    except InputError as exc:
        for problem in exc.problems:
            typer.echo(str(problem), err=True)
        raise typer.Exit(2) from None
