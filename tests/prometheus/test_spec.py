"""Prometheus in a rollout spec: templates and own queries load, hostile or inconsistent
values are refused at load with file:line, and the YAML in docs/telemetry.md loads."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from inventory.problems import InputError
from rollouts.load import load_rollout
from rollouts.sources.templates import fault_query, metric_query
from rollouts.spec import HardFault, MetricKind, MetricTemplate, Source
from tests.fleetcopy import ROOT

SPEC = """\
rollout:
  name: trial
  targets:
    select: role=gpu-node
  abort:
    hard_faults: [fec_uncorrectable, link_flap, unreachable]
    prometheus:
      url: http://prometheus.mon:9090
      timeout_seconds: 10.0
      step_seconds: 60
      hard_faults:
        fec_uncorrectable: {template: fec_uncorrectable, target_label: node}
        link_flap: {template: link_flaps}
    metrics:
      - name: sm_active
        source: prometheus
        signal: sm_active
        template: sm_active
        direction: lower_is_worse
        threshold: 0.97
      - name: step_time
        source: prometheus
        signal: step_time
        query: 'avg by (node) (train_step_seconds{node=~"{targets}"})'
        target_label: node
        threshold: 1.03
"""
QUERY = """'avg by (node) (train_step_seconds{node=~"{targets}"})'"""
LABEL = "        target_label: node"


def load(root: Path, text: str) -> object:
    (root / "rollouts").mkdir(exist_ok=True)
    (root / "rollouts" / "trial.yaml").write_text(text)
    return load_rollout(root, "trial").spec


def problems(root: Path, text: str) -> list[str]:
    with pytest.raises(InputError) as caught:
        load(root, text)
    return [str(p) for p in caught.value.problems]


def test_a_prometheus_spec_loads(tmp_path: Path) -> None:
    """Templates, an own query, the server block and hard-fault queries all load."""
    spec = load(tmp_path, SPEC)
    abort = spec.abort  # type: ignore[attr-defined]
    sm, step = abort.metrics
    assert sm.source is Source.prometheus and sm.template is MetricTemplate.sm_active
    assert metric_query(sm).target_label == "Hostname"
    assert metric_query(step).kind is MetricKind.gauge
    fec = abort.prometheus.hard_faults[HardFault.fec_uncorrectable]
    assert fec.template is MetricTemplate.fec_uncorrectable
    assert fault_query(fec).text.startswith("increase(sonic_interface_fec_uncorrectable_frames")
    assert 'node=~"{targets}"' in fault_query(fec).text


HOSTILE = [
    (QUERY, "'x{node=\"{targets}\"}'", 24, "may only appear as a whole regex matcher"),
    (QUERY, "'x{node=~\"{target}\"}'", 24, "unknown placeholder {target}"),
    (QUERY, '"x{node=~\\"{targets}\\"} or\\x00 y"', 24, "control characters"),
    (QUERY, "'up'", 24, 'select its targets with label=~"{targets}"'),
    (QUERY, "'x{node=~\"{targets}\"}[{window}s]'", 24, "{window} may only appear as a range"),
    (QUERY, '\'x{node=~"{targets}"}' + " " * 2000 + "'", 24, "at most 2000 characters"),
    (LABEL, "        target_label: __name__", 25, "should match pattern"),
    (LABEL, "        target_label: node-name", 25, "should match pattern"),
    ("        target_label: node\n", "", 21, "a query needs target_label"),
    ("template: sm_active", "template: gpu_util", 18, "Input should be"),
    ("template: sm_active", f"template: sm_active\n        query: {QUERY}", 15, "exactly one"),
    ("        template: sm_active\n", "", 15, "exactly one of template and query"),
    ("template: sm_active", "template: sm_active\n        kind: counter", 15, "from the template"),
    (LABEL, f"{LABEL}\n        kind: counter", 21, "counts events"),
    ("source: prometheus\n        signal: sm", "source: lab\n        signal: sm", 15, "only for"),
    ("url: http://prometheus.mon:9090", "url: http://u:pw@prom:9090", 8, "should match"),
    ("url: http://prometheus.mon:9090", "url: file:///etc/passwd", 8, "should match"),
    ("url: http://prometheus.mon:9090", "url: http://prom:9090/?q=1", 8, "should match"),
    ("timeout_seconds: 10.0", "timeout_seconds: 0", 9, "greater than 0"),
    ("timeout_seconds: 10.0", "timeout_seconds: 1000", 9, "less than or equal to 120"),
    ("step_seconds: 60", "step_seconds: 0", 10, "greater than or equal to 1"),
    ("link_flap: {template: link_flaps}", "unreachable: {template: link_flaps}", 8, "observing"),
    ("link_flap: {template: link_flaps}", "link_flap: {template: sm_active}", 13, "not a count"),
    (
        "link_flap: {template: link_flaps}",
        f"link_flap:\n          query: {QUERY}\n          target_label: n",
        14,
        "counts events over [{window}]",
    ),
    ("      url: http://prometheus.mon:9090\n", "", 8, "missing required key 'url'"),
]


@pytest.mark.parametrize(("old", "new", "line", "message"), HOSTILE)
def test_hostile_or_inconsistent_values_are_refused_at_their_line(
    tmp_path: Path, old: str, new: str, line: int, message: str
) -> None:
    """Each bad value is one problem, located in the spec file, saying what is wrong."""
    assert old in SPEC
    found = problems(tmp_path, SPEC.replace(old, new, 1))
    assert len(found) == 1, found
    assert found[0].startswith(f"rollouts/trial.yaml:{line}:"), found[0]
    assert message in found[0]


def test_a_prometheus_metric_needs_the_server_block(tmp_path: Path) -> None:
    """A prometheus metric without abort.prometheus is refused when the spec loads."""
    start, end = SPEC.index("    prometheus:\n"), SPEC.index("    metrics:\n")
    found = problems(tmp_path, SPEC[:start] + SPEC[end:])
    assert found == [
        "rollouts/trial.yaml:2:3: rollout: Value error, "
        "sm_active, step_time: source prometheus needs abort.prometheus"
    ]


def docs_snippets() -> list[str]:
    text = (ROOT / "docs" / "telemetry.md").read_text()
    blocks = re.findall(r"```yaml\n(.*?)```", text, flags=re.DOTALL)
    return [b for b in blocks if b.startswith("rollout:")]


@pytest.mark.parametrize("snippet", docs_snippets())
def test_yaml_in_the_telemetry_docs_loads(tmp_path: Path, snippet: str) -> None:
    """Every rollout spec shown in docs/telemetry.md is a valid spec."""
    spec = load(tmp_path, snippet)
    assert spec.abort.metrics or spec.abort.prometheus  # type: ignore[attr-defined]


def test_the_docs_show_specs() -> None:
    """The docs carry at least the full example and the templates example."""
    assert len(docs_snippets()) >= 2
