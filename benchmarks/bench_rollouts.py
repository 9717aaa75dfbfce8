"""Rollout benchmark: planning speed at 4,096 nodes, and canary judgment on ORION.

    .venv/bin/python benchmarks/bench_rollouts.py [--trials 1000] [--nodes 4096]

1. **Plan time**: the HX8 firmware rollout over every GPU node of a generated
   rail-optimized fleet (strata, canary search, waves within caps, price, bake).
2. **Canary judgment**, ``--trials`` times with a different seed each, for a
   stratified canary (plumb's planner) and a random canary of the same size k:
   the new bundle carries a defect confined to the minority stratum (NIC revision
   B0, 4 of 32 nodes: +6 % step time and uncorrectable FEC codewords). The canary
   bakes for the wave's sized bake on the lab's virtual metrics and is judged by the
   spec's pre-declared abort conditions (``rollouts.abortcheck.assess_wave``). Printed:
   detection rate (abort with the defect), A/A false-abort rate (abort without it),
   the hold rate, and stalled GPU-hours of the canary wave and of the whole
   stratified plan against the lower bound (each gang drained once).
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.genfleet import generate_fleet  # noqa: E402
from ci.texttable import Column, table_text  # noqa: E402
from intent.fleet import Fleet, load_fleet  # noqa: E402
from lab.metrics import Defect, Signal, Window, series, target_attributes  # noqa: E402
from lab.source import inventory_attributes  # noqa: E402
from reconciler.settings import Change, Scalar  # noqa: E402
from rollouts.abortcheck import assess_wave, measure_noise_floor  # noqa: E402
from rollouts.evidence import Decision  # noqa: E402
from rollouts.load import load_rollout  # noqa: E402
from rollouts.planning import plan_changes  # noqa: E402
from rollouts.price import lower_bound, wave_stall  # noqa: E402
from rollouts.spec import HardFault, RolloutSpec  # noqa: E402
from rollouts.topology import seats  # noqa: E402

SPEC = "firmware-hx8-2026-09"
OLD, NEW = "hx8-2026.06", "hx8-2026.09"


def firmware_changes(fleet: Fleet) -> dict[str, tuple[Change, ...]]:
    """Every HX8 node moves from the older bundle to the newer one."""
    old, new = fleet.bundles[OLD].components, fleet.bundles[NEW].components
    changes = tuple(
        Change(f"firmware/{name}", old.get(name), version)
        for name, version in sorted(new.items())
        if old.get(name) != version
    )
    return {d.name: changes for d in fleet.devices.values() if d.model == "HX8"}


def time_plan(nodes: int) -> None:
    with tempfile.TemporaryDirectory(prefix="plumb-bench-") as tmp:
        repo = Path(tmp) / "fleet"
        generate_fleet(repo, nodes)
        fleet = load_fleet(repo)
        spec = load_rollout(repo, SPEC).spec
        changes = firmware_changes(fleet)
        started = time.perf_counter()
        plan = plan_changes(fleet, spec, changes, selected=tuple(changes))
        elapsed = time.perf_counter() - started
        print(
            f"plan {SPEC} over {len(changes)} nodes: {elapsed:.2f} s, "
            f"{len(plan.waves.waves)} waves, {len(plan.strata.strata)} strata, canary "
            f"{len(plan.waves.waves[0].targets)}; stalled {plan.total.gpu_hours:.0f} GPU-h vs "
            f"lower bound {plan.lower_bound.gpu_hours:.0f} (caps allow "
            f"{plan.cap_bound.gpu_hours:.0f})"
        )


def _attributes(fleet: Fleet, name: str, firmware: Mapping[str, Scalar]) -> dict[str, Scalar]:
    inventory, labels = inventory_attributes(fleet, name)
    return target_attributes(inventory, labels, firmware)


def judge(
    fleet: Fleet,
    spec: RolloutSpec,
    canary: list[str],
    controls: list[str],
    defects: list[Defect],
    seed: int,
    minutes: float,
    floors: Mapping[str, object],
) -> Decision:
    """Bake the canary on the lab's metrics and judge it by the spec's abort conditions."""
    new = _fw(fleet, NEW)
    old = _fw(fleet, OLD)
    window = Window(0.0, minutes)
    samples = {}
    for metric in spec.abort.metrics:
        signal = Signal(metric.signal)
        wave = {
            t: series(seed, t, _attributes(fleet, t, new), signal, window, defects) for t in canary
        }
        ctrl = {
            t: series(seed, t, _attributes(fleet, t, old), signal, window, defects)
            for t in controls
        }
        samples[metric.name] = (wave, ctrl)
    faults: dict[HardFault, dict[str, int]] = {}
    for kind, signal in (
        (HardFault.fec_uncorrectable, Signal.fec_uncorrectable),
        (HardFault.link_flap, Signal.link_flaps),
    ):
        if kind in spec.abort.hard_faults:
            faults[kind] = {
                t: int(sum(series(seed, t, _attributes(fleet, t, new), signal, window, defects)))
                for t in canary
            }
    for kind in (HardFault.unreachable, HardFault.unknown):
        if kind in spec.abort.hard_faults:
            faults[kind] = dict.fromkeys(canary, 0)
    assessment = assess_wave(
        spec.abort,
        samples,
        faults,
        floors,
        seed,  # type: ignore[arg-type]
        targets=canary,
    )
    return assessment.decision


def _fw(fleet: Fleet, bundle: str) -> dict[str, Scalar]:
    return {f"firmware/{k}": v for k, v in fleet.bundles[bundle].components.items()}


def canary_trials(trials: int) -> None:
    fleet = load_fleet(ROOT / "examples" / "orion")
    base = load_rollout(ROOT / "examples" / "orion", SPEC).spec
    changes = firmware_changes(fleet)
    nodes = sorted(changes)
    defect = Defect(
        match={
            "firmware/nic_firmware": fleet.bundles[NEW].components["nic_firmware"],
            "label.nic_revision": "B0",
        },
        step_time_factor=1.06,
        fec_rate=0.5,
        note="B0 NICs on the new bundle",
    )
    seat_of = seats(fleet, nodes)
    floors = {}
    for metric in base.abort.metrics:
        signal = Signal(metric.signal)
        old = _fw(fleet, OLD)
        half = len(nodes) // 2
        group = {t: series(0, t, _attributes(fleet, t, old), signal, Window(0, 240)) for t in nodes}
        a = {t: group[t] for t in nodes[:half]}
        b = {t: group[t] for t in nodes[half:]}
        floors[metric.name] = measure_noise_floor(metric, a, b, 0)
    tallies = {
        (kind, bad): {"abort": 0, "hold": 0, "proceed": 0}
        for kind in ("stratified", "random")
        for bad in (True, False)
    }
    canary_stall: dict[str, list[float]] = {"stratified": [], "random": []}
    plan_stall, bound = [], 0.0
    started = time.perf_counter()
    for trial in range(trials):
        spec = base.model_copy(update={"seed": trial})
        plan = plan_changes(fleet, spec, changes, selected=tuple(nodes))
        stratified = list(plan.waves.waves[0].targets)
        minutes = plan.reports[0].bake.minutes
        rng = random.Random(trial)
        randomly = rng.sample(nodes, len(stratified))
        plan_stall.append(plan.total.gpu_hours)
        bound = plan.lower_bound.gpu_hours
        for kind, canary in (("stratified", stratified), ("random", randomly)):
            canary_stall[kind].append(wave_stall(canary, seat_of, spec.price, drain=True).gpu_hours)
            controls = rng.sample(
                [
                    n
                    for n in nodes
                    if n not in canary and fleet.devices[n].labels.get("nic_revision") != "B0"
                ],
                8,
            )
            for bad in (True, False):
                decision = judge(
                    fleet, spec, canary, controls, [defect] if bad else [], trial, minutes, floors
                )
                tallies[(kind, bad)][decision.value] += 1
    elapsed = time.perf_counter() - started
    print(
        f"\n{trials} trials ({4 * trials} canary assessments) in {elapsed:.1f} s; "
        f"defect on 4 of {len(nodes)} nodes (p = {4 / len(nodes):.3f}), "
        f"canary k = {len(stratified)}"
    )
    rows = []
    for kind in ("stratified", "random"):
        bad, good = tallies[(kind, True)], tallies[(kind, False)]
        rows.append(
            (
                kind,
                f"{bad['abort'] / trials:.3f}",
                f"{good['abort'] / trials:.3f}",
                f"{bad['hold'] / trials:.3f}",
                f"{good['hold'] / trials:.3f}",
                f"{statistics.mean(canary_stall[kind]):.1f}",
            )
        )
    headers = ("detected", "A/A false abort", "held (defect)", "held (A/A)", "canary GPU-h")
    columns = (Column("canary"), *(Column(h, "right") for h in headers))
    print(table_text(columns, rows), end="")
    k = len(stratified)
    print(f"random canary, 1 - (1 - p)^k = {1 - (1 - 4 / len(nodes)) ** k:.3f}")
    print(
        f"whole stratified plan: {statistics.mean(plan_stall):.1f} stalled GPU-h on average "
        f"vs lower bound {bound:.1f} (each gang drained once)"
    )
    low = lower_bound(nodes, seat_of, base.price, drain=True).gpu_hours
    assert abs(low - bound) < 1e-9


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=1000)
    parser.add_argument("--nodes", type=int, default=4096)
    args = parser.parse_args()
    time_plan(args.nodes)
    canary_trials(args.trials)


if __name__ == "__main__":
    main()
