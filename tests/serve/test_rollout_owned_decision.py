"""One writer per field: drift on a field an active rollout or a queued approval owns is
reported as owned by it and never chosen for correction, whatever the drift rules
say; the rest of the fleet is corrected as before."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from intent.serve import DriftRule, ServeConfig
from inventory.problems import Location
from reconciler.plan import DevicePlan, Plan
from reconciler.settings import Change
from serve.drift import decide_drift
from serve.windows import WindowVerdict
from service.owned import CARRIED, QUEUED, TARGET, Claim, Owner, Ownership

GROUPS = Location("intent/groups.yaml", 7, 10)
QOS = Location("intent/qos.yaml", 4, 3)
OPEN = WindowVerdict(True, "no allow window declared")
BIOS, NIC, KMIN = "firmware/bios", "firmware/nic", "qos/ecn/3/kmin_kb"
CORRECT_ALL = ServeConfig.model_validate({"drift": (DriftRule(mode="correct"),)})


def _plan() -> Plan:
    """Three nodes whose firmware intent changed in one commit, one also drifted on QoS."""
    return Plan(
        {
            "gpu-0": DevicePlan("gpu-0", (Change(BIOS, "1.0", "2.0", GROUPS),)),
            "gpu-1": DevicePlan(
                "gpu-1", (Change(BIOS, "1.0", "2.0", GROUPS), Change(KMIN, 90, 150, QOS))
            ),
            "gpu-2": DevicePlan("gpu-2", (Change(NIC, "7", "8", GROUPS),)),
        }
    )


def test_a_rollout_owns_its_targets_paths_and_the_same_change_elsewhere() -> None:
    """Its targets' recorded paths are `target`; the same path on a device outside its
    targets is `carried`; other paths are nobody's."""
    owned = Ownership((Claim("fw-1", {"gpu-0": frozenset({BIOS})}),))
    assert owned.owner("gpu-0", BIOS) == Owner("fw-1", TARGET)
    assert owned.owner("gpu-1", BIOS) == Owner("fw-1", CARRIED)
    assert owned.owner("gpu-1", KMIN) is None
    assert owned.owner("gpu-2", NIC) is None


def test_a_queued_approval_owns_what_its_spec_selects_and_carries() -> None:
    """The paths matching its globs on any device (the change it will carry); without
    globs, every path of the devices it selects."""
    queued = Claim("fw (approval 2)", selected=frozenset({"gpu-2"}), globs=("firmware/*",))
    narrow = Ownership((queued,))
    assert narrow.owner("gpu-2", NIC) == Owner("fw (approval 2)", QUEUED)
    assert narrow.owner("gpu-2", KMIN) is None
    assert narrow.owner("gpu-0", BIOS) == Owner("fw (approval 2)", QUEUED)
    every = Ownership((Claim("all (approval 3)", selected=frozenset({"gpu-1"})),))
    assert every.owner("gpu-1", KMIN) == Owner("all (approval 3)", QUEUED)
    assert every.owner("gpu-0", BIOS) is None


def test_the_first_claim_wins() -> None:
    """An active rollout listed first owns a field a queued approval also selects."""
    owned = Ownership(
        (
            Claim("fw-1", {"gpu-0": frozenset({BIOS})}),
            Claim("fw (approval 2)", selected=frozenset({"gpu-0", "gpu-1"})),
        )
    )
    assert owned.owner("gpu-0", BIOS) == Owner("fw-1", TARGET)
    assert owned.owner("gpu-1", BIOS) == Owner("fw-1", CARRIED)
    assert owned.owner("gpu-1", KMIN) == Owner("fw (approval 2)", QUEUED)


def test_owned_drift_is_reported_never_corrected() -> None:
    """Under a `correct` rule for every field, the rollout's fields (its target and the
    same change on another node) are reported as its own; the QoS drift is corrected."""
    owned = Ownership((Claim("fw-1", {"gpu-0": frozenset({BIOS})}),))
    decision = decide_drift(_plan(), CORRECT_ALL, OPEN, None, owned)
    assert decision.correct == {"gpu-1": frozenset({KMIN}), "gpu-2": frozenset({NIC})}
    assert decision.owned() == {"fw-1": {"gpu-0": [BIOS], "gpu-1": [BIOS]}}
    mine = {(f.device, f.path): f for f in decision.fields if f.rollout}
    assert mine[("gpu-0", BIOS)].waiting == "owned by rollout fw-1 (a target)"
    assert mine[("gpu-1", BIOS)].waiting == "owned by rollout fw-1 (the change it carries)"
    assert all(f.mode == "correct" for f in mine.values())  # the rule's mode is still shown


def test_owned_fields_take_no_room_in_the_caps() -> None:
    """With room for one device, the one chosen is one the rollout does not own."""
    config = ServeConfig.model_validate(
        {"drift": (DriftRule(mode="correct"),), "max_devices_per_pass": 1}
    )
    owned = Ownership((Claim("fw-1", {"gpu-0": frozenset({BIOS})}),))
    decision = decide_drift(_plan(), config, OPEN, None, owned)
    assert decision.correct == {"gpu-1": frozenset({KMIN})}


def test_without_a_rollout_everything_under_a_correct_rule_is_corrected() -> None:
    """No claim: nothing is owned (the gap closed above is real)."""
    decision = decide_drift(_plan(), CORRECT_ALL, OPEN)
    assert decision.owned() == {}
    assert decision.corrected_fields() == 4


@given(
    st.dictionaries(
        st.sampled_from(["gpu-0", "gpu-1", "gpu-2"]),
        st.frozensets(st.sampled_from([BIOS, NIC, KMIN])),
    ),
    st.frozensets(st.sampled_from(["gpu-0", "gpu-1", "gpu-2"])),
)
def test_no_field_is_both_owned_and_corrected(
    targets: dict[str, frozenset[str]], selected: frozenset[str]
) -> None:
    """Whatever the claims, every drifted field has at most one writer, and every
    field left unowned under a `correct` rule is corrected."""
    owned = Ownership((Claim("r-1", targets), Claim("q (approval 9)", selected=selected)))
    decision = decide_drift(_plan(), CORRECT_ALL, OPEN, None, owned)
    for f in decision.fields:
        corrected = f.path in decision.correct.get(f.device, frozenset())
        assert corrected != (f.rollout is not None)
        assert f.rollout == (o.rollout if (o := owned.owner(f.device, f.path)) else None)
