"""Drains against a real Slurm 22.05 (32 nodes x 8 GPUs on this host, started once for
the module): a rollout drains the nodes of a running 4-node job through scontrol, waits,
requeues the job at the spec's timeout, flashes the (lab) nodes, runs the acceptance
test and resumes them; a failing acceptance leaves its node drained for repair; a node
another actor drained is left alone; a rollout killed while a node drains resumes.
Every check reads Slurm's own state."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from reconciler.state.journal import Lifecycle, RolloutStatus, TargetStatus
from tests.fleetcopy import FleetCopy
from tests.reconciler.labfleet import PLUMB, plumb_env
from tests.rollouts.gitfleet import GitFleet
from tests.rollouts.test_execute import NEW, firmware
from tests.slurmcluster import SlurmCluster, missing_pieces

JOB_NODES = ["gpu-n01", "gpu-n02", "gpu-n03", "gpu-n04"]
SPEC = "hx8-slurm"
ACCEPTANCE = """\
import pathlib, sys
node = sys.argv[1]
print(f"node={{node}}")
print("busbw=389.5 GB/s")
sys.exit(1 if pathlib.Path({fail!r}, node).exists() else 0)
"""


@pytest.fixture(scope="module")
def slurm() -> Iterator[SlurmCluster]:
    missing = missing_pieces()
    if missing:
        message = f"no Slurm here: {', '.join(missing)} (./dev test installs it)"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    cluster = SlurmCluster(Path(f"/tmp/plumb-slurm-{os.getpid()}"))
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture
def cluster(slurm: SlurmCluster, monkeypatch: pytest.MonkeyPatch) -> Iterator[SlurmCluster]:
    monkeypatch.setenv("SLURM_CONF", str(slurm.conf))
    slurm.reset()
    yield slurm
    slurm.reset()


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> GitFleet:
    return GitFleet.create(tmp_path_factory.mktemp("slurm-template"))


@pytest.fixture
def fleet(template: GitFleet, tmp_path: Path) -> GitFleet:
    shutil.copytree(template.root, tmp_path / "orion", symlinks=True)
    fleet = GitFleet(FleetCopy(tmp_path / "orion"), template.base, template.change)
    failing = tmp_path / "failing"
    failing.mkdir()
    script = tmp_path / "acceptance.py"
    script.write_text(ACCEPTANCE.format(fail=str(failing)))
    fleet.copy.write(
        f"rollouts/{SPEC}.yaml",
        f"""rollout:
  name: {SPEC}
  targets: {{select: "name=gpu-n0[1-4]", paths: ["firmware/*"]}}
  waves: {{growth: 4.0}}
  bake: {{mode: fixed, fixed_minutes: 30.0}}
  drain: {{via: slurm, timeout_minutes: 0.05, on_timeout: requeue}}
  acceptance:
    gpu-node: {{command: "{sys.executable} {script} {{node}}", timeout_seconds: 30, run: local}}
  abort: {{hard_faults: [unreachable, unknown]}}
  rollback: {{automatic: false}}
  seed: 7
