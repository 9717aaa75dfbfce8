"""The pure parts of a review: violations matched by policy and subject, moved values
attributed to their owner at head, what counts as touched, the default rollout."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ci.review.blast import hosts_behind, port_of, touched_devices
from ci.review.intentdiff import rendered_delta, setting_changes
from ci.review.policydiff import policy_delta
from ci.review.rollout import default_spec
from intent.fleet import Fleet
from intent.models import Waiver
from inventory.problems import Location
from policies.engine import PolicyReport, Severity, Violation
from reconciler.render import render_desired
from tests.ci.gitfleet import line_of
from tests.fleetcopy import ORION, FleetCopy, copy_orion


def _violation(policy: str, subject: str, line: int) -> Violation:
    where = Location("intent/qos.yaml", line, 3)
    return Violation(policy, Severity.deny, subject, f"{subject} is wrong", (where,), (subject,))


@pytest.fixture(scope="module")
def base() -> Fleet:
    """ORION as shipped (read-only)."""
    return FleetCopy(ORION).load()


def _head(tmp_path: Path, edit: str, old: str, new: str) -> Fleet:
    copy = copy_orion(tmp_path)
    copy.replace(edit, old, new)
    return copy.load()


def test_violations_match_by_policy_and_subject_not_line() -> None:
    """A violation that moved lines is the same violation; new subjects are introduced."""
    before = PolicyReport((), (_violation("qos.ecn-order", "leaf-r1", 10),))
    after = PolicyReport(
        (), (_violation("qos.ecn-order", "leaf-r1", 14), _violation("qos.ecn-order", "leaf-r2", 14))
    )
    delta = policy_delta(before, after)
    assert [v.subject for v in delta.introduced] == ["leaf-r2"]
    assert [v.subject for v in delta.remaining] == ["leaf-r1"]
    assert delta.fixed == ()


def test_a_newly_waived_violation_is_not_fixed() -> None:
    """Waiving a violation moves it aside; it does not count as fixed."""
    found = _violation("qos.headroom-port", "leaf-r3:Ethernet7", 5)
    waiver = Waiver(
        policy="qos.headroom-port", subject="leaf-r3:*", reason="re-cable", expires=date(2030, 1, 1)
    )
    after = PolicyReport((), (), (Violation(**{**found.__dict__, "waiver": waiver}),))
    assert policy_delta(PolicyReport((), (found,)), after).fixed == ()
    assert policy_delta(PolicyReport((), (found,)), PolicyReport((), ())).fixed == (found,)


def test_a_value_moved_to_another_scope_unchanged_is_no_change(base: Fleet, tmp_path: Path) -> None:
    """Effective values are compared: restating the same bundle per device moves nothing."""
    copy = copy_orion(tmp_path)
    copy.set_device_overrides("  gpu-n01: {firmware: {bundle: hx8-2026.09}}\n")
    assert setting_changes(base, copy.load()) == ()


def test_a_moved_value_is_attributed_to_its_owner_at_head(base: Fleet, tmp_path: Path) -> None:
    """A group's new value is one change at the group's line, on every device it selects."""
    head = _head(tmp_path, "intent/groups.yaml", "bundle: eos-4.32.2F", "bundle: eos-4.31.2F")
    [change] = setting_changes(base, head)
    eos = sorted(n for n, d in head.devices.items() if d.platform.value == "eos")
    assert (change.setting, change.before, change.after) == (
        "firmware.bundle",
        "eos-4.32.2F",
        "eos-4.31.2F",
    )
    assert change.location is not None and change.location.file == "intent/groups.yaml"
    assert change.location.line == line_of(ORION / "intent/groups.yaml", "eos-4.32.2F")
    assert list(change.devices) == eos


def test_a_value_touches_only_the_devices_it_renders_on(base: Fleet, tmp_path: Path) -> None:
    """The host MTU is set on every device but renders on GPU nodes only: no switch is
    touched. A setting that renders nowhere touches every device it moves on."""
    head = _head(tmp_path, "intent/mtu.yaml", "host: 9000 ", "host: 8000 ")
    moved = rendered_delta(render_desired(base), render_desired(head))
    settings = setting_changes(base, head)
    touched = touched_devices(head, settings, moved)
    assert {head.devices[n].role.value for n in touched} == {"gpu-node"}
    assert len(touched) == 32
    assert len({d for c in settings for d in c.devices}) == len(head.devices)


def test_ports_may_contain_slashes() -> None:
    assert port_of("interfaces/Ethernet1/1/mtu") == "Ethernet1/1"
    assert port_of("nics/eth0/rdma_mtu") == "eth0"
    assert port_of("qos/dscp/26") is None
    assert port_of("bgp/neighbors/10.0.0.1/remote_as") is None


def test_default_spec_scales_its_wave_cap_with_the_fleet(base: Fleet) -> None:
    """One eighth of the fleet per wave (at least 2); drain as the change requires."""
    spec = default_spec(base, drain=True)
    assert spec.caps.per_wave == 6 and spec.caps.per_rack == 2 and spec.caps.per_dp_replica == 1
    assert spec.drain and spec.bake.fixed_minutes == 60.0
    assert not default_spec(base, drain=False).drain


def test_a_lossless_change_drains_the_nodes_behind_each_device(base: Fleet) -> None:
    """A leaf drains its nodes, a spine every node behind its leaves; the frontend switch
    carries no lossless link and drains nothing."""
    nodes = {n for n, d in base.devices.items() if d.role.value == "gpu-node"}
    assert hosts_behind(base, ["leaf-r0"]) == nodes  # rail 0 of every node
    assert hosts_behind(base, ["spine-1"]) == nodes
    assert hosts_behind(base, ["gpu-n07"]) == {"gpu-n07"}
    assert hosts_behind(base, ["fe-1"]) == set()


@given(
    st.lists(st.tuples(st.sampled_from("ab"), st.sampled_from("xyz"), st.integers(1, 9))),
    st.lists(st.tuples(st.sampled_from("ab"), st.sampled_from("xyz"), st.integers(1, 9))),
)
def test_policy_delta_partitions_head_and_never_depends_on_lines(
    before: list[tuple[str, str, int]], after: list[tuple[str, str, int]]
) -> None:
    """Head's violations are exactly introduced + remaining; fixed ones are base's with no
    head match; moving every line changes nothing."""
    base = PolicyReport((), tuple(_violation(p, s, n) for p, s, n in before))
    head = PolicyReport((), tuple(_violation(p, s, n) for p, s, n in after))
    delta = policy_delta(base, head)
    assert sorted(delta.introduced + delta.remaining, key=repr) == sorted(head.violations, key=repr)
    head_keys = {(v.policy, v.subject) for v in head.violations}
    assert all((v.policy, v.subject) not in head_keys for v in delta.fixed)
    moved = PolicyReport((), tuple(_violation(p, s, n + 40) for p, s, n in after))
    assert len(policy_delta(base, moved).introduced) == len(delta.introduced)
