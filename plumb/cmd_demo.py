"""``plumb demo``: the whole story on a temporary copy of the embedded ORION fleet.

1. validate the fleet repo; a bad change is caught at its file and line;
2. the fleet today: a git repo whose intent runs bundle hx8-2026.06, and a lab fleet
   running exactly that (the plan is empty). The lab hides a defect nobody knows
   about yet: NICs of revision B0 (4 of 32 nodes) throw uncorrectable FEC errors and
   slow training steps once they run NIC firmware 28.43;
3. the change, committed like a merged pull request: a QoS change on the switches
   (ECN Kmin of the RoCE queue 200 -> 180 KB) and bundle hx8-2026.09 on the GPU nodes;
4. the QoS rollout (rollouts/qos-mtu-tune.yaml): canary waves over every switch
   stratum, hitless, judged and completed;
5. the firmware rollout (rollouts/firmware-hx8-2026-09.yaml): strata, a stratified
   canary, waves within the caps, stalled GPU-hours against the lower bound. The
   canary (one node per stratum) is drained, flashed, rebooted, accepted and baked
   on the virtual clock; the B0 node trips the pre-declared abort condition, the
   rollout aborts and rolls the canary back to its recorded before-state; pins keep
   the reconciler from re-applying the bad intent;
6. a summary: strata coverage, detection probability against random canaries,
   stalled GPU-hours, the audit chain verified.

Nothing outside the temporary directory is touched.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import time
from datetime import date
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from ci.texttable import Column, table_lines
from intent.fleet import load_fleet
from lab.clock import attach_defect
from lab.driver import create_lab
from lab.fleet import lab_db_path
from lab.store import LabStore
from plumb.app import app, fail
from plumb.cli import run_validation
from plumb.cmd_rollout import Launched, launch
from reconciler.state.journal import RolloutStatus, TargetStatus
from rollouts.load import load_rollout
from service.context import FleetContext
from service.planning import make_plan

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "orion"
FIRMWARE = "firmware-hx8-2026-09"
QOS = "qos-mtu-tune"
OLD_BUNDLE, NEW_BUNDLE = "hx8-2026.06", "hx8-2026.09"
DEFECT = "firmware/nic_firmware=28.43.1014,label.nic_revision=B0"
ACTOR = "plumb demo"
console = Console(highlight=False, soft_wrap=True)


def _step(title: str) -> None:
    console.print(f"\n[bold cyan]==> {title}[/]")


def _git(root: Path, *args: str) -> str:
    identity = ["-c", "user.name=plumb demo", "-c", "user.email=demo@plumb.invalid"]
    done = subprocess.run(
        ["git", *identity, *args], cwd=root, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def _commit(root: Path, message: str) -> str:
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", message)
    return _git(root, "rev-parse", "--short=12", "HEAD")


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
    _step("a bad change: host MTU 9000 -> 9200 (9200 + 22 > 9214 on the switch port)")
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


def _edit(root: Path, relative: str, old: str, new: str) -> None:
    path = root / relative
    text = path.read_text()
    if old not in text:
        raise fail(f"{relative}: expected {old!r} in the example fleet")
    path.write_text(text.replace(old, new, 1))


def _fleet_today(root: Path) -> None:
    _step(f"the fleet today: intent in git on {OLD_BUNDLE}, a lab fleet running it")
    (root / ".gitignore").write_text(".plumb/\n")
    _edit(root, "intent/groups.yaml", f"bundle: {NEW_BUNDLE}", f"bundle: {OLD_BUNDLE}")
    _git(root, "init", "-q", "-b", "main")
    base = _commit(root, f"ORION on {OLD_BUNDLE}")
    fleet = load_fleet(root)
    store = LabStore(lab_db_path(fleet))
    try:
        create_lab(store, fleet, seed=7, drift=0, older_firmware=False)
    finally:
        store.close()
    context = FleetContext(fleet, ACTOR, base)
    targets = context.targets()
    try:
        plan = make_plan(context, targets, None)
    finally:
        targets.close()
        context.close()
    console.print(
        f"commit {base}; lab: {len(fleet.devices)} devices; plan: "
        f"{plan.change_count()} changes (the fleet is at its intent)"
    )
    attach_defect(lab_db_path(fleet), DEFECT, {"fec_rate": 2.0, "step_time_factor": 1.15})
    b0 = sorted(n for n, d in fleet.devices.items() if d.labels.get("nic_revision") == "B0")
    console.print(
        f"[dim]hidden in the lab, unknown to the operator: the {len(b0)} nodes with B0 NICs "
        f"({', '.join(b0)}) throw uncorrectable FEC errors and run 15 % slower steps "
        "once they run NIC firmware 28.43[/]"
    )


def _the_change(root: Path) -> None:
    _step(f"the change, merged like a pull request: ECN Kmin 200 -> 180 KB and {NEW_BUNDLE}")
    _edit(root, "intent/groups.yaml", f"bundle: {OLD_BUNDLE}", f"bundle: {NEW_BUNDLE}")
    _edit(root, "intent/qos.yaml", "{priority: 3, kmin_kb: 200,", "{priority: 3, kmin_kb: 180,")
    outcome = run_validation(root, today=date.today())
    if outcome.exit_code():
        raise fail("the demo change does not validate", 1)
    head = _commit(root, f"RoCE queue ECN Kmin 180 KB; HX8 nodes to {NEW_BUNDLE}")
    console.print(
        f"commit {head}: validates clean; rollout specs rollouts/{QOS}.yaml (switches) "
        f"and rollouts/{FIRMWARE}.yaml (GPU nodes)"
    )


def _show_plan(launched: Launched) -> None:
    plan = launched.plan
    table = Table(title="strata: every combination the change touches", title_justify="left")
    k = len(plan.waves.canary)
    for column in ("stratum", "targets", "nic_revision", "canary", "stratified", f"random k={k}"):
        table.add_column(column)
    for stratum, cover in zip(plan.strata.strata, plan.coverage, strict=True):
        revision = dict(stratum.key).get("label.nic_revision", "-")
        table.add_row(
            stratum.id,
            str(cover.size),
            revision,
            " ".join(cover.canaries),
            f"{cover.stratified:.3f}",
            f"{cover.random:.3f}",
        )
    console.print(table)
    sizes = " ".join(str(len(r.wave.targets)) for r in plan.reports)
    console.print(
        f"{len(plan.targets)} targets in {len(plan.reports)} waves ({sizes}); planned stall "
        f"{plan.total.gpu_hours:.1f} GPU-h, lower bound {plan.lower_bound.gpu_hours:.1f} "
        f"GPU-h; bake {plan.bake_minutes() / 60:.0f} h of virtual time in all"
    )


def _rollout(root: Path, spec: str, what: str) -> tuple[Launched, FleetContext]:
    _step(f"plumb rollout start {spec}: {what}")
    fleet = load_fleet(root)
    head = _git(root, "rev-parse", "HEAD")
    context = FleetContext(fleet, ACTOR, head)
    launched = launch(context, load_rollout(root, spec), show=True)
    if launched is None:
        raise fail(f"{spec}: nothing to roll out", 1)
    return launched, context


def _completed(launched: Launched, context: FleetContext) -> bool:
    journal = context.db.journal
    waves = journal.waves(launched.rollout)
    changed = sum(1 for t in journal.targets(launched.rollout) if t.status is TargetStatus.applied)
    console.print(
        f"{launched.status.value}: {changed} switches changed in {len(waves)} waves, "
        f"{sum(1 for w in waves if w.decision == 'proceed')} judged proceed; nothing drained"
    )
    return launched.status is RolloutStatus.completed


def _outcome(launched: Launched, context: FleetContext) -> bool:
    journal = context.db.journal
    row = journal.get(launched.rollout)
    assert row is not None
    canary = journal.waves(launched.rollout)[0]
    _step(f"outcome: {row.status.value.replace('_', ' ')}")
    console.print(f"{row.reason}")
    shown = [
        (m["phase"], m["message"])
        for m in (canary.evidence or {}).get("measurements", [])
        if m["phase"] != "successful" or m["metric"] == "step_time"
    ]
    for line in table_lines((Column(), Column()), shown, header=False, indent=2):
        console.out(line, highlight=False)
    store = LabStore(lab_db_path(context.fleet))
    try:
        running = store.read_all_running()
    finally:
        store.close()
    rows = journal.targets(launched.rollout)
    written = [t for t in rows if t.status.written]
    exact = all(
        t.before is not None and all(running[t.device].get(p) == v for p, v in t.before.items())
        for t in written
    )
    untouched = sum(1 for t in rows if t.status is TargetStatus.pending)
    console.print(
        f"rolled back {len(written)} target(s): every carried field equals its recorded "
        f"before-state: {'yes' if exact else 'NO'}; {untouched} targets never touched"
    )
    targets = context.targets()
    try:
        again = make_plan(context, targets, "role=gpu-node")
    finally:
        targets.close()
    held = [h for dp in again.devices.values() for h in dp.held]
    console.print(
        f"plan of the GPU nodes now: {len(held)} field(s) on "
        f"{len({h.device for h in held})} node(s) HELD at their before-state "
        f"({held[0].reason if held else '-'}); release with `plumb pins release`"
    )
    return row.status is RolloutStatus.rolled_back and exact


def _summary(launched: Launched, context: FleetContext, started: float, kept: Path | None) -> bool:
    _step("summary")
    journal = context.db.journal
    plan = launched.plan
    canary = set(plan.waves.canary)
    for stratum, cover in zip(plan.strata.strata, plan.coverage, strict=True):
        revision = dict(stratum.key).get("label.nic_revision", "-")
        hit = sorted(canary & set(stratum.members))
        console.print(
            f"  stratum {stratum.id} (nic_revision {revision}, {cover.size} of "
            f"{len(plan.targets)} nodes): canary {' '.join(hit) or 'none'}; a random canary "
            f"of {len(canary)} covers it with probability {cover.random:.3f} "
            f"= 1-(1-{cover.p:.3f})^{len(canary)}"
        )
    b0 = next(
        (
            c
            for st, c in zip(plan.strata.strata, plan.coverage, strict=True)
            if dict(st.key).get("label.nic_revision") == "B0"
        ),
        None,
    )
    if b0 is not None:
        console.print(
            f"  the defect sat in the B0 stratum: the stratified canary was sure to cover it "
            f"({b0.stratified:.3f}); a random canary of the same size would have missed it "
            f"with probability {1 - b0.random:.3f}"
        )
    stalled = sum(w.stall_gpu_hours for w in journal.waves(launched.rollout))
    console.print(
        f"  stalled {stalled:.1f} GPU-h (canary and its rollback); the whole plan would "
        f"stall {plan.total.gpu_hours:.1f}, lower bound {plan.lower_bound.gpu_hours:.1f}"
    )
    verdict = context.db.audit.verify()
    console.print(
        f"  audit: {verdict.rows} records, hash chain {'verified' if verdict.ok else 'BROKEN'}"
    )
    console.print(
        f"  {time.perf_counter() - started:.1f} s wall time for the whole demo (validation, "
        "lab set-up, both rollouts and the rollback); bakes run on the lab's virtual clock"
    )
    if kept is not None:
        console.print(
            f"  every decision with its numbers: plumb rollout status {launched.rollout} {kept}"
        )
    else:
        console.print(
            "  every decision with its numbers: run `plumb demo --keep`, then `plumb rollout"
            f" status {launched.rollout} <the copy it names>` (this copy is removed now)"
        )
    return verdict.ok


@app.command()
def demo(
    example: Annotated[Path, typer.Option(help="Fleet repo to copy.")] = EXAMPLE,
    keep: Annotated[bool, typer.Option(help="Keep the temporary copy and print where.")] = False,
) -> None:
    """Validate, then roll a QoS change and a firmware bundle out in canary waves on a
    lab copy of ORION: a defect hidden in one stratum is caught, rolled back, pinned."""
    if not (example / "plumb.yaml").is_file():
        raise fail(f"{example} is not a fleet repo")
    started = time.perf_counter()
    scratch = Path(tempfile.mkdtemp(prefix="plumb-demo-"))
    context: FleetContext | None = None
    try:
        root = scratch / "orion"
        shutil.copytree(example, root, ignore=shutil.ignore_patterns(".plumb"))
        _validate(root)
        _catch_bad_change(root, scratch)
        _fleet_today(root)
        _the_change(root)
        qos, qos_context = _rollout(root, QOS, "switches, hitless, canary waves")
        good = _completed(qos, qos_context)
        qos_context.close()
        launched, context = _rollout(
            root, FIRMWARE, "GPU nodes, drained; a canary first, judged by the abort conditions"
        )
        _step("the firmware rollout plan it ran")
        _show_plan(launched)
        good = _outcome(launched, context) and good
        good = _summary(launched, context, started, root if keep else None) and good
        if not good:
            raise fail("the demo did not end as designed", 1)
        console.print("\n[bold green]demo complete[/]")
    finally:
        if context is not None:
            context.close()
        if keep:
            console.print(f"kept {scratch}")
        else:
            shutil.rmtree(scratch, ignore_errors=True)
