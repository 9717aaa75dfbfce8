"""The LLDP parsers (EOS ``show lldp neighbors detail | json``, lldpd ``lldpctl -f json``)
against golden fixtures (``tests/fixtures/lldp/<platform>/<command>/<case>/``), on
malformed input, and as properties over generated neighbour tables."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reconciler.drivers.lldp_parse import is_mac, parse_eos_lldp, parse_sonic_lldp

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "lldp"
CASES = sorted(p for p in FIXTURES.glob("*/*/*") if p.is_dir())
PARSERS = {"eos": parse_eos_lldp, "sonic": parse_sonic_lldp}


def _load(case: Path, name: str) -> Any:
    return json.loads((case / name).read_text())


@pytest.mark.parametrize("case", CASES, ids=lambda p: f"{p.parts[-3]}/{p.name}")
def test_golden_fixture(case: Path) -> None:
    """Each captured neighbour table parses to its expected flat state."""
    parse = PARSERS[case.parts[-3]]
    assert parse(_load(case, "output.json")) == _load(case, "expected.json")


def test_fixture_cases_cover_both_platforms() -> None:
    """Both platforms have golden cases, so a missing directory cannot pass silently."""
    assert {p.parts[-3] for p in CASES} == {"eos", "sonic"}
    assert len(CASES) >= 6


def test_eos_host_mac_port_id_reports_the_described_interface() -> None:
    """A host advertising its MAC as port id is reported by the interface its description names."""
    case = FIXTURES / "eos" / "show_lldp_neighbors_detail" / "orion-leaf"
    state = parse_eos_lldp(_load(case, "output.json"))
    assert state["lldp/Ethernet2/port"] == "eth0"
    assert state["lldp/Ethernet3/port"] == "b83f.d203.3c30"  # description names no interface
    assert "lldp/Ethernet4/system" not in state


def test_eos_named_agent_wins_over_nic_firmware_agent() -> None:
    """Of two agents on one port, the one naming its system and interface is reported."""
    case = FIXTURES / "eos" / "show_lldp_neighbors_detail" / "orion-leaf"
    state = parse_eos_lldp(_load(case, "output.json"))
    assert (state["lldp/Ethernet1/system"], state["lldp/Ethernet1/port"]) == (
        "gpu-n01.example.net",
        "eth0",
    )


def test_sonic_single_interface_object_equals_list_of_one() -> None:
    """lldpd's single object for one interface parses as the list form would."""
    case = FIXTURES / "sonic" / "lldpctl_json" / "one-interface"
    single = _load(case, "output.json")
    ((name, body),) = single["lldp"]["interface"].items()
    as_list = {"lldp": {"interface": [{name: body}]}}
    assert parse_sonic_lldp(single) == parse_sonic_lldp(as_list) != {}


def test_sonic_chassis_without_system_name_reports_empty_system() -> None:
    """A neighbour that sends no system name is reported with an empty one."""
    data = {
        "lldp": {
            "interface": {
                "Ethernet4": {
                    "chassis": {"id": {"type": "mac", "value": "b8:3f:d2:03:1a:14"}},
                    "port": {"id": {"type": "ifname", "value": "eth1"}},
                }
            }
        }
    }
    assert parse_sonic_lldp(data) == {"lldp/Ethernet4/system": "", "lldp/Ethernet4/port": "eth1"}


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ([], "top level: expected an object, got list"),
        ({"lldpNeighbours": {}}, "no lldpNeighbors"),
        ({"lldpNeighbors": []}, "lldpNeighbors: expected an object, got list"),
        ({"lldpNeighbors": {"Ethernet1": {"lldpNeighborInfo": {}}}}, "expected a list, got dict"),
        (
            {"lldpNeighbors": {"Ethernet1": {"lldpNeighborInfo": [{"systemName": ["x"]}]}}},
            "lldpNeighbors.Ethernet1.lldpNeighborInfo[0].systemName: expected a string, got list",
        ),
        (
            {"lldpNeighbors": {"Ethernet1": {"lldpNeighborInfo": [7]}}},
            "lldpNeighborInfo[0]: expected an object, got int",
        ),
    ],
)
def test_eos_malformed_input_raises_value_error_naming_where(data: Any, message: str) -> None:
    """Malformed EOS output is a ValueError that says where it is wrong."""
    with pytest.raises(ValueError, match=r"^LLDP: ") as raised:
        parse_eos_lldp(data)
    assert message in str(raised.value)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ("lldp", "top level: expected an object, got str"),
        ({"interface": {}}, "no lldp object"),
        ({"lldp": {"interface": 3}}, "lldp.interface: expected an object or a list, got int"),
        ({"lldp": {"interface": [{"a": {}, "b": {}}]}}, "expected one interface, got 2 keys"),
        (
            {"lldp": {"interface": {"Ethernet0": {"port": {"id": "Ethernet1"}}}}},
            "lldp.interface.Ethernet0.port.id: expected an object, got str",
        ),
        (
            {"lldp": {"interface": {"Ethernet0": {"chassis": {"a": {}, "b": {}}, "port": {}}}}},
            "lldp.interface.Ethernet0.chassis: expected one system, got 2 keys",
        ),
    ],
)
def test_sonic_malformed_input_raises_value_error_naming_where(data: Any, message: str) -> None:
    """Malformed lldpd output is a ValueError that says where it is wrong."""
    with pytest.raises(ValueError) as raised:
        parse_sonic_lldp(data)
    assert message in str(raised.value)


