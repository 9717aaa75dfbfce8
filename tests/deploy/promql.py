"""What PromQL in the deployment files (the Grafana dashboard, the alert rules) may name:
the metric names an expression selects, and the sample names the controller's own
registry exports on ``/metrics``.

:func:`metric_names` is a lexer, not a parser: it drops what cannot be a metric name
(string literals, label matchers, ranges, grouping clauses, numbers) and keeps the
identifiers that are not functions, aggregations or keywords. ``promtool check rules``
separately proves the expressions parse.
"""

from __future__ import annotations

import re

from prometheus_client.parser import text_string_to_metric_families

from serve.metrics import ServeMetrics
from serve.rolloutmetrics import RolloutMetrics

KEYWORDS = frozenset(
    {
        "and",
        "or",
        "unless",
        "by",
        "without",
        "on",
        "ignoring",
        "group_left",
        "group_right",
        "bool",
        "offset",
        "inf",
        "nan",
    }
)
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|`[^`]*`')
_MATCHERS = re.compile(r"\{[^{}]*\}")
_RANGE = re.compile(r"\[[^\[\]]*\]")
_CLAUSE = re.compile(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^()]*\)")
_MODIFIER = re.compile(r"\b(?:offset\s+-?|@\s*)[\w.()]+")
_TOKEN = re.compile(r"(?P<number>\d[\w.]*)|(?P<name>[A-Za-z_:][A-Za-z0-9_:]*)(?P<call>\s*\()?")


def metric_names(expr: str) -> set[str]:
    """The metric names ``expr`` selects."""
    text = _STRING.sub(" ", expr)
    text = _MATCHERS.sub(" ", text)
    text = _RANGE.sub(" ", text)
    text = _CLAUSE.sub(" ", text)
    text = _MODIFIER.sub(" ", text)
    names: set[str] = set()
    for token in _TOKEN.finditer(text):
        name = token.group("name")
        if name and not token.group("call") and name.lower() not in KEYWORDS:
            names.add(name)
    return names


def exported_samples() -> dict[str, str]:
    """Every sample name the controller's registry exports (a counter ``x`` as
    ``x_total`` and ``x_created``), to its metric family: scraped from the text the
    controller serves on ``/metrics``, with the rollout metrics registered as
    :class:`serve.controller.Controller` registers them."""
    metrics = ServeMetrics("fleet")
    RolloutMetrics(metrics.registry, "fleet")
    samples: dict[str, str] = {}
    for family in text_string_to_metric_families(metrics.render().decode()):
        suffixes = ("_total", "_created") if family.type == "counter" else ("",)
        for suffix in suffixes:
            samples[family.name + suffix] = family.name
    return samples


def unknown_names(exprs: list[str], exported: set[str]) -> dict[str, set[str]]:
    """Expressions naming a metric that is not exported (or naming none), with the
    names at fault."""
    wrong: dict[str, set[str]] = {}
    for expr in exprs:
        names = metric_names(expr)
        if not names or names - exported:
            wrong[expr] = names - exported or {"(no metric)"}
    return wrong
