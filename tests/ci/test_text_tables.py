"""The text outputs that are tables: ``rollout list``, ``audit show`` and ``rollout
status``'s strata, waves and evidence, each column as wide as its widest cell."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from ci.journalfmt import list_text, status_text
from ci.statefmt import audit_text
from reconciler.state.audit import AuditKind, AuditRecord
from reconciler.state.journal import (
    Lifecycle,
    RolloutRow,
    RolloutStatus,
    TargetRow,
    TargetStatus,
    WaveRow,
    WaveStatus,
)


def _rollout(
    id: str, status: RolloutStatus, reason: str | None, plan: dict[str, Any]
) -> RolloutRow:
    return RolloutRow(
        id, "fw", "rollouts/fw.yaml", "0" * 64, None, None, status, reason, "alice", "",
        "2026-12-01T10:00:00.123456+00:00", plan,
    )  # fmt: skip


def _wave(number: int, status: WaveStatus, evidence: dict[str, Any] | None = None) -> WaveRow:
    return WaveRow(
        "fw-1", number, number == 1, status, 90.0, 1, None, None, None, None, None, None,
        12.5 if number == 1 else 0.0, "abort" if evidence else None, evidence,
    )  # fmt: skip


def _target(device: str, wave: int, status: TargetStatus) -> TargetRow:
    return TargetRow("fw-1", device, wave, status, Lifecycle.in_service, {}, None, None, 0, None)


def test_rollout_list_columns() -> None:
    """id, status, waves passed/total (right), updated, reason; the header names them."""
    rows = [
        _rollout("fw-1", RolloutStatus.completed, None, {}),
        _rollout("firmware-hx8-2", RolloutStatus.rolled_back, "wave 1 aborted", {}),
    ]
    waves = {"fw-1": [_wave(n, WaveStatus.passed) for n in range(1, 12)]}
    assert list_text(rows, waves) == (
        "id              status       waves  updated                    reason\n"
        "fw-1            completed    11/11  2026-12-01T10:00:00.12345\n"
        "firmware-hx8-2  rolled_back    0/0  2026-12-01T10:00:00.12345  wave 1 aborted\n"
    )


def test_a_long_reason_is_wrapped_not_cut() -> None:
    """The next step sits at a reason's end: every word is shown, on lines at most the
    reason column's width, the other columns blank below the first."""
    reason = (
        "wave 2 held: fec_uncorrectable of 3 canaries above the controls' baseline"
        " (Poisson p=0.0004 < 0.01) after a 45-minute bake; next: plumb rollout resume"
        " firmware-hx8-2 /srv/fleets/orion --accept-held WHY, or plumb rollback firmware-hx8-2"
    )
    text = list_text([_rollout("firmware-hx8-2", RolloutStatus.held, reason, {})], {})
    lines = text.splitlines()[1:]
    start = lines[0].index("wave 2 held")
    assert len(lines) > 1 and all(len(line) - start <= 100 for line in lines)
    assert " ".join(line[start:].strip() for line in lines) == reason
    assert all(line[:start].strip() == "" for line in lines[1:])


def test_audit_show_columns() -> None:
    """Number (right), time, kind, actor, then what was touched, without a header."""

    def record(seq: int, kind: AuditKind, actor: str, **fields: Any) -> AuditRecord:
        at = datetime(2026, 12, 1, 10, 0, seq, tzinfo=UTC)
        values: dict[str, Any] = {"device": None, "field": None, "before": None, "after": None}
        values["detail"] = {}
        return AuditRecord(seq, at, kind, actor, None, prev_hash="", hash="", **values | fields)

    records = [
        record(9, AuditKind.lease, "alice pid 7", detail={"action": "take"}),
        record(10, AuditKind.write, "alice", device="leaf-r1", field="mtu", before=91, after=90),
        record(11, AuditKind.lifecycle, "bob", detail={"to": "in_service"}),
    ]
    assert audit_text(records) == (
        ' 9  2026-12-01T10:00:09+00:00  lease      alice pid 7  {"action": "take"}\n'
        "10  2026-12-01T10:00:10+00:00  write      alice        leaf-r1 mtu 91 -> 90\n"
        '11  2026-12-01T10:00:11+00:00  lifecycle  bob          {"to": "in_service"}\n'
    )


def test_status_strata_waves_and_evidence_line_up() -> None:
    """Strata and wave lines are aligned rows; each wave's details follow its own row;
    an evidence mark's message and its query continue in one column."""
    plan = {
        "strata": [
            {"id": "S1", "members": [f"n{i}" for i in range(28)], "key": [["label.rev", "A1"]]},
            {"id": "S2", "members": ["n30", "n31", "n32", "n33"], "key": [["label.rev", "B0"]]},
        ],
        "coverage": [
            {"stratum": "S1", "canaries": ["n1"], "stratified": 1.0, "random": 0.984},
            {"stratum": "S2", "canaries": ["n31"], "stratified": 1.0, "random": 0.234},
        ],
        "waves": [{"number": 1, "predicted_stall_gpu_hours": 32.0}],
    }
    evidence = {
        "window": ["t0", "t1"],
        "controls": 3,
        "measurements": [
            {"metric": "fec", "phase": "failed", "message": "fec: failed (52) > 0"},
            {"metric": "up", "phase": "successful", "message": "up: 0 on 2 targets"},
        ],
        "noise_floors": {"step": {"message": "step: A/A noise floor 1.019"}},
    }
    row = _rollout("fw-1", RolloutStatus.rolled_back, None, plan)
    waves = [_wave(1, WaveStatus.rolled_back, evidence), _wave(10, WaveStatus.pending)]
    targets = [
        _target("n1", 1, TargetStatus.rolled_back),
        _target("n31", 1, TargetStatus.rolled_back),
        *(_target(f"n{i}", 10, TargetStatus.pending) for i in range(2, 12)),
    ]
    lines = status_text(row, waves, targets, []).splitlines()
    start = lines.index("strata")
    assert lines[start : start + 13] == [
        "strata",
        "  S1  28 targets  canary n1   covered 1.000  (random canary 0.984)  label.rev=A1",
        "  S2   4 targets  canary n31  covered 1.000  (random canary 0.234)  label.rev=B0",
        "waves",
        "   1  canary  rolled_back   2 targets  [rolled_back 2]  bake 1h30m"
        "  stalled 12.5 GPU-h (planned 32.0)",
        "      targets: n1 n31",
        "      decision ABORT over t0 .. t1; controls: 3 (-)",
        "        FAILED  fec: failed (52) > 0",
        "        ok      up: 0 on 2 targets",
        "        A/A     step: A/A noise floor 1.019",
        "  10  wave    pending      10 targets  [pending 10]     bake 1h30m  stalled 0.0 GPU-h",
        "      targets: n2 n3 n4 n5 n6 n7 n8 n9 (+2 more)",
        "targets: pending 10, rolled_back 2; lifecycle: in_service 12",
    ]
