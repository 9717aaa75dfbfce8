"""`--format json` of `lease show`, `freeze`, `unfreeze` and `audit verify` through the
real `plumb` console script: one document each, with its documented schema and keys,
agreeing with the state database."""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime
from typing import Any

from tests.fleetcopy import FleetCopy
from tests.reconciler.labfleet import ACTOR, run_plumb

HOLDER = "alice@build-07 pid 31337"


def _json(orion: FleetCopy, *args: str, code: int = 0) -> dict[str, Any]:
    done = run_plumb(orion.path, *args, "--format", "json")
    assert done.returncode == code, done.stdout + done.stderr
    document: dict[str, Any] = json.loads(done.stdout)
    return document


def test_lease_show_json_is_null_when_no_lease_is_held(orion: FleetCopy) -> None:
    """With no lease, `lease show --format json` says so in the document."""
    assert _json(orion, "lease", "show") == {
        "schema": "plumb.lease/v1",
        "held": False,
        "lease": None,
    }


def test_lease_show_json_names_the_holder_and_token(orion: FleetCopy) -> None:
    """A held lease shows its holder, purpose, fencing token, times and ages."""
    from intent.fleet import load_fleet
    from reconciler.state.location import open_fleet_state

    fleet = load_fleet(orion.path)
    db = open_fleet_state(fleet.root, fleet.config)
    token = db.lease.acquire(HOLDER, "rollout r-12")
    try:
        doc = _json(orion, "lease", "show")
    finally:
        db.close()
    assert doc["schema"] == "plumb.lease/v1" and doc["held"] is True
    lease = doc["lease"]
    assert set(lease) == {
        "token",
        "holder",
        "purpose",
        "since",
        "heartbeat_at",
        "age_seconds",
        "heartbeat_age_seconds",
    }
    assert (lease["token"], lease["holder"], lease["purpose"]) == (
        token.value,
        HOLDER,
        "rollout r-12",
    )
    assert datetime.fromisoformat(lease["since"]).utcoffset() is not None
    assert 0 <= lease["age_seconds"] < 120


def test_freeze_and_unfreeze_json(orion: FleetCopy) -> None:
    """`freeze` reports the freeze in force; `unfreeze` the freeze it lifted, then none."""
    frozen = _json(orion, "freeze", "--reason", "INC-4411")
    assert frozen["schema"] == "plumb.freeze/v1"
    assert frozen["action"] == "freeze" and frozen["frozen"] is True and frozen["lifted"] is None
    assert frozen["freeze"]["actor"] == ACTOR and frozen["freeze"]["reason"] == "INC-4411"
    lifted = _json(orion, "unfreeze")
    assert lifted["action"] == "unfreeze" and lifted["frozen"] is False
    assert lifted["freeze"] is None and lifted["lifted"] == frozen["freeze"]
    assert _json(orion, "unfreeze")["lifted"] is None


def test_audit_verify_json_names_an_edited_row_and_exits_1(orion: FleetCopy) -> None:
    """An edited audit row makes `audit verify --format json` exit 1 with the row's seq."""
    _json(orion, "freeze", "--reason", "first")
    _json(orion, "unfreeze")
    good = _json(orion, "audit", "verify")
    assert good["ok"] is True and good["rows"] == 2
    with sqlite3.connect(orion.path / ".plumb" / "plumb.db") as conn:
        conn.execute("DROP TRIGGER IF EXISTS audit_no_update")
        conn.execute("""UPDATE audit SET actor = 'mallory' WHERE seq = 1""")
    bad = _json(orion, "audit", "verify", code=1)
    assert bad["ok"] is False
    assert 1 in {p["seq"] for p in bad["problems"]}
    assert all(set(p) == {"seq", "fault", "message"} for p in bad["problems"])