""",
    )
    fleet.commit("a rollout drained through Slurm")
    return fleet


def _state(cluster: SlurmCluster, node: str) -> tuple[str, str | None]:
    line = cluster.node(node)
    state = re.search(r" State=(\S+)", line)
    reason = re.search(r" Reason=(.*?)(?: \[[^\]]*\])?$", line.strip())
    assert state is not None
    return state.group(1), reason.group(1) if reason else None


def _restarts(cluster: SlurmCluster, job: int) -> int:
    found = re.search(r"Restarts=(\d+)", cluster.run("scontrol", "-o", "show", "job", str(job)))
    assert found is not None
    return int(found.group(1))


def test_a_rollout_drains_a_running_gang_flashes_accepts_and_resumes(
    cluster: SlurmCluster, fleet: GitFleet
) -> None:
    """The job on the targets is the gang: drained under the rollout's reason, requeued
    at the timeout, the nodes flashed, accepted (figures journaled) and resumed."""
    job = cluster.submit(",".join(JOB_NODES), 4)
    cluster.wait_job(job, "RUNNING")
    run = fleet.plumb("rollout", "start", SPEC, ".")
    assert run.exit_code == 0, run.stdout + run.stderr
    rollout = fleet.only_rollout()
    running = fleet.running()
    assert all(firmware(running[n]) == NEW for n in JOB_NODES)
    for node in JOB_NODES:  # resumed: no drain flag left, back to work
        state, _ = _state(cluster, node)
        assert "DRAIN" not in state, (node, state)
    assert _restarts(cluster, job) >= 1  # requeued once the 3 s wait was over
    with fleet.db() as db:
        waves = db.journal.waves(rollout)
        rows = db.journal.targets(rollout)
    assert {r.lifecycle for r in rows} == {Lifecycle.in_service}
    first = waves[0].evidence or {}
    gangs = first["drain"]["gangs"]
    assert [(g["id"], g["gpus"], g["nodes"]) for g in gangs] == [(job, 32, JOB_NODES)]
    assert waves[0].stall_gpu_hours > 0.0  # measured: 32 GPUs from drain start to resume
    assert waves[0].stall_gpu_hours < 32 * 0.05  # ... minutes, not the price's 20
    figures = {n: f for w in waves for n, f in (w.evidence or {}).get("acceptance", {}).items()}
    assert set(figures) == set(JOB_NODES)
    assert all(f["exit_status"] == 0 and f["figures"]["busbw"] == 389.5 for f in figures.values())
    status = fleet.plumb("rollout", "status", rollout, ".").stdout
    assert f"drained via slurm; running jobs: job {job} (32 GPUs on 4 nodes)" in status
    assert re.search(r"stalled 0\.\d GPU-h \(planned \d+\.\d\)", status), status


def test_a_failed_acceptance_leaves_the_node_drained_in_repair(
    cluster: SlurmCluster, fleet: GitFleet, tmp_path: Path
) -> None:
    """A node failing its acceptance test stays drained, its reason saying why, and
    fails the wave; once repaired, the rollback takes it back through acceptance and
    Slurm resumes it."""
    for node in JOB_NODES:
        (tmp_path / "failing" / node).touch()
    run = fleet.plumb("rollout", "start", SPEC, ".")
    assert run.exit_code == 1, run.stdout + run.stderr
    rollout = fleet.only_rollout()
    rows = {r.device: r for r in fleet.targets(rollout)}
    repair = [n for n, r in rows.items() if r.lifecycle is Lifecycle.repair]
    assert repair  # the canary failed and stopped the rollout
    for node in repair:
        state, reason = _state(cluster, node)
        assert "DRAIN" in state
        assert reason is not None and reason.startswith(f"plumb rollout {rollout}: repair:")
        assert "exit status 1" in (rows[node].error or "")
    for node in set(JOB_NODES) - set(repair):  # never drained (later waves)
        assert "DRAIN" not in _state(cluster, node)[0]
    with fleet.db() as db:
        assert db.journal.get(rollout).status is RolloutStatus.aborted  # type: ignore[union-attr]
    for node in JOB_NODES:  # repaired: the rollback's acceptance passes, Slurm gets it back
        (tmp_path / "failing" / node).unlink()
    rolled = fleet.plumb("rollback", rollout, ".")
    assert rolled.exit_code == 0, rolled.stdout + rolled.stderr
    for node in repair:
        assert "DRAIN" not in _state(cluster, node)[0]
    assert {r.lifecycle for r in fleet.targets(rollout)} == {Lifecycle.in_service}


def test_a_node_another_actor_drained_is_left_alone(cluster: SlurmCluster, fleet: GitFleet) -> None:
    """Its reason is not plumb's: not resumed, not written; its target fails."""
    cluster.run("scontrol", "update", "nodename=gpu-n02", "state=drain", "reason=hw ticket 4711")
    before = firmware(fleet.running()["gpu-n02"])
    run = fleet.plumb("rollout", "start", SPEC, ".")
    rollout = fleet.only_rollout()
    row = next(r for r in fleet.targets(rollout) if r.device == "gpu-n02")
    if row.status is TargetStatus.pending:  # its wave never ran: nothing was asked of it
        pytest.fail(f"gpu-n02 was not reached: {run.stdout}")
    assert row.status is TargetStatus.failed and "another actor" in (row.error or "")
    assert firmware(fleet.running()["gpu-n02"]) == before
    state, reason = _state(cluster, "gpu-n02")
    assert "DRAIN" in state and reason == "hw ticket 4711"


