"""The EOS parsers against golden fixtures captured from the switch simulator
(``tests/fixtures/eos/<command>/<case>/``; regenerate with
``python -m tests.drivers.capture_fixtures``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from reconciler.drivers.eos_parse import (
    apply_unified_diff,
    common,
    diff_paths,
    parse_config,
    parse_interfaces,
    parse_version,
    text_tree,
)

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "eos"


def cases(command: str) -> list[Path]:
    return sorted(p for p in (FIXTURES / command).iterdir() if p.is_dir())


def load(folder: Path, name: str) -> Any:
    return json.loads((folder / name).read_text())


@pytest.mark.parametrize("case", cases("show_version"), ids=lambda p: p.name)
def test_show_version(case: Path) -> None:
    """``show version | json`` gives the NOS version, model and serial."""
    assert parse_version(load(case, "output.json")) == load(case, "expected.json")


@pytest.mark.parametrize("case", cases("show_interfaces"), ids=lambda p: p.name)
def test_show_interfaces(case: Path) -> None:
    """``show interfaces | json`` gives every Ethernet port's mtu, address, description."""
    assert parse_interfaces(load(case, "output.json")) == load(case, "expected.json")


@pytest.mark.parametrize("case", cases("show_running-config"), ids=lambda p: p.name)
def test_show_running_config(case: Path) -> None:
    """``show running-config | json`` gives ports, QoS (aggregated over ports) and BGP."""
    assert parse_config(load(case, "output.json")) == load(case, "expected.json")


@pytest.mark.parametrize("case", cases("show_session-config_diffs"), ids=lambda p: p.name)
def test_session_diff_parses_back_into_changes(case: Path) -> None:
    """A session diff applied to the running text yields exactly the staged changes."""
    running = (case / "running.txt").read_text()
    proposed = apply_unified_diff(running, (case / "output.txt").read_text())
    before = parse_config(text_tree(running))
    got = [
        [p, before.get(p), v]
        for p, v in diff_paths(before, parse_config(text_tree(proposed))).items()
    ]
    assert got == load(case, "expected.json")


def test_text_and_json_config_agree() -> None:
    """The text tree parses to the same state as EOS's own JSON tree."""
    case = FIXTURES / "show_session-config_diffs" / "mtu-and-ecn"
    text_state = parse_config(text_tree((case / "running.txt").read_text()))
    json_state = parse_config(load(FIXTURES / "show_running-config" / "orion-leaf", "output.json"))
    assert text_state == json_state


def test_a_diff_that_does_not_match_the_running_text_is_refused() -> None:
    """A hunk whose context is not in the running config raises, never guesses."""
    with pytest.raises(ValueError, match="does not match"):
        apply_unified_diff("a\nb\nc", "@@ -1,2 +1,2 @@\n a\n-x\n+y")


def test_a_hunk_shifted_by_header_lines_still_applies() -> None:
    """Line numbers off by a few header comments are tolerated; the context decides."""
    assert (
        apply_unified_diff("! x\n! y\na\nb\nc", "@@ -1,2 +1,2 @@\n a\n-b\n+B")
        == "! x\n! y\na\nB\nc"
    )


def test_ports_that_disagree_observe_as_none() -> None:
    """A fleet-wide value is what every port shares, else None."""
    assert common([1, 1, 1]) == 1
    assert common([1, 2]) is None
    assert common([]) is None
