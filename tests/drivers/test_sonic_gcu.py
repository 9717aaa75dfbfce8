"""The generic config updater's field-operation rules as sonic-utilities ships them per
release (``reconciler/drivers/gcu_rules``), applied with the upstream matching: Spectrum
HwSKUs by exact name from the families the branch's code reads, Broadcom by contained
name, Cisco 8000 by ``asic_type``; path elements holding digits dropped (rdma
validator) or the last element alone (WRED 202505, buffer profiles from 202511); ECN on
``AZURE_LOSSLESS`` through 202411, any profile in 202505, unguarded from 202511."""

from __future__ import annotations

import json
from typing import Any

import pytest

from reconciler.drivers import sonic_gcu
from reconciler.drivers.sonic_caps import ecn_ops, sonic_inexpressible
from reconciler.drivers.sonic_gcu import asic_name, refusal, rules_for
from reconciler.settings import Scalar

COMMUNITY = "SONiC.202405.12345-abcdef1"


def rules(release: str) -> sonic_gcu.Rules:
    found = rules_for(release)
    assert found is not None
    return found


def test_every_shipped_rule_file_names_its_source_and_licence() -> None:
    """Each release's file is upstream's (parsed as JSON), with commit and Apache-2.0."""
    sources = sonic_gcu.sources()
    assert sources["licence"] == "Apache-2.0"
    for name, entry in sources["releases"].items():
        assert len(entry["commit"]) == 40 and len(entry["code_commit"]) == 40
        conf = json.loads((sonic_gcu.DATA / entry["file"]).read_text())
        assert "rdma_config_update_validator" in conf["helper_data"], name


@pytest.mark.parametrize(
    ("release", "hwsku", "asic_type", "family"),
    [
        ("202405", "ACS-MSN2700", "mellanox", "spc1"),
        ("202405", "Mellanox-SN4700-A96C8V8", "mellanox", "spc3"),
        ("202405", "mellanox-sn4700-o32", "mellanox", "spc3"),
        ("202405", "Mellanox-SN4700-O32-X", "mellanox", "unknown"),
        ("202405", "Arista-7060X6-64PE", "broadcom", "unknown"),
        ("202411", "Arista-7060X6-64PE", "broadcom", "th5"),
        ("202411", "Arista-7060X6-64PE-C256S2", "broadcom", "th5"),
        ("202405", "Arista-7060CX-32S-C32-T1", "broadcom", "th"),
        ("202411", "ACS-SN5640", "mellanox", "unknown"),
        ("202505", "ACS-SN5640", "mellanox", "spc5"),
        ("202405", "Cisco-8102-C64", "cisco-8000", "cisco-8000"),
        ("202405", "ACS-MSN2700", "broadcom", "unknown"),
        ("202405", "DS5000", "barefoot", "unknown"),
    ],
)
def test_asic_matching_is_upstreams(release: str, hwsku: str, asic_type: str, family: str) -> None:
    """Spectrum exact and only in the families the branch's code reads (spc5 from
    202505), Broadcom contained, Cisco 8000 by ASIC type, anything else unknown."""
    assert asic_name(rules(release), hwsku, asic_type) == family


def _ecn(release: str, profile: str, hwsku: str, build: str = COMMUNITY) -> str | None:
    asic = "mellanox" if "SN" in hwsku else "broadcom"
    return refusal(rules(release), ecn_ops(profile), hwsku, asic, build)


@pytest.mark.parametrize(
    ("release", "profile", "refused"),
    [
        ("202405", "AZURE_LOSSLESS", False),
        ("202405", "ROCE_Q3", True),
        ("202411", "ROCE_Q3", True),
        ("202505", "ROCE_Q3", False),
        ("202511", "ROCE_Q3", False),
        ("master", "ROCE_Q3", False),
    ],
)
def test_ecn_on_which_profile_by_release(release: str, profile: str, refused: bool) -> None:
    """AZURE_LOSSLESS's green fields through 202411; any profile's in 202505; no WRED
    validator from 202511."""
    assert (_ecn(release, profile, "ACS-SN5600") is not None) is refused


def test_a_new_wred_profile_is_refused_until_the_validator_is_gone() -> None:
    """Adding a profile is an 'add' no ECN scenario allows; from 202511 nothing guards it."""
    add = [{"op": "add", "path": "/WRED_PROFILE/ROCE_Q3", "value": {"ecn": "ecn_all"}}]
    assert refusal(rules("202505"), add, "ACS-SN5600", "mellanox", COMMUNITY)
    assert refusal(rules("202511"), add, "ACS-SN5600", "mellanox", COMMUNITY) is None


def test_pipeline_builds_are_version_checked_and_community_builds_are_not() -> None:
    """spc4 ECN tuning is listed from 20221100: an older eight-digit build is refused."""
    assert _ecn("202205", "AZURE_LOSSLESS", "ACS-SN5600", "SONiC.20220531.45")
    assert _ecn("202205", "AZURE_LOSSLESS", "ACS-SN5600", "SONiC.20221131.45") is None
    assert _ecn("202205", "AZURE_LOSSLESS", "ACS-SN5600", "SONiC.202205.7-abcdef1") is None


