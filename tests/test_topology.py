"""The compact topology section: patterns, rules, exceptions, and where problems point."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from intent.fleet import Fleet, load_fleet
from inventory.problems import InputError, Location
from inventory.source import parse_text
from inventory.topology import expand_document
from inventory.topology_doc import GeneratedLocation
from inventory.topology_expr import PatternError, evaluate, letters, parse_expression

PLUMB = "fleet: t\nstate_dir: .plumb\n"

RACKS = """\
racks:
  - {name: net-1, kind: network, power_domain: p1, cooling_domain: c1}
  - {name: gpu-1, kind: gpu, power_domain: p2, cooling_domain: c1}
"""

# Two rail leaves, four nodes with two NICs each, one cable per NIC: rails pattern.
TOPOLOGY = """\
topology:
  constants: {nodes: 4}
  devices:
    - rule: leaves
      for: {r: 0..1}
      name: leaf-r{r}
      role: leaf
      vendor: arista
      model: 7060DX5-64S
      platform: eos
      rack: net-1
      mgmt: 198.18.0.{r + 1}
      rail: "{r}"
    - rule: nodes
      for: {n: 1..nodes}
      name: gpu-n{n:02}
      role: gpu-node
      vendor: halcyon
      model: HX8
      platform: linux
      rack: gpu-1
      mgmt: 198.18.1.{n}
      gpus: 8
      nics:
        - for: {r: 0..1}
          name: eth{r}
          speed_gbps: 400
          rail: "{r}"
  links:
    - rule: rails
      for: {n: 1..nodes, r: 0..1}
      a: gpu-n{n:02}
      a_port: eth{r}
      b: leaf-r{r}
      b_port: Ethernet{n}
      class: host-leaf
      length_m: 3.0
"""


def write_repo(root: Path, topology: str, *extra: tuple[str, str]) -> Path:
    (root / "inventory").mkdir(parents=True)
    (root / "plumb.yaml").write_text(PLUMB)
    (root / "inventory" / "racks.yaml").write_text(RACKS)
    (root / "inventory" / "topology.yaml").write_text(topology)
    for relative, text in extra:
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text)
    return root


def with_exceptions(text: str) -> str:
    return TOPOLOGY + "  exceptions:\n" + textwrap.indent(textwrap.dedent(text), "    ")


def load(tmp_path: Path, topology: str, *extra: tuple[str, str]) -> Fleet:
    return load_fleet(write_repo(tmp_path, topology, *extra))


def problems(tmp_path: Path, topology: str, *extra: tuple[str, str]) -> list[str]:
    with pytest.raises(InputError) as caught:
        load(tmp_path, topology, *extra)
    return [str(p) for p in caught.value.problems]


def line_of(text: str, needle: str, occurrence: int = 1) -> int:
    lines = [i + 1 for i, line in enumerate(text.splitlines()) if needle in line]
    return lines[occurrence - 1]


# -- patterns -------------------------------------------------------------------------


def test_pattern_fields_are_zero_padded_and_computed() -> None:
    """A field takes an expression and an optional zero-padded width."""
    assert evaluate("gpu-n{n:04}", {"n": 7}, {}) == "gpu-n0007"
    assert evaluate("Ethernet{(n - 1) % 32 + 1}", {"n": 33}, {}) == "Ethernet1"
    assert evaluate("r{r}-{{x}}", {"r": 3}, {}) == "r3-{x}"


def test_a_lone_field_yields_the_integer() -> None:
    """``rail: "{r}"`` is the number, not text."""
    assert evaluate("{r * 2}", {"r": 3}, {}) == 6


def test_constants_and_functions() -> None:
    """Constants, min/max, letters() and choose() are known; letters never run out."""
    assert evaluate("{min(32, nodes - 32 * g)}", {"g": 1}, {"nodes": 36}) == 4
    assert evaluate("row-{letters(k)}", {"k": 26}, {}) == "row-aa"
    assert evaluate("{choose(r % 2, 'eos', 'sonic')}", {"r": 3}, {}) == "sonic"
    assert [letters(i) for i in (0, 25, 27)] == ["a", "z", "ab"]


@pytest.mark.parametrize(
    "expression",
    [
        "__import__('os')",
        "n.real",
        "n ** 99999",
        "open",
        "[n]",
        "'a' * 100",
        "lambda: 1",
        "n if n else 1",
        "min(*n)",
    ],
)
def test_expressions_outside_the_grammar_are_refused(expression: str) -> None:
    """Nothing but integer arithmetic over known names and four functions compiles."""
    with pytest.raises(PatternError):
        parse_expression(expression, ["n"])


def test_an_unknown_name_lists_the_known_ones() -> None:
    """A typo in a loop variable says which names exist there."""
    with pytest.raises(PatternError, match=r"unknown name 'm' \(known here: n, r\)"):
        parse_expression("m + 1", ["n", "r"])


# -- expansion ------------------------------------------------------------------------


def test_rules_expand_to_ordinary_records(tmp_path: Path) -> None:
    """Devices, NICs and cables come out as if written by hand, loops outermost first."""
    fleet = load(tmp_path, TOPOLOGY)
    assert list(fleet.devices) == [
        "leaf-r0", "leaf-r1", "gpu-n01", "gpu-n02", "gpu-n03", "gpu-n04",
    ]  # fmt: skip
    node = fleet.devices["gpu-n03"]
    assert str(node.mgmt) == "198.18.1.3"
    assert [(nic.name, nic.rail) for nic in node.nics] == [("eth0", 0), ("eth1", 1)]
    assert fleet.devices["leaf-r1"].rail == 1
    assert [(link.a, link.a_port, link.b, link.b_port) for link in fleet.links[:3]] == [
        ("gpu-n01", "eth0", "leaf-r0", "Ethernet1"),
        ("gpu-n01", "eth1", "leaf-r1", "Ethernet1"),
        ("gpu-n02", "eth0", "leaf-r0", "Ethernet2"),
    ]
    assert fleet.cabling.at("leaf-r1", "Ethernet4") is not None


def test_generated_records_point_at_their_rule(tmp_path: Path) -> None:
    """The location of a generated record is its rule's line, and names the record."""
    fleet = load(tmp_path, TOPOLOGY)
    where = fleet.where.links[5]
    assert (where.file, where.line) == ("inventory/topology.yaml", line_of(TOPOLOGY, "rule: rails"))
    assert isinstance(where, GeneratedLocation)
    assert where.about == "cable gpu-n03:eth1 -> leaf-r1:Ethernet3 (from rule 'rails')"


