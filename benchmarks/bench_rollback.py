"""Emergency rollback benchmark: how long ``rollback(..., emergency=True)`` takes to put a
whole completed rollout back, on 1,000 simulated switches and on a 4,096-node lab fleet.

    .venv/bin/python benchmarks/bench_rollback.py [--switches 1000] [--ports 8]
        [--nodes 4096] [--concurrency 16] [--rollback-concurrency N]
        [--skip-switches] [--skip-lab]
        [--base REV] [--this REV]

Both parts run the library the way ``plumb rollout start`` and ``plumb rollback ID
--emergency`` do: a fleet repo in a temporary directory with the rollout spec in its
``rollouts/``; then, under the fleet lease and with the CLI's runtime
(``rollout_runtime``: drivers, write guard, audit log), the reconcile plan
(``make_plan``: observe, render, diff), the rollout plan (``plan_rollout``), the
journal in the repo's state database (``begin``) and ``drive`` to completion. The
rollback then runs as a second command would, in a runtime of its own (its own lease,
drivers and device connections), and restores every written target at once. Every
before-state it restores was recorded by the executor, which observes each target
just before its first write; nothing is written to the journal by hand, and the
journal is checked after each phase (every target ``applied``, then ``rolled_back``,
each with its before-state). The specs declare no abort metrics (hard faults
``unreachable`` and ``unknown`` only), caps that leave a handful of waves, a fixed
30-minute bake and no automatic rollback.

1. **Switches on the SSH simulator.** A switches-only fleet repo (``--switches``
   leaves, EOS and SONiC alternating, each with a BGP ASN and a loopback router id;
   ``plumb validate`` passes on it) whose ``plumb.yaml`` points the ``eos`` and
   ``sonic`` drivers at one simulator process (``python -m tests.switchsim serve``)
   through a ``mgmt_map``, with host keys checked against one known_hosts file per
   rule, the login in a private credentials file outside the repo, and 60-second
   login and command timeouts (at the drivers' 10-second default, a login here
   occasionally times out while the client is busy with the others). Every switch
   starts at its intent except the ECN thresholds of queue 3 on its ``--ports`` ports
   (Kmin/Kmax/Pmax 200 KB / 800 KB / 20 %); the intent retunes them to 160 / 640 /
   15, three changes per switch, in three waves. The bakes run on a virtual clock
   that does not sleep, so the wall times are device I/O and bookkeeping. The plan
   and the rollout share their SSH connections; the rollback opens its own, as a new
   ``plumb rollback`` process must, so its time includes 1,000 SSH logins (the
   time to parse a rule's known_hosts file is printed: the drivers parse it once per
   file version, paramiko and netmiko alone would for every login). On the 2-core
   machine this part takes about 3 minutes (18 before the SSH layer was made cheap:
   see docs/drivers.md, "Many switches at once"). The switches are then
   read back from the simulator's own per-device records (not through plumb's
   drivers): all at the new thresholds after the rollout, all at the old ones after
   the rollback.
2. **GPU nodes on the lab fleet** (about 3 minutes). A ``--nodes`` fleet from
   ``benchmarks/genfleet.py``, the lab created as ``plumb lab init --drift 0`` does
   (every HX8 node on the older bundle), and the HX8 firmware rollout (7 components
   per node, drained, rebooted, acceptance-checked, on the lab's virtual clock) over
   every GPU node, with the per-wave, per-rack and per-DP-replica caps lifted so it
   runs in four waves. Every node's firmware is read back from the lab store: at the
   new bundle after the rollout, at the older one after the rollback.

Printed per part: targets, changes per target, plan time, forward rollout wall time
(``begin`` + ``drive``), emergency rollback wall time and throughput, and the
concurrency of each (the forward rollout runs at ``--concurrency``, the CLI's
default; the emergency rollback raises it to its own floor), with the CPU seconds the
benchmark process and the simulator process spent in each phase (2 cores serve both).

With ``--base REV`` the same parts also run on that earlier commit (``git archive``
into a temporary folder, its own simulator included), right before this tree's, each
tree in a fresh interpreter, and the figures are printed side by side; ``--this REV``
measures a commit instead of the working tree.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import paramiko

ROOT = Path(__file__).resolve().parent.parent
# The tree measured: this one, or an earlier commit's (see ``--base``).
TREE = Path(os.environ.get("BENCH_ROLLBACK_TREE") or ROOT)
sys.path.insert(0, str(TREE))
sys.path.insert(1, str(ROOT))

from benchmarks.baseline import checkout, describe, load_average  # noqa: E402
from benchmarks.genfleet import generate_fleet  # noqa: E402
from intent.fleet import Fleet, load_fleet  # noqa: E402
from lab.driver import create_lab  # noqa: E402
from lab.fleet import lab_db_path  # noqa: E402
from lab.store import LabStore  # noqa: E402
from reconciler.render import render_device  # noqa: E402
from reconciler.select import select_devices  # noqa: E402
from reconciler.settings import Scalar, as_desired_state  # noqa: E402
from reconciler.state.journal import RolloutStatus, TargetStatus  # noqa: E402
from rollouts.execute import drive  # noqa: E402
from rollouts.load import load_rollout  # noqa: E402
from rollouts.planning import plan_rollout, rollout_changes  # noqa: E402
from rollouts.rollback import rollback  # noqa: E402
from rollouts.runtime import BakeClock  # noqa: E402
from rollouts.spec import RollbackScope  # noqa: E402
from rollouts.start import Provenance, begin  # noqa: E402
from service.context import FleetContext  # noqa: E402
from service.planning import make_plan  # noqa: E402
from service.runtime import rollout_runtime  # noqa: E402
from tests.drivers.simflat import state_from_flat  # noqa: E402
from tests.switchsim import DeviceSpec, EcnQueue, SwitchState  # noqa: E402
from tests.switchsim.sonic_db import project  # noqa: E402
from tests.switchsim_process import SimProcess, serve  # noqa: E402

USER, PASSWORD = "bench", "bench-rollback-pw"
ACTOR = "bench@rollback"
SWITCHES_PER_RACK = 20
# Seconds: one client process holding 1,000 SSH sessions on 2 cores answers slowly
# enough that the drivers' defaults (10 s to log in) time some logins out.
SSH_TIMEOUT = 60
ECN_QUEUE = 3
ECN_BEFORE = EcnQueue(200, 800, 20)
ECN_AFTER = EcnQueue(160, 640, 15)
LEAF_KINDS = (("arista", "7060DX5-64S", "eos"), ("nvidia", "ACS-SN5600", "sonic"))
OLD_BUNDLE, NEW_BUNDLE = "hx8-2026.06", "hx8-2026.09"
_EPOCH = datetime(2026, 1, 1, tzinfo=UTC)


class InstantClock:
    """A :class:`~rollouts.runtime.BakeClock` whose minutes pass at once: bakes are
    journaled and judged as usual, and nobody waits for them."""

    def __init__(self) -> None:
        self.minutes = 0.0

    def now(self) -> float:
        return self.minutes

    def advance(self, minutes: float) -> float:
        self.minutes += max(0.0, minutes)
        return self.minutes

    def time(self, minutes: float) -> datetime:
        return _EPOCH + timedelta(minutes=minutes)


class CpuMeter:
    """CPU seconds spent by this process and by the simulator process (if any)."""

    sim_pid: int | None = None

    @classmethod
    def now(cls) -> tuple[float, float]:
        own = resource.getrusage(resource.RUSAGE_SELF)
        sim = 0.0
        if cls.sim_pid is not None:
            fields = Path(f"/proc/{cls.sim_pid}/stat").read_text().rsplit(")", 1)[1].split()
            sim = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        return own.ru_utime + own.ru_stime, sim

    @classmethod
    def since(cls, start: tuple[float, float]) -> tuple[float, float]:
        end = cls.now()
        return round(end[0] - start[0], 1), round(end[1] - start[1], 1)


@dataclass(frozen=True)
class Measured:
    """One rollout and its emergency rollback; ``*_cpu`` is (this process, simulator)."""

    targets: int
    changes_per_target: float
    waves: int
    plan_seconds: float
    forward_seconds: float
    forward_concurrency: int
    rollback_seconds: float
    rollback_concurrency: int
    restored: int
    plan_cpu: tuple[float, float] = (0.0, 0.0)
    forward_cpu: tuple[float, float] = (0.0, 0.0)
    rollback_cpu: tuple[float, float] = (0.0, 0.0)
    load: list[str] = field(default_factory=list)


# -- the rollout and its rollback, as the CLI runs them ---------------------------------


@dataclass(frozen=True)
class Forward:
    """A completed rollout: its id and what starting and driving it took."""

    rollout: str
    targets: int
    waves: int
    plan_seconds: float
    forward_seconds: float
    plan_cpu: tuple[float, float]
    forward_cpu: tuple[float, float]


def start_and_drive(
    fleet: Fleet, spec_name: str, concurrency: int, clock: BakeClock | None
) -> Forward:
    """``plumb rollout start``: plan, journal and drive ``spec_name`` to completion
    under the lease. The plan's observation and the rollout share one runtime (and so
    one set of SSH connections); ``clock`` replaces the runtime's own."""
    loaded = load_rollout(fleet.root, spec_name)
    spec = loaded.spec
    selected = select_devices(fleet.devices.values(), spec.targets.select)
    context = FleetContext(fleet, ACTOR, None)
    try:
        with (
            context.db.lease.held(context.holder, f"rollout {spec.name}") as token,
            rollout_runtime(context, token, selected) as runtime,
        ):
            if clock is not None:
                runtime.clock = clock
            runtime.concurrency = concurrency
            started, cpu = time.perf_counter(), CpuMeter.now()
            observed = make_plan(context, runtime.targets, spec.targets.select)
            planned = plan_rollout(fleet, spec, observed)
            if planned.unknown or observed.refused:
                why = observed.refused or planned.unknown
                raise SystemExit(f"{spec.name}: cannot start: {why}")
            changes = rollout_changes(observed, planned.selected, spec.targets.paths)
            plan_seconds, plan_cpu = time.perf_counter() - started, CpuMeter.since(cpu)
            spec_rel = Path(loaded.doc.path).as_posix()
            provenance = Provenance(
                spec_path=spec_rel,
                spec_text=(fleet.root / spec_rel).read_bytes(),
                spec_commit=None,
                intent_commit=None,
                actor=context.actor,
            )
            started, cpu = time.perf_counter(), CpuMeter.now()
            rollout = begin(runtime, planned, changes, provenance)
            status = drive(runtime, rollout)
            forward, forward_cpu = time.perf_counter() - started, CpuMeter.since(cpu)
        if status is not RolloutStatus.completed:
            row = context.db.journal.get(rollout)
            raise SystemExit(f"{spec.name}: {status.value}: {row.reason if row else ''}")
        return Forward(
            rollout,
            len(planned.targets),
            len(planned.reports),
            plan_seconds,
            forward,
            plan_cpu,
            forward_cpu,
        )
    finally:
        context.close()


