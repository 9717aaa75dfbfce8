"""The lexer that finds the metric names a PromQL expression selects, which the
dashboard and alert-rule checks rely on."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from tests.deploy.promql import KEYWORDS, exported_samples, metric_names, unknown_names

NAMES = st.from_regex(r"[a-z][a-z0-9_]{0,20}", fullmatch=True).filter(lambda n: n not in KEYWORDS)
LABELS = st.from_regex(r"[a-z][a-z_]{0,8}", fullmatch=True)
VALUES = st.text(alphabet='abc{}()[]",=~ 0123456789_$\\', max_size=12)
OPS = st.sampled_from([" and on (instance) ", " or ", " unless ignoring (x) ", " / ", " > "])


def selector(name: str, label: str, value: str, op: str) -> str:
    escaped = value.replace("\\", "\\\\").replace('"', '\\"')
    return f'{name}{{{label}{op}"{escaped}"}}'


@given(
    first=NAMES,
    second=NAMES,
    label=LABELS,
    value=VALUES,
    match=st.sampled_from(["=", "!=", "=~", "!~"]),
    op=OPS,
    wrap=st.sampled_from(
        [
            "{}",
            "sum by (fleet, mode) ({})",
            "max without (pod) (rate({}[5m]))",
            "histogram_quantile(0.9, {} offset 1h)",
            "({} == bool 1)",
        ]
    ),
)
def test_every_selected_name_is_found_and_nothing_else(
    first: str, second: str, label: str, value: str, match: str, op: str, wrap: str
) -> None:
    """Names come out whatever the label values, functions, clauses and operators."""
    expr = wrap.format(selector(first, label, value, match)) + op + f"{second} * 2.5e3"
    assert metric_names(expr) == {first, second}


def test_functions_keywords_and_grafana_variables_are_not_names() -> None:
    """`time()`, `by (...)`, `[$__rate_interval]` and numbers name no metric."""
    expr = (
        'time() - max by (fleet) (plumb_last_reconcile_timestamp_seconds{fleet="$fleet"})'
        " > 3600 unless on (fleet) increase(plumb_reconcile_passes_total[$__rate_interval])"
    )
    assert metric_names(expr) == {
        "plumb_last_reconcile_timestamp_seconds",
        "plumb_reconcile_passes_total",
    }


def test_the_scrape_has_counter_samples_under_their_exported_names() -> None:
    """A counter is exported as `_total` (and `_created`); a gauge under its name."""
    samples = exported_samples()
    assert samples["plumb_reconcile_passes_total"] == "plumb_reconcile_passes"
    assert "plumb_reconcile_passes" not in samples
    assert samples["plumb_rollout_phase"] == "plumb_rollout_phase"


def test_a_misspelt_metric_is_reported() -> None:
    """The check can fail: a name the controller does not export is named."""
    exported = set(exported_samples())
    wrong = unknown_names(["max(plumb_drift_field)", "time()", "plumb_serve_leader"], exported)
    assert wrong == {"max(plumb_drift_field)": {"plumb_drift_field"}, "time()": {"(no metric)"}}
