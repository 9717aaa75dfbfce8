"""Prometheus as a metrics source: abort conditions and hard faults read from the
Prometheus HTTP API (``/api/v1/query_range`` for gauges, ``/api/v1/query`` for event
counts), configured by the spec's ``abort.prometheus`` block.

The flow: a metric's query (:mod:`rollouts.sources.templates`) is rendered for the
wave and controls and the window, sent by :class:`PrometheusApi` (the only I/O, one
``httpx`` client, one timeout), parsed into :class:`Series` and grouped per target by the
target label; several series of one target (its GPUs, its ports) are pooled.

* ``gauge``: a range query across the window at ``step_seconds``; every finite
  sample of the target's series is one of its samples;
* ``counter``: an instant query at the window's end counting events over
  ``[{window}]``; a target's count is the sum over its series, given to a metric as
  events per target-hour (so ``rate_difference`` reads like the lab's) and to a hard
  fault as a whole count (any increase above 0 counts at least 1).

NaN and infinite samples are dropped. Nothing here raises to the caller: every
problem becomes a :class:`~rollouts.evidence.SourceFailure`, so the wave holds.
Errors, mapped once in :meth:`PrometheusApi.post` (from httpx's, in brackets)::

    PrometheusError
    ├── Unreachable        connection refused or reset, DNS failure, TLS failure, not HTTP
    │                      (httpx.RequestError but those below, httpx.InvalidURL)
    ├── QueryTimeout       no answer within timeout_seconds, client side
    │                      (httpx.TimeoutException) or server side (503 "timeout")
    ├── QueryRejected      any other answer than 2xx (bad PromQL: 400 bad_data, ...)
    └── MalformedResponse  not JSON, not the shape of a query result, too large, or a
                           body that does not decode (httpx.DecodingError)

A query that returns no series for any requested target is a failure too; a target
without series is left out of its group (too few targets holds), and a hard-fault
kind that is missing a wave target holds unless another target already shows a fault.
"""

from __future__ import annotations

import json
import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from inventory.extras import optional_imports
from rollouts.evidence import SourceFailure
from rollouts.judge import FaultCounts, MetricSamples
from rollouts.sources import TimeWindow
from rollouts.sources.templates import PromQuery, fault_query, metric_query, render
from rollouts.spec import HardFault, Metric, MetricKind, PrometheusConfig, Source

with optional_imports():
    import httpx

MAX_POINTS = 11_000  # Prometheus refuses range queries of more points per series
MAX_RESPONSE_BYTES = 64 * 1024 * 1024
_SECONDS_PER_HOUR = 3600.0


class PrometheusError(Exception):
    """A query that did not give an answer."""


class Unreachable(PrometheusError):
    """No connection to Prometheus."""


class QueryTimeout(PrometheusError):
    """Prometheus did not answer in time."""


class QueryRejected(PrometheusError):
    """Prometheus answered with an error (bad PromQL, a failed evaluation)."""


class MalformedResponse(PrometheusError):
    """The answer is not a query result."""


@dataclass(frozen=True)
class Series:
    """One time series of a query result: its labels and finite samples, oldest first."""

    labels: Mapping[str, str]
    values: tuple[float, ...]


def _finite(raw: Any) -> float | None:
    if not isinstance(raw, str):
        raise MalformedResponse(f"sample value {raw!r} is not a string")
    try:
        value = float(raw)
    except ValueError:
        raise MalformedResponse(f"sample value {raw!r} is not a number") from None
    return value if math.isfinite(value) else None


def _sample(point: Any) -> float | None:
    if not isinstance(point, list) or len(point) != 2:
        raise MalformedResponse(f"sample {point!r} is not [time, value]")
    return _finite(point[1])


def _series(item: Any) -> Series:
    if not isinstance(item, dict) or not isinstance(item.get("metric"), dict):
        raise MalformedResponse("a result item without a metric")
    labels = item["metric"]
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in labels.items()):
        raise MalformedResponse("labels must be strings")
    points = item.get("values", [item["value"]] if "value" in item else [])
    if not isinstance(points, list):
        raise MalformedResponse("values must be a list")
    samples = (_sample(point) for point in points)
    return Series(dict(labels), tuple(v for v in samples if v is not None))


