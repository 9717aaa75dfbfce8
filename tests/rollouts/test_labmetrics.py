"""The lab fleet's telemetry: a persistent virtual clock, per-target series that repeat
for a seed, defects tied to attribute combinations that appear only once the matching
firmware has landed, and the lab metrics source that feeds abort conditions."""

from __future__ import annotations

import statistics
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from intent.fleet import Fleet, load_fleet
from lab.clock import (
    LabClock,
    advance_clock,
    attach_defect,
    clock_now,
    detach_defect,
    list_defects,
)
from lab.driver import create_lab
from lab.fleet import Fault, FaultKind
from lab.metrics import (
    LAB_EPOCH,
    Defect,
    ManualClock,
    Signal,
    Window,
    lab_minutes,
    lab_time,
    parse_match,
    series,
    target_attributes,
)
from lab.source import LabMetricsSource
from lab.store import LabStore
from rollouts.abortcheck import assess_wave
from rollouts.evidence import Decision, SourceFailure
from rollouts.sources import MetricsSource, TimeWindow, collect
from rollouts.spec import Abort, HardFault, Metric, Source
from tests.fleetcopy import ORION

GPU = {"role": "gpu-node"}
DAY = Window(0, 24 * 60)
NEW_NIC = "28.43.1014"
B0_DEFECT = Defect(
    match={"firmware/nic_firmware": NEW_NIC, "label.nic_revision": "B0"},
    step_time_factor=1.06,
    fec_rate=6.0,
)
B0, A1 = "gpu-n29", "gpu-n01"  # gpu-r08 carries revision B0 NICs
STEP = Metric(name="step_time", signal="step_time_s", threshold=1.03, min_samples=2)


@pytest.fixture(scope="module")
def fleet() -> Fleet:
    return load_fleet(ORION)


@pytest.fixture
def lab(tmp_path: Path, fleet: Fleet) -> Iterator[tuple[LabStore, LabClock]]:
    """ORION's lab (older firmware everywhere) with its clock at zero."""
    store = LabStore(tmp_path / "lab.db")
    create_lab(store, fleet, drift=0)
    clock = LabClock(tmp_path / "lab.db")
    yield store, clock
    clock.close()
    store.close()


def window(clock: LabClock, minutes: float = 120) -> TimeWindow:
    return TimeWindow.ending(lab_time(clock.now()), minutes)


# -- the model ----------------------------------------------------------------------------


def test_series_repeat_for_a_seed_and_agree_across_windows() -> None:
    """Same (seed, target, minutes): same samples, whatever window asks for them."""
    day = series(3, "gpu-n05", GPU, Signal.step_time_s, DAY)
    assert len(day) == 24 * 60 // 5 and day == series(3, "gpu-n05", GPU, Signal.step_time_s, DAY)
    assert series(3, "gpu-n05", GPU, Signal.step_time_s, Window(60, 75)) == day[12:15]
    assert series(4, "gpu-n05", GPU, Signal.step_time_s, DAY) != day


def test_step_time_has_per_node_jitter_and_noise() -> None:
    """Nodes differ by ~1.5 % around 1.25 s; samples vary around each node's level."""
    medians = [
        statistics.median(series(0, f"n{i}", GPU, Signal.step_time_s, DAY)) for i in range(32)
    ]
    assert 1.2 < statistics.median(medians) < 1.3
    assert 0.005 < statistics.stdev(medians) / statistics.mean(medians) < 0.03
    one = series(0, "n0", GPU, Signal.step_time_s, DAY)
    assert len(set(one)) == len(one) and max(one) / min(one) > 1.1


def test_healthy_counts_are_zero_or_rare() -> None:
    """No uncorrectable FEC on a healthy link; link flaps are rare; acceptance passes."""
    nodes = [f"n{i}" for i in range(32)]
    assert all(sum(series(0, n, GPU, Signal.fec_uncorrectable, DAY)) == 0 for n in nodes)
    assert sum(sum(series(0, n, GPU, Signal.link_flaps, DAY)) for n in nodes) <= 3
    runs = series(0, "n0", GPU, Signal.acceptance, DAY)
    assert runs == (1.0,) * 24


def test_switches_have_no_gpu_signals() -> None:
    """Step time, SM activity and acceptance exist only on GPU nodes."""
    leaf = {"role": "leaf"}
    assert series(0, "leaf-r0", leaf, Signal.step_time_s, DAY) == ()
    assert series(0, "leaf-r0", leaf, Signal.acceptance, DAY) == ()
    assert len(series(0, "leaf-r0", leaf, Signal.fec_uncorrectable, DAY)) == 288


