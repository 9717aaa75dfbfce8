"""A spec's ``targets.select`` is judged against the fleet at its own line: one that
selects nothing is refused there (not as a CLI flag), and an alternative that matches
no device (``role=leaf|spines``) is warned about."""

from __future__ import annotations

import pytest

from rollouts.caps import PlanError
from rollouts.selection import check_selection
from tests.fleetcopy import FleetCopy, copy_orion
from tests.rollouts.test_cli import plumb, with_lab

QOS = "qos-mtu-tune"


@pytest.fixture(scope="module")
def labbed(tmp_path_factory: pytest.TempPathFactory) -> FleetCopy:
    return with_lab(copy_orion(tmp_path_factory.mktemp("select")))


def test_a_dead_alternative_is_warned(labbed: FleetCopy) -> None:
    """'spines' matches no role: one warning naming it; 'spine' is fine."""
    devices = list(labbed.load().devices.values())
    warnings = check_selection(devices, "role=leaf|spines")
    assert warnings == [
        "targets.select: role=spines (in 'role=leaf|spines') matches no device: a typo?"
    ]
    assert check_selection(devices, "role=leaf|spine") == []


def test_a_selection_of_nothing_is_a_plan_error_at_the_select(labbed: FleetCopy) -> None:
    devices = list(labbed.load().devices.values())
    with pytest.raises(PlanError) as caught:
        check_selection(devices, "name~[")
    assert caught.value.field == ("targets", "select")


def with_select(fleet: FleetCopy, name: str, select: str) -> None:
    text = (fleet.path / "rollouts" / f"{QOS}.yaml").read_text()
    fleet.write(f"rollouts/{name}.yaml", text.replace("select: role=leaf|spine", select))


def select_line(fleet: FleetCopy, name: str) -> int:
    lines = (fleet.path / "rollouts" / f"{name}.yaml").read_text().splitlines()
    return next(i for i, line in enumerate(lines, 1) if "select:" in line)


def test_plan_refuses_a_selection_of_nothing_at_its_line(labbed: FleetCopy) -> None:
    """Exit 1 with file:line of targets.select, and no mention of --select."""
    with_select(labbed, "nothing", 'select: "name~["')
    run = plumb(labbed, "rollout", "plan", "nothing", "orion")
    assert run.exit_code == 1
    line = select_line(labbed, "nothing")
    assert run.stderr.startswith(f"rollouts/nothing.yaml:{line}:")
    assert "matches no device" in run.stderr and "--select" not in run.stderr


def test_plan_warns_about_a_dead_alternative_at_its_line(labbed: FleetCopy) -> None:
    with_select(labbed, "typo", "select: role=leaf|spines")
    run = plumb(labbed, "rollout", "plan", "typo", "orion")
    line = select_line(labbed, "typo")
    assert f"rollouts/typo.yaml:{line}:" in run.stderr
    assert "role=spines (in 'role=leaf|spines') matches no device" in run.stderr
