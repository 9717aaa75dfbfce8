"""One conformance suite for every driver: observe, plan, apply, re-plan empty,
dry-run writes nothing, timeout gives unknown."""

from __future__ import annotations

from reconciler.drivers.base import Outcome
from reconciler.errors import DeviceError, OutcomeUnknown
from reconciler.loop import _settle_unknown
from reconciler.settings import Scalar, diff
from tests.conformance.harness import Harness

SCALARS = (str, int, float, bool, type(None))


def test_observe_returns_a_flat_state_of_scalars(harness: Harness) -> None:
    """observe() gives path -> scalar for every device, covering the desired paths."""
    for ref in harness.refs():
        state = harness.driver.observe(ref)
        assert state, f"{harness.name}: {ref.name} observed nothing"
        assert all(isinstance(k, str) and isinstance(v, SCALARS) for k, v in state.items())
        missing = set(harness.desired(ref)) - set(state)
        assert not missing, f"{ref.name}: desired paths not observable: {sorted(missing)[:5]}"


def test_plan_apply_then_replan_is_empty(harness: Harness) -> None:
    """Applying the diff makes a second diff empty: the driver converges in one pass."""
    for ref in harness.refs():
        desired = harness.desired(ref)
        changes = diff(desired, harness.driver.observe(ref))
        assert changes, f"{harness.name}: {ref.name} starts at its intent; nothing to test"
        result = harness.driver.apply(ref, changes, dry_run=False, confirm_within=30.0)
        assert result.outcome is Outcome.applied, result.error
        assert diff(desired, harness.driver.observe(ref)) == []


def test_apply_with_nothing_to_do_is_unchanged(harness: Harness) -> None:
    """An empty change list is 'unchanged' and writes nothing."""
    ref = harness.refs()[0]
    before = harness.write_count(ref)
    assert harness.driver.apply(ref, [], dry_run=False).outcome is Outcome.unchanged
    assert harness.write_count(ref) == before


def test_dry_run_writes_nothing(harness: Harness) -> None:
    """dry_run stages and compares only: planned, no write, state unchanged."""
    ref = harness.refs()[0]
    before_state = harness.driver.observe(ref)
    before_writes = harness.write_count(ref)
    changes = diff(harness.desired(ref), before_state)
    result = harness.driver.apply(ref, changes, dry_run=True)
    assert result.outcome is Outcome.planned
    assert harness.write_count(ref) == before_writes
    assert harness.driver.observe(ref) == before_state


def test_timeout_then_unreachable_is_unknown(harness: Harness) -> None:
    """A commit that times out and a device that then cannot be observed is 'unknown'."""
    ref = harness.refs()[0]
    changes = diff(harness.desired(ref), harness.driver.observe(ref))
    harness.time_out_next_commit(ref)
    try:
        harness.driver.apply(ref, changes, dry_run=False)
        raise AssertionError("the injected timeout did not surface")
    except OutcomeUnknown as exc:
        harness.make_unreachable(ref)
        outcome, message = _settle_unknown(harness.driver, ref, changes, exc, None)
    finally:
        harness.clear_faults(ref)
    assert outcome is Outcome.unknown, message


def test_timeout_is_settled_by_observing_again(harness: Harness) -> None:
    """After a timeout the device is observed again and the outcome decided from it."""
    ref = harness.refs()[0]
    desired = harness.desired(ref)
    changes = diff(desired, harness.driver.observe(ref))
    harness.time_out_next_commit(ref)
    try:
        harness.driver.apply(ref, changes, dry_run=False)
        raise AssertionError("the injected timeout did not surface")
    except DeviceError as exc:
        assert isinstance(exc, OutcomeUnknown)
        outcome, _ = _settle_unknown(harness.driver, ref, changes, exc, None)
    finally:
        harness.clear_faults(ref)
    state: dict[str, Scalar] = harness.driver.observe(ref)
    landed = all(state.get(c.path) == c.after for c in changes)
    assert outcome is (Outcome.applied if landed else Outcome.failed)
