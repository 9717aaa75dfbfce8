"""Draining a wave's nodes for real, and returning them: the steps between the journal's
node lifecycle and the drainer (:mod:`rollouts.drain`).

::

    in_service --claim--> draining --(jobs end | timeout: requeue/cancel)--> maintenance
    acceptance --passed--> in_service (resumed)     acceptance --failed--> repair (held)

A claim the drainer refuses (another actor drained the node) or a drain that never
completes fails the target: it is not written, and a drain that did not take is given
back. The wait is wall-clock time counted from the drain's journaled start, so a
resumed rollout waits only for what is left. The jobs found on the nodes when the drain
began are the gangs it stalls; they are journaled with the wave (``evidence.drain``).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence

from reconciler.state.journal import Lifecycle, TargetRow, TargetStatus, WaveRow
from rollouts.commands import CommandRunner
from rollouts.drain import CommandDrainer, Drainer, DrainError, JournalDrainer
from rollouts.evidence import Json
from rollouts.nodes import Context, move, stop_if_aborted
from rollouts.runtime import Runtime
from rollouts.slurm import OTHER_ACTOR, SlurmDrainer
from rollouts.slurmparse import jobs_on, plumb_reason
from rollouts.spec import Drain, DrainVia, OnRequeueRefused, OnTimeout

POLL_SECONDS = 0.5
STOP_GRACE_MINUTES = 5.0
"""After requeue/cancel, how long the jobs get to leave the nodes (Slurm's KillWait
and epilogs) before the drain counts as failed."""


def drainer_for(drain: Drain | None, runner: CommandRunner) -> Drainer:
    """The drainer a spec's ``drain.via`` names."""
    if drain is None or drain.via is DrainVia.lab:
        return JournalDrainer()
    if drain.via is DrainVia.slurm:
        return SlurmDrainer(runner)
    assert drain.command is not None
    return CommandDrainer(drain.command, runner)


def drainer_of(rt: Runtime, ctx: Context) -> Drainer:
    """The runtime's drainer (a test's), else the spec's; made once per runtime."""
    if rt.drainer is None:
        rt.drainer = drainer_for(ctx.spec.drain, rt.local_commands)
    return rt.drainer


def drain_record(wave: WaveRow) -> dict[str, Json] | None:
    """The wave's journaled drain: ``{via, started, gangs}``, or None before it began."""
    record = (wave.evidence or {}).get("drain")
    return record if isinstance(record, dict) else None


def begin_wave_drain(rt: Runtime, ctx: Context, wave: WaveRow, nodes: Sequence[str]) -> None:
    """Journal the drain's start (wall-clock) and the scheduler's jobs on the nodes
    (None: not asked, or it could not say), once: a resume keeps the first record."""
    if drain_record(wave) is not None:
        return
    gangs: list[Json] | None
    try:
        found = drainer_of(rt, ctx).jobs(nodes)
        gangs = None if found is None else [j.to_dict() for j in found]  # type: ignore[misc]
    except DrainError as exc:
        rt.reporter.message(f"wave {wave.number}: the scheduler's jobs are unknown: {exc}")
        gangs = None
    record: dict[str, Json] = {
        "via": drainer_of(rt, ctx).via.value,
        "started": time.time(),
        "gangs": gangs,
    }
    evidence = {**(wave.evidence or {}), "drain": record}
    rt.db.journal.update_wave(ctx.id, wave.number, evidence=evidence)


def drain_nodes(
    rt: Runtime,
    ctx: Context,
    rows: Sequence[TargetRow],
    what: str,
    started: float,
    *,
    failed_status: TargetStatus = TargetStatus.failed,
) -> dict[str, str]:
    """Take ``rows`` to maintenance through the drainer; returns the nodes that could
    not be drained, with why (their targets get ``failed_status`` and are not written)."""
    spec = ctx.spec.drain
    assert spec is not None
    journal = rt.db.journal
    fresh = [r for r in rows if r.lifecycle is Lifecycle.in_service]
    claims = drainer_of(rt, ctx).claim(
        ctx.id, [r.device for r in fresh], plumb_reason(ctx.id, what)
    )
    failed = {n: f"not drained: {why}" for n, why in claims.items() if why is not None}
    move(rt, ctx, [r for r in fresh if r.device not in failed], Lifecycle.draining)
    waiting = [
        r.device
        for r in journal.targets(ctx.id)
        if r.device in {x.device for x in rows} and r.lifecycle is Lifecycle.draining
    ]
    stuck = _wait_drained(rt, ctx, waiting, started + spec.timeout_minutes * 60.0, spec.on_timeout)
    failed.update(stuck)
    if stuck:
        drainer_of(rt, ctx).release(ctx.id, sorted(stuck))
        given_back = [r for r in journal.targets(ctx.id) if r.device in stuck]
        move(rt, ctx, given_back, Lifecycle.in_service)
    if failed:
        journal.set_targets(ctx.id, failed, failed_status, errors=failed)
        rt.record("lifecycle", detail={"rollout": ctx.id, "not_drained": dict(failed)})
    names = {r.device for r in rows} - set(failed)
    done = [r for r in journal.targets(ctx.id) if r.device in names]
    move(rt, ctx, done, Lifecycle.maintenance)  # repair nodes too: they stayed drained
    return failed


