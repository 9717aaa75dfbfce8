"""The compact form and the record form of a fleet load to the same fleet.

``genfleet.py --compact`` writes racks, devices and cables as topology rules; the record
form writes one record each. Both must give the same devices, racks, cables and gangs in
the same order, the same policy results and the same plan, at every size, and with
exceptions applied to the compact form exactly as the same edits to the records.
"""

from __future__ import annotations

import shutil
from datetime import date
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchmarks.genfleet import generate_fleet
from intent.fleet import Fleet, load_fleet
from inventory.models import Device, Link
from plumb.cli import run_validation
from reconciler.plan import build_plan
from reconciler.render import render_desired

TODAY = date(2026, 12, 1)


@cache
def generated(tmp: Path, nodes: int, compact: bool) -> Path:
    out = tmp / f"{'compact' if compact else 'records'}-{nodes}"
    if not out.exists():
        generate_fleet(out, nodes, compact=compact)
    return out


@pytest.fixture(scope="module")
def fleets(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fleets")


def same_inventory(records: Fleet, compact: Fleet) -> None:
    assert list(compact.racks.items()) == list(records.racks.items())
    assert list(compact.devices.items()) == list(records.devices.items())
    assert compact.links == records.links
    assert compact.gangs == records.gangs


def drifted(fleet: Fleet) -> dict[str, dict[str, Any]]:
    """Observed state: at intent except every tenth device, whose values are all off."""
    desired = render_desired(fleet)
    observed: dict[str, dict[str, Any]] = {}
    for k, (name, wanted) in enumerate(desired.items()):
        state = {path: owned.value for path, owned in wanted.items()}
        if k % 10 == 0:
            state = {path: f"old-{value}" for path, value in state.items()}
        observed[name] = state
    return observed


def test_orion_compact_loads_to_the_same_fleet_policies_and_plan(fleets: Path) -> None:
    """ORION (32 nodes) in both forms: same records, violations and plan."""
    records = load_fleet(generated(fleets, 32, False))
    compact = load_fleet(generated(fleets, 32, True))
    same_inventory(records, compact)
    assert render_desired(compact) == render_desired(records)
    plan_records = build_plan(records, render_desired(records), drifted(records))
    plan_compact = build_plan(compact, render_desired(compact), drifted(compact))
    assert plan_compact.change_count() == plan_records.change_count() > 0
    assert plan_compact.steps == plan_records.steps


def test_orion_policy_results_match_and_point_at_the_exception(fleets: Path) -> None:
    """A 400 m cable, as an edited record and as an exception: the same violations, the
    compact one at the exception's line."""
    records_repo, compact_repo = fleets / "long-records", fleets / "long-compact"
    for source, target in (
        (generated(fleets, 32, False), records_repo),
        (generated(fleets, 32, True), compact_repo),
    ):
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(source, target)
    backend = records_repo / "inventory" / "links" / "backend.yaml"
    lines = backend.read_text().splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if "a: gpu-n05, a_port: eth2," in line)
    lines[at] = lines[at].split("length_m:")[0] + "length_m: 400.0}\n"
    backend.write_text("".join(lines))
    topology = compact_repo / "inventory" / "topology.yaml"
    text = (
        topology.read_text()
        + "  exceptions:\n    - {cable: 'gpu-n05:eth2', set: {length_m: 400.0}}\n"
    )
    topology.write_text(text)
    by_records = run_validation(records_repo, today=TODAY)
    by_compact = run_validation(compact_repo, today=TODAY)
    assert not by_records.problems and not by_compact.problems
    assert by_records.report is not None and by_compact.report is not None

    def findings(report: Any) -> list[tuple[str, str, str]]:
        return [(v.policy, v.subject, v.message) for v in report.violations]

    assert findings(by_compact.report) == findings(by_records.report) != []
    exception_line = len(text.splitlines())
    for violation in by_compact.report.violations:
        inventory = [loc for loc in violation.locations if loc.file.startswith("inventory/")]
        assert [(loc.file, loc.line) for loc in inventory] == [
            ("inventory/topology.yaml", exception_line)
        ]


def test_examples_orion_is_the_record_form_of_the_compact_generator(fleets: Path) -> None:
    """The committed example and the compact form of the same size load alike."""
    root = Path(__file__).resolve().parents[1]
    same_inventory(load_fleet(root / "examples" / "orion"), load_fleet(generated(fleets, 32, True)))


# Edits applied to both forms: (kind, index) picks a target from the fleet.
EDIT = st.tuples(st.sampled_from(["remove-node", "move", "length", "model"]), st.integers(0, 10**6))


def _apply(
    records: Fleet, edits: list[tuple[str, int]]
) -> tuple[str, dict[str, Device], list[Link]]:
    """The exceptions text for the compact form, and the same edits done to the records."""
    devices = dict(records.devices)
    links = list(records.links)
    nodes = [d.name for d in devices.values() if d.role.value == "gpu-node"]
    last_rack = [n for n in nodes if devices[n].rack == devices[nodes[-1]].rack]  # no gang
    host_links = [i for i, link in enumerate(links) if link.link_class.value == "host-leaf"]
    text: list[str] = []
    touched: set[str] = set()
    removed: set[str] = set()
    for kind, pick in edits:
        if kind == "remove-node":
            name = last_rack[pick % len(last_rack)]
            if name in touched:
                continue
            touched.add(name)
            removed.add(name)
            del devices[name]
            text.append(f"    - {{device: {name}, remove: true}}\n")
        elif kind == "model":
            name = nodes[pick % len(nodes)]
            if name in touched:
                continue
            touched.add(name)
            devices[name] = devices[name].model_copy(update={"model": "HX8-R2"})
            text.append(f"    - {{device: {name}, set: {{model: HX8-R2}}}}\n")
        else:
            index = host_links[pick % len(host_links)]
            link = links[index]
            end = f"{link.a}:{link.a_port}"
            if end in touched or link.a in touched:
                continue
            touched.update({end, link.a})
            if kind == "move":
                update: dict[str, Any] = {"b_port": f"Ethernet{100 + index}"}
                text.append(f"    - {{cable: '{end}', set: {{b_port: Ethernet{100 + index}}}}}\n")
            else:
                update = {"length_m": 12.5}
                text.append(f"    - {{cable: '{end}', set: {{length_m: 12.5}}}}\n")
            links[index] = link.model_copy(update=update)
    links = [link for link in links if link.a not in removed]
    return "".join(text), devices, links


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    nodes=st.sampled_from([4, 8, 12, 32, 36, 68]),
    edits=st.lists(EDIT, max_size=5),
)
def test_compact_with_exceptions_equals_records_with_the_same_edits(
    fleets: Path, nodes: int, edits: list[tuple[str, int]]
) -> None:
    """At any size, exceptions to the compact form do what editing the records does."""
    records = load_fleet(generated(fleets, nodes, False))
    text, devices, links = _apply(records, edits)
    repo = fleets / f"edited-{nodes}"
    shutil.rmtree(repo, ignore_errors=True)
    shutil.copytree(generated(fleets, nodes, True), repo)
    topology = repo / "inventory" / "topology.yaml"
    if text:
        topology.write_text(topology.read_text() + "  exceptions:\n" + text)
    compact = load_fleet(repo)
    assert list(compact.devices.items()) == list(devices.items())
    assert list(compact.links) == links
    assert list(compact.racks.items()) == list(records.racks.items())
