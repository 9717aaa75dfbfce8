"""PromQL without a server: rendering templates, escaping target names, parsing answers,
grouping series per target and counting events."""

from __future__ import annotations

import contextlib
import json
import re
import string

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rollouts.sources.prometheus import (
    MAX_POINTS,
    MalformedResponse,
    PrometheusError,
    QueryRejected,
    Series,
    event_count,
    group_by_target,
    parse_response,
    range_step,
)
from rollouts.sources.templates import (
    TEMPLATES,
    fault_query,
    metric_query,
    promql_duration,
    render,
    target_regex,
    template_kind,
)
from rollouts.spec import (
    FaultQuery,
    Metric,
    MetricKind,
    MetricTemplate,
    query_template_problem,
)

SELECTOR = 'up{node=~"{targets}"}'
_UNQUOTE = {"\\": "\\", '"': '"'}
names = st.text(st.sampled_from(string.printable) | st.characters(), min_size=1, max_size=24)
"""Any text, biased to ASCII punctuation and whitespace (what breaks regexes and strings)."""


def string_literal(text: str, start: int) -> tuple[str, int]:
    """The value of the PromQL double-quoted string opening at ``text[start]``, and the
    index after its closing quote (a raw newline or an unknown escape fails)."""
    assert text[start] == '"'
    out, i = [], start + 1
    while text[i] != '"':
        assert text[i] != "\n", "raw newline inside a string"
        if text[i] == "\\":
            out.append(_UNQUOTE[text[i + 1]])
            i += 2
        else:
            out.append(text[i])
            i += 1
    return "".join(out), i + 1


def as_python_regex(go_regex: str) -> re.Pattern[str]:
    """Go's ``\\x{HHHH}`` written the way Python's re spells it."""
    python = re.sub(r"\\x\{([0-9A-F]+)\}", lambda m: f"\\U{int(m[1], 16):08X}", go_regex)
    return re.compile(python)


@given(st.lists(names, min_size=1, max_size=6), st.lists(names, max_size=6))
def test_a_target_name_never_breaks_out_of_the_selector(
    targets: list[str], others: list[str]
) -> None:
    """Whatever the names, the string closes where the template closes it, and its regex
    matches exactly the targets (no prefix, suffix or wildcard of them)."""
    query = render(SELECTOR, targets, 60)
    value, end = string_literal(query, query.index('"'))
    assert query[end:] == "}"
    pattern = as_python_regex(value)
    assert all(pattern.fullmatch(t) for t in targets)
    near = [*others, ".*", "", *(t[:-1] for t in targets), *(t + t for t in targets)]
    near += [re.sub(r"\W", "x", t) for t in targets]  # a wildcard would match these
    for other in near:
        assert bool(pattern.fullmatch(other)) == (other in targets)


def test_regex_escapes_punctuation_and_sorts() -> None:
    """Hyphens and dots are escaped, duplicates merged, names sorted."""
    assert target_regex(["leaf-r2", "gpu-n01", "leaf-r2", "a.b"]) == r"a\.b|gpu\-n01|leaf\-r2"


def test_an_empty_target_name_is_refused() -> None:
    """An empty alternative would match series without the label: refused."""
    with pytest.raises(ValueError, match="non-empty"):
        target_regex(["gpu-n01", ""])
    with pytest.raises(ValueError):
        target_regex([])


def test_render_fills_both_placeholders() -> None:
    """``{targets}`` becomes the quoted regex and ``{window}`` the window's duration."""
    text = 'increase(x{node=~"{targets}",port="1"}[{window}])'
    assert render(text, ["n1", "n2"], 7200) == 'increase(x{node=~"n1|n2",port="1"}[7200s])'


def test_durations_keep_milliseconds() -> None:
    """Whole seconds read as seconds; fractions as milliseconds; under 1 ms is refused."""
    assert promql_duration(7200) == "7200s"
    assert promql_duration(1.5) == "1500ms"
    with pytest.raises(ValueError, match="too short"):
        promql_duration(0.0004)


@pytest.mark.parametrize("name", list(MetricTemplate), ids=str)
def test_every_template_is_a_valid_query(name: MetricTemplate) -> None:
    """Each ready-made query passes the spec's own check; counts count over the window."""
    template = TEMPLATES[name]
    query = template.query.replace("<label>", template.target_label)
    assert query_template_problem(query) is None
    assert ("[{window}]" in query) == (template_kind(name) is MetricKind.counter)
    assert template.exporter and template.gates


def test_every_template_name_has_its_definition() -> None:
    """The spec's template names and the definitions are the same set."""
    assert set(TEMPLATES) == set(MetricTemplate)


def test_gpu_templates_avoid_gpu_util() -> None:
    """GPU activity is judged on SM activity and power, never on GPU-Util."""
    queries = " ".join(t.query for t in TEMPLATES.values())
    assert "DCGM_FI_PROF_SM_ACTIVE" in queries and "DCGM_FI_DEV_POWER_USAGE" in queries
    assert "GPU_UTIL" not in queries


def test_a_target_label_override_moves_matcher_and_grouping() -> None:
    """A relabelled fleet keeps a template: the override is used everywhere in it."""
    fault = FaultQuery.model_validate({"template": "bgp_down", "target_label": "device_name"})
    query = fault_query(fault)
    assert query.target_label == "device_name" and query.kind is MetricKind.counter
    assert 'device_name=~"{targets}"' in query.text and "by (device_name)" in query.text
    assert "switch" not in query.text


