"""Settings resolution: device > group > role > fleet, one owner per field, and the
owner (file:line) travels with every value."""

from __future__ import annotations

import pytest

from inventory.problems import InputError
from tests.fleetcopy import FleetCopy


def _line_of(copy: FleetCopy, relative: str, needle: str) -> int:
    lines = (copy.path / relative).read_text().splitlines()
    return next(i for i, line in enumerate(lines, 1) if needle in line)


def test_fleet_value_applies_to_every_device(orion: FleetCopy) -> None:
    """A fleet-wide value reaches every device, owned by its line in the fleet file."""
    fleet = orion.load()
    line = _line_of(orion, "intent/qos.yaml", "roce_priority:")
    for name in ("leaf-r0", "gpu-n17", "spine-2"):
        value = fleet.setting(name, "qos", "roce_priority")
        assert value is not None and value.value == 3
        assert (value.origin.file, value.origin.line) == ("intent/qos.yaml", line)


def test_group_overrides_fleet_and_device_overrides_group(orion: FleetCopy) -> None:
    """A group beats the fleet value; a device override beats the group."""
    orion.append(
        "intent/groups.yaml",
        "  - name: rail0\n    match: {rails: [0]}\n    set: {bgp: {maximum_paths: 96}}\n",
    )
    orion.set_device_overrides("  leaf-r0:\n    bgp: {maximum_paths: 128}\n")
    fleet = orion.load()
    assert fleet.setting("leaf-r1", "bgp", "maximum_paths").value == 64  # type: ignore[union-attr]
    leaf0 = fleet.setting("leaf-r0", "bgp", "maximum_paths")
    assert leaf0 is not None and leaf0.value == 128
    assert leaf0.origin.file == "intent/devices.yaml"


def test_group_value_owned_by_the_group_line(orion: FleetCopy) -> None:
    """A value set by a group is owned by the group's line, not the fleet's."""
    orion.append(
        "intent/groups.yaml",
        "  - name: rail0\n    match: {rails: [0]}\n    set: {bgp: {maximum_paths: 96}}\n",
    )
    fleet = orion.load()
    value = fleet.setting("leaf-r0", "bgp", "maximum_paths")
    assert value is not None and value.value == 96
    assert value.origin.file == "intent/groups.yaml"
    assert value.origin.line == _line_of(orion, "intent/groups.yaml", "maximum_paths: 96")


def test_same_scope_twice_names_both_places(orion: FleetCopy) -> None:
    """Two files setting the same fleet field is an error naming both file:line."""
    orion.write("intent/extra.yaml", "qos:\n  roce_priority: 3\n")
    with pytest.raises(InputError) as caught:
        orion.load()
    message = str(caught.value)
    first = _line_of(orion, "intent/qos.yaml", "roce_priority:")
    assert "intent/extra.yaml:2:18" in message
    assert f"intent/qos.yaml:{first}:" in message
    assert "already set at" in message and "exactly one source" in message


def test_explicit_null_unsets_a_field_for_a_device(orion: FleetCopy) -> None:
    """null at a higher scope unsets the field, and policies then report it missing."""
    orion.set_device_overrides("  spine-1:\n    bgp: {inbound_filter: null}\n")
    report = orion.evaluate()
    subjects = {
        v.subject.split(":")[0] for v in report.violations if v.policy == "bgp.inbound-filter"
    }
    assert subjects == {"spine-1"}


def test_settings_for_an_unknown_device_are_refused(orion: FleetCopy) -> None:
    """An override naming a device not in the inventory is an error at its line."""
    orion.set_device_overrides("  leaf-r99:\n    bgp: {maximum_paths: 64}\n")
    with pytest.raises(InputError) as caught:
        orion.load()
    assert "settings for unknown device 'leaf-r99'" in str(caught.value)
    assert "intent/devices.yaml:3:" in str(caught.value)
