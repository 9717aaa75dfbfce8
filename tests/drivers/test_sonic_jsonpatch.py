"""SONiC JSON patches: built at table, key or field level, applied by jsonpatch."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reconciler.drivers.sonic_jsonpatch import (
    MESSAGE_CHARS,
    PatchDoesNotApply,
    apply_json_patch,
    json_patch,
    pointer,
)

# config_db names: tables in capitals, keys joined by | and holding prefixes with /
_names = st.text(alphabet="AZaz09|/~-_.:", min_size=1, max_size=12)
_values = st.one_of(st.text(max_size=8), st.lists(st.text(max_size=6), max_size=3))
_fields = st.dictionaries(_names, _values, max_size=3)
_tables = st.dictionaries(_names, st.dictionaries(_names, _fields, max_size=3), max_size=3)
_dbs = _tables.map(lambda db: {k: v for k, v in db.items() if k != "bgpraw"})


@settings(max_examples=100, deadline=None)
@given(old=_dbs, new=_dbs)
def test_applying_the_patch_of_two_configs_gives_the_second(
    old: dict[str, Any], new: dict[str, Any]
) -> None:
    """apply(old, json_patch(old, new)) == new, whatever the names hold (/, ~, |)."""
    assert apply_json_patch(old, json_patch(old, new)) == new


@settings(max_examples=50, deadline=None)
@given(old=_dbs, new=_dbs)
def test_operations_stay_at_table_key_or_field_level(
    old: dict[str, Any], new: dict[str, Any]
) -> None:
    """Only add, replace and remove, never deeper than a field (a list is one value)."""
    for op in json_patch(old, new):
        assert op["op"] in ("add", "replace", "remove")
        assert 1 <= len(op["path"].split("/")) - 1 <= 3


def test_the_frr_text_is_never_patched() -> None:
    """``bgpraw`` is output only: a difference there makes no operation."""
    assert json_patch({"bgpraw": "a"}, {"bgpraw": "b"}) == []


def test_a_multi_asic_patch_is_per_namespace() -> None:
    """On a multi-ASIC switch each namespace's changes sit under /localhost or /asicN."""
    old = {"localhost": {"PORT": {}}, "asic0": {"PORT": {"Ethernet0": {"mtu": "9100"}}}}
    new = {"localhost": {"PORT": {}}, "asic0": {"PORT": {"Ethernet0": {"mtu": "9000"}}}}
    patch = json_patch(old, new)
    assert patch == [{"op": "replace", "path": "/asic0/PORT/Ethernet0/mtu", "value": "9000"}]
    assert apply_json_patch(old, patch) == new


def test_a_key_with_a_prefix_is_one_pointer_token() -> None:
    """``Ethernet0|10.0.0.0/31`` is one token, its slash escaped, and applies as one key."""
    path = pointer("INTERFACE", "Ethernet0|10.0.0.0/31")
    assert path == "/INTERFACE/Ethernet0|10.0.0.0~131"
    db = apply_json_patch({"INTERFACE": {}}, [{"op": "add", "path": path, "value": {}}])
    assert db == {"INTERFACE": {"Ethernet0|10.0.0.0/31": {}}}


def test_applying_leaves_the_input_as_it_was() -> None:
    """The patched configuration is a copy; the running one is untouched."""
    db = {"PORT": {"Ethernet0": {"mtu": "9100"}}}
    patched = apply_json_patch(db, [{"op": "replace", "path": "/PORT/Ethernet0/mtu", "value": "1"}])
    assert patched == {"PORT": {"Ethernet0": {"mtu": "1"}}}
    assert db == {"PORT": {"Ethernet0": {"mtu": "9100"}}}


@pytest.mark.parametrize(
    ("patch", "says"),
    [
        ([{"op": "remove", "path": "/PORT/Ethernet4"}], "non-existent object 'Ethernet4'"),
        ([{"op": "replace", "path": "/PORT/Ethernet0/speed", "value": "1"}], "'speed'"),
        ([{"op": "add", "path": "/NOPE/x", "value": {}}], "'NOPE' not found"),
        ([{"op": "add", "path": "PORT", "value": {}}], "must start with /"),
        ([{"op": "add", "path": "/PORT/x"}], "does not contain a 'value'"),
        ([{"op": "move", "path": "/A", "from": "/PORT"}], "unsupported patch operation 'move'"),
    ],
)
def test_a_patch_that_does_not_apply_is_one_value_error(
    patch: list[dict[str, Any]], says: str
) -> None:
    """jsonpatch's and jsonpointer's errors become PatchDoesNotApply, a ValueError the
    driver reports as the device's rejection."""
    db = {"PORT": {"Ethernet0": {"mtu": "9100"}}}
    with pytest.raises(PatchDoesNotApply, match=says) as caught:
        apply_json_patch(db, patch)
    assert isinstance(caught.value, ValueError)
    assert db == {"PORT": {"Ethernet0": {"mtu": "9100"}}}


def test_the_message_does_not_quote_a_whole_configuration() -> None:
    """jsonpointer names the object it could not descend into; the message stays short."""
    db = {f"TABLE{i}": {"key": {"field": "x" * 100}} for i in range(100)}
    with pytest.raises(PatchDoesNotApply) as caught:
        apply_json_patch(db, [{"op": "add", "path": "/NOPE/x", "value": {}}])
    assert len(str(caught.value)) <= len("JsonPointerException: ") + MESSAGE_CHARS
