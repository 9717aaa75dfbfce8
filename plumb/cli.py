"""The ``plumb`` command line (typer). Thin: parse arguments, call a stage, print, exit.

Exit codes (plumb/exitcodes.py, docs/exit-codes.md): 0 clean, 1 policy or plan says no, 2 bad
input or usage, 3 a held rollout, 70 internal. Bad input is printed as ``file:line:col:
message``; no command shows a traceback for it.
"""

from __future__ import annotations

import json
import signal
import sys
from collections.abc import Sequence
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from inventory.problems import InputError
from plumb.app import FormatOpt, PathArg, app, check_format, fleet_root, load_or_exit
from plumb.exitcodes import INTERNAL
from reconciler.state.dbfile import StateError, state_file_error
from service.errors import ServiceError

if TYPE_CHECKING:
    from ci.outcome import ValidateOutcome

# Only what every command needs is imported at start-up; the rest where it is used,
# so `plumb --help` stays fast (see plumb/lazycli.py).


def _prefix_for(root: Path) -> str:
    """Path of the fleet repo relative to the working directory, for CI annotations."""
    try:
        relative = root.resolve().relative_to(Path.cwd().resolve())
    except ValueError:
        return ""
    return "" if str(relative) == "." else f"{relative.as_posix()}/"


def run_validation(
    root: Path, *, today: date, repo_policies: bool = True, against: Path | None = None
) -> ValidateOutcome:
    """Load the fleet and evaluate every policy (with ``against``, a snapshot file, also
    the policies over observed state); bad input becomes problems, not raises."""
    from ci.outcome import ValidateOutcome
    from intent.fleet import load_fleet
    from policies.engine import OBSERVED, evaluate
    from service.validation import fleet_policies

    root = fleet_root(root)
    prefix = _prefix_for(root)
    try:
        fleet = load_fleet(root)
        policies = fleet_policies(fleet, repo_policies=repo_policies)
    except InputError as exc:
        return ValidateOutcome(root, None, tuple(exc.problems), None, prefix)
    from reconciler.rulecheck import check_driver_rules

    driver_problems = check_driver_rules(fleet)
    if driver_problems:  # bad input: found now, not on a device half-way through an apply
        return ValidateOutcome(root, None, tuple(driver_problems), None, prefix)
    observed = None
    if against is not None:
        from plumb.cmd_snapshot import read_snapshot  # exits 2 naming the file when bad

        observed = read_snapshot(against, fleet.config.fleet).states
        policies += list(OBSERVED)
    report = evaluate(fleet, policies, today=today, observed=observed)
    return ValidateOutcome(root, fleet.config.fleet, (), report, prefix)


@app.command()
def validate(
    path: PathArg = Path("."),
    format: Annotated[
        str, typer.Option("--format", "-f", help="text | json | sarif | junit | github")
    ] = "text",
    output: Annotated[Path | None, typer.Option(help="Write the report here too.")] = None,
    today: Annotated[str | None, typer.Option(help="Date for waiver expiry (YYYY-MM-DD).")] = None,
    repo_policies: Annotated[bool, typer.Option(help="Load the repo's policies/*.py.")] = True,
    against: Annotated[
        Path | None,
        typer.Option(help="Also check a `plumb snapshot` file of the devices (LLDP cabling)."),
    ] = None,
) -> None:
    """Check a fleet repo by schema and by cross-object policy (and, --against a
    snapshot, the cabling the devices see)."""
    from ci.formats import FORMATS

    if format not in FORMATS:
        typer.echo(f"error: unknown format {format!r} (choose from {', '.join(FORMATS)})", err=True)
        raise typer.Exit(2)
    try:
        when = date.fromisoformat(today) if today else date.today()
    except ValueError:
        typer.echo(f"error: --today {today!r} is not a date (YYYY-MM-DD)", err=True)
        raise typer.Exit(2) from None
    outcome = run_validation(path, today=when, repo_policies=repo_policies, against=against)
    rendered = FORMATS[format](outcome)
    if output is not None:
        try:
            output.write_text(rendered)
        except OSError as exc:
            typer.echo(f"error: cannot write --output {output}: {exc.strerror or exc}", err=True)
            raise typer.Exit(2) from None
    stream = sys.stderr if format == "text" and outcome.problems else sys.stdout
    stream.write(rendered)
    raise typer.Exit(outcome.exit_code())


@app.command()
def schema(
    out: Annotated[Path | None, typer.Option(help="Write <kind>.schema.json files here.")] = None,
) -> None:
    """JSON Schema for each file kind (plumb, inventory, intent, waivers, rollout)."""
    from ci.schemas import FILE_KINDS, schema_for, write_schemas

    if out is None:
        typer.echo(json.dumps({kind: schema_for(kind) for kind in FILE_KINDS}, indent=2))
        return
    for path in write_schemas(out):
        typer.echo(str(path))


class Terminated(BaseException):
    """SIGTERM arrived: unwind like Ctrl-C, so every ``finally`` (the lease) runs."""


