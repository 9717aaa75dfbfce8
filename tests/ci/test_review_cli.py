"""`plumb review` end to end on a real git repository: each branch of the `changes`
repository is one pull request, reviewed against `main` through the real CLI."""

from __future__ import annotations

from pathlib import Path

from ci.planfile import plan_hash, read_plan, short_hash
from ci.review.observed import NOT_IN_SNAPSHOT
from lab.fleet import snapshot_document
from reconciler.render import render_desired
from reconciler.settings import as_desired_state
from tests.ci.conftest import FIRMWARE_RACKS, SPEC, inventory, nodes_in
from tests.ci.gitfleet import FLEET_DIR, GitFleet, line_of, plumb
from tests.fleetcopy import FleetCopy

DRAIN_MINUTES = 20.0  # price.drain_minutes of the ORION firmware spec the case copies


def test_host_mtu_above_the_port_limit_is_blocked_at_its_line(changes: GitFleet) -> None:
    """Raising the host MTU past port MTU - 22 blocks, annotated at the value's line."""
    line = line_of(changes.fleet.path / "intent/mtu.yaml", "host: 9000 ")
    done = changes.reviewed("main", "mtu")
    assert done.exit_code == 1, done.stderr
    annotations = done.reports["github"]
    annotation = f"::error file={FLEET_DIR}/intent/mtu.yaml,line={line},"
    assert any(
        row.startswith(annotation) and "title=plumb mtu.host-fits-port::" in row
        for row in annotations.splitlines()
    ), annotations[:2000]
    assert annotations.rstrip().endswith("::notice title=plumb review::blocked: 2 blocker(s)")


def test_the_mtu_blocker_names_file_and_line_in_json(changes: GitFleet) -> None:
    """The JSON verdict is blocked; the policy blocker and the moved value share one place."""
    line = line_of(changes.fleet.path / "intent/mtu.yaml", "host: 9000 ")
    doc = changes.reviewed("main", "mtu").json
    assert (doc["schema"], doc["verdict"], doc["exit_code"]) == ("plumb.review/v1", "blocked", 1)
    where = {"file": f"{FLEET_DIR}/intent/mtu.yaml", "line": line, "col": 11}
    policy = [b for b in doc["blockers"] if b["kind"] == "policy"]
    assert [b["location"] for b in policy] == [where]
    assert policy[0]["message"].startswith("mtu.host-fits-port: 256 new deny violation(s)")
    [moved] = doc["changes"]["settings"]
    assert (moved["setting"], moved["before"], moved["after"]) == ("mtu.host-leaf.host", 9000, 9200)
    assert moved["location"] == where
    assert doc["files_changed"] == [f"{FLEET_DIR}/intent/mtu.yaml"]
    assert doc["plan"]["refused"].startswith("no safe order: after the mtu-host step")


def test_roce_priority_on_one_leaf_is_blocked_by_the_pfc_policy(changes: GitFleet) -> None:
    """A RoCE priority on leaf-r3 alone fails qos.pfc-exactly-roce at the override's line,
    and forces a drain of every node with a NIC on that leaf."""
    done = changes.reviewed("main", "roce")
    assert done.exit_code == 1, done.stderr
    doc = done.json
    introduced = {(v["policy"], v["subject"]): v for v in doc["policies"]["introduced"]}
    pfc = introduced[("qos.pfc-exactly-roce", "leaf-r3")]
    line = changes.line_at("roce", "intent/devices.yaml", "roce_priority")
    assert pfc["locations"][0]["file"] == f"{FLEET_DIR}/intent/devices.yaml"
    assert pfc["locations"][0]["line"] == line
    assert any(b["message"].startswith("qos.pfc-exactly-roce:") for b in doc["blockers"])
    behind = {
        str(link["a"])
        for link in inventory("links/backend.yaml")["links"]
        if link["b"] == "leaf-r3"
    }
    drain = doc["drain"]
    assert drain["required"] and drain["lossless_settings"] == ["qos.roce_priority"]
    assert set(drain["hosts"]) == behind and len(behind) == 32
    assert doc["blast_radius"]["devices"] == ["leaf-r3"]