def parse_response(body: bytes) -> list[Series]:
    """The series of a ``/api/v1/query`` or ``/api/v1/query_range`` answer."""
    try:
        answer = json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise MalformedResponse(f"not JSON: {exc}") from None
    if not isinstance(answer, dict):
        raise MalformedResponse("the answer is not a JSON object")
    if answer.get("status") != "success":
        kind, error = answer.get("errorType", "error"), answer.get("error", "no message")
        raise QueryRejected(f"{kind}: {error}")
    data = answer.get("data")
    if not isinstance(data, dict) or not isinstance(data.get("result"), list):
        raise MalformedResponse("no data.result list")
    if data.get("resultType") not in ("vector", "matrix"):
        raise QueryRejected(f"expected series, got a {data.get('resultType')} result")
    return [_series(item) for item in data["result"]]


def group_by_target(
    series: Sequence[Series], label: str, targets: Collection[str]
) -> dict[str, tuple[float, ...]]:
    """Samples of each of ``targets`` pooled over its series (in result order); series
    without the label, or of another target, are ignored; targets without any series
    are absent, targets whose series hold no finite sample are present and empty."""
    wanted = set(targets)
    out: dict[str, list[float]] = {}
    for one in series:
        name = one.labels.get(label)
        if name in wanted:
            out.setdefault(name, []).extend(one.values)
    return {name: tuple(values) for name, values in out.items()}


def event_count(total: float) -> int:
    """A count from a counter's increase: any increase above 0 is at least one event
    (``increase()`` extrapolates to the window's edges, so it need not be whole)."""
    return max(1, round(total)) if total > 0 else 0


def range_step(window_seconds: float, step_seconds: int) -> float:
    """The step of a range query over the window: the configured one, coarser when the
    window would otherwise hold more points per series than Prometheus allows."""
    return max(float(step_seconds), math.ceil(window_seconds / MAX_POINTS))


def _error_text(body: bytes) -> str:
    try:
        answer = json.loads(body)
        return f"{answer['errorType']}: {answer['error']}"
    except (ValueError, KeyError, TypeError):
        return body[:200].decode(errors="replace").strip() or "no message"


def _read(response: httpx.Response, limit: int) -> bytes:
    """At most ``limit`` bytes of the body (one more tells that it is longer)."""
    body = bytearray()
    for chunk in response.iter_bytes():
        body += chunk
        if len(body) > limit:
            break
    return bytes(body[: limit + 1])


class PrometheusApi:
    """The HTTP edge: form-encoded POSTs (queries of any length), environment proxies
    ignored, redirects not followed, one timeout for connect, each read and each write,
    every failure a PrometheusError. The client (its connections kept for the next
    query) is made at the first query; :meth:`close` ends it."""

    def __init__(
        self, url: str, timeout_seconds: float, transport: httpx.BaseTransport | None = None
    ) -> None:
        self.url = url.rstrip("/")
        self.timeout = timeout_seconds
        self._transport = transport  # tests give an httpx.MockTransport
        self._client: httpx.Client | None = None

    def _connected(self) -> httpx.Client:
        if self._client is None:
            self._client = httpx.Client(
                timeout=httpx.Timeout(self.timeout),
                trust_env=False,
                headers={"Accept": "application/json"},
                transport=self._transport,
            )
        return self._client

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    def post(self, path: str, params: Mapping[str, str]) -> bytes:
        try:
            with self._connected().stream("POST", self.url + path, data=dict(params)) as answer:
                if not answer.is_success:
                    text = _error_text(_read(answer, 64 * 1024))
                    if answer.status_code == 503 and "timeout" in text:
                        raise QueryTimeout(f"HTTP {answer.status_code}: {text}")
                    raise QueryRejected(f"HTTP {answer.status_code}: {text}")
                body = _read(answer, MAX_RESPONSE_BYTES)
        except httpx.TimeoutException as exc:
            raise QueryTimeout(f"no answer within {self.timeout:g}s") from exc
        except httpx.DecodingError as exc:
            raise MalformedResponse(f"the answer does not decode: {exc}") from exc
        except (httpx.RequestError, httpx.InvalidURL) as exc:
            raise Unreachable(f"{self.url}: {type(exc).__name__}: {exc}") from exc
        if len(body) > MAX_RESPONSE_BYTES:
            raise MalformedResponse(f"answer larger than {MAX_RESPONSE_BYTES} bytes")
        return body

    def query(self, promql: str, at: float) -> list[Series]:
        params = {"query": promql, "time": repr(at), "timeout": repr(self.timeout)}
        return parse_response(self.post("/api/v1/query", params))

    def query_range(self, promql: str, start: float, end: float, step: float) -> list[Series]:
        params = {
            "query": promql,
            "start": repr(start),
            "end": repr(end),
            "step": repr(step),
            "timeout": repr(self.timeout),
        }
        return parse_response(self.post("/api/v1/query_range", params))