def test_defect_changes_only_targets_matching_every_attribute() -> None:
    """B0 NICs on the new firmware: 6 % slower and FEC errors; A1 or old firmware: nothing."""
    bad = target_attributes(GPU, {"nic_revision": "B0"}, {"firmware/nic_firmware": NEW_NIC})
    a1 = target_attributes(GPU, {"nic_revision": "A1"}, {"firmware/nic_firmware": NEW_NIC})
    old = target_attributes(GPU, {"nic_revision": "B0"}, {"firmware/nic_firmware": "28.41.1000"})
    assert B0_DEFECT.matches(bad) and not B0_DEFECT.matches(a1) and not B0_DEFECT.matches(old)
    healthy = series(0, "n", old, Signal.step_time_s, DAY, [B0_DEFECT])
    slow = series(0, "n", bad, Signal.step_time_s, DAY, [B0_DEFECT])
    assert [s / h for s, h in zip(slow, healthy, strict=True)] == pytest.approx([1.06] * 288)
    assert series(0, "n", a1, Signal.step_time_s, DAY, [B0_DEFECT]) == healthy
    assert sum(series(0, "n", bad, Signal.fec_uncorrectable, DAY, [B0_DEFECT])) > 50


def test_defect_validation_and_parsing() -> None:
    """A defect needs a match and sane effects; matches parse from the CLI form."""
    assert parse_match("firmware/nic_firmware=28.43.1014, label.nic_revision=B0") == {
        "firmware/nic_firmware": "28.43.1014",
        "label.nic_revision": "B0",
    }
    with pytest.raises(ValueError, match="expected attribute=value"):
        parse_match("model")
    with pytest.raises(ValueError, match="at least one attribute"):
        Defect(match={})
    with pytest.raises(ValueError, match="unknown defect effect fec"):
        Defect.with_effects({"model": "HX8"}, {"fec": 1.0})
    with pytest.raises(ValueError, match="must not be negative"):
        Defect(match={"model": "HX8"}, fec_rate=-1.0)
    assert B0_DEFECT.describe() == (
        "[firmware/nic_firmware=28.43.1014, label.nic_revision=B0] step_time_factor=1.06 fec_rate=6"
    )


def test_windows_and_clock_helpers() -> None:
    """Sample indices fall inside [start, end); lab minutes round-trip through datetimes."""
    assert list(Window(3, 21).sample_indices()) == [1, 2, 3, 4]
    assert list(Window(0, 24 * 60).sample_indices(12))[:2] == [0, 12]
    assert lab_minutes(lab_time(90.0)) == 90.0 and lab_time(0) == LAB_EPOCH
    clock = ManualClock()
    assert clock.advance(30) == 30 == clock.now()
    with pytest.raises(ValueError, match="before it starts"):
        Window(10, 5)


# -- the persistent clock -------------------------------------------------------------------


def test_virtual_clock_and_defects_persist_across_reopen(tmp_path: Path) -> None:
    """advance() and attached defects survive closing and reopening lab.db."""
    path = tmp_path / "lab.db"
    with LabClock(path) as clock:
        assert clock.now() == 0.0 and clock.seed == 0
        clock.advance(24 * 60)
        attached = clock.attach(B0_DEFECT)
        clock.reset(minutes=24 * 60, seed=5)
    assert attached.id is not None
    with LabClock(path) as clock:
        assert clock.now() == 24 * 60 and clock.seed == 5
        assert clock.defects() == [replace(B0_DEFECT, id=attached.id)]
        with pytest.raises(ValueError, match="only moves forward"):
            clock.advance(-1)


def test_cli_functions_open_and_close_the_clock(tmp_path: Path) -> None:
    """One call per command: advance, read, attach, list and detach defects."""
    path = tmp_path / "lab.db"
    assert advance_clock(path, 90) == 90 == clock_now(path)
    defect = attach_defect(path, "model=HX8", {"acceptance_fail_probability": 0.5}, note="flaky")
    assert [d.note for d in list_defects(path)] == ["flaky"]
    assert defect.id is not None and detach_defect(path, defect.id)
    assert list_defects(path) == [] and not detach_defect(path, defect.id)


def test_clock_tables_live_beside_the_lab_tables(lab: tuple[LabStore, LabClock]) -> None:
    """Recreating the lab keeps the clock; the clock never touches device state."""
    store, clock = lab
    clock.advance(60)
    store.create([("x", "linux", "gpu-node")], {"x": {}})
    assert clock.now() == 60 and store.device_names() == ["x"]


# -- the lab metrics source -----------------------------------------------------------------


def test_defect_appears_only_after_the_matching_firmware_lands(
    fleet: Fleet, lab: tuple[LabStore, LabClock]
) -> None:
    """B0 and A1 nodes on old firmware: no FEC. New firmware on both: only B0 shows it."""
    store, clock = lab
    clock.attach(B0_DEFECT)
    source = LabMetricsSource(fleet, store, clock)
    clock.advance(120)
    before = source.hard_faults([HardFault.fec_uncorrectable], [B0, A1], window(clock))
    assert before == {HardFault.fec_uncorrectable: {B0: 0, A1: 0}}
    for node in (B0, A1):
        store.commit(node, {"firmware/nic_firmware": NEW_NIC}, save=True)
    clock.advance(120)
    after = source.hard_faults([HardFault.fec_uncorrectable], [B0, A1], window(clock))
    counts = after[HardFault.fec_uncorrectable]
    assert not isinstance(counts, SourceFailure)
    assert counts[B0] > 0 and counts[A1] == 0
    samples = source.samples(STEP, [B0], [A1], window(clock))
    assert not isinstance(samples, SourceFailure)
    ratio = statistics.median(samples[0][B0]) / statistics.median(samples[1][A1])
    assert 1.02 < ratio < 1.10