def test_a_lengths_table_gives_each_cable_its_length(tmp_path: Path) -> None:
    """One row per node, one value per rail."""
    table = "      lengths_m:\n" + "".join(f"        - [{n}.5, {n}.0]\n" for n in range(1, 5))
    text = TOPOLOGY.replace("      length_m: 3.0\n", table)
    fleet = load(tmp_path, text)
    assert [link.length_m for link in fleet.links[:4]] == [1.5, 1.0, 2.5, 2.0]


def test_a_lengths_table_of_the_wrong_shape_is_refused_at_its_row(tmp_path: Path) -> None:
    """A row with a missing value points at that row."""
    table = "      lengths_m:\n" + "".join(
        f"        - [{n}.5{', 1.0' if n != 3 else ''}]\n" for n in range(1, 5)
    )
    text = TOPOLOGY.replace("      length_m: 3.0\n", table)
    found = problems(tmp_path, text)
    row = line_of(text, "- [3.5]")
    assert found == [
        f"inventory/topology.yaml:{row}:11: lengths_m row 3 has 1 values; 2 cables at 3"
    ]


def test_a_bad_generated_value_is_reported_at_the_rule_field_naming_the_record(
    tmp_path: Path,
) -> None:
    """The schema checks generated values like hand-written ones; the message names the
    record and the line is the pattern's."""
    text = TOPOLOGY.replace("mgmt: 198.18.1.{n}", "mgmt: 198.18.1.{n * 100}")
    found = problems(tmp_path, text)
    line = line_of(text, "mgmt: 198.18.1.{n * 100}")
    assert len(found) == 2  # 300 and 400 are not octets
    assert found[0].startswith(
        f"inventory/topology.yaml:{line}:13: device gpu-n03 (from rule 'nodes'): devices."
    )
    assert "mgmt" in found[0]


def test_an_expression_that_fails_names_the_binding(tmp_path: Path) -> None:
    """Division by zero at one index is reported at the field, with the loop values."""
    text = TOPOLOGY.replace("b_port: Ethernet{n}", "b_port: Ethernet{n // (n - 2)}")
    found = problems(tmp_path, text)
    line = line_of(text, "b_port: Ethernet{n // (n - 2)}")
    assert found == [
        f"inventory/topology.yaml:{line}:15: b_port at n=2, r=0: integer division or modulo by zero"
    ]