@pytest.mark.parametrize(
    ("text", "mac"),
    [
        ("b8:3f:d2:03:1a:14", True),
        ("B8-3F-D2-03-1A-14", True),
        ("b83f.d203.1a14", True),
        ("eth0", False),
        ("Ethernet1/1", False),
        ("b8:3f:d2:03:1a", False),
    ],
)
def test_is_mac(text: str, mac: bool) -> None:
    """MAC addresses are recognised in the three notations devices print."""
    assert is_mac(text) is mac


# -- properties ------------------------------------------------------------------------------

PORTS = st.from_regex(r"Ethernet[1-9][0-9]?(/[1-8])?", fullmatch=True)
SYSTEMS = st.from_regex(r"[a-z][a-z0-9-]{0,12}(\.example\.net)?", fullmatch=True)
NEIGHBOUR_PORTS = st.one_of(PORTS, st.from_regex(r"eth[0-9]", fullmatch=True))
TABLES = st.dictionaries(PORTS, st.tuples(SYSTEMS, NEIGHBOUR_PORTS), max_size=12)


def _eos(table: dict[str, tuple[str, str]], empty: list[str]) -> dict[str, Any]:
    ports: dict[str, Any] = {p: {"lldpNeighborInfo": []} for p in empty}
    for local, (system, port) in table.items():
        ports[local] = {
            "lldpNeighborInfo": [
                {
                    "systemName": system,
                    "neighborInterfaceInfo": {
                        "interfaceIdType": "interfaceName",
                        "interfaceId": f'"{port}"',
                        "interfaceId_v2": port,
                    },
                }
            ]
        }
    return {"lldpNeighbors": ports}


def _lldpd(table: dict[str, tuple[str, str]]) -> dict[str, Any]:
    entries = [
        {local: {"chassis": {system: {}}, "port": {"id": {"type": "ifname", "value": port}}}}
        for local, (system, port) in table.items()
    ]
    if not entries:
        return {"lldp": {}}
    return {"lldp": {"interface": entries[0] if len(entries) == 1 else entries}}


@given(TABLES, st.lists(PORTS, max_size=4))
def test_both_parsers_agree_on_the_same_wire(
    table: dict[str, tuple[str, str]], empty: list[str]
) -> None:
    """The same neighbours, printed by EOS or by lldpd, give the same state; one path per
    field of each port with a neighbour, none for ports without."""
    empty = [p for p in empty if p not in table]
    expected = {}
    for local, (system, port) in table.items():
        expected[f"lldp/{local}/system"] = system
        expected[f"lldp/{local}/port"] = port
    assert parse_eos_lldp(_eos(table, empty)) == expected
    assert parse_sonic_lldp(_lldpd(table)) == expected


@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=5),
        lambda inner: (
            st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
        ),
        max_leaves=12,
    )
)
def test_arbitrary_json_parses_or_raises_value_error(data: Any) -> None:
    """Any JSON value either parses to lldp paths or raises ValueError, nothing else."""
    for parse in (parse_eos_lldp, parse_sonic_lldp):
        try:
            state = parse(data)
        except ValueError:
            continue
        assert all(k.startswith("lldp/") for k in state)