def emergency_rollback(
    fleet: Fleet, rollout: str, concurrency: int | None
) -> tuple[float, int, int, tuple[float, float]]:
    """``plumb rollback ROLLOUT --emergency`` as a new process runs it: its own lease,
    runtime and device connections, at ``concurrency`` (None: the emergency floor).
    Returns wall seconds, the concurrency used, how many targets were restored and
    the CPU seconds spent (here, in the simulator)."""
    context = FleetContext(fleet, ACTOR, None)
    try:
        names = [t.device for t in context.db.journal.targets(rollout)]
        with (
            context.db.lease.held(context.holder, f"rollback {rollout}") as token,
            rollout_runtime(context, token, names) as runtime,
        ):
            # a tree from before the keyword existed is measured at its own floor
            floor: dict[str, Any] = {}
            if concurrency is not None:
                floor["emergency_concurrency"] = concurrency
            started, cpu = time.perf_counter(), CpuMeter.now()
            report = rollback(
                runtime,
                rollout,
                scope=RollbackScope.rollout,
                emergency=True,
                reason="benchmark: emergency rollback",
                **floor,
            )
            elapsed, spent = time.perf_counter() - started, CpuMeter.since(cpu)
        if not report.ok:
            first = sorted(report.failed.items())[:3]
            raise SystemExit(f"{rollout}: rollback failed: {report.refused or first}")
        return elapsed, runtime.concurrency, len(report.restored), spent
    finally:
        context.close()