def test_overlapping_rules_are_refused(tmp_path: Path) -> None:
    """Two rules that generate the same device: the second is an error naming the first."""
    text = TOPOLOGY.replace(
        "      for: {r: 0..1}\n      name: leaf-r{r}",
        "      for: {r: 0..1}\n      name: gpu-n0{r + 1}",
    )
    text = text.replace("role: leaf", "role: gpu-node")
    found = problems(tmp_path, text)
    nodes = line_of(text, "rule: nodes")
    leaves = line_of(text, "rule: leaves")
    assert found[0] == (
        f"inventory/topology.yaml:{nodes}:7: device gpu-n01 (from rule 'nodes'): generated "
        f"also by rule 'leaves' (line {leaves}); rules must not overlap"
    )


def test_a_rule_that_generates_a_cable_end_twice_is_refused(tmp_path: Path) -> None:
    """A port pattern that ignores a loop variable cables one port twice."""
    text = TOPOLOGY.replace("b_port: Ethernet{n}", "b_port: Ethernet1")
    found = problems(tmp_path, text)
    assert found[0].endswith(
        "cable gpu-n02:eth0 -> leaf-r0:Ethernet1 (from rule 'rails'): generated again "
        f"(line {line_of(text, 'rule: rails')}); rules must not overlap"
    )


def test_a_hand_written_record_and_a_generated_one_are_duplicates(tmp_path: Path) -> None:
    """Writing a generated device by hand as well is a duplicate error."""
    extra = (
        "inventory/zz-extra.yaml",
        "devices:\n  - {name: gpu-n02, role: gpu-node, vendor: halcyon, model: HX8, "
        "platform: linux, rack: gpu-1, mgmt: 198.18.2.2}\n",
    )
    found = problems(tmp_path, TOPOLOGY, extra)
    assert found == [
        "inventory/zz-extra.yaml:2:5: device gpu-n02 is already defined at "
        f"inventory/topology.yaml:{line_of(TOPOLOGY, 'rule: nodes')}:7"
    ]


# -- exceptions -----------------------------------------------------------------------


def test_an_exception_moves_a_cable_and_is_where_its_problems_point(tmp_path: Path) -> None:
    """``set: {b_port: ...}`` moves one cable; a clash it causes names the exception."""
    text = with_exceptions("""\
        - cable: gpu-n03:eth1
          set: {b_port: Ethernet9}
          reason: port 3 is dead
        """)
    fleet = load(tmp_path, text)
    moved = fleet.cabling.at("gpu-n03", "eth1")
    assert moved is not None and moved.peer.port == "Ethernet9"
    assert fleet.cabling.at("leaf-r1", "Ethernet3") is None
    clash = text.replace("b_port: Ethernet9", "b_port: Ethernet4")
    found = problems(tmp_path / "clash", clash)
    line = line_of(clash, "cable: gpu-n03:eth1")
    rails = line_of(clash, "rule: rails")
    assert found == [
        f"inventory/topology.yaml:{rails}:7: cable gpu-n04:eth1 -> leaf-r1:Ethernet4 (from rule "
        f"'rails'): port leaf-r1:Ethernet4 is already cabled at inventory/topology.yaml:{line}:7"
    ]


def test_removing_a_node_removes_its_cables(tmp_path: Path) -> None:
    """A node out of the fabric takes its generated cables with it."""
    text = with_exceptions("""\
        - {device: gpu-n02, remove: true, reason: RMA}
        """)
    fleet = load(tmp_path, text)
    assert "gpu-n02" not in fleet.devices
    assert all("gpu-n02" not in (link.a, link.b) for link in fleet.links)
    assert len(fleet.links) == 6


def test_an_exception_changes_a_model_and_a_length(tmp_path: Path) -> None:
    """A device of another model and a cable of another length; the rest untouched."""
    text = with_exceptions("""\
        - {device: leaf-r1, set: {vendor: nvidia, model: ACS-SN5600, platform: sonic}}
        - {cable: 'leaf-r0:Ethernet2', set: {length_m: 12.5}}
        """)
    fleet = load(tmp_path, text)
    assert (fleet.devices["leaf-r1"].model, fleet.devices["leaf-r1"].platform.value) == (
        "ACS-SN5600", "sonic",
    )  # fmt: skip
    assert fleet.devices["leaf-r0"].model == "7060DX5-64S"
    lengths = {(link.b, link.b_port): link.length_m for link in fleet.links}
    assert lengths[("leaf-r0", "Ethernet2")] == 12.5
    assert lengths[("leaf-r1", "Ethernet2")] == 3.0


