"""PFC headroom on SONiC's traditional buffer model is written as a consistent lossless
profile: ``xoff`` with ``size`` where the platform sizes the profile as ``xon + xoff``
(Spectrum without a shared headroom pool), ``xoff`` alone where ``size`` is apart from
it (Broadcom, Spectrum with a shared headroom pool); never below what the platform
computes for the speed and cable of each profile (the HwSKU's real
``pg_profile_lookup.ini``), or refused with the reason."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reconciler.drivers.safevalues import SafeValues
from reconciler.drivers.sonic_buffers import parse_lookup
from reconciler.drivers.sonic_jsonpatch import apply_json_patch
from reconciler.drivers.sonic_parse import parse_running
from reconciler.drivers.sonic_patch import patch_steps
from reconciler.errors import ConfigRejected
from reconciler.settings import Scalar

TESTS = Path(__file__).resolve().parent.parent
RUNNING = TESTS / "fixtures" / "sonic" / "show_runningconfiguration_all"
LOOKUP = TESTS / "switchsim" / "pg_profile_lookup"


def running(case: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((RUNNING / case / "output.json").read_text())
    return data


def unshared(data: dict[str, Any]) -> dict[str, Any]:
    """The same switch without a shared headroom pool (no pool xoff)."""
    data = copy.deepcopy(data)
    data["BUFFER_POOL"]["ingress_lossless_pool"].pop("xoff")
    return data


def write(
    data: dict[str, Any], kb: int, lookup: str | None, release: str = "202211", **facts: Scalar
) -> dict[str, Any]:
    hwsku = data["DEVICE_METADATA"]["localhost"]["hwsku"]
    before = parse_running(data) | {
        "system/model": hwsku,
        "system/nos_version": release,
        "system/nos_build": f"SONiC.{release}.1-abcdef1",
    }
    before |= {k.replace("__", "/"): v for k, v in facts.items()}
    setting = SafeValues("leaf").setting("qos/pfc_headroom_kb", kb)
    for patch in patch_steps("leaf", data, before, [setting], lookup):
        data = apply_json_patch(data, patch)
    return data


def spectrum_lookup() -> str:
    return (LOOKUP / "Mellanox-SN4700-O32.ini").read_text()


def test_the_lookup_table_is_read_by_its_header() -> None:
    """Columns come from the header comment; the SN5600's 400G 5m row is itself."""
    rows = parse_lookup((LOOKUP / "ACS-SN5600.ini").read_text())
    assert rows[("400000", "5m")] == {"size": 250880, "xon": 19456, "xoff": 231424, "threshold": 0}
    broadcom = parse_lookup((LOOKUP / "Nokia-IXR7220-H4-64D.ini").read_text())
    assert broadcom[("400000", "40m")]["xon_offset"] == 2288


def test_spectrum_without_shared_headroom_moves_size_with_xoff() -> None:
    """size - xoff (xon, plus any 8-lane overhead) stays what the platform made it."""
    data = unshared(running("static-202405"))
    old = dict(data["BUFFER_PROFILE"]["pg_lossless_100000_5m_profile"])
    new = write(data, 200, spectrum_lookup())["BUFFER_PROFILE"]["pg_lossless_100000_5m_profile"]
    assert int(new["xoff"]) == 200 * 1024
    assert int(new["size"]) - int(new["xoff"]) == int(old["size"]) - int(old["xoff"])
    assert new["xon"] == old["xon"]


def test_spectrum_with_a_shared_headroom_pool_writes_xoff_alone() -> None:
    """With a pool xoff, size is xon and the headroom comes from the pool."""
    data = running("static-202405")
    old = dict(data["BUFFER_PROFILE"]["pg_lossless_100000_5m_profile"])
    new = write(data, 200, spectrum_lookup())["BUFFER_PROFILE"]["pg_lossless_100000_5m_profile"]
    assert new == old | {"xoff": str(200 * 1024)}


def test_broadcom_writes_xoff_alone_per_cable_profile() -> None:
    """Each speed/cable profile gets the headroom; size (the guaranteed minimum) stays."""
    data = running("static-202205")  # Arista-7260CX3-C64: Tomahawk-2
    lookup = (LOOKUP / "Arista-7260CX3-C64.ini").read_text()
    after = write(data, 120, lookup, system__asic_type="broadcom")
    for name in ("pg_lossless_100000_5m_profile", "pg_lossless_100000_300m_profile"):
        assert after["BUFFER_PROFILE"][name] == data["BUFFER_PROFILE"][name] | {
            "xoff": str(120 * 1024)
        }


def test_headroom_below_what_the_platform_computes_for_a_cable_is_refused() -> None:
    """Tomahawk-2 computes 101088 bytes for 100G over 300 m: 80 KB would shrink it."""
    lookup = (LOOKUP / "Arista-7260CX3-C64.ini").read_text()
    with pytest.raises(ConfigRejected, match=r"below the 99 KB .* 100000 over 300m"):
        write(running("static-202205"), 80, lookup, system__asic_type="broadcom")


@pytest.mark.parametrize(
    ("lookup", "reason"),
    [(None, "could not be read"), ("# speed cable size xon xoff\n", "no row for speed 100000")],
)
def test_without_the_platforms_numbers_headroom_is_refused(lookup: str | None, reason: str) -> None:
    """No lookup table, or none for a speed and cable in use: nothing to check against."""
    with pytest.raises(ConfigRejected, match=reason):
        write(running("static-202405"), 200, lookup)


def test_an_unknown_sizing_rule_is_refused_at_stage() -> None:
    """A platform whose profile sizing plumb does not know gets no headroom written."""
    with pytest.raises(ConfigRejected, match="cisco-8000"):
        write(running("static-202405"), 200, spectrum_lookup(), system__asic_type="cisco-8000")


@settings(max_examples=40, deadline=None)
@given(kb=st.integers(74, 4096), shared=st.booleans())
def test_every_written_profile_is_consistent(kb: int, shared: bool) -> None:
    """For any headroom at or above the platform's: xoff is it on every lossless profile,
    and size keeps its relation to xoff (equal to xon with a shared pool, xon + xoff
    without), so parsing gives the headroom back."""
    data = running("static-202405") if shared else unshared(running("static-202405"))
    profile = data["BUFFER_PROFILE"]["pg_lossless_100000_5m_profile"]
    if not shared:
        profile["size"] = str(int(profile["xon"]) + int(profile["xoff"]))
    after = write(data, kb, spectrum_lookup())
    new = after["BUFFER_PROFILE"]["pg_lossless_100000_5m_profile"]
    expected_size = int(new["xon"]) + (0 if shared else int(new["xoff"]))
    if shared:
        expected_size = int(profile["size"])
    assert int(new["size"]) == expected_size
    assert parse_running(after)["qos/pfc_headroom_kb"] == kb