def _missing(what: str, targets: Collection[str]) -> str:
    shown = ", ".join(sorted(targets)[:8])
    more = f" ({len(targets)} targets)" if len(targets) > 8 else ""
    return f"prometheus: {what} for {shown}{more}"


class PrometheusSource:
    """A :class:`~rollouts.sources.MetricsSource` over one Prometheus server."""

    def __init__(self, config: PrometheusConfig) -> None:
        self.config = config
        self.api = PrometheusApi(config.url, config.timeout_seconds)

    def close(self) -> None:
        self.api.close()

    @property
    def hard_fault_kinds(self) -> frozenset[HardFault]:
        return frozenset(self.config.hard_faults)

    def _fetch(
        self, query: PromQuery, targets: Collection[str], window: TimeWindow
    ) -> dict[str, tuple[float, ...]]:
        """Per-target samples (gauge) or per-target event totals (counter, one value)."""
        seconds = (window.end - window.start).total_seconds()
        promql = render(query.text, targets, seconds)
        start, end = window.start.timestamp(), window.end.timestamp()
        if query.kind is MetricKind.gauge:
            step = range_step(seconds, self.config.step_seconds)
            found = self.api.query_range(promql, start, end, step)
            return group_by_target(found, query.target_label, targets)
        found = self.api.query(promql, end)
        grouped = group_by_target(found, query.target_label, targets)
        return {t: (math.fsum(values),) for t, values in grouped.items() if values}

    def samples(
        self, metric: Metric, wave: Sequence[str], controls: Sequence[str], window: TimeWindow
    ) -> MetricSamples:
        if metric.source is not Source.prometheus:
            return SourceFailure(metric.name, f"{metric.source.value} metric asked of prometheus")
        targets = set(wave) | set(controls)
        if not targets:
            return {}, {}
        try:
            query = metric_query(metric)
            got = self._fetch(query, targets, window)
        except (PrometheusError, ValueError) as exc:
            return SourceFailure(metric.name, f"prometheus: {exc}")
        if not any(got.values()):
            what = "no finite samples" if got else "no series"
            return SourceFailure(metric.name, _missing(what, targets))
        if query.kind is MetricKind.counter:
            hours = (window.end - window.start).total_seconds() / _SECONDS_PER_HOUR
            got = {t: tuple(v / hours for v in values) for t, values in got.items()}
        return (
            {t: got[t] for t in wave if t in got},
            {t: got[t] for t in controls if t in got},
        )

    def _count(self, kind: HardFault, wave: Sequence[str], window: TimeWindow) -> FaultCounts:
        name = f"hard_fault/{kind.value}"
        try:
            totals = self._fetch(fault_query(self.config.hard_faults[kind]), set(wave), window)
        except (PrometheusError, ValueError) as exc:
            return SourceFailure(name, f"prometheus: {exc}")
        counts = {t: event_count(values[0]) for t, values in totals.items()}
        missing = set(wave) - set(counts)
        if missing and not any(counts.values()):
            return SourceFailure(name, _missing("no series", missing))
        return counts

    def hard_faults(
        self, kinds: Collection[HardFault], wave: Sequence[str], window: TimeWindow
    ) -> dict[HardFault, FaultCounts]:
        if not wave:
            return {kind: {} for kind in kinds if kind in self.config.hard_faults}
        return {
            kind: self._count(kind, wave, window)
            for kind in kinds
            if kind in self.config.hard_faults
        }