@pytest.mark.parametrize(
    ("path", "release", "refused"),
    [
        ("/BUFFER_PROFILE/pg_lossless_400000_5m_profile/xoff", "202405", False),
        ("/BUFFER_PROFILE/pg_lossless_400000_5m_profile/size", "202405", True),
        ("/BUFFER_PROFILE/ingress_lossless_profile/xoff", "202405", True),
        ("/BUFFER_PROFILE/ingress_lossless_profile/xoff", "202511", False),
        ("/BUFFER_PROFILE/pg_lossless_400000_5m_profile/size", "202511", True),
    ],
)
def test_buffer_profile_fields(path: str, release: str, refused: bool) -> None:
    """Elements with digits are dropped (the profile name of a per-speed profile), so
    only ``xoff`` matches through 202505; from 202511 the last element alone counts."""
    ops = [{"op": "replace", "path": path, "value": "1"}]
    found = refusal(rules(release), ops, "ACS-SN5600", "mellanox", COMMUNITY)
    assert (found is not None) is refused


def test_a_whole_buffer_profile_may_be_added_from_202511() -> None:
    """buffer_profile_config_update_validator lets object-level operations through."""
    add = [{"op": "add", "path": "/BUFFER_PROFILE/pg_new", "value": {"xoff": "1", "size": "2"}}]
    assert refusal(rules("202505"), add, "ACS-SN5600", "mellanox", COMMUNITY)
    assert refusal(rules("202511"), add, "ACS-SN5600", "mellanox", COMMUNITY) is None


def test_trident2_headroom_is_never_allowed() -> None:
    """An empty release in the platform list refuses whatever the build."""
    ops = [{"op": "replace", "path": "/BUFFER_PROFILE/pg_lossless_40000_5m_profile/xoff"}]
    assert "does not list" in str(refusal(rules("202405"), ops, "Force10-S6000", "broadcom", ""))


@pytest.mark.parametrize(
    ("release", "kind"),
    [
        ("202211", "unguarded"),
        ("202106", "unguarded"),
        ("202012", "no apply-patch"),
        ("202611", "master"),
        ("202405", "202405"),
        ("release-1.1", None),
        (None, None),
    ],
)
def test_which_rules_a_release_runs(release: str | None, kind: str | None) -> None:
    """202106-202211 have apply-patch without field validators, older releases none; a
    release newer than every shipped branch takes master's; an unknown one none."""
    found = rules_for(release)
    if kind is None:
        assert found is None
        return
    assert found is not None
    if kind == "unguarded":
        assert found.conf is None and sonic_gcu.writable(found)
    elif kind == "no apply-patch":
        assert not sonic_gcu.writable(found)
    else:
        assert found.release == kind


def observed(**facts: Any) -> dict[str, Scalar]:
    base: dict[str, Scalar] = {
        "system/nos_version": "202411",
        "system/nos_build": "SONiC.202411.77-1a2b3c4",
        "system/buffer_model": "static",
    }
    return base | {k.replace("__", "/"): v for k, v in facts.items()}


def test_ecn_on_a_tomahawk5_ai_leaf_follows_the_release_file() -> None:
    """Arista-7060X6-64PE is listed from 202411: ECN is expressible there, not on 202405."""
    leaf = observed(system__model="Arista-7060X6-64PE", system__asic_type="broadcom")
    assert sonic_inexpressible("qos/ecn/3/kmin_kb", leaf) is None
    older = leaf | {"system/nos_version": "202405", "system/nos_build": COMMUNITY}
    reason = sonic_inexpressible("qos/ecn/3/kmin_kb", older)
    assert reason is not None and "Arista-7060X6-64PE" in reason and "202405" in reason


def test_ecn_on_a_non_azure_profile_is_refused_with_the_updaters_reason() -> None:
    """Through 202411 the ECN scenario names azure_lossless's fields."""
    leaf = observed(system__model="ACS-SN5600", system__asic_type="mellanox")
    leaf["qos/ecn/3/wred_profile"] = "ROCE"
    assert "azure_lossless/green_min_threshold" in str(
        sonic_inexpressible("qos/ecn/3/kmin_kb", leaf)
    )


@pytest.mark.parametrize(
    ("facts", "refused"),
    [
        ({"system/asic_type": "mellanox", "qos/shared_headroom_pool": False}, "size"),
        ({"system/asic_type": "mellanox", "qos/shared_headroom_pool": True}, None),
        ({"system/asic_type": "cisco-8000"}, "sized only on broadcom and mellanox"),
        ({"system/asic_type": "mellanox", "system/buffer_model": "dynamic"}, "buffermgrd"),
    ],
)
def test_headroom_is_written_only_as_a_consistent_profile(
    facts: dict[str, Scalar], refused: str | None
) -> None:
    """Without a shared headroom pool a Spectrum profile's size must move with xoff,
    which the updater does not allow; other platforms' sizing is not known."""
    leaf = observed(system__model="ACS-SN5600") | facts
    leaf["qos/pfc_headroom_profiles"] = "pg_lossless_400000_5m_profile"
    reason = sonic_inexpressible("qos/pfc_headroom_kb", leaf)
    if refused is None:
        assert reason is None
    else:
        assert reason is not None and refused in reason
