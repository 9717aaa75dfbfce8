"""SONiC build versions in every form sonic-buildimage's ``sonic_get_version`` emits
(tags, branch builds, dirty builds, dated tags, Azure pipeline builds) give the branch;
anything else leaves that one field unknown and never fails the device."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reconciler.drivers.sonic_parse import parse_version
from reconciler.drivers.sonic_version import nos_version, release


@pytest.mark.parametrize(
    ("build", "branch"),
    [
        ("SONiC.202405.555101-6b1f2e5c4", "202405"),
        ("SONiC.master.612345-8e1d2f0a", "master"),
        ("SONiC.master.0-dirty-20231110.101010", "master"),
        ("SONiC.202405.0-dirty-20240612.093512", "202405"),
        ("SONiC.202012.01", "202012"),
        ("SONiC.202012.01-dirty-20210102.030405", "202012"),
        ("SONiC.M.20220531.01", "20220531"),
        ("SONiC.20220532.70", "20220532"),
        ("SONiC.master-20200712", "master"),
        ("SONiC.202006-20200712", "202006"),
        ("SONiC.release-1.1-7d94c0c28", "release-1.1"),
        ("SONiC.202305_fix_route_check.4-a1b2c3d", "202305_fix_route_check"),
        ("SONiC.201811.0-dirty", "201811"),
    ],
)
def test_every_build_form_gives_its_branch(build: str, branch: str) -> None:
    """Tagged, branch, dirty, dated and pipeline builds all name their branch."""
    assert nos_version(build) == branch


@pytest.mark.parametrize("build", ["", "SONiC.", "SONiC.a b c", "SONiC." + "x" * 80])
def test_an_unreadable_build_is_unknown(build: str) -> None:
    """What no form reads is None, not an error."""
    assert nos_version(build) is None


@pytest.mark.parametrize(
    ("branch", "found"),
    [("202405", "202405"), ("20220531", "202205"), ("master", "master"), ("release-1.1", None)],
)
def test_the_release_of_a_branch(branch: str, found: str | None) -> None:
    """Pipeline builds belong to the release of their year and month."""
    assert release(branch) == found


def test_show_version_without_a_readable_build_is_still_observed() -> None:
    """The HwSKU and ASIC are read even when the version line is missing or odd."""
    state = parse_version("Platform: x86_64-mlnx_msn2700-r0\nHwSKU: ACS-MSN2700\nASIC: mellanox\n")
    assert state["system/nos_version"] is None
    assert state["system/model"] == "ACS-MSN2700"
    assert state["system/asic_type"] == "mellanox"


@given(st.text(max_size=60))
def test_any_version_line_is_parsed_without_error(build: str) -> None:
    """No version string makes ``show version`` fail."""
    line = build.replace("\n", " ").replace("\r", " ")
    state = parse_version(f"SONiC Software Version: {line}\nHwSKU: ACS-MSN2700\n")
    assert state["system/nos_version"] is None or isinstance(state["system/nos_version"], str)


def test_no_install_is_planned_over_a_build_that_cannot_be_read() -> None:
    """An unreadable running build makes the NOS version inexpressible, not an upgrade."""
    from reconciler.drivers.sonic_caps import sonic_inexpressible

    observed = {"system/nos_build": "SONiC.a b c", "system/nos_version": None}
    assert "names no branch" in str(sonic_inexpressible("system/nos_version", observed))
    readable = {"system/nos_build": "SONiC.202405.1-abcdef1", "system/nos_version": "202405"}
    assert sonic_inexpressible("system/nos_version", readable) is None