def test_source_holds_on_future_windows_and_unknown_signals(
    fleet: Fleet, lab: tuple[LabStore, LabClock]
) -> None:
    """No data yet for a window past the clock; an unknown signal is a failure, not a crash."""
    store, clock = lab
    source = LabMetricsSource(fleet, store, clock)
    ahead = TimeWindow.ending(lab_time(30), 60)
    future = source.samples(STEP, [A1], [B0], ahead)
    assert isinstance(future, SourceFailure) and "no data yet" in future.reason
    clock.advance(60)
    odd = STEP.model_copy(update={"signal": "temperature"})
    unknown = source.samples(odd, [A1], [B0], window(clock, 60))
    assert isinstance(unknown, SourceFailure) and "no lab signal 'temperature'" in unknown.reason
    prom = STEP.model_copy(update={"source": Source.prometheus})
    assert isinstance(source.samples(prom, [A1], [B0], window(clock, 60)), SourceFailure)
    faults = source.hard_faults([HardFault.link_flap], [A1], TimeWindow.ending(lab_time(999), 5))
    assert isinstance(faults[HardFault.link_flap], SourceFailure)


def test_unreachable_targets_report_nothing(fleet: Fleet, lab: tuple[LabStore, LabClock]) -> None:
    """A device with an unreachable fault (or not in the lab) is left out of its group."""
    store, clock = lab
    store.add_fault(Fault(A1, FaultKind.unreachable))
    clock.advance(120)
    source = LabMetricsSource(fleet, store, clock)
    samples = source.samples(STEP, [A1, B0, "gpu-n99"], ["gpu-n02"], window(clock))
    assert not isinstance(samples, SourceFailure) and list(samples[0]) == [B0]
    rates = source.samples(
        STEP.model_copy(update={"signal": "link_flaps"}), [B0], [], window(clock)
    )
    assert not isinstance(rates, SourceFailure) and len(rates[0][B0]) == 24


def test_a_bad_bundle_on_b0_nodes_aborts_a_lab_wave(
    fleet: Fleet, lab: tuple[LabStore, LabClock]
) -> None:
    """End to end: the canary on gpu-r08 gets the new NIC firmware, bakes 2 h of virtual
    time, and the wave aborts on uncorrectable FEC with the target named."""
    store, clock = lab
    clock.attach(B0_DEFECT)
    wave, controls = ["gpu-n29", "gpu-n30"], [f"gpu-n{i:02d}" for i in range(1, 9)]
    for node in wave:
        store.commit(node, {"firmware/nic_firmware": NEW_NIC}, save=True)
    clock.advance(120)
    sources: dict[Source, MetricsSource] = {Source.lab: LabMetricsSource(fleet, store, clock)}
    abort = Abort(metrics=(STEP,), aa_noise_floor=False)
    observed = {HardFault.unreachable: dict.fromkeys(wave, 0), HardFault.unknown: {}}
    evidence = collect(sources, abort, wave, controls, window(clock), observed)
    result = assess_wave(abort, evidence.samples, evidence.hard_faults, {}, 0, targets=wave)
    assert result.decision is Decision.abort
    assert result.reasons[0].startswith("fec_uncorrectable: failed (")
    assert set(result.hard_faults["fec_uncorrectable"]) == set(wave)


def test_collect_turns_a_crashing_or_missing_source_into_a_failure(
    lab: tuple[LabStore, LabClock],
) -> None:
    """A source that raises, or no source for a metric, holds the wave instead of crashing."""

    class Broken:
        hard_fault_kinds = frozenset({HardFault.fec_uncorrectable})

        def samples(self, *args: object) -> SourceFailure:
            raise TimeoutError("scrape timed out")

        def hard_faults(self, *args: object) -> dict[HardFault, SourceFailure]:
            raise ConnectionError("refused")

    prom = STEP.model_copy(update={"name": "prom_step", "source": Source.prometheus})
    abort = Abort(metrics=(STEP, prom), hard_faults=(HardFault.fec_uncorrectable,))
    _, clock = lab
    evidence = collect({Source.lab: Broken()}, abort, [A1], [B0], window(clock))
    assert evidence.samples["step_time"] == SourceFailure(
        "step_time", "TimeoutError: scrape timed out"
    )
    assert isinstance(evidence.samples["prom_step"], SourceFailure)
    assert "no prometheus metrics source" in evidence.samples["prom_step"].reason
    fec = evidence.hard_faults[HardFault.fec_uncorrectable]
    assert isinstance(fec, SourceFailure) and "refused" in fec.reason
    result = assess_wave(abort, evidence.samples, evidence.hard_faults, {}, 0)
    assert result.decision is Decision.hold
