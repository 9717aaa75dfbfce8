"""`plumb review` plans what the operator would run: a change that brings no rollout
spec is rolled out by the repo's spec that carries it (not a made-up default), and a
field a rollback pinned in the working tree is HELD in the review's plan, as
`plumb plan` shows it."""

from __future__ import annotations

from reconciler.state.db import open_state_db
from tests.ci.gitfleet import FLEET_DIR, GitFleet
from tests.fleetcopy import FleetCopy
from tests.reconciler.labfleet import LabFleet

QOS_SPEC = "qos-mtu-tune"


def test_a_qos_change_is_reviewed_with_the_repos_qos_spec(own_git_fleet: GitFleet) -> None:
    repo = own_git_fleet
    repo.fleet.replace("intent/qos.yaml", "kmin_kb: 200", "kmin_kb: 180")
    repo.git("commit", "-q", "-am", "ECN Kmin 180")
    doc = repo.review("--base", "HEAD~1", "-f", "json").json()
    [rollout] = doc["rollouts"]
    assert rollout["name"] == QOS_SPEC
    assert rollout["source"].endswith(f"rollouts/{QOS_SPEC}.yaml")
    assert rollout["plan"]["targets"]["planned"] == 12


def test_a_change_no_spec_carries_falls_back_to_the_default(own_git_fleet: GitFleet) -> None:
    repo = own_git_fleet
    repo.fleet.replace("intent/bgp.yaml", "maximum_paths: 64", "maximum_paths: 48")
    repo.git("commit", "-q", "-am", "fewer paths")
    doc = repo.review("--base", "HEAD~1", "-f", "json").json()
    [rollout] = doc["rollouts"]
    assert rollout["source"] == "default"


def test_a_pinned_field_is_held_in_the_review_plan(own_git_fleet: GitFleet) -> None:
    repo = own_git_fleet
    fleet_dir = repo.top / FLEET_DIR
    LabFleet.create(FleetCopy(fleet_dir), drift=0, older_firmware=False).close()
    repo.fleet.replace("intent/qos.yaml", "kmin_kb: 200", "kmin_kb: 180")
    repo.git("commit", "-q", "-am", "ECN Kmin 180")
    with open_state_db(fleet_dir / ".plumb" / "plumb.db") as db:
        db.journal.pin(None, {"leaf-r1": {"qos/ecn/3/kmin_kb": 200}}, "rolled back: INC-9")
    doc = repo.review("--base", "HEAD~1", "-f", "json").json()
    leaf = doc["plan"]["devices"]["leaf-r1"]
    assert [h["path"] for h in leaf["held"]] == ["qos/ecn/3/kmin_kb"]
    assert all(c["path"] != "qos/ecn/3/kmin_kb" for c in leaf["changes"])