def _on_sigterm(signum: int, frame: object) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # one unwinding is enough
    raise Terminated


def _command_word(args: Sequence[str]) -> str | None:
    """The command a command line runs (its first word that is neither a global option
    nor the value of ``-C``/``--repo``)."""
    words = iter(args)
    for word in words:
        if word in ("-C", "--repo"):
            next(words, None)
        elif not word.startswith("-"):
            return word
    return None


def _missing_extra(args: Sequence[str], error: Exception) -> str | None:
    """The one line for ``error`` when it is a module of an extra that is not installed."""
    from inventory.extras import extra_for_command, needs_extra_line

    command = _command_word(args)
    extra = extra_for_command(command, error)
    return None if extra is None else needs_extra_line(command, extra)


def main() -> None:
    """Console entry point: run the app; turn stray errors into a message, never a traceback."""
    from plumb.pendingcmd import error_exit_code

    signal.signal(signal.SIGTERM, _on_sigterm)
    bad_input = error_exit_code(sys.argv[1:])  # never 2 where 2 means changes pending
    try:
        app()
    except Terminated as exc:
        _partial_apply(exc)
        sys.stderr.write("terminated (SIGTERM): no further device was started\n")
        sys.exit(128 + signal.SIGTERM)
    except InputError as exc:
        for problem in exc.problems:
            sys.stderr.write(f"{problem}\n")
        sys.exit(bad_input)
    except StateError as exc:
        sys.stderr.write(f"error: {exc}\n")
        sys.exit(bad_input)
    except ServiceError as exc:
        sys.stderr.write(f"error: {exc.message}\n")
        sys.exit(bad_input if exc.code == 2 else exc.code)
    except KeyboardInterrupt as exc:
        if not _partial_apply(exc):
            sys.stderr.write("interrupted\n")
        sys.exit(130)
    except Exception as exc:
        missing = _missing_extra(sys.argv[1:], exc)
        if missing is not None:  # an optional part is not installed: say which, one line
            sys.stderr.write(f"{missing}\n")
            sys.exit(bad_input)
        state = state_file_error(exc)  # the lab's database, or another state file
        if state is not None:
            sys.stderr.write(f"error: {state}\n")
            sys.exit(bad_input)
        from inventory.envsettings import read_settings

        if read_settings().debug:
            raise
        sys.stderr.write(
            f"plumb: internal error: {type(exc).__name__}: {exc}\n"
            "(set PLUMB_DEBUG=1 to see the traceback)\n"
        )
        sys.exit(INTERNAL)


def _partial_apply(exc: BaseException) -> bool:
    """Say what an apply a signal stopped wrote and did not; whether it stopped one."""
    from reconciler.loop import interrupted_apply

    stopped = interrupted_apply(exc)
    if stopped is None:
        return False
    from ci.planfmt import interrupted_text

    sys.stderr.write(interrupted_text(stopped))
    return True


def _count(values: list[str]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for value in values:
        counts[value] = counts.get(value, 0) + 1
    return dict(sorted(counts.items()))


@app.command()
def summary(path: PathArg = Path("."), format: FormatOpt = "text") -> None:
    """What the fleet repo declares: devices by role, GPUs, cables by class, gangs, bundles."""
    from service.validation import builtin_policies

    check_format(format)
    fleet = load_or_exit(path)
    doc = {
        "fleet": fleet.config.fleet,
        "racks": len(fleet.racks),
        "devices": _count([d.role.value for d in fleet.devices.values()]),
        "gpus": sum(d.gpus for d in fleet.devices.values()),
        "nics": sum(len(d.nics) for d in fleet.devices.values()),
        "links": _count([link.link_class.value for link in fleet.links]),
        "gangs": {
            g.name: {
                "nodes": len(g.nodes),
                "gpus": len(g.nodes) * g.gpus_per_node,
                "dp_replicas": len(g.dp_replicas),
            }
            for g in fleet.gangs.values()
        },
        "validated_bundles": len(fleet.bundles),
        "policies": len(builtin_policies()),
    }
    if format == "json":
        typer.echo(json.dumps(doc, indent=2))
        return
    _print_summary(doc)


def _print_summary(doc: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"fleet {doc['fleet']}", show_header=False)
    table.add_row("racks", str(doc["racks"]))
    for role, count in doc["devices"].items():
        table.add_row(f"devices: {role}", str(count))
    table.add_row("GPUs", str(doc["gpus"]))
    table.add_row("NICs", str(doc["nics"]))
    for cls, count in doc["links"].items():
        table.add_row(f"links: {cls}", str(count))
    for name, gang in doc["gangs"].items():
        table.add_row(
            f"gang {name}",
            f"{gang['nodes']} nodes, {gang['gpus']} GPUs, {gang['dp_replicas']} DP replicas",
        )
    table.add_row("validated bundles", str(doc["validated_bundles"]))
    table.add_row("policies", str(doc["policies"]))
    Console().print(table)


# The commands that live in their own modules are attached when first used: the table
# in plumb/lazycli.py names them for `plumb --help`.
