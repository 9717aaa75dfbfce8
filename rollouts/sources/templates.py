"""PromQL for abort conditions (pure): the ready-made templates a spec names with
``template:``, and rendering a template for one set of targets and one window.

A template is PromQL with two placeholders, filled in per request:

* ``{targets}``: the targets' names as one anchored regex alternation, escaped twice
  (regex metacharacters, then the PromQL string), so a name can never end the string
  or widen the match; the spec allows it only as ``label=~"{targets}"``;
* ``{window}``: the window's length as a PromQL duration (``7200s``), allowed only as
  a range, ``[{window}]``.

The ready-made templates below also carry ``<label>``, replaced by the target label
(the template's own, or the spec's ``target_label``), so that a relabelled fleet can
keep the template. Each names the exporter whose metric names it assumes; a fleet
whose exporters differ writes its own ``query``. See docs/telemetry.md.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from rollouts.spec import COUNT_TEMPLATES, FaultQuery, Metric, MetricKind, MetricTemplate

LOSSLESS_PRIORITY = 3  # the RoCE priority and queue of the lossless class
_LABEL = "<label>"
_PLACEHOLDER = re.compile(r"\{(targets|window)\}")


@dataclass(frozen=True)
class Template:
    """One ready-made query: PromQL with ``{targets}``, ``{window}`` and ``<label>``."""

    query: str
    target_label: str
    exporter: str  # whose metric names the query assumes
    gates: str  # what the condition catches, for the docs


@dataclass(frozen=True)
class PromQuery:
    """A query ready to render: its template text, target label and kind."""

    text: str
    target_label: str
    kind: MetricKind


_DCGM = "dcgm-exporter (NVIDIA DCGM), label Hostname"
_SONIC = "SONiC COUNTERS_DB exporter (sonic-exporter naming), label switch added at scrape"
_JOB = "the training job's own prometheus_client metrics, label node"

TEMPLATES: dict[MetricTemplate, Template] = {
    MetricTemplate.step_time: Template(
        'sum by (<label>) (rate(training_step_duration_seconds_sum{<label>=~"{targets}"}[2m]))'
        " / sum by (<label>) (rate(training_step_duration_seconds_count"
        '{<label>=~"{targets}"}[2m]))',
        "node",
        _JOB,
        "seconds per training step (2-minute average): the end-to-end cost of any change",
    ),
    MetricTemplate.throughput: Template(
        'sum by (<label>) (rate(training_samples_total{<label>=~"{targets}"}[2m]))',
        "node",
        _JOB,
        "training samples per second per node; lower is worse",
    ),
    MetricTemplate.sm_active: Template(
        'DCGM_FI_PROF_SM_ACTIVE{<label>=~"{targets}"}',
        "Hostname",
        _DCGM,
        "fraction of time SMs hold a warp; falls when GPUs wait on the network "
        "(GPU-Util only says a kernel was running)",
    ),
    MetricTemplate.gpu_power: Template(
        'DCGM_FI_DEV_POWER_USAGE{<label>=~"{targets}"}',
        "Hostname",
        _DCGM,
        "GPU board power in watts; stalled or throttled GPUs draw less",
    ),
    MetricTemplate.xid_errors: Template(
        'changes(DCGM_FI_DEV_XID_ERRORS{<label>=~"{targets}"}[{window}])',
        "Hostname",
        _DCGM,
        "new XID errors (the field holds the last XID code, so changes are counted)",
    ),
    MetricTemplate.pfc_pause_rx: Template(
        "increase(sonic_interface_pfc_rx_packets_total"
        f'{{<label>=~"{{targets}}",priority="{LOSSLESS_PRIORITY}"}}[{{window}}])',
        "switch",
        _SONIC,
        "PFC pause frames received on the lossless priority: congestion pushed upstream",
    ),
    MetricTemplate.ecn_marked: Template(
        "increase(sonic_queue_ecn_marked_packets_total"
        f'{{<label>=~"{{targets}}",queue="{LOSSLESS_PRIORITY}"}}[{{window}}])',
        "switch",
        _SONIC,
        "ECN-marked packets on the lossless queue: DCQCN backing senders off",
    ),
    MetricTemplate.lossless_discards: Template(
        "increase(sonic_queue_dropped_packets_total"
        f'{{<label>=~"{{targets}}",queue="{LOSSLESS_PRIORITY}"}}[{{window}}])',
        "switch",
        _SONIC,
        "drops in the lossless queue: RoCE has no loss recovery worth the name",
    ),
    MetricTemplate.fec_uncorrectable: Template(
        'increase(sonic_interface_fec_uncorrectable_frames_total{<label>=~"{targets}"}[{window}])',
        "switch",
        _SONIC,
        "codewords FEC could not correct: corrupted frames, a link going bad",
    ),
    MetricTemplate.link_flaps: Template(
        'increase(node_network_carrier_changes_total{<label>=~"{targets}",'
        'device!~"lo|docker.*|veth.*"}[{window}])',
        "node",
        "node_exporter (hosts; also SONiC, whose front-panel ports are netdevs), label node",
        "carrier changes (a flap is two): a link that dropped",
    ),
    MetricTemplate.bgp_down: Template(
        "sum by (<label>) (min_over_time(frr_bgp_peer_state"
        '{<label>=~"{targets}"}[{window}]) == bool 0)',
        "switch",
        "frr_exporter (FRR, as on SONiC; 0 down, 1 established, 2 admin down), label switch",
        "BGP sessions down at any sample of the window (admin-down excluded)",
    ),
}


def template_kind(name: MetricTemplate) -> MetricKind:
    return MetricKind.counter if name in COUNT_TEMPLATES else MetricKind.gauge


def _ready(name: MetricTemplate, label: str | None) -> PromQuery:
    template = TEMPLATES[name]
    chosen = label or template.target_label
    return PromQuery(template.query.replace(_LABEL, chosen), chosen, template_kind(name))


def metric_query(metric: Metric) -> PromQuery:
    """The query of a ``prometheus`` metric: its template's or its own."""
    if metric.template is not None:
        return _ready(metric.template, metric.target_label)
    if metric.query is None or metric.target_label is None:
        raise ValueError(f"metric {metric.name} has no prometheus query")
    return PromQuery(metric.query, metric.target_label, metric.kind or MetricKind.gauge)