def test_a_rollout_killed_while_a_node_drains_resumes(
    cluster: SlurmCluster, fleet: GitFleet
) -> None:
    """SIGKILL while the job still holds a draining node; resume finds its own drain,
    waits out what is left of the timeout, and finishes with every node in service."""
    job = cluster.submit(",".join(JOB_NODES), 4)
    cluster.wait_job(job, "RUNNING")
    env = {**plumb_env(), "SLURM_CONF": str(cluster.conf)}
    process = subprocess.Popen(
        [str(PLUMB), "rollout", "start", SPEC, "."],
        cwd=fleet.root,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 30
    while not any("DRAIN" in _state(cluster, n)[0] for n in JOB_NODES):
        assert process.poll() is None and time.monotonic() < deadline
        time.sleep(0.05)
    process.send_signal(signal.SIGKILL)
    process.wait()
    draining = [n for n in JOB_NODES if "DRAIN" in _state(cluster, n)[0]]
    assert draining and _restarts(cluster, job) == 0  # killed before the timeout
    assert fleet.plumb("lease", "break", ".", "--reason", "killed in a drill").exit_code == 0
    rollout = fleet.only_rollout()
    resumed = fleet.plumb("rollout", "resume", rollout, ".")
    assert resumed.exit_code == 0, resumed.stdout + resumed.stderr
    for node in JOB_NODES:
        assert "DRAIN" not in _state(cluster, node)[0]
    assert all(firmware(fleet.running()[n]) == NEW for n in JOB_NODES)
    assert fleet.device_writes() == dict.fromkeys(JOB_NODES, 1)


def _on_requeue_refused(fleet: GitFleet, fallback: str) -> None:
    fleet.copy.replace(
        f"rollouts/{SPEC}.yaml",
        "on_timeout: requeue}",
        f"on_timeout: requeue, on_requeue_refused: {fallback}}}",
    )
    fleet.commit(f"on_requeue_refused: {fallback}")


def _srun(cluster: SlurmCluster, nodes: list[str]) -> subprocess.Popen[bytes]:
    """An interactive job (an srun step, not a batch job: Slurm will not requeue it)."""
    process = subprocess.Popen(
        [
            *("srun", f"--nodelist={','.join(nodes)}", f"--nodes={len(nodes)}"),
            *("--gres=gpu:h100:8", "sleep", "600"),
        ],
        env={**os.environ, "SLURM_CONF": str(cluster.conf)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.monotonic() + 30
    while cluster.run("squeue", "-h", "-o", "%T", check=False).split() != ["RUNNING"]:
        assert process.poll() is None and time.monotonic() < deadline, "srun did not start"
        time.sleep(0.1)
    return process


def _job_ids(cluster: SlurmCluster) -> list[str]:
    return cluster.run("squeue", "-h", "-o", "%i", check=False).split()


def test_an_interactive_job_is_not_waited_for_its_nodes_fail_at_once(
    cluster: SlurmCluster, fleet: GitFleet
) -> None:
    """`scontrol requeue` refuses an srun job ("Only batch jobs are accepted"): with
    on_requeue_refused: fail (the default) its nodes are given back at once, said with
    Slurm's reason, the job keeps running, and the other nodes are written."""
    busy = JOB_NODES[:2]
    job = _srun(cluster, busy)
    try:
        run = fleet.plumb("rollout", "start", SPEC, ".")
        said = run.stdout + run.stderr
        assert "cannot be requeued" in said and "on_requeue_refused: fail" in said, said
        rows = {r.device: r for r in fleet.targets(fleet.only_rollout())}
        failed = [n for n in busy if rows[n].status is TargetStatus.failed]
        assert failed, said  # the first wave reaching the job's nodes gave them up
        for node in failed:
            assert "could not be stopped" in (rows[node].error or ""), rows[node].error
            assert "left running" in (rows[node].error or ""), rows[node].error
        for node in busy:
            assert "DRAIN" not in _state(cluster, node)[0]  # given back to the job
            assert firmware(fleet.running()[node]) != NEW  # never written
        assert len(_job_ids(cluster)) == 1  # still running
    finally:
        os.killpg(job.pid, signal.SIGTERM)
        job.wait()


def test_an_interactive_job_is_cancelled_when_the_spec_says_so(
    cluster: SlurmCluster, fleet: GitFleet
) -> None:
    _on_requeue_refused(fleet, "cancel")
    job = _srun(cluster, JOB_NODES[:2])
    try:
        run = fleet.plumb("rollout", "start", SPEC, ".")
        assert run.exit_code == 0, run.stdout + run.stderr
        assert "on_requeue_refused: cancel" in run.stdout + run.stderr
        assert _job_ids(cluster) == []  # cancelled
        assert all(firmware(fleet.running()[n]) == NEW for n in JOB_NODES)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(job.pid, signal.SIGTERM)
        job.wait()


def test_pre_flight_refuses_before_anything_starts(
    cluster: SlurmCluster, fleet: GitFleet, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Without the clients' configuration, plan and start refuse and journal nothing;
    a target that is no node of the cluster is named."""
    from rollouts.slurm import preflight

    assert preflight(JOB_NODES) == []
    (problem,) = preflight([*JOB_NODES, "gpu-x99"])
    assert "1 target(s) are no nodes of this Slurm cluster: gpu-x99" in problem
    monkeypatch.setenv("SLURM_CONF", str(tmp_path / "missing.conf"))
    planned = fleet.plumb("rollout", "plan", SPEC, ".")
    assert planned.exit_code == 1
    assert "cannot start here: drain via slurm: Slurm clients have no configuration" in (
        planned.stderr
    )
    started = fleet.plumb("rollout", "start", SPEC, ".")
    assert started.exit_code == 1 and "not starting: drain via slurm" in started.stderr
    with fleet.db() as db:
        assert db.journal.all() == []