def test_metric_kind_comes_from_its_template_or_defaults_to_gauge() -> None:
    """A counter template counts; an own query without a kind is a gauge."""
    base = {"name": "m", "source": "prometheus", "signal": "m", "threshold": 1.0}
    xid = Metric.model_validate({**base, "template": "xid_errors"})
    assert metric_query(xid).kind is MetricKind.counter
    own = Metric.model_validate({**base, "query": SELECTOR, "target_label": "node"})
    assert metric_query(own).kind is MetricKind.gauge and metric_query(own).text == SELECTOR


def answer(result_type: str, result: list[object]) -> bytes:
    return json.dumps(
        {"status": "success", "data": {"resultType": result_type, "result": result}}
    ).encode()


def test_matrix_and_vector_answers_parse_and_drop_non_finite_samples() -> None:
    """NaN and infinities are dropped; labels and the remaining samples are kept."""
    matrix = answer(
        "matrix",
        [{"metric": {"node": "a"}, "values": [[1, "1.5"], [2, "NaN"], [3, "+Inf"], [4, "2"]]}],
    )
    assert parse_response(matrix) == [Series({"node": "a"}, (1.5, 2.0))]
    vector = answer("vector", [{"metric": {"node": "b"}, "value": [1, "-Inf"]}])
    assert parse_response(vector) == [Series({"node": "b"}, ())]


def test_an_error_answer_is_a_rejected_query() -> None:
    """Prometheus's own error type and message are kept."""
    body = json.dumps({"status": "error", "errorType": "bad_data", "error": "parse error"})
    with pytest.raises(QueryRejected, match="bad_data: parse error"):
        parse_response(body.encode())
    with pytest.raises(QueryRejected, match="got a scalar result"):
        parse_response(answer("scalar", []))


@pytest.mark.parametrize(
    "body",
    [
        b"<html>",
        b'{"status": "success"',
        b"\xff\xfe",
        b"[]",
        b'{"status": "success", "data": {"resultType": "vector"}}',
        answer("vector", [{"value": [1, "1"]}]),
        answer("vector", [{"metric": {"node": 3}, "value": [1, "1"]}]),
        answer("vector", [{"metric": {}, "value": [1, 1.0]}]),
        answer("vector", [{"metric": {}, "value": [1, "fast"]}]),
        answer("matrix", [{"metric": {}, "values": [[1]]}]),
        answer("matrix", [{"metric": {}, "values": "1"}]),
    ],
)
def test_malformed_answers_are_refused(body: bytes) -> None:
    """Anything that is not a well-formed query result is a MalformedResponse."""
    with pytest.raises(MalformedResponse):
        parse_response(body)


json_values = st.recursive(
    st.none() | st.booleans() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=12,
)


@given(json_values)
def test_parsing_any_json_gives_series_or_a_prometheus_error(value: object) -> None:
    """No answer, however odd, escapes as anything but a PrometheusError."""
    bodies = [
        json.dumps(value).encode(),
        json.dumps({"status": "success", "data": value}).encode(),
        answer("vector", [value]),
        answer("matrix", [{"metric": {"node": "a"}, "values": value}]),
    ]
    for body in bodies:
        with contextlib.suppress(PrometheusError):
            parse_response(body)


def test_port_series_pool_to_their_device() -> None:
    """Two ports of one switch pool to it; other targets and unlabelled series are ignored."""
    series = [
        Series({"switch": "leaf-1", "port": "Ethernet0"}, (1.0, 2.0)),
        Series({"switch": "leaf-2", "port": "Ethernet0"}, (5.0,)),
        Series({"switch": "leaf-1", "port": "Ethernet4"}, (3.0,)),
        Series({"switch": "spine-9"}, (9.0,)),
        Series({"port": "Ethernet8"}, (7.0,)),
    ]
    grouped = group_by_target(series, "switch", ["leaf-1", "leaf-2", "leaf-3"])
    assert grouped == {"leaf-1": (1.0, 2.0, 3.0), "leaf-2": (5.0,)}


labelled = st.builds(
    Series,
    st.dictionaries(st.sampled_from(["node", "gpu"]), st.sampled_from(["a", "b", "c"])),
    st.lists(st.floats(allow_nan=False, allow_infinity=False), max_size=4).map(tuple),
)


@given(st.lists(labelled, max_size=8), st.sets(st.sampled_from(["a", "b", "c"])))
def test_grouping_keeps_every_sample_of_a_wanted_target(
    series: list[Series], targets: set[str]
) -> None:
    """Grouping neither loses nor invents samples: each target holds exactly its series'."""
    grouped = group_by_target(series, "node", targets)
    for target in targets:
        mine = [v for s in series if s.labels.get("node") == target for v in s.values]
        assert list(grouped.get(target, ())) == mine
    assert set(grouped) <= targets


@given(st.floats(min_value=0, max_value=1e12, allow_nan=False))
def test_any_increase_is_at_least_one_event(total: float) -> None:
    """Zero tolerance survives extrapolation: a count is positive exactly when the increase is."""
    count = event_count(total)
    assert (count > 0) == (total > 0) and abs(count - total) <= max(0.5, 1 - total)


@given(st.floats(min_value=0, max_value=10 * 365 * 86400), st.integers(1, 3600))
def test_range_steps_never_exceed_the_point_limit(seconds: float, step: int) -> None:
    """However long the window, a range query stays within Prometheus's point limit."""
    chosen = range_step(seconds, step)
    assert chosen >= step and seconds / chosen <= MAX_POINTS
