"""What a rollout does to its targets, forward or back: observe them with their cabled
neighbours, apply a plan through the runtime's drivers, guard and audit, run the spec's
acceptance tests on drained nodes, count the GPUs a drain stalls, let the declared drain
time pass.

A wave (:mod:`rollouts.execute`) and a rollback (:mod:`rollouts.rollback`) are both
built from these, so a restore is written, re-observed and accepted the same way as
the change it undoes.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from reconciler import failpoint
from reconciler.drivers.base import Outcome
from reconciler.loop import ApplyReport, DeviceResult, Observation, apply_plan, observe_all
from reconciler.plan import Plan
from reconciler.select import neighbours
from rollouts.acceptance import HostCommands, run_hooks
from rollouts.evidence import Json
from rollouts.nodes import Context
from rollouts.runtime import Runtime, real_time
from rollouts.topology import stalled_gangs

WRITE_PATHS_NEEDING_REBOOT = ("firmware/",)


class RolloutStopped(Exception):
    """The kill switch or a lost lease stopped the rollout before a write."""


def needs_reboot(paths: Sequence[str]) -> bool:
    return any(p.startswith(WRITE_PATHS_NEEDING_REBOOT) for p in paths)


def observe(rt: Runtime, names: Sequence[str]) -> dict[str, Observation]:
    """Observe ``names`` and their cabled neighbours (for the safety proof)."""
    everyone = list(names) + neighbours(rt.fleet, names)
    return observe_all(rt.targets, everyone, concurrency=rt.concurrency)


def apply_through(
    rt: Runtime, plan: Plan, label: str, *, failpoint_site: str | None = None
) -> tuple[ApplyReport, dict[str, DeviceResult]]:
    """Apply ``plan`` with the runtime's drivers, guard, audit and progress display;
    returns the report and each device's worst result over the plan's steps."""
    results: dict[str, DeviceResult] = {}

    def done(result: DeviceResult) -> None:
        if failpoint_site is not None:
            failpoint.hit(failpoint_site)
        if result.device not in results or result.outcome is not Outcome.applied:
            results[result.device] = result
        rt.reporter.advance()

    rt.reporter.begin(label, len(plan.changes()))
    try:
        report = apply_plan(
            plan,
            rt.targets,
            dry_run=False,
            guard=rt.guard,
            audit=rt.audit,
            confirm_within=rt.confirm_within,
            concurrency=rt.concurrency,
            on_device=done,
        )
    finally:
        rt.reporter.end()
    return report, results


def drained_gang_gpus(rt: Runtime, nodes: Collection[str]) -> int:
    """GPUs of every gang that draining ``nodes`` stops (a gang stalls as a whole; a
    switch stops every gang with a node cabled to it)."""
    return sum(stalled_gangs(rt.fleet, sorted(nodes)).values())


def acceptance_tests(
    rt: Runtime, ctx: Context, number: int, nodes: Sequence[str]
) -> dict[str, str]:
    """The spec's acceptance tests of the nodes' roles; outcomes journaled with the
    wave (``evidence.acceptance``) and audited; node -> failure."""
    outcomes = run_hooks(
        rt.fleet,
        ctx.spec.acceptance,
        nodes,
        local=rt.local_commands,
        on_node=rt.node_commands or HostCommands(rt.targets),
    )
    if not outcomes:
        return {}
    rt.reporter.message(f"wave {number}: acceptance tests on {len(outcomes)} node(s)")
    done = {n: o.to_dict() for n, o in outcomes.items()}
    current = rt.db.journal.waves(ctx.id)[number - 1].evidence or {}
    earlier = current.get("acceptance")
    kept: dict[str, Json] = dict(earlier) if isinstance(earlier, dict) else {}
    kept.update(done)
    rt.db.journal.update_wave(ctx.id, number, evidence={**current, "acceptance": kept})
    rt.record("decision", detail={"rollout": ctx.id, "wave": number, "acceptance": done})
    return {n: f for n, o in outcomes.items() if (f := o.failure) is not None}


def pass_drain_time(rt: Runtime, minutes: float) -> None:
    """The declared drain/flash/reboot time passes on a virtual clock (the lab's nodes
    take none); on a real clock those steps took their own time, nothing to wait."""
    if not real_time(rt.clock):
        rt.clock.advance(minutes)