def roll_out_and_back(
    fleet: Fleet,
    spec_name: str,
    concurrency: int,
    after_rollout: Callable[[], None],
    clock: BakeClock | None = None,
    rollback_concurrency: int | None = None,
) -> Measured:
    """Start and drive ``spec_name``, check the devices with ``after_rollout`` (not
    timed), then roll every target back at once; the journal is checked after each."""
    forward = start_and_drive(fleet, spec_name, concurrency, clock)
    per_target = _journal_check(fleet, forward.rollout, expect=TargetStatus.applied)
    after_rollout()
    print(
        f"  rolled out in {forward.plan_seconds + forward.forward_seconds:.1f} s; "
        "emergency rollback ...",
        flush=True,
    )
    seconds, used, restored, spent = emergency_rollback(
        fleet, forward.rollout, rollback_concurrency
    )
    _journal_check(fleet, forward.rollout, expect=TargetStatus.rolled_back)
    return Measured(
        targets=forward.targets,
        changes_per_target=per_target,
        waves=forward.waves,
        plan_seconds=forward.plan_seconds,
        forward_seconds=forward.forward_seconds,
        forward_concurrency=concurrency,
        rollback_seconds=seconds,
        rollback_concurrency=used,
        restored=restored,
        plan_cpu=forward.plan_cpu,
        forward_cpu=forward.forward_cpu,
        rollback_cpu=spent,
        load=[load_average()],
    )


