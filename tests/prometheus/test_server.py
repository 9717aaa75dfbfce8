"""Waves judged on evidence from a real Prometheus, through ``collect()`` and
``assess_wave()``: healthy proceeds, a regression or a hard fault aborts, and every way
the evidence can go missing holds."""

from __future__ import annotations

import functools
import socket
import time
from datetime import UTC, datetime
from typing import Any

import pytest

from rollouts.abortcheck import assess_wave, measure_noise_floor
from rollouts.evidence import (
    Decision,
    Measurement,
    NoiseFloor,
    Phase,
    SourceFailure,
    WaveAssessment,
)
from rollouts.sources import MetricsSource, TimeWindow, collect
from rollouts.sources.prometheus import PrometheusSource
from rollouts.spec import Abort, HardFault, Metric, PrometheusConfig, Source
from rollouts.stats import Resampling
from tests.prometheus.conftest import (
    AA_PARTNER,
    B0_WAVE,
    CONTROLS,
    FAULT_WAVE,
    FEC_NODE,
    HEALTHY_WAVE,
    SEED,
    STOPPED_WAVE,
    Telemetry,
)
from tests.prometheus.exporter import GPUS
from tests.prometheus.server import free_port, wait_for

WINDOW_SECONDS = 6
FAST = Resampling(resamples=999)
FEC_QUERY = 'increase(nic_fec_uncorrectable_codewords_total{node=~"{targets}"}[{window}])'
SM = Metric.model_validate(
    {
        "name": "sm_active",
        "source": "prometheus",
        "signal": "sm_active",
        "template": "sm_active",
        "direction": "lower_is_worse",
        "threshold": 0.97,
        "min_samples": 4,
    }
)
KINDS = (HardFault.fec_uncorrectable, HardFault.link_flap)


def config(url: str, **changes: Any) -> PrometheusConfig:
    return PrometheusConfig.model_validate(
        {
            "url": url,
            "timeout_seconds": 5.0,
            "step_seconds": 1,
            "hard_faults": {
                "fec_uncorrectable": {"query": FEC_QUERY, "target_label": "node"},
                "link_flap": {"template": "link_flaps"},
            },
            **changes,
        }
    )


def abort(url: str, metric: Metric = SM, **changes: Any) -> Abort:
    return Abort(metrics=(metric,), hard_faults=KINDS, prometheus=config(url, **changes))


def recent(seconds: float = WINDOW_SECONDS) -> TimeWindow:
    return TimeWindow.ending(datetime.now(UTC), seconds / 60)


@functools.cache
def _floor(url: str) -> NoiseFloor:
    source = PrometheusSource(config(url))
    samples = source.samples(SM, CONTROLS, AA_PARTNER, recent())
    assert not isinstance(samples, SourceFailure), samples
    return measure_noise_floor(SM, samples[0], samples[1], SEED, resampling=FAST)


@pytest.fixture
def floors(telemetry: Telemetry) -> dict[str, NoiseFloor]:
    """The A/A floor of SM activity, 8 controls against 8 others, measured once."""
    floor = _floor(telemetry.url)
    assert floor.phase is Phase.successful, floor.message
    return {SM.name: floor}


def judge(
    spec: Abort,
    wave: list[str],
    window: TimeWindow | None = None,
    floors: dict[str, NoiseFloor] | None = None,
) -> WaveAssessment:
    assert spec.prometheus is not None
    sources: dict[Source, MetricsSource] = {Source.prometheus: PrometheusSource(spec.prometheus)}
    evidence = collect(sources, spec, wave, CONTROLS, window or recent())
    return assess_wave(
        spec,
        evidence.samples,
        evidence.hard_faults,
        floors or {},
        SEED,
        targets=wave,
        resampling=FAST,
    )


def measurement(result: WaveAssessment, name: str) -> Measurement:
    return next(m for m in result.measurements if m.metric == name)


def test_healthy_wave_proceeds(telemetry: Telemetry, floors: dict[str, NoiseFloor]) -> None:
    """Four healthy nodes against eight controls: every measurement successful."""
    result = judge(abort(telemetry.url), HEALTHY_WAVE, floors=floors)
    assert result.decision is Decision.proceed, result.reasons
    sm = measurement(result, "sm_active")
    assert sm.samples == (4, 8) and "within threshold 0.97" in sm.message
    assert measurement(result, "hard_fault/fec_uncorrectable").message == (
        "fec_uncorrectable: 0 on 4 targets"
    )


