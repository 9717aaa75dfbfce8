"""Settings a device's platform cannot express: listed in the plan with the platform's
reason and the owning intent line, never planned as changes, never written."""

from __future__ import annotations

from ci.planfmt import plan_json, plan_text
from tests.reconciler.labfleet import LabFleet

EOS_SWITCHES = {"fe-1", "spine-1", "spine-2", "spine-3", "spine-4"} | {
    f"leaf-r{r}" for r in (0, 2, 4, 6)
}


def test_inexpressible_fields_are_listed_per_value_and_owner_never_planned(
    clean_lab: LabFleet,
) -> None:
    """ORION's PFC headroom is refused on its EOS switches; a device override with another
    value is its own line at its own owner, not folded into the fleet-wide one."""
    clean_lab.copy.set_device_overrides("  leaf-r2:\n    qos: {pfc_headroom_kb: 160}\n")
    clean_lab.reload()
    plan = clean_lab.plan()
    refused = {(i.device, i.path): i.value for i in plan.inexpressible()}
    headroom = {d: v for (d, p), v in refused.items() if p == "qos/pfc_headroom_kb"}
    assert set(headroom) == EOS_SWITCHES
    assert headroom["leaf-r2"] == 160 and headroom["leaf-r0"] == 128
    assert not any(c.path.startswith("qos/pfc_") for cs in plan.changes().values() for c in cs)
    lines = [x for x in plan_text(plan, fleet="orion").splitlines() if "pfc_headroom_kb" in x]
    assert len(lines) == 2
    assert lines[0].startswith("NOT EXPRESSIBLE qos/pfc_headroom_kb = 128 on 8 device(s)")
    assert "intent/qos.yaml" in lines[0]
    assert lines[1].startswith("NOT EXPRESSIBLE qos/pfc_headroom_kb = 160 on 1 device(s) (leaf-r2)")
    assert "intent/devices.yaml" in lines[1]
    assert all(x.endswith("; not written") for x in lines)
    doc = plan_json(plan, fleet="orion", commit=None)
    assert doc["summary"]["inexpressible"] == len(plan.inexpressible())
    assert plan.is_empty()
