"""The policy engine: registration, engine errors, exit codes and waivers."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from intent.fleet import Fleet
from policies.engine import (
    BUILTIN,
    Check,
    EngineError,
    Finding,
    Policy,
    PolicyReport,
    Registry,
    Severity,
    evaluate,
    policy,
    registering_into,
)
from tests.fleetcopy import TODAY, FleetCopy
from tests.policies.support import at, flagged, only, primary, subjects

BUILTIN_IDS = {
    "mtu.defined",
    "mtu.host-fits-port",
    "mtu.rdma-fits-host",
    "mtu.fabric-ends-equal",
    "mtu.platform-range",
    "qos.pfc-exactly-roce",
    "qos.lossless-path-agrees",
    "qos.dscp-roce-mapped",
    "qos.ecn-order",
    "qos.headroom-port",
    "qos.headroom-buffer",
    "qos.lossless-path-classes",
    "qos.lossless-priority-reached",
    "bgp.asn-defined",
    "bgp.spine-asn-shared",
    "bgp.super-spine-asn",
    "bgp.leaf-asn-unique",
    "bgp.asn-private",
    "bgp.remote-as-match",
    "bgp.maximum-paths",
    "bgp.inbound-filter",
    "bgp.router-id-unique",
    "bgp.p2p-31",
    "bgp.peering-agree",
    "firmware.bundle-validated",
    "firmware.blocked",
    "firmware.gang-uniform",
    "cabling.class-fits-roles",
    "cabling.rail-match",
    "cabling.same-pod",
    "addressing.unique",
}
WAIVERS_FILE = "policies/waivers.yaml"
N07_CABLE = "{a: gpu-n07, a_port: eth3, b: leaf-r3, b_port: Ethernet7, class: host-leaf, "


def _long_cable(orion: FleetCopy) -> None:
    """A 120 m cable on leaf-r3:Ethernet7: a headroom-port violation to waive."""
    orion.replace(
        "inventory/links/backend.yaml", N07_CABLE + "length_m: 3.0}", N07_CABLE + "length_m: 120.0}"
    )


def _waivers(orion: FleetCopy, *entries: tuple[str, str, str]) -> None:
    """Write policies/waivers.yaml with (policy, subject, expires) entries."""
    body = "".join(
        f'  - policy: {pol}\n    subject: "{subject}"\n'
        f"    reason: re-cable in ticket NET-4411\n    expires: {expires}\n"
        for pol, subject, expires in entries
    )
    orion.write(WAIVERS_FILE, "waivers:\n" + body)


def _registry(*checks: tuple[str, str, Check]) -> Registry:
    """A fresh registry holding (id, severity, check) test policies.

    Built with ``Registry.add`` so each test states its policies directly.
    """
    registry = Registry()
    for policy_id, severity, check in checks:
        registry.add(
            Policy(
                policy_id,
                Severity(severity),
                f"test policy {policy_id}",
                "exercises the engine",
                "none",
                check,
            )
        )
    return registry


def _raises(fleet: Fleet) -> Iterator[Finding]:
    raise KeyError("leaf-r9")


def _finds_then_raises(fleet: Fleet) -> Iterator[Finding]:
    yield Finding("leaf-r0", "first finding")
    raise ValueError("second device unreadable")


def _always_finds(fleet: Fleet) -> Iterator[Finding]:
    yield Finding("leaf-r0", "always wrong", (fleet.where.devices["leaf-r0"],), ("leaf-r0",))


class TestRegistry:
    def test_every_builtin_policy_is_registered_as_deny(self) -> None:
        """The built-in registry holds exactly the 28 documented policies, all deny."""
        assert {p.id for p in BUILTIN} == BUILTIN_IDS
        assert all(p.severity is Severity.deny for p in BUILTIN)
        assert all(p.title and p.rationale and p.remediation for p in BUILTIN)

    def test_registering_into_a_fresh_registry_leaves_the_builtins_alone(self) -> None:
        """A policy declared under registering_into lands only in the given, empty registry."""
        registry = Registry()
        try:
            with registering_into(registry):
                policy(
                    "test.fresh",
                    title="test policy",
                    rationale="exercises registration",
                    remediation="none",
                )(_always_finds)
            leaked = "test.fresh" in BUILTIN.policies
        finally:
            BUILTIN.policies.pop("test.fresh", None)  # never leave a test policy behind
        assert [p.id for p in registry] == ["test.fresh"]
        assert not leaked

    def test_an_id_registered_twice_is_refused(self) -> None:
        """Two policies with one id are an error, not a silent replacement."""
        with pytest.raises(ValueError, match=r"policy test\.twice is registered twice"):
            _registry(("test.twice", "deny", _always_finds), ("test.twice", "warn", _raises))


class TestEngineErrors:
    def test_policy_that_raises_is_an_engine_error_with_exit_code_2(self, orion: FleetCopy) -> None:
        """A broken policy is reported as an engine error, never as a pass."""
        registry = _registry(("test.broken", "deny", _raises))
        report = evaluate(orion.load(), list(registry), today=TODAY)
        assert report.errors == (EngineError("test.broken", "KeyError: 'leaf-r9'"),)
        assert report.violations == ()
        assert report.exit_code() == 2

    def test_findings_before_the_exception_are_dropped(self, orion: FleetCopy) -> None:
        """A policy that fails midway reports the error and none of its partial findings."""
        registry = _registry(("test.midway", "deny", _finds_then_raises))
        report = evaluate(orion.load(), list(registry), today=TODAY)
        assert report.errors == (
            EngineError("test.midway", "ValueError: second device unreadable"),
        )
        assert report.violations == ()

    def test_engine_error_outranks_denies_and_other_policies_still_run(
        self, orion: FleetCopy
    ) -> None:
        """With one broken and one denying policy, both are reported and the exit code is 2."""
        registry = _registry(("test.broken", "deny", _raises), ("test.deny", "deny", _always_finds))
        report = evaluate(orion.load(), list(registry), today=TODAY)
        assert [e.policy for e in report.errors] == ["test.broken"]
        violation = only(report, "test.deny")
        assert violation.message == "always wrong"
        assert primary(violation) == at(orion, "inventory/devices/leaves.yaml", "name: leaf-r0")
        assert report.exit_code() == 2


class TestExitCodes:
    def test_clean_orion_exits_0(self, clean_report: PolicyReport) -> None:
        """The unchanged ORION fleet has no violation, no waiver and no engine error."""
        assert clean_report.violations == ()
        assert clean_report.waived == ()
        assert clean_report.errors == ()
        assert clean_report.exit_code() == 0

    def test_warning_alone_exits_0(self, orion: FleetCopy) -> None:
        """A warn-severity violation is reported but does not fail the run."""
        report = evaluate(
            orion.load(), list(_registry(("test.warn", "warn", _always_finds))), today=TODAY
        )
        assert [v.policy for v in report.warnings()] == ["test.warn"]
        assert report.denies() == []
        assert report.exit_code() == 0

    def test_deny_exits_1(self, orion: FleetCopy) -> None:
        """A single active deny fails the run with exit code 1."""
        report = evaluate(
            orion.load(), list(_registry(("test.deny", "deny", _always_finds))), today=TODAY
        )
        assert report.exit_code() == 1


class TestWaivers:
    @pytest.mark.parametrize("expires", ["2027-01-15", str(TODAY)])
    def test_waiver_in_force_moves_the_violation_to_waived(
        self, orion: FleetCopy, expires: str
    ) -> None:
        """A waiver expiring later, or today, waives the matching violation."""
        _long_cable(orion)
        _waivers(orion, ("qos.headroom-port", "leaf-r3:Ethernet7", expires))
        report = orion.evaluate()
        assert flagged(report, "qos.headroom-port") == []
        (waived,) = report.waived
        assert (waived.policy, waived.subject) == ("qos.headroom-port", "leaf-r3:Ethernet7")
        assert waived.waiver is not None
        assert waived.waiver.reason == "re-cable in ticket NET-4411"
        assert str(waived.waiver.expires) == expires
        assert report.exit_code() == 0

    def test_expired_waiver_is_a_deny_at_its_own_line(self, orion: FleetCopy) -> None:
        """An expired waiver waives nothing and is itself flagged at the waiver's line."""
        _long_cable(orion)
        _waivers(
            orion,
            ("qos.headroom-port", "leaf-r0:*", "2027-01-15"),
            ("qos.headroom-port", "leaf-r3:Ethernet7", "2026-11-30"),
        )
        report = orion.evaluate()
        expired = only(report, "waiver.expired")
        assert expired.severity is Severity.deny
        assert expired.subject == "qos.headroom-port:leaf-r3:Ethernet7"
        assert expired.message == (
            "waiver for qos.headroom-port on leaf-r3:Ethernet7 expired on 2026-11-30 "
            "(re-cable in ticket NET-4411)"
        )
        lines = (orion.path / WAIVERS_FILE).read_text().splitlines()
        second = [n for n, line in enumerate(lines, start=1) if "- policy:" in line][1]
        assert primary(expired) == (WAIVERS_FILE, second)
        assert subjects(report, "qos.headroom-port") == {"leaf-r3:Ethernet7"}
        assert report.waived == ()
        assert report.exit_code() == 1

    def test_waiver_for_another_policy_does_not_apply(self, orion: FleetCopy) -> None:
        """A waiver names a policy: the same subject under another policy stays active."""
        _long_cable(orion)
        _waivers(orion, ("qos.headroom-buffer", "leaf-r3:Ethernet7", "2027-01-15"))
        report = orion.evaluate()
        assert subjects(report, "qos.headroom-port") == {"leaf-r3:Ethernet7"}
        assert report.waived == ()

    @pytest.mark.parametrize(
        ("glob", "selects"),
        [
            ("leaf-r3:*", lambda s: s.startswith("leaf-r3:")),
            ("leaf-r3:Ethernet4?", lambda s: s in {f"leaf-r3:Ethernet{p}" for p in range(40, 50)}),
            ("leaf-r3:Ethernet41", lambda s: s == "leaf-r3:Ethernet41"),
            ("spine-[12]:*", lambda s: s.startswith(("spine-1:", "spine-2:"))),
            ("LEAF-R3:*", lambda s: False),
        ],
    )
    def test_subject_glob_waives_exactly_what_it_matches(
        self, orion: FleetCopy, glob: str, selects: Callable[[str], bool]
    ) -> None:
        """A subject glob waives exactly the subjects it matches, case-sensitively."""
        orion.replace("intent/qos.yaml", "pfc_headroom_kb: 128", "pfc_headroom_kb: 110")
        before = subjects(orion.evaluate(), "qos.headroom-port")
        assert "leaf-r3:Ethernet41" in before
        _waivers(orion, ("qos.headroom-port", glob, "2027-01-15"))
        report = orion.evaluate()
        expected = {s for s in before if selects(s)}
        assert {v.subject for v in report.waived} == expected
        assert subjects(report, "qos.headroom-port") == before - expected