def _wait_drained(
    rt: Runtime, ctx: Context, nodes: Sequence[str], deadline: float, how: OnTimeout
) -> dict[str, str]:
    """Poll until every node runs no work; past ``deadline`` stop the jobs still on
    them (``how``) and give them a grace; returns the nodes that never drained."""
    left = list(nodes)
    stop_by: float | None = None
    announced = False
    given_up: dict[str, str] = {}
    while left:
        stop_if_aborted(rt, ctx)
        try:
            state = drainer_of(rt, ctx).drained(ctx.id, left)
        except DrainError as exc:
            rt.reporter.message(f"drain: cannot read the nodes' state: {exc}")
            state = {}
        left = [n for n in left if not state.get(n)]
        now = time.time()
        if not left:
            break
        if not announced:
            rt.reporter.message(f"waiting for the jobs on {len(left)} node(s) to end")
            announced = True
        if stop_by is None and now >= deadline:
            given_up.update(_stop_jobs(rt, ctx, left, how))
            left = [n for n in left if n not in given_up]
            stop_by = now + STOP_GRACE_MINUTES * 60.0
            continue
        if stop_by is not None and now >= stop_by:
            return given_up | dict.fromkeys(
                left, f"still running work {STOP_GRACE_MINUTES:g} min after {how.value}"
            )
        time.sleep(POLL_SECONDS)
    return given_up


def _stop_jobs(rt: Runtime, ctx: Context, nodes: Sequence[str], how: OnTimeout) -> dict[str, str]:
    """Requeue or cancel the jobs still on ``nodes``; returns the nodes given up at once:
    those of a job the scheduler refused to requeue, under ``on_requeue_refused: fail``
    (or when cancelling it failed too), each with the scheduler's reason."""
    spec = ctx.spec.drain
    assert spec is not None
    try:
        jobs = jobs_on(drainer_of(rt, ctx).jobs(nodes) or [], nodes)
    except DrainError as exc:
        rt.reporter.message(f"drain timed out; the jobs are unknown: {exc}")
        return {}
    results = drainer_of(rt, ctx).stop_jobs(jobs, how)
    rt.reporter.message(
        f"drain timed out: {how.value} job(s) " + ", ".join(str(j.id) for j in jobs)
    )
    refused = [j for j in jobs if results.get(j.id)]
    given_up: dict[str, str] = {}
    if refused and how is OnTimeout.requeue:
        fallback = spec.on_requeue_refused
        for job in refused:
            rt.reporter.message(
                f"job {job.id} ({job.name}) cannot be requeued: {results[job.id]};"
                f" drain.on_requeue_refused: {fallback.value}"
            )
        if fallback is OnRequeueRefused.cancel:
            cancelled = drainer_of(rt, ctx).stop_jobs(refused, OnTimeout.cancel)
            results |= {k: f"requeue refused, cancel: {v or 'ok'}" for k, v in cancelled.items()}
            refused = [j for j in refused if cancelled.get(j.id)]
        for job in refused:
            why = f"job {job.id} ({job.name}) could not be stopped: {results[job.id]}"
            given_up |= {n: f"{why}; left running" for n in job.nodes if n in nodes}
    rt.record(
        "lifecycle",
        detail={
            "rollout": ctx.id,
            "drain_timeout": how.value,
            "jobs": {str(k): v for k, v in results.items()},
        },
    )
    return given_up


def return_nodes(
    rt: Runtime, ctx: Context, rows: Sequence[TargetRow], failures: Mapping[str, str]
) -> None:
    """Nodes in service per the journal go back to the scheduler (only this rollout's
    drains are resumed: idempotent after a crash); nodes in repair stay drained, the
    reason saying why."""
    in_service = [r.device for r in rows if r.lifecycle is Lifecycle.in_service]
    repair = [r.device for r in rows if r.lifecycle is Lifecycle.repair]
    problems: dict[str, str] = {}
    if in_service:
        released = drainer_of(rt, ctx).release(ctx.id, in_service)
        for node, error in released.items():
            if error and error.startswith(OTHER_ACTOR):
                problems[node] = f"left alone: {error}"  # not ours to resume
            elif error:
                problems[node] = f"resume failed: {error}"
    for node in repair:
        why = failures.get(node, "acceptance failed")
        held = drainer_of(rt, ctx).hold(
            ctx.id, [node], plumb_reason(ctx.id, f"repair: {why}"[:200])
        )
        problems.update({n: f"hold for repair failed: {e}" for n, e in held.items() if e})
    if problems:
        rt.reporter.message("; ".join(f"{n}: {e}" for n, e in sorted(problems.items())))
        rt.record("lifecycle", detail={"rollout": ctx.id, "drainer_problems": problems})


def measured_stall(record: Mapping[str, Json] | None, now: float) -> float | None:
    """GPU-hours the scheduler's jobs on the wave's nodes stood still: each job's GPUs
    from the drain's start to ``now`` (wall-clock); None when the scheduler was not asked."""
    if record is None:
        return None
    started, gangs = record.get("started"), record.get("gangs")
    if not isinstance(started, (int, float)) or not isinstance(gangs, list):
        return None
    gpus = 0
    for gang in gangs:
        count = gang.get("gpus") if isinstance(gang, dict) else None
        gpus += count if isinstance(count, int) else 0
    return float(gpus) * max(0.0, now - float(started)) / 3600.0