def test_firmware_change_shows_blast_radius_and_cost(changes: GitFleet) -> None:
    """A new bundle on a whole gang's four racks touches exactly their nodes, GPUs, racks
    and gangs (as the inventory files say) and is planned by the change's own spec,
    stalling GPU-hours."""
    nodes = nodes_in(FIRMWARE_RACKS)
    names = {str(n["name"]) for n in nodes}
    gangs = [g for g in inventory("gangs.yaml")["gangs"] if names & set(g["nodes"])]  # type: ignore[arg-type]
    done = changes.reviewed("main", "firmware")
    assert done.exit_code == 0, done.markdown[:2000] + done.stderr
    doc = done.json
    counts = doc["blast_radius"]["counts"]
    assert counts["devices"] == counts["hosts"] == len(names) == 16
    assert counts["switches"] == 0 and counts["ports"] == 0
    assert counts["gpus"] == sum(int(n["gpus"]) for n in nodes)  # type: ignore[call-overload]
    assert doc["blast_radius"]["racks"] == sorted(FIRMWARE_RACKS)
    assert doc["blast_radius"]["gangs"] == sorted(str(g["name"]) for g in gangs)
    assert doc["drain"]["required"] and set(doc["drain"]["hosts"]) == names
    assert [b["name"] for b in doc["changes"]["bundles"]] == ["hx8-2026.12"]
    [rollout] = doc["rollouts"]
    assert rollout["source"] == SPEC and rollout["name"] == "firmware-hx8-2026-12"
    plan = rollout["plan"]
    assert sorted(t for w in plan["waves"] for t in w["targets"]) == sorted(names)
    assert len(plan["waves"]) >= 2
    each_gang_once = sum(
        len(g["nodes"]) * int(g.get("gpus_per_node", 8)) * DRAIN_MINUTES / 60  # type: ignore[arg-type]
        for g in gangs
    )
    price = plan["price"]
    assert price["lower_bound"]["gpu_hours"] == round(each_gang_once, 6)
    assert price["total"]["gpu_hours"] >= price["lower_bound"]["gpu_hours"] > 0


def test_rollout_spec_that_cannot_be_planned_blocks_at_its_cap(changes: GitFleet) -> None:
    """A spec of the change whose caps cannot hold the canary blocks at caps.per_wave."""
    done = changes.reviewed("main", "tight")
    assert done.exit_code == 1
    [blocker] = done.json["blockers"]
    assert blocker["kind"] == "rollout" and "caps.per_wave" in blocker["message"]
    line = changes.line_at("tight", SPEC, "per_wave: 1")
    assert blocker["location"]["file"] == f"{FLEET_DIR}/{SPEC}"
    assert blocker["location"]["line"] == line


def test_clean_change_passes_with_a_markdown_comment(changes: GitFleet) -> None:
    """A safe change exits 0; the comment leads with the verdict and collapses details."""
    done = changes.reviewed("main", "clean")
    assert done.exit_code == 0, done.markdown
    lines = done.markdown.splitlines()
    assert lines[0] == "<!-- plumb-review -->"
    assert lines[1] == "### ✅ plumb review: pass — orion"
    assert done.markdown.count("<details>") == done.markdown.count("</details>") >= 4
    assert "**Blocked:**" not in done.markdown
    assert "| **plan** | 12 change(s) on 12 device(s) in 1 step(s)" in done.markdown


def test_the_comment_carries_the_hash_of_the_plan_it_reviewed(changes: GitFleet) -> None:
    """The Markdown shows the plan's hash, the same one the JSON review carries and the
    one its plan recomputes to."""
    done = changes.reviewed("main", "clean")
    digest = done.json["plan"]["hash"]
    assert digest == plan_hash(read_plan(done.json["plan"]).plan, fleet="orion")
    assert f"plan `{short_hash(digest)}`" in done.markdown


