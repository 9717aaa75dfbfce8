"""``plumb demo`` end to end: the README's main job must tell the whole story, and
say so when it does not end as designed."""

from __future__ import annotations

from tests.fleetcopy import ROOT
from tests.reconciler.labfleet import run_plumb


def test_the_demo_catches_the_b0_defect_in_the_canary_and_rolls_back() -> None:
    done = run_plumb(ROOT, "demo", timeout=300)
    out = done.stdout
    assert done.returncode == 0, out[-3000:] + done.stderr[-3000:]
    assert "blocked (exit 1)" in out and "intent/mtu.yaml:7:11" in out
    assert "completed: 12 switches changed" in out
    assert "outcome: rolled back" in out
    assert "fec_uncorrectable: failed" in out and "gpu-n31" in out
    assert "every carried field equals its recorded before-state: yes" in out
    assert "HELD at their before-state" in out
    assert "probability 0.414" in out  # a random canary of 4: 1 - (7/8)^4
    assert "hash chain verified" in out
    assert "demo complete" in out
