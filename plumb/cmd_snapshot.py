"""``plumb snapshot``: observe every (selected) device through the configured drivers and
record the facts as a ``plumb.snapshot/v1`` document, so that ``plumb plan --against``
and ``plumb review --against`` can plan later with no device access.

A device that cannot be observed is left out of the snapshot (and named on stderr,
exit 1): a plan against the snapshot then reports it as not observed, never as in sync.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

import typer

from ci.review.observed import plan_from_states
from intent.fleet import Fleet
from lab.fleet import snapshot_document, states_from_snapshot
from plumb.app import PathArg, SelectOpt, app, fail, load_or_exit
from reconciler.loop import observe_all
from reconciler.plan import Plan
from reconciler.select import SelectError, select_devices
from reconciler.settings import Scalar
from reconciler.targets import TargetError, Targets


@dataclass(frozen=True)
class Snapshot:
    """A snapshot file as read: whose fleet, when, and every recorded device state."""

    file: Path
    fleet: str
    taken_at: str
    states: dict[str, dict[str, Scalar]]


def read_snapshot(file: Path, fleet: str) -> Snapshot:
    """Read a ``plumb.snapshot/v1`` file of ``fleet``; any problem exits 2 naming the file."""
    try:
        data: Any = json.loads(file.read_text())
    except OSError as exc:
        raise fail(f"cannot read snapshot {file}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise fail(f"{file}: not a JSON document ({exc})") from None
    try:
        states = states_from_snapshot(data)
    except ValueError as exc:
        raise fail(f"{file}: {exc}") from None
    if data["fleet"] != fleet:
        raise fail(f"{file}: a snapshot of fleet {data['fleet']!r}, not of {fleet!r}")
    return Snapshot(file, data["fleet"], data["taken_at"], states)


def selected(fleet: Fleet, select: str | None) -> list[str]:
    try:
        names = select_devices(fleet.devices.values(), select)
    except SelectError as exc:
        raise fail(str(exc)) from None
    if not names:
        raise fail(f"--select {select!r} matches no device")
    return names


def plan_against(fleet: Fleet, file: Path, select: str | None) -> Plan:
    """``plumb plan --against FILE``: the plan with the snapshot's states as observed."""
    snapshot = read_snapshot(file, fleet.config.fleet)
    return plan_from_states(fleet, snapshot.states, names=selected(fleet, select))


@app.command()
def snapshot(
    path: PathArg = Path("."),
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write it here (default: stdout).")
    ] = None,
    select: SelectOpt = None,
) -> None:
    """Observe every (selected) device and write a plumb.snapshot/v1 file for offline plans."""
    fleet = load_or_exit(path)
    names = selected(fleet, select)
    try:
        targets = Targets.for_fleet(fleet)
        try:
            observations = observe_all(targets, names)
        finally:
            targets.close()
    except TargetError as exc:
        raise fail(str(exc)) from None
    states = {n: o.state for n in names if (o := observations[n]).state is not None}
    document = snapshot_document(fleet.config.fleet, states, datetime.now(UTC))
    text = json.dumps(document, indent=2) + "\n"
    if output is None:
        sys.stdout.write(text)
    else:
        try:
            output.write_text(text)
        except OSError as exc:
            raise fail(f"cannot write {output}: {exc.strerror or exc}") from None
    missing = {n: o.error for n, o in observations.items() if o.state is None}
    for name, error in sorted(missing.items()):
        typer.echo(f"not observed: {name}: {error}", err=True)
    typer.echo(
        f"snapshot of {fleet.config.fleet}: {len(states)} device(s) recorded, "
        f"{len(missing)} not observed",
        err=True,
    )
    if missing:
        raise typer.Exit(1)
