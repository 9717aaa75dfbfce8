"""The command table of ``plumb``, loaded on demand.

``plumb --help`` lists every command from the table below without importing the
modules that implement them (which pull in pydantic models, rich, git, numpy); a
command's module is imported only when that command runs. A command a module
registers but the table does not name still runs (every module is loaded to find
it); a test keeps the table equal to what the modules register. The root group is
bound to the typer app in :mod:`plumb.app`, which builds on this module.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass

import typer
from typer import _click
from typer._click.utils import make_default_short_help

from plumb.pendingcmd import PendingAwareGroup


@dataclass(frozen=True)
class LazyCommand:
    """A command (or command group) whose module is imported when it is used."""

    module: str
    summary: str  # the first paragraph of its help, as ``plumb --help`` shows it
    group: str | None = None  # a typer sub-app the module defines but does not attach


LAZY: dict[str, LazyCommand] = {
    "plan": LazyCommand(
        "plumb.cmd_reconcile",
        "Observe the fleet and show what apply would change, in its safe order.",
    ),
    "apply": LazyCommand(
        "plumb.cmd_reconcile",
        "Apply the whole plan in its safe order; a second plan afterwards is empty.",
    ),
    "drift": LazyCommand(
        "plumb.cmd_reconcile",
        "Report fields whose observed value differs from intent (exit 2 when there is"
        " drift, 1 when a device is unknown or the command fails).",
    ),
    "rollback": LazyCommand(
        "plumb.cmd_rollback",
        "Restore the recorded before-states, verify by re-observe, pin the fields.",
    ),
    "demo": LazyCommand(
        "plumb.cmd_demo",
        "Validate, then roll a QoS change and a firmware bundle out in canary waves on a"
        " lab copy of ORION: a defect hidden in one stratum is caught, rolled back, pinned.",
    ),
    "snapshot": LazyCommand(
        "plumb.cmd_snapshot",
        "Observe every (selected) device and write a plumb.snapshot/v1 file for offline plans.",
    ),
    "review": LazyCommand(
        "plumb.cmd_review",
        "Review a change: intent moved, policies, plan and order, blast radius, rollout.",
    ),
    "freeze": LazyCommand(
        "plumb.cmd_safety",
        "Kill switch: refuse every write from now on; in-flight applies stop at the next device.",
    ),
    "unfreeze": LazyCommand("plumb.cmd_safety", "Lift the kill switch."),
    "rollout": LazyCommand(
        "plumb.cmd_rollout", "Rollouts: stratified canary waves within caps, bake and price."
    ),
    "pins": LazyCommand("plumb.cmd_rollback", "Rollback pins: fields held at their before-state."),
    "lab": LazyCommand(
        "plumb.cmd_lab",
        "The lab fleet: a simulated fleet in SQLite, with fault injection.",
        group="lab_app",
    ),
    "audit": LazyCommand(
        "plumb.cmd_safety", "The append-only, hash-chained audit log.", group="audit_app"
    ),
    "lease": LazyCommand(
        "plumb.cmd_safety", "The single-writer lease of the fleet.", group="lease_app"
    ),
    "state": LazyCommand(
        "plumb.cmd_state", "The fleet's state database: where it lives.", group="state_app"
    ),
    "inventory": LazyCommand(
        "plumb.cmd_inventory",
        "The fleet's inventory to and from other tools (Ansible, NetBox).",
        group="inventory_app",
    ),
    "verify": LazyCommand(
        "plumb.cmd_verify",
        "Probe the data plane of the real-network lab: BGP sessions and path MTU between"
        " racks (exit 1 when a session is down or a path black-holes).",
    ),
    "serve": LazyCommand(
        "plumb.cmd_serve",
        "Run the continuous controller: follow the fleet repo's branch, reconcile on each"
        " new commit and on an interval, report or correct drift inside sync windows.",
    ),
}


def load_command_module(app: typer.Typer, name: str) -> None:
    """Import the module behind the command ``name`` and attach its sub-app to ``app``
    if needed."""
    entry = LAZY[name]
    module = importlib.import_module(entry.module)
    if entry.group is not None and all(g.name != name for g in app.registered_groups):
        app.add_typer(getattr(module, entry.group), name=name)


def load_all_commands(app: typer.Typer, *, installed_only: bool = False) -> None:
    """Import every command module (what the eager command line did at start-up); with
    ``installed_only``, skip those that need an extra this install lacks."""
    from inventory.extras import ExtraMissing

    for name in LAZY:
        try:
            load_command_module(app, name)
        except ExtraMissing:
            if not installed_only:
                raise


class LazyGroup(PendingAwareGroup):
    """The root group: commands of the table are built when first looked up. A subclass
    names the typer app the command modules register on (:meth:`typer_app`)."""

    def typer_app(self) -> typer.Typer:
        raise NotImplementedError

    def list_commands(self, ctx: _click.Context) -> list[str]:
        loaded = list(self.commands)
        return loaded + [name for name in LAZY if name not in self.commands]

    def get_command(self, ctx: _click.Context, cmd_name: str) -> _click.Command | None:
        if cmd_name not in self.commands:
            if cmd_name in LAZY:
                load_command_module(self.typer_app(), cmd_name)
            else:  # a command the table does not know yet: look everywhere it can be
                load_all_commands(self.typer_app(), installed_only=True)
            self._adopt_registered()
        command = self.commands.get(cmd_name)
        if command is not None:
            name_metavars(command)
        return command

    def _adopt_registered(self) -> None:
        """Build the click commands of everything now registered on the typer app."""
        import typer.main

        for name, command in typer.main.get_group(self.typer_app()).commands.items():
            self.commands.setdefault(name, command)

    def format_commands(self, ctx: _click.Context, formatter: _click.HelpFormatter) -> None:
        """The command list of ``--help``, from the table for modules not yet imported."""
        names = [
            n
            for n in self.list_commands(ctx)
            if n not in self.commands or not self.commands[n].hidden
        ]
        if not names:
            return
        limit = formatter.width - 6 - max(len(name) for name in names)
        rows = []
        for name in names:
            command = self.commands.get(name)
            if command is None:
                rows.append((name, make_default_short_help(LAZY[name].summary, limit)))
            else:
                rows.append((name, command.get_short_help_str(limit)))
        with formatter.section("Commands"):
            formatter.write_dl(rows)


def name_metavars(command: _click.Command) -> None:
    """Give every argument and valued option a metavar a person reads (``SPEC``,
    ``PATH``, ``N``) instead of the type placeholders help shows otherwise
    (``{spec}``, ``<str>``, ``<list[str]>``); a metavar a command chose is kept."""
    for param in command.params:
        if param.metavar is not None or getattr(param, "is_flag", False):
            continue
        described = getattr(param, "type_descriptor", None)
        annotation = getattr(described, "annotation", None)
        if annotation in (int, float, int | None, float | None):
            param.metavar = "N"
        else:
            param.metavar = (param.name or "value").upper()
    for sub in getattr(command, "commands", {}).values():
        name_metavars(sub)