def fault_query(fault: FaultQuery) -> PromQuery:
    """The query counting one hard-fault kind (always a count over the window)."""
    if fault.template is not None:
        return _ready(fault.template, fault.target_label)
    if fault.query is None or fault.target_label is None:
        raise ValueError("a hard-fault query needs query and target_label")
    return PromQuery(fault.query, fault.target_label, MetricKind.counter)


def _escape_char(char: str) -> str:
    if char.isascii() and (char.isalnum() or char == "_"):
        return char
    if " " <= char <= "~":
        return "\\" + char  # escaped ASCII punctuation is itself, in RE2 and Go alike
    return f"\\x{{{ord(char):X}}}"


def target_regex(targets: Iterable[str]) -> str:
    """An alternation matching exactly ``targets`` (Prometheus anchors it at both ends)."""
    names = sorted(set(targets))
    if not names or "" in names:
        raise ValueError("a target regex needs at least one non-empty name")
    return "|".join("".join(_escape_char(c) for c in name) for name in names)


def promql_string_body(text: str) -> str:
    """``text`` escaped to sit between double quotes in PromQL."""
    return text.replace("\\", "\\\\").replace('"', '\\"')


def promql_duration(seconds: float) -> str:
    """A PromQL duration of ``seconds``, to the millisecond (``7200s``, ``1500ms``)."""
    millis = round(seconds * 1000)
    if millis < 1:
        raise ValueError(f"a window of {seconds}s is too short for a PromQL range")
    return f"{millis // 1000}s" if millis % 1000 == 0 else f"{millis}ms"


def render(text: str, targets: Iterable[str], window_seconds: float) -> str:
    """The template ``text`` for ``targets`` over a window of ``window_seconds``."""
    values = {"targets": promql_string_body(target_regex(targets))}
    if "{window}" in text:
        values["window"] = promql_duration(window_seconds)
    return _PLACEHOLDER.sub(lambda found: values[found[1]], text)
