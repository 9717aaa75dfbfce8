"""``plumb demo`` says what it measured: coverage is what a canary is sure of, a metric
past its threshold without significance is inconclusive, and the wall time says
what it covers."""

from __future__ import annotations

import re

from tests.fleetcopy import ROOT
from tests.reconciler.labfleet import run_plumb


def test_the_demo_words_what_it_measured() -> None:
    done = run_plumb(ROOT, "demo", timeout=300)
    out = done.stdout
    assert done.returncode == 0, out[-3000:] + done.stderr[-3000:]
    assert "sure to cover it" in out and "sure to catch" not in out
    step = [line for line in out.splitlines() if "step_time:" in line]
    assert step, out[-3000:]
    for line in step:  # past its threshold without significance is inconclusive, never a pass
        assert "past threshold" not in line or line.split()[0] == "inconclusive", line
        assert "within threshold" not in line or line.split()[0] == "successful", line
    assert re.search(r"random k=\d+", out)
    k = int(re.findall(r"random k=(\d+)", out)[0])
    assert f"a random canary of {k} covers it" in out
    assert not re.search(r"successful +\S+: .* but not significant", out)
    assert re.search(r"[\d.]+ s wall time for the whole demo \(validation, lab set-up", out)
