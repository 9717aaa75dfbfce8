"""``plumb demo``: the whole loop on a temporary copy of the embedded ORION fleet.

validate -> a bad change caught at its line -> lab fleet -> plan in safe order ->
apply -> second plan empty -> audit chain verified. Nothing outside the temporary
directory is touched.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from datetime import date
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from intent.fleet import load_fleet
from plumb.app import app, fail
from plumb.cli import run_validation
from plumb.cmd_reconcile import make_plan
from plumb.context import AuditToDb, DbGuard, FleetContext
from reconciler.drivers.lab import create_lab
from reconciler.lab import lab_db_path
from reconciler.loop import apply_plan
from reconciler.state.labdb import LabStore

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "orion"
console = Console(highlight=False)


def _step(title: str) -> None:
    console.print(f"\n[bold cyan]==> {title}[/]")


def _validate(root: Path) -> None:
    _step("validate the ORION-256 fleet repo (schema + cross-object policy)")
    outcome = run_validation(root, today=date.today())
    report = outcome.report
    if report is None or outcome.exit_code():
        raise fail("the example fleet does not validate", 1)
    fleet = load_fleet(root)
    console.print(
        f"{len(fleet.devices)} devices, {len(fleet.links)} cables, "
        f"{sum(d.gpus for d in fleet.devices.values())} GPUs: "
        f"{len(report.policies)} policies, {len(report.denies())} violations"
    )


def _catch_bad_change(root: Path, scratch: Path) -> None:
    _step("a bad change: host MTU 9000 -> 9200 (9200 + 22 > 9216 on the switch port)")
    bad = scratch / "bad"
    shutil.copytree(root, bad)
    mtu = bad / "intent" / "mtu.yaml"
    mtu.write_text(mtu.read_text().replace("host: 9000", "host: 9200", 1))
    outcome = run_validation(bad, today=date.today())
    assert outcome.report is not None
    first = outcome.report.denies()[0]
    console.print(
        f"blocked (exit {outcome.exit_code()}): {len(outcome.report.denies())} "
        f"violations, first at [bold]{first.location}[/]:\n  {first.policy}: "
        f"{first.message}"
    )


def _reconcile(root: Path) -> None:
    fleet = load_fleet(root)
    _step("lab fleet: older firmware bundles and a few drifted values")
    store = LabStore(lab_db_path(fleet))
    create_lab(store, fleet, seed=7, drift=6)
    _step("plan: desired vs observed, cut into steps that keep every state safe")
    context = FleetContext(fleet, "plumb demo", None)
    targets = context.targets()
    try:
        plan = make_plan(context, targets, None, show_progress=False)
        for s in plan.steps:
            console.print(
                f"  step {s.index} {s.phase:<18} {len(s.changes):>3} device(s), "
                f"{sum(len(c) for c in s.changes.values()):>4} change(s)"
            )
        console.print(f"{plan.change_count()} changes on {len(plan.changes())} devices")
        _step("apply under the lease, audited, verified by re-observe")
        started = time.perf_counter()
        with context.db.lease.held(context.holder, "apply") as token:
            report = apply_plan(
                plan,
                targets,
                dry_run=False,
                guard=DbGuard(context.db, token),
                audit=AuditToDb(context),
                confirm_within=120.0,
            )
        console.print(
            f"{report.by_outcome()} in {time.perf_counter() - started:.1f} s; "
            f"lab writes: {store.write_count()}"
        )
        _step("plan again: level-triggered, so a converged fleet plans nothing")
        second = make_plan(context, targets, None, show_progress=False)
        console.print(f"{second.change_count()} changes: the second pass is a no-op")
        verdict = context.db.audit.verify()
        _step("audit chain")
        console.print(
            f"{verdict.rows} records, hash chain {'verified' if verdict.ok else 'BROKEN'}"
        )
    finally:
        targets.close()
        context.close()
        store.close()
    if not report.ok() or not second.is_empty() or not verdict.ok:
        raise fail("the demo did not converge", 1)


@app.command()
def demo(
    example: Annotated[Path, typer.Option(help="Fleet repo to copy.")] = EXAMPLE,
    keep: Annotated[bool, typer.Option(help="Keep the temporary copy and print where.")] = False,
) -> None:
    """Run validate, plan, apply and a no-op second plan on a temporary copy of ORION."""
    if not (example / "plumb.yaml").is_file():
        raise fail(f"{example} is not a fleet repo")
    scratch = Path(tempfile.mkdtemp(prefix="plumb-demo-"))
    try:
        root = scratch / "orion"
        shutil.copytree(example, root, ignore=shutil.ignore_patterns(".plumb"))
        _validate(root)
        _catch_bad_change(root, scratch)
        _reconcile(root)
        console.print("\n[bold green]demo complete[/]")
    finally:
        if keep:
            console.print(f"kept {scratch}")
        else:
            shutil.rmtree(scratch, ignore_errors=True)