def test_gauge_samples_pool_every_gpu_of_a_node(telemetry: Telemetry) -> None:
    """Each node's samples are its GPUs' series over the window, one point per second."""
    source = PrometheusSource(config(telemetry.url))
    samples = source.samples(SM, HEALTHY_WAVE, [], recent())
    assert not isinstance(samples, SourceFailure), samples
    assert sorted(samples[0]) == HEALTHY_WAVE and samples[1] == {}
    for values in samples[0].values():
        assert len(values) == GPUS * (WINDOW_SECONDS + 1)
        assert all(0.5 < v <= 1.0 for v in values)


def test_regressed_wave_aborts(telemetry: Telemetry, floors: dict[str, NoiseFloor]) -> None:
    """B0 nodes at 85 % SM activity: a significant regression past the threshold."""
    result = judge(abort(telemetry.url), B0_WAVE, floors=floors)
    sm = measurement(result, "sm_active")
    assert result.decision is Decision.abort and sm.phase is Phase.failed
    assert sm.statistic is not None and 0.8 < sm.statistic < 0.9
    assert "< threshold 0.97" in sm.message and sm.message.endswith("regression")


def test_fec_on_one_wave_target_aborts(telemetry: Telemetry, floors: dict[str, NoiseFloor]) -> None:
    """One node's ports count uncorrectable codewords: a hard fault names that node."""
    result = judge(abort(telemetry.url), FAULT_WAVE, floors=floors)
    assert result.decision is Decision.abort
    assert result.reasons[0].startswith("fec_uncorrectable: failed (")
    assert f"on {FEC_NODE} (" in result.reasons[0]
    assert set(result.hard_faults["fec_uncorrectable"]) == {FEC_NODE}
    assert measurement(result, "sm_active").phase is Phase.successful


def test_counter_metric_is_events_per_target_hour(telemetry: Telemetry) -> None:
    """FEC as a counter metric: both ports summed, per target-hour; healthy nodes at 0."""
    fec = Metric.model_validate(
        {
            "name": "fec_rate",
            "source": "prometheus",
            "signal": "fec",
            "query": FEC_QUERY,
            "target_label": "node",
            "kind": "counter",
            "statistic": "rate_difference",
            "threshold": 1.0,
        }
    )
    source = PrometheusSource(config(telemetry.url))
    samples = source.samples(fec, FAULT_WAVE, CONTROLS, recent())
    assert not isinstance(samples, SourceFailure), samples
    wave, controls = samples
    assert set(wave) == set(FAULT_WAVE) and set(controls) == set(CONTROLS)
    assert wave[FEC_NODE][0] > 3600  # ~10 codewords a second on two ports
    assert all(v == (0.0,) for t, v in wave.items() if t != FEC_NODE)


def test_nan_and_infinite_samples_are_dropped(telemetry: Telemetry) -> None:
    """GPU 1 turned to NaN and GPU 0 of one node to +Inf: only finite samples remain."""
    query = (
        '(DCGM_FI_PROF_SM_ACTIVE{Hostname=~"{targets}",gpu="1"} * (0 / 0))'
        ' or (DCGM_FI_PROF_SM_ACTIVE{Hostname=~"{targets}",gpu="0",Hostname!="gpu-n01"})'
        ' or (DCGM_FI_PROF_SM_ACTIVE{Hostname=~"{targets}",gpu="0"} * (1 / 0))'
    )
    odd = SM.model_copy(update={"template": None, "query": query, "target_label": "Hostname"})
    samples = PrometheusSource(config(telemetry.url)).samples(odd, HEALTHY_WAVE, [], recent())
    assert not isinstance(samples, SourceFailure), samples
    assert samples[0]["gpu-n01"] == ()
    assert all(len(samples[0][t]) == WINDOW_SECONDS + 1 for t in HEALTHY_WAVE[1:])
    only_nan = odd.model_copy(
        update={"query": 'DCGM_FI_PROF_SM_ACTIVE{Hostname=~"{targets}"} * (0 / 0)'}
    )
    failure = PrometheusSource(config(telemetry.url)).samples(only_nan, HEALTHY_WAVE, [], recent())
    assert isinstance(failure, SourceFailure)
    assert failure.reason.startswith("prometheus: no finite samples for gpu-n01")