def _journal_check(fleet: Fleet, rollout: str, *, expect: TargetStatus) -> float:
    """Every target in ``expect`` with a before-state recorded; changes per target."""
    context = FleetContext(fleet, ACTOR, None)
    try:
        rows = context.db.journal.targets(rollout)
    finally:
        context.close()
    wrong = [r.device for r in rows if r.status is not expect or r.before is None]
    if wrong:
        raise SystemExit(f"{len(wrong)} target(s) not {expect.value}: {wrong[:5]}")
    return sum(len(r.intended) for r in rows) / max(1, len(rows))


# -- part 1: switches on the SSH simulator ----------------------------------------------


def write_switch_fleet(repo: Path, count: int) -> None:
    """A switches-only fleet repo: racks, ``count`` leaves, QoS, firmware and BGP intent."""
    (repo / "inventory").mkdir(parents=True)
    (repo / "intent").mkdir()
    (repo / "rollouts").mkdir()
    (repo / "plumb.yaml").write_text(
        f"fleet: bench-switches\nstate_dir: .plumb\n"
        f'description: "{count} backend leaves on the SSH switch simulator."\n'
    )
    racks = ["racks:"]
    for rack in range(-(-count // SWITCHES_PER_RACK)):
        row = f"row-{rack // 10 + 1:02d}"
        racks.append(
            f"  - {{name: net-{rack + 1:03d}, kind: network, power_domain: pdu-{rack + 1:03d}, "
            f"cooling_domain: {row}, row: {row}}}"
        )
    (repo / "inventory" / "racks.yaml").write_text("\n".join(racks) + "\n")
    devices = ["devices:"]
    for index in range(count):
        vendor, model, platform = LEAF_KINDS[index % 2]
        devices.append(
            f"  - {{name: {switch_name(index)}, role: leaf, vendor: {vendor}, model: {model}, "
            f"platform: {platform}, rack: net-{index // SWITCHES_PER_RACK + 1:03d}, "
            f"mgmt: 198.18.{index // 250}.{index % 250 + 1}, rail: {index % 8}}}"
        )
    (repo / "inventory" / "switches.yaml").write_text("\n".join(devices) + "\n")
    (repo / "intent" / "qos.yaml").write_text(
        "qos:\n"
        "  lossless_link_classes: [host-leaf, leaf-spine]\n"
        "  dscp_map:\n"
        "    - {dscp: 26, priority: 3}\n"
        "    - {dscp: 48, priority: 6}\n"
        "  roce_priority: 3\n"
        "  cnp_priority: 6\n"
        "  pfc_priorities: [3]\n"
        "  ecn:\n"
        f"    - {{priority: {ECN_QUEUE}, kmin_kb: {ECN_AFTER.kmin_kb}, "
        f"kmax_kb: {ECN_AFTER.kmax_kb}, pmax_percent: {ECN_AFTER.pmax_percent}}}\n"
        "  pfc_xoff_kb: 400\n"
        "  pfc_headroom_kb: 128\n"
        "  switch_buffer_kb: 114688\n"
        "  peer_response_ns: 1500\n"
        "  pfc_frame_bytes: 64\n"
    )
    (repo / "intent" / "firmware.yaml").write_text(
        "firmware:\n"
        "  bundles:\n"
        '    - {name: eos-4.32.2F, models: [7060DX5-64S], components: {nos: "4.32.2F"}}\n'
        '    - {name: sonic-202411, models: [ACS-SN5600], components: {nos: "202411"}}\n'
        "groups:\n"
        "  - name: eos-leaves\n"
        "    match: {models: [7060DX5-64S]}\n"
        "    set: {firmware: {bundle: eos-4.32.2F}}\n"
        "  - name: sonic-leaves\n"
        "    match: {models: [ACS-SN5600]}\n"
        "    set: {firmware: {bundle: sonic-202411}}\n"
    )
    bgp = ["bgp:", "  maximum_paths: 64", "  inbound_filter: FABRIC-IN", "  leaf_asns:"]
    bgp += [f"    {switch_name(i)}: {4_200_000_001 + i}" for i in range(count)]
    bgp += ["addressing:", "  loopbacks: 10.254.0.0/16"]
    (repo / "intent" / "bgp.yaml").write_text("\n".join(bgp) + "\n")
    (repo / "rollouts" / "ecn-retune.yaml").write_text(
        "rollout:\n"
        "  name: ecn-retune\n"
        "  description: ECN thresholds of the RoCE queue, on every leaf.\n"
        "  targets:\n"
        "    select: role=leaf\n"
        '    paths: ["qos/ecn/*"]\n'
        "  strata: {canary_per_stratum: 1}\n"
        "  waves: {growth: 10.0, first_wave: 100}\n"
        "  bake: {mode: fixed, fixed_minutes: 30.0}\n"
        "  drain: false\n"
        "  abort:\n"
        "    hard_faults: [unreachable, unknown]\n"
        "    aa_noise_floor: false\n"
        "  rollback: {scope: rollout, automatic: false}\n"
    )


def switch_name(index: int) -> str:
    return f"leaf-{index + 1:04d}"


def simulated_switches(fleet: Fleet, ports: int) -> list[DeviceSpec]:
    """Each switch at its rendered intent, except the ECN thresholds (the before-state)."""
    specs = []
    for name, device in fleet.devices.items():
        flat: dict[str, Scalar] = dict(as_desired_state(render_device(fleet, name)))
        dialect = device.platform.value
        first, step = (1, 1) if dialect == "eos" else (0, 4)
        for port in range(ports):
            flat[f"interfaces/Ethernet{first + port * step}/mtu"] = 9216
        for setting in ("kmin_kb", "kmax_kb", "pmax_percent"):
            flat[f"qos/ecn/{ECN_QUEUE}/{setting}"] = getattr(ECN_BEFORE, setting)
        initial = state_from_flat(flat, hostname=name, dialect=dialect, model=device.model)
        specs.append(DeviceSpec(name, dialect, USER, PASSWORD, initial, reboot_seconds=0.3))
    return specs


def point_drivers_at(repo: Path, sim: SimProcess, secrets: Path) -> dict[str, Path]:
    """``drivers:`` rules for both NOSes: the simulator's ports, host keys (one
    known_hosts file per rule) and login. Returns each rule's known_hosts file."""
    (secrets / "mgmt.json").write_text(json.dumps(sim.mgmt_map()))
    credentials = secrets / "credentials.json"
    fd = os.open(credentials, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as file:
        json.dump({"username": USER, "password": PASSWORD}, file)
    rules, known = ["drivers:"], {}
    for platform in ("eos", "sonic"):
        known[platform] = secrets / f"known_hosts-{platform}"
        known[platform].write_text(
            "".join(
                d["host_key_line"] + "\n" for d in sim.devices.values() if d["dialect"] == platform
            )
        )
        rules += [
            f"  - driver: {platform}",
            f"    platforms: [{platform}]",
            "    options:",
            f"      known_hosts: {known[platform]}",
            f"      mgmt_map: {secrets / 'mgmt.json'}",
            f"      credentials_file: {credentials}",
            "      commit_timeout: 60",
            f"      connect_timeout: {SSH_TIMEOUT}",
            f"      command_timeout: {SSH_TIMEOUT}",
        ]
    with (repo / "plumb.yaml").open("a") as file:
        file.write("\n".join(rules) + "\n")
    return known


def known_hosts_load_ms(path: Path, rounds: int = 5) -> float:
    """What paramiko spends parsing ``path``."""
    started = time.perf_counter()
    for _ in range(rounds):
        paramiko.HostKeys(str(path))
    return (time.perf_counter() - started) / rounds * 1000.0


def running_ecn(sim: SimProcess, name: str) -> set[tuple[int, int, int] | None]:
    """The distinct queue-3 ECN thresholds over the switch's ports, from its record."""
    record = sim.record(name)
    state: SwitchState
    if sim.devices[name]["dialect"] == "eos":
        state = SwitchState.from_dict(record["running"])
    else:
        state = project(record["running"], record["nos_version"], record["boot_image"])
    found: set[tuple[int, int, int] | None] = set()
    for port in state.interfaces.values():
        queue = port.ecn.get(ECN_QUEUE)
        found.add(None if queue is None else (queue.kmin_kb, queue.kmax_kb, queue.pmax_percent))
    return found


def check_switches(sim: SimProcess, names: list[str], want: EcnQueue, when: str) -> None:
    expected = {(want.kmin_kb, want.kmax_kb, want.pmax_percent)}
    wrong = [n for n in names if running_ecn(sim, n) != expected]
    if wrong:
        raise SystemExit(f"{when}: {len(wrong)} switch(es) not at {expected}: {wrong[:5]}")


def bench_switches(
    work: Path, count: int, ports: int, concurrency: int, rollback_concurrency: int | None
) -> Measured:
    repo = work / "switch-fleet"
    write_switch_fleet(repo, count)
    fleet = load_fleet(repo)
    devices = simulated_switches(fleet, ports)
    names = [d.name for d in devices]
    started = time.perf_counter()
    with serve(work / "sim", devices, timeout=600.0) as sim:
        CpuMeter.sim_pid = sim.process.pid
        print(
            f"  simulator: {len(sim.devices)} switches listening after "
            f"{time.perf_counter() - started:.1f} s",
            flush=True,
        )
        known = point_drivers_at(repo, sim, work)
        lines = len(known["eos"].read_text().splitlines())
        print(
            f"  a rule's known_hosts file ({lines} lines) takes "
            f"{known_hosts_load_ms(known['eos']):.0f} ms to parse (paramiko and netmiko "
            "parse it for every new connection unless the driver keeps it)",
            flush=True,
        )
        measured = roll_out_and_back(
            load_fleet(repo),
            "ecn-retune",
            concurrency,
            lambda: check_switches(sim, names, ECN_AFTER, "after the rollout"),
            InstantClock(),
            rollback_concurrency,
        )
        check_switches(sim, names, ECN_BEFORE, "after the rollback")
        CpuMeter.sim_pid = None
    return measured


# -- part 2: GPU nodes on the lab fleet -------------------------------------------------


@contextmanager
def lab_store(fleet: Fleet) -> Iterator[LabStore]:
    store = LabStore(lab_db_path(fleet))
    try:
        yield store
    finally:
        store.close()


def firmware_of(store: LabStore, names: list[str]) -> dict[str, dict[str, Scalar]]:
    running = store.read_all_running()
    return {n: {p: v for p, v in running[n].items() if p.startswith("firmware/")} for n in names}


def bundle_state(fleet: Fleet, bundle: str) -> dict[str, Scalar]:
    return {f"firmware/{k}": v for k, v in fleet.bundles[bundle].components.items()}


def check_lab(
    store: LabStore, names: list[str], want: Mapping[str, Mapping[str, Scalar]], when: str
) -> None:
    now = firmware_of(store, names)
    wrong = [n for n in names if now[n] != want[n]]
    if wrong:
        raise SystemExit(f"{when}: {len(wrong)} node(s) not at the expected firmware: {wrong[:5]}")


def write_lab_spec(repo: Path) -> None:
    """The HX8 firmware rollout of the generated fleet with its caps lifted."""
    (repo / "rollouts" / "firmware-hx8-fast.yaml").write_text(
        "rollout:\n"
        "  name: firmware-hx8-fast\n"
        f"  description: Every HX8 node from {OLD_BUNDLE} to {NEW_BUNDLE}, in few waves.\n"
        "  targets:\n"
        "    select: role=gpu-node\n"
        '    paths: ["firmware/*"]\n'
        "  strata:\n"
        "    extra_attributes: [label.nic_revision]\n"
        "    canary_per_stratum: 1\n"
        "  waves: {growth: 10.0, first_wave: 64}\n"
        "  bake: {mode: fixed, fixed_minutes: 30.0}\n"
        "  drain: true\n"
        "  price: {usd_per_gpu_hour: 3.0, drain_minutes: 20.0}\n"
        "  abort:\n"
        "    hard_faults: [unreachable, unknown]\n"
        "    aa_noise_floor: false\n"
        "  rollback: {scope: rollout, automatic: false}\n"
    )


def bench_lab(
    work: Path, nodes: int, concurrency: int, rollback_concurrency: int | None
) -> Measured:
    repo = work / "lab-fleet"
    started = time.perf_counter()
    summary = generate_fleet(repo, nodes)
    write_lab_spec(repo)
    fleet = load_fleet(repo)
    print(
        f"  generated and loaded {len(fleet.devices)} devices ({summary.records} records) in "
        f"{time.perf_counter() - started:.1f} s",
        flush=True,
    )
    gpu = [d.name for d in fleet.devices.values() if d.model == "HX8"]
    old, new = bundle_state(fleet, OLD_BUNDLE), bundle_state(fleet, NEW_BUNDLE)
    with lab_store(fleet) as store:
        started = time.perf_counter()
        create_lab(store, fleet, seed=0, drift=0, older_firmware=True)
        print(f"  lab init: {time.perf_counter() - started:.1f} s", flush=True)
        before = firmware_of(store, gpu)
        check_lab(store, gpu, dict.fromkeys(gpu, old), "before the rollout")
        measured = roll_out_and_back(
            fleet,
            "firmware-hx8-fast",
            concurrency,
            lambda: check_lab(store, gpu, dict.fromkeys(gpu, new), "after the rollout"),
            rollback_concurrency=rollback_concurrency,
        )
        check_lab(store, gpu, before, "after the rollback")
    return measured


# -- figures ----------------------------------------------------------------------------


def _cpu(spent: tuple[float, float]) -> str:
    return f"cpu {spent[0]:.0f} s here + {spent[1]:.0f} s simulator"


def report(what: str, unit: str, measured: Measured) -> None:
    rate = measured.restored / measured.rollback_seconds
    print(f"  {what}: {measured.targets:,} targets, {measured.changes_per_target:g} changes each")
    print(
        f"  plan (observe + diff + rollout plan): {measured.plan_seconds:7.1f} s, "
        f"{measured.waves} waves  ({_cpu(measured.plan_cpu)})"
    )
    print(
        f"  forward rollout (begin + drive):      {measured.forward_seconds:7.1f} s  "
        f"(concurrency {measured.forward_concurrency}; {_cpu(measured.forward_cpu)})"
    )
    print(
        f"  emergency rollback:                   {measured.rollback_seconds:7.1f} s  "
        f"(concurrency {measured.rollback_concurrency}; {measured.restored:,} restored, "
        f"verified) = {rate:,.1f} {unit}/s  ({_cpu(measured.rollback_cpu)}; "
        f"load {', '.join(measured.load)})",
        flush=True,
    )


PARTS = {"switches": "switches", "GPU nodes": "nodes"}


def measure(args: argparse.Namespace) -> dict[str, Measured]:
    """Every part not skipped, in this process, each reported as it ends."""
    found: dict[str, Measured] = {}
    with tempfile.TemporaryDirectory(prefix="bench-rollback-") as tmp:
        work = Path(tmp)
        if not args.skip_switches:
            eos = (args.switches + 1) // 2
            print(
                f"{args.switches:,} switches ({eos} EOS, {args.switches - eos} SONiC) x "
                f"{args.ports} ports on the SSH simulator: ECN queue {ECN_QUEUE} "
                f"{ECN_BEFORE.kmin_kb}/{ECN_BEFORE.kmax_kb}/{ECN_BEFORE.pmax_percent} -> "
                f"{ECN_AFTER.kmin_kb}/{ECN_AFTER.kmax_kb}/{ECN_AFTER.pmax_percent}",
                flush=True,
            )
            found["switches"] = bench_switches(
                work, args.switches, args.ports, args.concurrency, args.rollback_concurrency
            )
            report("switches", "switches", found["switches"])
        if not args.skip_lab:
            print(
                f"{args.nodes:,}-node lab fleet: HX8 firmware {OLD_BUNDLE} -> {NEW_BUNDLE} "
                "on every GPU node (drained, rebooted, acceptance)",
                flush=True,
            )
            found["GPU nodes"] = bench_lab(
                work, args.nodes, args.concurrency, args.rollback_concurrency
            )
            report("GPU nodes", "nodes", found["GPU nodes"])
    return found


def measure_tree(label: str, tree: Path, argv: list[str]) -> dict[str, Measured]:
    """The parts on ``tree`` in a fresh interpreter; its output is passed through."""
    print(f"== {label}", flush=True)
    child = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), *argv, "--json"],
        env={**os.environ, "BENCH_ROLLBACK_TREE": str(tree)},
        check=True,
        stdout=subprocess.PIPE,
        text=True,
    )
    lines = child.stdout.rstrip("\n").splitlines()
    print("\n".join(lines[:-1]), flush=True)
    found: dict[str, dict[str, Any]] = json.loads(lines[-1])
    return {part: _measured(fields) for part, fields in found.items()}


