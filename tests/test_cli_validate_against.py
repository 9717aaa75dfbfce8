"""``plumb validate --against SNAPSHOT`` end to end on a lab of ORION: a clean wire exits
0; ``plumb lab miscable`` makes it exit 1 with the findings in every output format; a
bad snapshot exits 2."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

import plumb.cli  # noqa: F401  (registers the commands on the app)
from plumb.app import app
from tests.fleetcopy import FleetCopy, copy_orion

POLICY = "cabling.lldp-mismatch"


def run_plumb(cwd: Path, *args: str) -> Result:
    with contextlib.chdir(cwd):
        result = CliRunner().invoke(app, list(args))
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> FleetCopy:
    """ORION with a lab, a clean snapshot and, after a miscable, a miscabled one."""
    fleet = copy_orion(tmp_path_factory.mktemp("against"))
    root = fleet.path.parent
    assert run_plumb(root, "lab", "init", "orion").exit_code == 0
    assert run_plumb(root, "snapshot", "orion", "-o", "clean.json").exit_code == 0
    swapped = run_plumb(root, "lab", "miscable", "orion", "leaf-r0:Ethernet1", "leaf-r0:Ethernet2")
    assert swapped.exit_code == 0, swapped.stderr
    assert "leaf-r0:Ethernet1 now reaches gpu-n02:eth0" in swapped.stdout
    assert run_plumb(root, "snapshot", "orion", "-o", "miscabled.json").exit_code == 0
    return fleet


def test_clean_wire_exits_0_and_counts_the_cabling_policy(lab: FleetCopy) -> None:
    """Against a clean snapshot every policy, the cabling one included, passes."""
    run = run_plumb(lab.path.parent, "validate", "orion", "--against", "clean.json", "-f", "json")
    assert run.exit_code == 0, run.stdout
    doc = json.loads(run.stdout)
    assert POLICY in [p["id"] for p in doc["policies"]]


def test_without_against_the_cabling_policy_does_not_run(lab: FleetCopy) -> None:
    """A plain validate neither runs nor lists the cabling policy."""
    run = run_plumb(lab.path.parent, "validate", "orion", "-f", "json")
    assert run.exit_code == 0
    assert POLICY not in [p["id"] for p in json.loads(run.stdout)["policies"]]


def test_miscabled_wire_exits_1_at_the_cable_lines(lab: FleetCopy) -> None:
    """Swapped cables are deny findings at their inventory lines; the run exits 1."""
    run = run_plumb(lab.path.parent, "validate", "orion", "--against", "miscabled.json")
    assert run.exit_code == 1
    assert (
        "inventory/links/backend.yaml:8:5: leaf-r0:Ethernet1 is cabled to gpu-n01:eth0 in "
        "inventory, but LLDP sees gpu-n02 eth0"
    ) in run.stdout
    assert "inventory/links/backend.yaml:16:5: leaf-r0:Ethernet2" in run.stdout


@pytest.mark.parametrize("format", ["json", "sarif", "junit", "github"])
def test_findings_show_in_every_format(lab: FleetCopy, format: str) -> None:
    """Every output format carries the cabling findings and the exit code 1."""
    run = run_plumb(
        lab.path.parent, "validate", "orion", "--against", "miscabled.json", "-f", format
    )
    assert run.exit_code == 1
    assert POLICY in run.stdout
    assert "leaf-r0:Ethernet2" in run.stdout


def test_waiver_accepts_a_known_miscabled_port(lab: FleetCopy) -> None:
    """A waiver on the port's subject moves its finding aside like any policy's."""
    waivers = lab.path / "policies" / "waivers.yaml"
    original = waivers.read_text()
    lab.write(
        "policies/waivers.yaml",
        "waivers:\n"
        f"  - policy: {POLICY}\n"
        '    subject: "leaf-r0:Ethernet[12]"\n'
        "    reason: swap found in audit, re-cable booked\n"
        "    expires: 2099-01-01\n",
    )
    try:
        run = run_plumb(lab.path.parent, "validate", "orion", "--against", "miscabled.json")
    finally:
        waivers.write_text(original)
    assert run.exit_code == 0, run.stdout
    assert "2 waived" in run.stdout


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("not json", "not a JSON document"),
        ('{"schema": "other/v1"}', "schema is 'other/v1'"),
        (
            '{"schema": "plumb.snapshot/v1", "fleet": "vega", "taken_at": '
            '"2026-12-01T03:00:00+00:00", "devices": {}}',
            "a snapshot of fleet 'vega', not of 'orion'",
        ),
    ],
)
def test_bad_snapshot_exits_2_naming_the_file(lab: FleetCopy, content: str, message: str) -> None:
    """An unreadable, foreign or wrong-fleet snapshot is bad input: exit 2, the file named."""
    (lab.path.parent / "bad.json").write_text(content)
    run = run_plumb(lab.path.parent, "validate", "orion", "--against", "bad.json")
    assert run.exit_code == 2
    assert "bad.json" in run.stderr and message in run.stderr