def test_a_wave_target_without_series_holds_unless_another_fails(telemetry: Telemetry) -> None:
    """A wave target Prometheus knows nothing of holds the hard faults; a fault elsewhere
    in the wave still aborts."""
    spec = abort(telemetry.url)
    healthy = judge(spec, [*HEALTHY_WAVE, "gpu-n99"])
    fec = measurement(healthy, "hard_fault/fec_uncorrectable")
    assert healthy.decision is Decision.hold and fec.phase is Phase.error
    assert fec.message.endswith("prometheus: no series for gpu-n99")
    faulty = judge(spec, [*FAULT_WAVE, "gpu-n99"])
    assert faulty.decision is Decision.abort
    assert faulty.reasons[0].startswith("fec_uncorrectable: failed (")


def test_stopped_exporter_holds(telemetry: Telemetry) -> None:
    """Once its exporter is gone, a wave has no series: hold, naming what is missing."""
    server = telemetry.prometheus
    telemetry.stoppable.stop()
    wait_for(
        lambda: True if server.value('up{job="lab_b"}') == 0 else None, 10.0, "a failed scrape"
    )
    since = time.time()
    wait_for(
        lambda: True if (server.value('timestamp(up{job="lab"})') or 0) > since + 3 else None,
        10.0,
        "three more scrapes of the live exporter",
    )
    window = TimeWindow(datetime.fromtimestamp(since, UTC), datetime.now(UTC))
    result = judge(abort(telemetry.url), STOPPED_WAVE, window)
    assert result.decision is Decision.hold, result.reasons
    fec = measurement(result, "hard_fault/fec_uncorrectable")
    assert fec.phase is Phase.error and "no series for gpu-n17, gpu-n18" in fec.message
    assert "0 wave targets < min_samples 4" in measurement(result, "sm_active").message


def test_bad_promql_holds(telemetry: Telemetry) -> None:
    """A query Prometheus cannot parse is a source error with its message: hold."""
    broken = SM.model_copy(
        update={
            "template": None,
            "query": 'DCGM_FI_PROF_SM_ACTIVE{Hostname=~"{targets}"} +',
            "target_label": "Hostname",
        }
    )
    result = judge(abort(telemetry.url, broken), HEALTHY_WAVE)
    sm = measurement(result, "sm_active")
    assert result.decision is Decision.hold and sm.phase is Phase.error
    assert "prometheus: HTTP 400: bad_data" in sm.message


def test_unreachable_prometheus_holds() -> None:
    """Nothing listens at the URL: every measurement is a source error, and the wave holds."""
    result = judge(abort(f"http://127.0.0.1:{free_port()}"), HEALTHY_WAVE)
    assert result.decision is Decision.hold
    assert all(m.phase is Phase.error for m in result.measurements)
    assert "Connection refused" in measurement(result, "sm_active").message


def test_silent_prometheus_times_out_and_holds() -> None:
    """A server that accepts connections but never answers: the timeout holds the wave."""
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        url = f"http://127.0.0.1:{silent.getsockname()[1]}"
        began = time.monotonic()
        result = judge(abort(url, timeout_seconds=0.3), HEALTHY_WAVE)
        elapsed = time.monotonic() - began
    assert result.decision is Decision.hold
    assert "no answer within 0.3s" in measurement(result, "sm_active").message
    assert elapsed < 3.0  # three requests, each cut off at the timeout


def test_an_exporter_url_instead_of_prometheus_holds(telemetry: Telemetry) -> None:
    """A URL that is not the query API (here the exporter itself) is refused: hold."""
    result = judge(abort(f"http://127.0.0.1:{telemetry.main.port}"), HEALTHY_WAVE)
    assert result.decision is Decision.hold
    assert "prometheus: HTTP 405" in measurement(result, "sm_active").message
