"""The review's intent section and its blast radius count the same devices: a moved value
is shown with the devices it takes effect on, which are the devices the blast radius
counts for it."""

from __future__ import annotations

from pathlib import Path

from ci.review.blast import applies_to, touched_devices
from ci.review.intentdiff import rendered_delta, setting_changes
from intent.fleet import Fleet
from reconciler.render import render_desired
from tests.ci.gitfleet import GitFleet
from tests.fleetcopy import ORION, FleetCopy, copy_orion


def _moved(tmp_path: Path, edit: str, old: str, new: str) -> tuple[Fleet, Fleet]:
    copy = copy_orion(tmp_path)
    copy.replace(edit, old, new)
    return FleetCopy(ORION).load(), copy.load()


def test_a_host_mtu_takes_effect_on_the_gpu_nodes_only(tmp_path: Path) -> None:
    """The host MTU is carried by every device but renders on GPU nodes only: it takes
    effect on those 32, exactly the devices the blast radius touches."""
    base, head = _moved(tmp_path, "intent/mtu.yaml", "host: 9000 ", "host: 8000 ")
    moved = rendered_delta(render_desired(base), render_desired(head))
    (change,) = applies_to(head, setting_changes(base, head), moved)
    assert len(change.devices) == len(head.devices)
    assert change.applies_to == touched_devices(head, [change], moved)
    assert {head.devices[n].role.value for n in change.applies_to} == {"gpu-node"}
    assert len(change.applies_to) == 32


def test_a_spine_asn_takes_effect_on_the_leaves_that_peer_with_it(tmp_path: Path) -> None:
    """The spine ASN moves only the spines' effective value, but renders the leaves'
    remote-as too: it takes effect on both, as the blast radius counts."""
    base, head = _moved(tmp_path, "intent/bgp.yaml", "spine_asn: 64600", "spine_asn: 64700")
    moved = rendered_delta(render_desired(base), render_desired(head))
    settings = applies_to(head, setting_changes(base, head), moved)
    effective = {n for c in settings for n in c.applies_to}
    roles = {head.devices[n].role.value for n in effective}
    assert {"spine", "leaf"} <= roles
    assert effective == set(touched_devices(head, settings, moved))
    assert all(set(c.applies_to) <= set(moved) for c in settings)


def test_a_value_that_renders_nowhere_takes_effect_where_it_moves(tmp_path: Path) -> None:
    """The RoCE priority shapes only what policies check: it takes effect on the
    devices whose effective value moves."""
    copy = copy_orion(tmp_path)
    copy.set_device_overrides("  leaf-r3:\n    qos: {roce_priority: 4}\n")
    base, head = FleetCopy(ORION).load(), copy.load()
    moved = rendered_delta(render_desired(base), render_desired(head))
    settings = applies_to(head, setting_changes(base, head), moved)
    roce = [c for c in settings if c.setting == "qos.roce_priority"]
    assert [c.applies_to for c in roce] == [("leaf-r3",)]


def test_review_intent_and_blast_radius_agree(changes: GitFleet) -> None:
    """In the JSON and the comment, the host MTU change takes effect on as many devices
    as the blast radius counts, and names the devices that only carry it."""
    reviewed = changes.reviewed("main", "mtu")
    doc = reviewed.json
    (setting,) = doc["changes"]["settings"]
    blast = doc["blast_radius"]
    assert setting["applies_to"] == blast["devices"]
    assert blast["counts"]["devices"] == 32 < len(setting["devices"])
    markdown = reviewed.markdown
    assert "taking effect on 32 device(s)" in markdown
    assert "| **blast radius** | 32 device(s)" in markdown
    carried = len(setting["devices"]) - 32
    assert f"32: gpu-n01, gpu-n02, gpu-n03, gpu-n04 and 28 more (also set on {carried}" in (
        markdown
    )