def _measured(fields: dict[str, Any]) -> Measured:
    cpu = {k: (float(v[0]), float(v[1])) for k, v in fields.items() if k.endswith("_cpu")}
    return Measured(**(fields | cpu))


def side_by_side(runs: dict[str, dict[str, Measured]]) -> None:
    """One row per part, phase and tree."""
    from ci.texttable import Column, table_text  # here: an earlier tree measured may lack it

    rows = []
    phases = (("plan", "plan"), ("forward rollout", "forward"), ("emergency rollback", "rollback"))
    for part in PARTS:
        for title, key in phases:
            for label, found in runs.items():
                if part not in found:
                    continue
                m = found[part]
                wall: float = getattr(m, f"{key}_seconds")
                cpu: tuple[float, float] = getattr(m, f"{key}_cpu")
                rows.append((part, title, label, f"{wall:.1f}", f"{cpu[0]:.1f}", f"{cpu[1]:.1f}"))
    numbers = ("wall s", "cpu here", "cpu sim")
    columns = (
        Column("part"),
        Column("phase"),
        Column("tree"),
        *(Column(h, "right") for h in numbers),
    )
    print()
    print(table_text(columns, rows), end="")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--switches", type=int, default=1000)
    parser.add_argument("--ports", type=int, default=8, help="ports per simulated switch")
    parser.add_argument("--nodes", type=int, default=4096, help="a multiple of 4")
    parser.add_argument("--concurrency", type=int, default=16, help="of the forward rollout")
    parser.add_argument(
        "--rollback-concurrency",
        type=int,
        default=None,
        help="of the emergency rollback (default: its own floor, EMERGENCY_CONCURRENCY)",
    )
    parser.add_argument("--skip-switches", action="store_true")
    parser.add_argument("--skip-lab", action="store_true")
    parser.add_argument("--base", default=None, help="Also measure this earlier commit.")
    parser.add_argument("--this", default=None, help="Measure this commit, not the working tree.")
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.base is None and args.this is None:
        found = measure(args)
        if args.json:
            print(json.dumps({part: asdict(m) for part, m in found.items()}), flush=True)
        return
    argv = [a for a in sys.argv[1:] if a not in (args.base, args.this, "--base", "--this")]
    runs: dict[str, dict[str, Measured]] = {}
    with contextlib.ExitStack() as stack:
        if args.base is not None:
            print(f"base: {describe(args.base)}", flush=True)
            runs["base"] = measure_tree("base", stack.enter_context(checkout(args.base)), argv)
        this = ROOT if args.this is None else stack.enter_context(checkout(args.this))
        print(f"this: {describe(args.this) if args.this else 'the working tree'}", flush=True)
        runs["this"] = measure_tree("this", this, argv)
    side_by_side(runs)


if __name__ == "__main__":
    main()
