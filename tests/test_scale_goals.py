"""benchmarks/scale.py judges each whole command against its goal: CPU seconds, peak
memory and CPU growth per doubling of the fleet, this tree's figure beside the base's."""

from __future__ import annotations

import pytest

from benchmarks.scale import Row, goal_rows, growth_of, per_doubling


def _row(measure: str, label: str, nodes: int, cpu: float, peak: float = 100.0) -> Row:
    return (measure, label, nodes, {"seconds": cpu, "cpu": cpu, "peak_mb": peak, "load": 0.5})


def test_growth_per_doubling_is_two_when_linear() -> None:
    assert per_doubling(8.0, 2.0, 16384, 4096) == pytest.approx(2.0)
    assert per_doubling(4.0, 1.0, 2048, 1024) == pytest.approx(4.0)


def test_each_goal_is_judged_on_this_tree_beside_the_base() -> None:
    rows = [
        _row("$ validate", "base", 4096, 2.6, 440),
        _row("$ validate", "this", 4096, 1.6, 280),
        _row("$ plan", "this", 4096, 3.2),
        _row("$ validate", "this", 16384, 7.0, 1100),
    ]
    verdicts = {(r[0], r[1], r[2]): (r[3], r[4], r[6]) for r in goal_rows(rows)}
    assert verdicts["validate", "4,096", "CPU s"] == ("2.60", "1.60", "pass")
    assert verdicts["validate", "4,096", "peak MB"] == ("440.00", "280.00", "pass")
    assert verdicts["plan", "4,096", "CPU s"] == ("", "3.20", "FAIL")
    assert verdicts["validate", "16,384", "peak MB"][2] == "FAIL"
    # 1.6 -> 7.0 CPU s over two doublings: 2.09 per doubling, within 2.1
    assert verdicts["validate", "16,384", "CPU x per doubling"] == ("", "2.09", "pass")
    assert growth_of(rows)["$ validate", "this", 16384] == pytest.approx((7.0 / 1.6) ** 0.5)