def test_a_value_an_exception_sets_is_checked_at_the_exception(tmp_path: Path) -> None:
    """A bad value set by an exception is reported at that value."""
    text = with_exceptions("""\
        - {device: gpu-n04, set: {gpus: 999}}
        """)
    found = problems(tmp_path, text)
    line = line_of(text, "gpus: 999")
    assert len(found) == 1
    assert found[0].startswith(
        f"inventory/topology.yaml:{line}:37: device gpu-n04 (from rule 'nodes', changed by "
        f"the exception at line {line}): devices."
    )


def test_a_hand_written_record_may_replace_a_removed_one(tmp_path: Path) -> None:
    """Declared as an exception, a generated record gives way to a hand-written one."""
    text = with_exceptions("""\
        - {device: gpu-n02, remove: true, reason: written by hand in special.yaml}
        """)
    extra = (
        "inventory/special.yaml",
        "devices:\n  - {name: gpu-n02, role: gpu-node, vendor: halcyon, model: HX9, "
        "platform: linux, rack: gpu-1, mgmt: 198.18.2.2}\n",
    )
    fleet = load(tmp_path, text, extra)
    assert fleet.devices["gpu-n02"].model == "HX9"


@pytest.mark.parametrize(
    ("exceptions", "message"),
    [
        (
            "- {device: gpu-n09, remove: true}\n",
            "device gpu-n09 is not generated by any rule of this file",
        ),
        (
            "- {cable: 'gpu-n01:eth7', set: {length_m: 2.0}}\n",
            "cable end gpu-n01:eth7 is not generated by any rule of this file",
        ),
        (
            "- {device: gpu-n01, set: {model: A}}\n- {device: gpu-n01, set: {model: B}}\n",
            "device gpu-n01: this exception and the one at line {first} contradict "
            "(one sets model)",
        ),
        (
            "- {device: gpu-n01, set: {model: A}}\n- {device: gpu-n01, remove: true}\n",
            "device gpu-n01: this exception and the one at line {first} contradict (one removes)",
        ),
        (
            "- {device: gpu-n01, remove: true}\n- {cable: 'gpu-n01:eth0', set: {length_m: 2.0}}\n",
            "cable end gpu-n01:eth0 is changed here, but its device gpu-n01 is removed by "
            "the exception at line {first}",
        ),
        (
            "- {device: gpu-n01, set: {name: gpu-n99}}\n",
            "set: 'name' cannot be set on a device",
        ),
    ],
)
def test_exceptions_that_match_nothing_or_contradict_are_errors(
    tmp_path: Path, exceptions: str, message: str
) -> None:
    """Every exception must change a generated record, and no two may disagree."""
    text = with_exceptions(exceptions)
    first = line_of(text, "    - ", occurrence=text.count("    - ") - exceptions.count("\n") + 1)
    found = problems(tmp_path, text)
    assert len(found) == 1
    assert message.format(first=first) in found[0], found


def test_schema_errors_in_the_section_are_located(tmp_path: Path) -> None:
    """An unknown key in a rule is reported at its line and lists the allowed keys."""
    text = TOPOLOGY.replace("      gpus: 8\n", "      gpu: 8\n")
    found = problems(tmp_path, text)
    line = line_of(text, "gpu: 8")
    assert len(found) == 1
    assert found[0].startswith(
        f"inventory/topology.yaml:{line}:7: topology.devices.1.gpu: unknown key 'gpu' (allowed:"
    )


def test_a_loop_past_the_record_limit_is_refused_without_building_it(tmp_path: Path) -> None:
    """A range of a billion indexes is an error, not an out-of-memory."""
    text = TOPOLOGY.replace("constants: {nodes: 4}", "constants: {nodes: 1000000000}")
    found = problems(tmp_path, text)
    assert any("the rules generate more than 2,000,000 records" in p for p in found)


def test_a_file_without_topology_is_left_alone() -> None:
    """Only a topology section is expanded; other documents pass through as they are."""
    doc = parse_text("inventory/racks.yaml", RACKS.encode())
    assert expand_document(doc) is doc


def test_generated_locations_sort_and_compare_with_plain_ones() -> None:
    """Problems from both kinds of location sort together without error."""
    plain = Location("a.yaml", 3, 1)
    generated = GeneratedLocation("a.yaml", 2, 5, "device x (from rule 'r')")
    assert sorted([plain, generated]) == [generated, plain]
    assert GeneratedLocation("a.yaml", 3, 1, "y") == plain
    assert hash(GeneratedLocation("a.yaml", 3, 1, "y")) == hash(plain)
