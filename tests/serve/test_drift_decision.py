"""Per owner pattern, drift is reported or corrected; correction waits for windows,
caps, pins and devices that are not blocked."""

from __future__ import annotations

from intent.serve import DriftRule, ServeConfig
from inventory.problems import Location
from reconciler.plan import DevicePlan, Held, Plan
from reconciler.settings import Change, Owned
from serve.corrections import UNOBSERVED_PEER, Blocked, restrict_desired
from serve.drift import decide_drift, mode_for
from serve.windows import WindowVerdict

QOS = Location("intent/qos.yaml", 4, 3)
MTU = Location("intent/mtu.yaml", 2, 5)
OPEN = WindowVerdict(True, "no allow window declared")
SHUT = WindowVerdict(False, "outside every allow window")


def _plan(refused: str | None = None, held: tuple[Held, ...] = ()) -> Plan:
    leaf0 = DevicePlan(
        "leaf-0",
        (
            Change("qos/ecn/3/kmin_kb", 100, 150, QOS),
            Change("interfaces/Ethernet1/mtu", 1500, 9214, MTU),
        ),
        held=held,
    )
    leaf1 = DevicePlan("leaf-1", (Change("qos/ecn/3/kmin_kb", 90, 150, QOS),))
    return Plan({"leaf-0": leaf0, "leaf-1": leaf1}, refused=refused)


def _config(**kw: object) -> ServeConfig:
    rules = (DriftRule(mode="correct", paths=("qos/*",)), DriftRule(mode="warn"))
    return ServeConfig.model_validate({"drift": rules, **kw})


def test_first_matching_rule_gives_the_mode_and_no_rule_means_warn() -> None:
    """Rules match on path, device and owning file, first match wins; default warn."""
    change = Change("qos/ecn/3/kmin_kb", 1, 2, QOS)
    rules = (
        DriftRule(mode="warn", owners=("intent/mtu.yaml",)),
        DriftRule(mode="correct", devices=("leaf-*",)),
    )
    assert mode_for(rules, "leaf-0", change) == "correct"
    assert mode_for(rules, "spine-0", change) == "warn"
    assert mode_for((), "leaf-0", change) == "warn"


def test_correct_fields_are_chosen_warn_fields_only_reported() -> None:
    """Inside a window, the qos fields are corrected and the MTU field reported."""
    decision = decide_drift(_plan(), _config(), OPEN)
    assert decision.correct == {
        "leaf-0": frozenset({"qos/ecn/3/kmin_kb"}),
        "leaf-1": frozenset({"qos/ecn/3/kmin_kb"}),
    }
    assert (decision.count("warn"), decision.count("correct")) == (1, 2)


def test_outside_a_window_nothing_is_corrected_and_the_reason_is_given() -> None:
    """Correct-mode drift waits for the window, saying so."""
    decision = decide_drift(_plan(), _config(), SHUT)
    assert decision.correct == {}
    assert {f.waiting for f in decision.fields if f.mode == "correct"} == {SHUT.reason}


def test_caps_limit_devices_per_pass() -> None:
    """max_devices_per_pass 1: the second device waits for the next pass."""
    decision = decide_drift(_plan(), _config(max_devices_per_pass=1), OPEN)
    assert list(decision.correct) == ["leaf-0"]
    waiting = [f for f in decision.fields if f.device == "leaf-1"]
    assert waiting[0].waiting == "cap: max_devices_per_pass 1"


def test_caps_limit_fields_per_pass() -> None:
    """max_fields_per_pass 1: one field in this pass."""
    decision = decide_drift(_plan(), _config(max_fields_per_pass=1), OPEN)
    assert decision.corrected_fields() == 1


def test_pinned_fields_are_never_corrected() -> None:
    """A field held by a pin is only reported."""
    held = (Held("leaf-0", "qos/ecn/3/kmin_kb", 100, "rolled back"),)
    pinned = decide_drift(_plan(held=held), _config(), OPEN)
    assert "leaf-0" not in pinned.correct


def test_a_refused_whole_plan_does_not_stop_correction_a_blocked_device_does() -> None:
    """The fleet's plan being refused leaves the choice alone (what is chosen is proved
    on its own); a blocked device is reported with its reason and takes no cap room."""
    refused = decide_drift(_plan(refused="no safe order"), _config(), OPEN)
    assert set(refused.correct) == {"leaf-0", "leaf-1"}
    block = Blocked(UNOBSERVED_PEER, "peer gone")
    decision = decide_drift(_plan(), _config(max_devices_per_pass=1), OPEN, {"leaf-0": block})
    assert list(decision.correct) == ["leaf-1"]
    assert decision.blocked == {"leaf-0": block}
    assert [f.waiting for f in decision.fields if f.device == "leaf-0" and f.mode == "correct"] == [
        "blocked: peer gone"
    ]


def test_restricted_desired_differs_from_observed_only_in_chosen_fields() -> None:
    """Fields not chosen take their observed value; unobserved unchosen ones are dropped."""
    desired = {"leaf-0": {"a": Owned(2, QOS), "b": Owned(3, QOS), "c": Owned(4, QOS)}}
    observed = {"leaf-0": {"a": 1, "b": 1}}
    narrowed = restrict_desired(desired, observed, {"leaf-0": frozenset({"a"})})
    assert {p: o.value for p, o in narrowed["leaf-0"].items()} == {"a": 2, "b": 1}
