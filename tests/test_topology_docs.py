"""The compact topology example of docs/fleet-repo.md loads as documented, and the
messages the page quotes are the ones plumb prints."""

from __future__ import annotations

from pathlib import Path

import pytest

from intent.fleet import Fleet, load_fleet
from inventory.problems import InputError

DOC = Path(__file__).resolve().parents[1] / "docs" / "fleet-repo.md"
FILE = "inventory/topology.yaml"


def example() -> str:
    text = DOC.read_text()
    start = text.index("<!-- compact-example -->\n```yaml\n") + len(
        "<!-- compact-example -->\n```yaml\n"
    )
    return text[start : text.index("```\n", start)]


def load(root: Path, topology: str) -> Fleet:
    (root / "inventory").mkdir(parents=True)
    (root / "plumb.yaml").write_text("fleet: docs\nstate_dir: .plumb\n")
    (root / FILE).write_text(topology)
    return load_fleet(root)


def test_the_documented_example_loads(tmp_path: Path) -> None:
    """Two units of leaves, four spines, 59 nodes (one removed); the exceptions hold."""
    fleet = load(tmp_path, example())
    roles = [d.role.value for d in fleet.devices.values()]
    assert (roles.count("leaf"), roles.count("spine"), roles.count("gpu-node")) == (16, 4, 59)
    assert len(fleet.links) == 59 * 8 + 16 * 4 * 8
    moved = fleet.cabling.at("gpu-n040", "eth3")
    assert moved is not None and str(moved.peer) == "leaf-su1-r3:Ethernet30"
    assert fleet.devices["leaf-su1-r1"].platform.value == "sonic"
    long = fleet.cabling.at("leaf-su0-r5", "Ethernet40")
    assert long is not None and long.link.length_m == 35.0
    assert "gpu-n017" not in fleet.devices and not fleet.cabling.ports("gpu-n017")


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("set: {b_port: Ethernet30}", "set: {b_port: Ethernet9}"),
        ("platform: sonic}}\n", "platform: sonic}}\n    - {device: gpu-n003, set: {gpus: 99}}\n"),
    ],
)
def test_the_quoted_messages_are_what_plumb_prints(tmp_path: Path, old: str, new: str) -> None:
    """Each message the page shows comes from the example with one exception changed."""
    with pytest.raises(InputError) as caught:
        load(tmp_path, example().replace(old, new))
    printed = [str(p) for p in caught.value.problems]
    assert len(printed) == 1
    assert printed[0] in DOC.read_text(), printed[0]
