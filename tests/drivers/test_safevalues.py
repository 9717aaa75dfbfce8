"""Every value rendered into a device command passes a strict pattern first: injection
payloads in any field, path part or value, are refused with ConfigRejected naming it."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reconciler.drivers.eos_lines import render_session
from reconciler.drivers.eos_parse import EosConfig, PortConfig
from reconciler.drivers.safevalues import FILTER, SafeValues
from reconciler.errors import ConfigRejected
from reconciler.settings import Scalar

PAYLOADS: list[object] = [
    "Ethernet1; reload",
    "Ethernet1\nreload now",
    "Ethernet1\r\nwrite erase",
    "x | bash",
    "`reboot`",
    "$(reboot)",
    "${IFS}reboot",
    "'quoted'",
    '"double"',
    "a && b",
    "a > /etc/passwd",
    "nul\x00byte",
    "tab\there",
    "-rf",
    " Ethernet1",
    "Ethernet1 ",
    "../../etc/shadow",
    "Ｅｔｈｅｒｎｅｔ１",
    "9216; reload",
    "",
    True,
    1.5,
    -1,
    2**40,
    ["list"],
]

# Every writable field: (path, a valid value); payloads go in the value and, where the
# path has a variable part, in that part too.
FIELDS: list[tuple[str, Scalar]] = [
    ("system/nos_version", "4.32.2F"),
    ("interfaces/{}/mtu", 9216),
    ("interfaces/{}/address", "10.0.0.0/31"),
    ("interfaces/{}/pfc_priorities", "3,4"),
    ("qos/dscp/{}", 3),
    ("qos/ecn/{}/kmin_kb", 200),
    ("qos/ecn/{}/kmax_kb", 800),
    ("qos/ecn/{}/pmax_percent", 20),
    ("qos/pfc_xoff_kb", 400),
    ("qos/pfc_headroom_kb", 128),
    ("bgp/asn", 64601),
    ("bgp/router_id", "10.255.0.5"),
    ("bgp/maximum_paths", 64),
    ("bgp/neighbors/{}/remote_as", 64600),
    ("bgp/neighbors/{}/inbound_filter", "FABRIC-IN"),
]
GOOD_PART = {
    "interfaces": "Ethernet12",
    "qos/dscp": "26",
    "qos/ecn": "3",
    "bgp/neighbors": "10.0.0.1",
}


def good_path(template: str) -> str:
    part = next((v for k, v in GOOD_PART.items() if template.startswith(k)), "")
    return template.format(part)


@pytest.mark.parametrize(("template", "value"), FIELDS, ids=[f[0] for f in FIELDS])
def test_valid_values_pass(template: str, value: Scalar) -> None:
    """The values intent renders are accepted unchanged."""
    setting = SafeValues("leaf-1").setting(good_path(template), value)
    assert setting.value == value


def refused(path: str, value: object) -> ConfigRejected | None:
    try:
        SafeValues("leaf-1").setting(path, value)  # type: ignore[arg-type]
    except ConfigRejected as exc:
        return exc
    return None


@pytest.mark.parametrize(("template", "value"), FIELDS, ids=[f[0] for f in FIELDS])
def test_payload_as_value_is_refused(template: str, value: Scalar) -> None:
    """An injection payload as the value never passes, and the error names the field."""
    path = good_path(template)
    empty_means_none = path.endswith(("/inbound_filter", "/pfc_priorities", "/address"))
    for payload in PAYLOADS:
        if payload == "" and empty_means_none:
            continue
        error = refused(path, payload)
        assert error is not None, f"{path} accepted {payload!r}"
        assert path in error.detail and error.device == "leaf-1"


@pytest.mark.parametrize(
    ("template", "value"),
    [f for f in FIELDS if "{}" in f[0]],
    ids=[f[0] for f in FIELDS if "{}" in f[0]],
)
def test_payload_in_the_path_is_refused(template: str, value: Scalar) -> None:
    """A payload hidden in a path part (port, DSCP, queue, peer) never passes."""
    for payload in PAYLOADS:
        if isinstance(payload, str):
            assert refused(template.format(payload), value) is not None, payload


@pytest.mark.parametrize("text", ["9216", "1e3", "0x10", " 64"])
def test_numbers_must_be_integers_not_text(text: str) -> None:
    """Numeric fields take integers only; digits as text are refused, never coerced."""
    for path in ("interfaces/Ethernet1/mtu", "bgp/asn", "qos/pfc_xoff_kb"):
        with pytest.raises(ConfigRejected, match=path):
            SafeValues("leaf-1").setting(path, text)


def test_unknown_paths_are_refused() -> None:
    """Only the switch namespace is writable: read-only or unknown paths are refused."""
    for path in ("system/hostname", "interfaces/Ethernet1/description", "bgp/whatever", "x"):
        with pytest.raises(ConfigRejected, match="not a setting"):
            SafeValues("leaf-1").setting(path, "v")


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=40))
def test_filter_names_are_strict(text: str) -> None:
    """Any text is either refused or a plain name (letters, digits, ``_.-``)."""
    try:
        SafeValues("leaf-1").filter_name(text, "f")
    except ConfigRejected:
        return
    assert FILTER.fullmatch(text) and not set(text) & set(" ;|&$`'\"\n\r\t<>(){}\\")


SAFE_LINE = re.compile(r"^[A-Za-z0-9 ./,:_-]+$")


@settings(max_examples=40, deadline=None)
@given(
    mtu=st.integers(68, 9214),  # EOS's L3 range; beyond it the line is refused
    kmin=st.integers(1, 1000),
    pmax=st.integers(1, 100),
    name=st.from_regex(FILTER, fullmatch=True),
    peer=st.ip_addresses(v=4).map(str),
)
def test_rendered_eos_lines_hold_only_safe_characters(
    mtu: int, kmin: int, pmax: int, name: str, peer: str
) -> None:
    """Whatever valid values come in, every EOS line is plain words."""
    values = SafeValues("leaf-1")
    changes: dict[str, Scalar] = {
        "interfaces/Ethernet1/mtu": mtu,
        "qos/ecn/3/kmin_kb": kmin,
        "qos/ecn/3/kmax_kb": kmin + 1,
        "qos/ecn/3/pmax_percent": pmax,
        f"bgp/neighbors/{peer}/remote_as": 65000,
        f"bgp/neighbors/{peer}/inbound_filter": name,
    }
    settings_ = [values.setting(p, v) for p, v in changes.items()]
    before: dict[str, Scalar] = {"bgp/asn": 65001, "interfaces/Ethernet1/mtu": 1500}
    ports = {"Ethernet1": PortConfig(routed=True), "Ethernet2": PortConfig(routed=True)}
    lines = render_session("leaf-1", before, EosConfig(ports=ports), settings_)
    assert lines and all(SAFE_LINE.match(line) for line in lines)


def test_before_state_values_are_validated_too() -> None:
    """A hostile value read from the device is refused before it reaches a line."""
    values = SafeValues("leaf-1")
    change = values.setting("qos/ecn/3/kmin_kb", 100)
    before: dict[str, Scalar] = {"qos/ecn/3/kmax_kb": "800; reload", "qos/ecn/3/pmax_percent": 5}
    with pytest.raises(ConfigRejected, match="qos/ecn/3/kmax_kb"):
        render_session("leaf-1", before, EosConfig(ports={"Ethernet1": PortConfig()}), [change])


def test_port_names_with_slashes_are_one_port() -> None:
    """``interfaces/Ethernet1/1/mtu`` names port Ethernet1/1 (EOS breakout naming)."""
    setting = SafeValues("leaf-1").setting("interfaces/Ethernet1/1/mtu", 9214)
    assert (setting.kind, setting.subject, setting.value) == ("mtu", "Ethernet1/1", 9214)
    with pytest.raises(ConfigRejected, match="unsafe"):
        SafeValues("leaf-1").setting("interfaces/Ethernet1/x;reload/mtu", 9214)
