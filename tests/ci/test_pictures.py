"""The pictures plumb draws: the plan's order (Mermaid, DOT), a rollout's waves over
time (Mermaid gantt) and over racks (SVG and HTML with matplotlib), and the review
comment that carries the Mermaid ones. The Mermaid is parsed and rendered by Mermaid
itself in a real browser, as GitHub and GitLab would."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from ci.diagrams import MAX_WAVES
from tests.browser import chromium_path, mermaid_js
from tests.fleetcopy import FleetCopy, copy_orion
from tests.reconciler.labfleet import run_plumb

SPEC = "firmware-hx8-2026-09"


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> FleetCopy:
    """ORION with its lab, and the HX8 nodes moved to the other bundle: a plan of one
    firmware step and a rollout of five waves."""
    orion = copy_orion(tmp_path_factory.mktemp("pictures"))
    assert run_plumb(orion.path, "lab", "init", ".").returncode == 0
    assert run_plumb(orion.path, "apply", "--yes", ".").returncode == 0
    orion.replace("intent/groups.yaml", "bundle: hx8-2026.09", "bundle: hx8-2026.06")
    return orion


def _out(fleet: FleetCopy, *args: str) -> str:
    done = run_plumb(fleet.path, *args)
    assert done.returncode in (0, 2), done.stderr
    return done.stdout


def test_plan_pictures_name_the_steps_by_role(fleet: FleetCopy) -> None:
    mermaid = _out(fleet, "plan", ".", "-f", "mermaid")
    assert mermaid.startswith("flowchart LR\n")
    assert "1. firmware<br/>32 gpu-node<br/>224 changes" in mermaid
    assert "versions last" in mermaid
    dot = _out(fleet, "plan", ".", "-f", "dot")
    assert dot.startswith('digraph "orion" {') and "32 gpu-node" in dot and dot.endswith("}\n")


def test_the_gantt_has_a_bar_per_wave_and_its_bake(fleet: FleetCopy) -> None:
    gantt = _out(fleet, "rollout", "plan", SPEC, ".", "-f", "mermaid")
    doc = json.loads(_out(fleet, "rollout", "plan", SPEC, ".", "-f", "json"))
    waves = doc["waves"]
    assert gantt.count("section ") == len(waves) == 5
    assert gantt.count(" :b") == len(waves)  # one bake bar each
    assert "section canary 1" in gantt and "4 targets, strata S1 S2" in gantt


def test_the_svg_and_html_wave_plans(fleet: FleetCopy) -> None:
    svg = _out(fleet, "rollout", "plan", SPEC, ".", "-f", "svg")
    root = ET.fromstring(svg)  # a well-formed SVG document
    assert root.tag.endswith("svg")
    texts = " ".join(t.text or "" for t in root.iter() if t.tag.endswith("text"))
    for label in ("canary 1", "wave 5", "gpu-r01", "gpu-r08", "canary coverage by stratum"):
        assert label in texts, label
    assert "S2: label.nic_revision=B0" in texts  # the stratum legend
    again = _out(fleet, "rollout", "plan", SPEC, ".", "-f", "svg")
    assert again == svg  # no date, no random ids: diffable
    page = _out(fleet, "rollout", "plan", SPEC, ".", "-f", "html")
    assert page.startswith("<!doctype html>") and "<svg" in page and "<?xml" not in page
    assert "http" not in page.split("<svg", 1)[0]  # nothing fetched


def test_the_gantt_stays_small_however_many_waves(
    fleet: FleetCopy, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Waves past MAX_WAVES end in one summing bar: the lines stop growing (shown with
    the bound lowered to 3 on ORION's 5 waves)."""
    from ci import diagrams
    from intent.fleet import load_fleet
    from rollouts.load import load_rollout
    from rollouts.planning import plan_rollout
    from service import api

    rollout = plan_rollout(
        load_fleet(fleet.path), load_rollout(fleet.path, SPEC).spec, api.plan(fleet.path)
    )
    assert len(rollout.reports) == 5 > 3
    monkeypatch.setattr(diagrams, "MAX_WAVES", 3)
    gantt = diagrams.waves_gantt(rollout)
    assert gantt.count("section ") == 4
    assert "section waves 4-5" in gantt and "2 more waves, " in gantt
    assert MAX_WAVES == 40


def test_github_would_render_them(fleet: FleetCopy, tmp_path: Path) -> None:
    """Mermaid 11 in Debian's chromium parses and renders each diagram to an SVG."""
    from playwright.sync_api import sync_playwright

    diagrams = {
        "plan": _out(fleet, "plan", ".", "-f", "mermaid"),
        "gantt": _out(fleet, "rollout", "plan", SPEC, ".", "-f", "mermaid"),
    }
    script = mermaid_js()
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=str(chromium_path()), args=["--no-sandbox"], headless=True
        )
        try:
            page = browser.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.set_content("<!doctype html><html><body></body></html>")
            page.add_script_tag(path=str(script))
            for name, text in diagrams.items():
                svg = page.evaluate(
                    """async ([name, text]) => {
                        mermaid.initialize({startOnLoad: false});
                        await mermaid.parse(text);
                        const {svg} = await mermaid.render('d' + name, text);
                        return svg;
                    }""",
                    [name, text],
                )
                assert svg.startswith("<svg"), (name, svg[:200])
                assert "Syntax error" not in svg, name
            assert errors == []
        finally:
            browser.close()
    assert "32 gpu-node" in diagrams["plan"]


def test_review_markdown_carries_both_pictures(fleet: FleetCopy) -> None:
    """Only in a repo with history: the review of the bundle move shows the plan's
    order and the rollout's gantt as mermaid blocks."""
    from tests.rollouts.gitfleet import git

    fleet.replace("intent/groups.yaml", "bundle: hx8-2026.06", "bundle: hx8-2026.09")
    git(fleet.path, "init", "-q")
    git(fleet.path, "add", "-A")
    git(fleet.path, "commit", "-q", "-m", "base: what the lab runs")
    fleet.replace("intent/groups.yaml", "bundle: hx8-2026.09", "bundle: hx8-2026.06")
    git(fleet.path, "commit", "-q", "-am", "HX8 nodes to 2026.06")
    done = run_plumb(fleet.path, "review", ".", "--base", "HEAD~1", "-f", "markdown")
    assert done.returncode in (0, 1), done.stderr
    blocks = done.stdout.count("```mermaid")
    assert blocks >= 2, done.stdout[:2000]
    assert "flowchart LR" in done.stdout and "gantt" in done.stdout
    assert len(done.stdout) < 65_536
