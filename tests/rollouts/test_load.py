"""Loading rollout specs: every problem reads file:line:col, and the example specs load."""

from __future__ import annotations

from pathlib import Path

import pytest

from inventory.problems import InputError
from rollouts.load import load_rollout
from rollouts.spec import BakeMode
from tests.fleetcopy import ORION, FleetCopy

SPEC = """\
rollout:
  name: trial
  targets:
    select: role=gpu-node
  caps:
    per_wave: 4
    per_rack: 1
"""


def problems(fleet: FleetCopy, text: str) -> list[str]:
    fleet.write("rollouts/trial.yaml", text)
    with pytest.raises(InputError) as caught:
        load_rollout(fleet.path, "trial")
    return [str(p) for p in caught.value.problems]


def test_example_specs_load() -> None:
    """Both example specs of ORION load by name."""
    firmware = load_rollout(ORION, "firmware-hx8-2026-09").spec
    assert firmware.drain and firmware.caps.per_dp_replica == 1
    assert firmware.strata.extra_attributes == ("label.nic_revision",)
    assert firmware.bake.mode is BakeMode.auto
    qos = load_rollout(ORION, "qos-mtu-tune").spec
    assert not qos.drain and qos.caps.per_wave == 2


def test_spec_loads_by_path_too(orion: FleetCopy) -> None:
    """A path to the file (relative to the repo) names the same spec."""
    orion.write("rollouts/trial.yaml", SPEC)
    loaded = load_rollout(orion.path, "rollouts/trial.yaml")
    assert loaded.spec.name == "trial"
    assert str(loaded.where("caps", "per_rack")) == "rollouts/trial.yaml:7:15"


def test_unknown_key_points_at_the_key(orion: FleetCopy) -> None:
    """A misspelt cap is refused at its line and column, listing the allowed keys."""
    found = problems(orion, SPEC.replace("per_rack: 1", "per_rak: 1"))
    assert len(found) == 1
    assert found[0].startswith("rollouts/trial.yaml:7:5: rollout.caps.per_rak: unknown key")
    assert "per_rack" in found[0]


def test_bad_cap_points_at_the_value(orion: FleetCopy) -> None:
    """A cap of 0 is refused at its value."""
    found = problems(orion, SPEC.replace("per_wave: 4", "per_wave: 0"))
    assert found == [
        "rollouts/trial.yaml:6:15: rollout.caps.per_wave: Input should be greater than or "
        "equal to 1 (got 0)"
    ]


def test_bad_select_and_unknown_attribute_are_located(orion: FleetCopy) -> None:
    """What the schema cannot see is checked too, each at its value."""
    text = (
        SPEC.replace("role=gpu-node", "colour=red")
        + "  strata:\n    extra_attributes: [rack, shoe_size]\n"
    )
    found = problems(orion, text)
    assert found[0].startswith("rollouts/trial.yaml:4:13: targets.select: unknown key 'colour'")
    assert found[1].startswith(
        "rollouts/trial.yaml:9:30: strata.extra_attributes.1: unknown attribute 'shoe_size'"
    )


def test_missing_spec_lists_the_known_ones(orion: FleetCopy) -> None:
    """A spec name with no file says which specs exist."""
    with pytest.raises(InputError) as caught:
        load_rollout(orion.path, "nope")
    assert str(caught.value) == (
        "rollouts/nope.yaml:1:1: no rollout spec 'nope' (specs in rollouts/: "
        "firmware-hx8-2026-09, qos-mtu-tune)"
    )


def test_spec_outside_the_repo_is_refused(orion: FleetCopy, tmp_path: Path) -> None:
    """A spec file must live in the fleet repo it is planned against."""
    outside = tmp_path / "elsewhere.yaml"
    outside.write_text(SPEC)
    with pytest.raises(InputError, match="must be in the fleet repo"):
        load_rollout(orion.path, str(outside))