def test_markdown_tables_keep_their_columns(changes: GitFleet) -> None:
    """Every table row has as many cells as its header (values cannot break a table)."""
    text = changes.reviewed("main", "roce").markdown
    header = 0
    for row in text.splitlines():
        if not row.startswith("|"):
            header = 0
            continue
        cells = row.replace("\\|", "").count("|") - 1
        header = header or cells
        assert cells == header, row


def test_head_that_fails_schema_is_blocked_with_file_and_line(changes: GitFleet) -> None:
    """A head that does not load is a blocked change (exit 1) at file:line, not an error."""
    line = line_of(changes.fleet.path / "intent/mtu.yaml", "host: 9000 ")
    done = changes.reviewed("main", "schema")
    assert done.exit_code == 1, done.stderr
    doc = done.json
    assert doc["verdict"] == "blocked" and doc["policies"] is None and doc["plan"] is None
    [problem] = doc["input_errors"]
    assert (problem["file"], problem["line"]) == (f"{FLEET_DIR}/intent/mtu.yaml", line)
    assert [b["kind"] for b in doc["blockers"]] == ["input"]


def test_violations_already_at_base_do_not_block(changes: GitFleet) -> None:
    """A change on top of a broken MTU passes: the 256 violations are not its own."""
    done = changes.reviewed("mtu", "mtu-then-clean")
    assert done.exit_code == 0, done.markdown[:2000]
    policies = done.json["policies"]
    assert policies["summary"]["deny"] == 256 and policies["summary"]["introduced"] == 0
    assert len(policies["remaining"]) == 256
    assert "::error" not in done.reports["github"]


def test_bad_base_revision_is_exit_2_with_a_message(changes: GitFleet) -> None:
    """A revision git does not know exits 2 with one line naming it, no traceback."""
    done = changes.review("--base", "no-such-branch")
    assert done.exit_code == 2
    assert done.stdout == ""
    assert done.stderr.strip().startswith("error: --base: unknown revision 'no-such-branch'")
    assert "Traceback" not in done.stderr


def test_base_that_does_not_load_is_exit_2(changes: GitFleet) -> None:
    """With nothing to compare against, the review cannot run: exit 2, problems located."""
    done = changes.review("--base", "broken", "--head", "main")
    assert done.exit_code == 2
    assert "base " in done.stderr and "inventory/racks.yaml:" in done.stderr
    assert "does not load at --base broken" in done.stderr


def test_outside_git_is_exit_2(orion: FleetCopy) -> None:
    """A fleet repo that is not in a git repository cannot be reviewed."""
    done = plumb(orion.path, "review", ".", "--base", "HEAD~1")
    assert done.exit_code == 2
    assert "is not inside a git repository" in done.stderr


def test_review_against_a_snapshot_reports_unrecorded_devices(
    changes: GitFleet, tmp_path: Path
) -> None:
    """--against plans from the snapshot; a device it lacks is unknown, not in sync."""
    fleet = changes.fleet.load()
    states = {n: as_desired_state(s) for n, s in render_desired(fleet).items() if n != "gpu-n05"}
    snapshot = tmp_path / "snap.json"
    snapshot.write_text(__import__("json").dumps(snapshot_document("orion", states, _when())))
    done = changes.review(
        "--base", "main", "--head", "clean", "--against", str(snapshot), "-f", "json"
    )
    doc = done.json()
    assert doc["observed"]["source"] == "snapshot"
    assert doc["plan"]["devices"]["gpu-n05"]["unknown"] == NOT_IN_SNAPSHOT
    assert doc["plan"]["summary"]["changes"] == 12


def test_snapshot_of_another_fleet_is_refused(changes: GitFleet, tmp_path: Path) -> None:
    snapshot = tmp_path / "other.json"
    snapshot.write_text(__import__("json").dumps(snapshot_document("other", {}, _when())))
    done = changes.review("--base", "main", "--head", "clean", "--against", str(snapshot))
    assert done.exit_code == 2
    assert "a snapshot of fleet 'other', not of 'orion'" in done.stderr


def _when():  # type: ignore[no-untyped-def]
    from datetime import UTC, datetime

    return datetime(2026, 12, 1, 3, 0, tzinfo=UTC)
