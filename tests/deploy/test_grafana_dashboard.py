"""deploy/grafana/plumb-serve.json is a dashboard Grafana can import, and every query
in it names only metrics the controller exports."""

from __future__ import annotations

import json
import re
import subprocess
from itertools import combinations
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from tests.deploy.promql import exported_samples, metric_names, unknown_names
from tests.deploy.tools import DEPLOY, require

DASHBOARD = DEPLOY / "grafana" / "plumb-serve.json"
GRID_COLUMNS = 24
DATASOURCE = {"type": "prometheus", "uid": "${datasource}"}
LABEL_VALUES = re.compile(r"label_values\((?P<metric>[A-Za-z_:][\w:]*)\s*,\s*\w+\)")


@pytest.fixture(scope="module")
def dashboard() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(DASHBOARD.read_text())
    return loaded


def graph_panels(dashboard: dict[str, Any]) -> list[dict[str, Any]]:
    return [p for p in dashboard["panels"] if p["type"] != "row"]


def expressions(dashboard: dict[str, Any]) -> list[str]:
    return [t["expr"] for p in graph_panels(dashboard) for t in p["targets"]]


def test_the_dashboard_has_the_shape_grafana_imports(dashboard: dict[str, Any]) -> None:
    """A title, a uid, a Prometheus datasource variable and the fleet variable."""
    assert dashboard["title"] and dashboard["uid"]
    assert isinstance(dashboard["schemaVersion"], int)
    variables = {v["name"]: v for v in dashboard["templating"]["list"]}
    assert variables["datasource"]["type"] == "datasource"
    assert variables["datasource"]["query"] == "prometheus"
    fleet = variables["fleet"]
    assert fleet["datasource"] == DATASOURCE
    found = LABEL_VALUES.fullmatch(fleet["query"]["query"])
    assert found and found["metric"] in exported_samples()


def test_every_panel_has_a_datasource_targets_and_a_place(dashboard: dict[str, Any]) -> None:
    """Each panel queries the chosen Prometheus, with unique refIds, inside the grid."""
    panels = graph_panels(dashboard)
    assert len(panels) >= 12
    ids = [p["id"] for p in dashboard["panels"]]
    assert len(ids) == len(set(ids))
    for panel in panels:
        assert panel["title"] and panel["type"] in {"timeseries", "stat", "table"}, panel
        assert panel["datasource"] == DATASOURCE, panel["title"]
        assert panel["targets"], panel["title"]
        refs = [t["refId"] for t in panel["targets"]]
        assert len(refs) == len(set(refs)), panel["title"]
        for target in panel["targets"]:
            assert target["datasource"] == DATASOURCE and target["expr"].strip()
        grid = panel["gridPos"]
        assert all(isinstance(grid[k], int) and grid[k] >= 0 for k in ("x", "y", "w", "h"))
        assert grid["w"] > 0 and grid["h"] > 0 and grid["x"] + grid["w"] <= GRID_COLUMNS


def test_no_two_panels_overlap(dashboard: dict[str, Any]) -> None:
    """Grid positions are disjoint rectangles (rows included)."""

    def cells(panel: dict[str, Any]) -> set[tuple[int, int]]:
        g = panel["gridPos"]
        return {
            (x, y) for x in range(g["x"], g["x"] + g["w"]) for y in range(g["y"], g["y"] + g["h"])
        }

    for a, b in combinations(dashboard["panels"], 2):
        assert not cells(a) & cells(b), (a["title"], b["title"])


def test_every_query_names_only_exported_metrics(dashboard: dict[str, Any]) -> None:
    """No query names a metric the controller's /metrics does not have."""
    assert unknown_names(expressions(dashboard), set(exported_samples())) == {}


def test_every_exported_metric_is_on_the_dashboard(dashboard: dict[str, Any]) -> None:
    """Each metric family the controller exports is shown by some panel."""
    samples = exported_samples()
    shown = {samples[n] for e in expressions(dashboard) for n in metric_names(e) if n in samples}
    assert set(samples.values()) - shown == set()


def test_every_query_parses(dashboard: dict[str, Any], tmp_path: Path) -> None:
    """promtool parses each query (Grafana's variables given values) as a recording rule."""
    promtool = require("promtool", "prometheus")
    exprs = [
        e.replace("$__rate_interval", "1m").replace("$fleet", "orion")
        for e in expressions(dashboard)
    ]
    rules = {
        "groups": [
            {
                "name": "dashboard",
                "rules": [
                    {"record": f"plumb:dashboard:{i}", "expr": e} for i, e in enumerate(exprs)
                ],
            }
        ]
    }
    path = tmp_path / "queries.yml"
    with path.open("w") as out:
        YAML(typ="safe").dump(rules, out)
    done = subprocess.run(
        [promtool, "check", "rules", str(path)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"SUCCESS: {len(exprs)} rules found" in done.stdout
