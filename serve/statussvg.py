"""Small inline SVG charts of a rollout's journaled evidence, for the status page (pure:
the waves' evidence in, SVG text out; nothing fetched, nothing scripted).

Two pictures per measured condition (a metric or a hard-fault kind):

* **over time**: the statistic of each wave judged so far, in wave order, against the
  threshold (dashed) and the A/A noise floor (dotted) when measured;
* **against the controls**: for the current wave, each target's value (filled) beside
  the control group's (hollow), when the evidence carries per-target values.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

WIDTH, HEIGHT, PAD = 320, 90, 18


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def _scale(values: Sequence[float]) -> tuple[float, float]:
    low, high = min(values), max(values)
    if high - low < 1e-12:
        low, high = low - 1.0, high + 1.0
    margin = (high - low) * 0.1
    return low - margin, high + margin


def _y(value: float, low: float, high: float) -> float:
    return HEIGHT - PAD - (value - low) / (high - low) * (HEIGHT - 2 * PAD)


def _frame(title: str, body: list[str]) -> str:
    return (
        f'<svg class="chart" viewBox="0 0 {WIDTH} {HEIGHT}" role="img"'
        f' aria-label="{escape(title)}" preserveAspectRatio="xMinYMin meet">'
        f"<title>{escape(title)}</title>"
        f'<rect x="0" y="0" width="{WIDTH}" height="{HEIGHT}" class="bg"/>'
        + "".join(body)
        + "</svg>"
    )


def _hline(value: float | None, low: float, high: float, css: str, label: str) -> list[str]:
    if value is None:
        return []
    y = _y(value, low, high)
    return [
        f'<line x1="{PAD}" x2="{WIDTH - 4}" y1="{y:.1f}" y2="{y:.1f}" class="{css}"/>',
        f'<text x="{WIDTH - 4}" y="{y - 3:.1f}" text-anchor="end" class="lbl">'
        f"{escape(label)} {value:g}</text>",
    ]


def series_chart(
    metric: str, points: Sequence[tuple[int, float]], threshold: float | None, floor: float | None
) -> str:
    """The statistic per judged wave (wave number, value), threshold and noise floor."""
    values = [v for _, v in points] + [v for v in (threshold, floor) if v is not None]
    low, high = _scale(values)
    step = (WIDTH - 2 * PAD) / max(len(points) - 1, 1)
    xy = [(PAD + i * step, _y(v, low, high)) for i, (_, v) in enumerate(points)]
    body = _hline(threshold, low, high, "thr", "threshold") + _hline(
        floor, low, high, "floor", "noise floor"
    )
    if len(xy) > 1:
        path = " ".join(f"{x:.1f},{y:.1f}" for x, y in xy)
        body.append(f'<polyline points="{path}" class="line"/>')
    for (x, y), (wave, value) in zip(xy, points, strict=True):
        body.append(
            f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3" class="pt"><title>wave {wave}: {value:g}'
            "</title></circle>"
            f'<text x="{x:.1f}" y="{HEIGHT - 4}" text-anchor="middle" class="lbl">w{wave}</text>'
        )
    body.append(f'<text x="4" y="12" class="lbl">{escape(metric)} by wave</text>')
    return _frame(f"{metric}: statistic of each judged wave against its threshold", body)


def groups_chart(metric: str, wave: Mapping[str, float], controls: Mapping[str, float]) -> str:
    """One row of dots for the wave's targets, one for the controls."""
    values = list(wave.values()) + list(controls.values())
    low, high = _scale(values)
    body = [f'<text x="4" y="12" class="lbl">{escape(metric)}: wave vs controls</text>']
    for row, (name, group, css) in enumerate((("wave", wave, "pt"), ("controls", controls, "ctl"))):
        y = 34 + row * 30
        body.append(f'<text x="4" y="{y + 4}" class="lbl">{name} ({len(group)})</text>')
        for target, value in sorted(group.items()):
            x = 80 + (value - low) / (high - low) * (WIDTH - 90)
            body.append(
                f'<circle cx="{x:.1f}" cy="{y}" r="3" class="{css}">'
                f"<title>{escape(target)}: {value:g}</title></circle>"
            )
    body.append(f'<text x="80" y="{HEIGHT - 4}" class="lbl">{low:.3g}</text>')
    body.append(
        f'<text x="{WIDTH - 4}" y="{HEIGHT - 4}" text-anchor="end" class="lbl">{high:.3g}</text>'
    )
    return _frame(f"{metric}: the wave's targets against the control group", body)


def _values(raw: object) -> dict[str, float]:
    if not isinstance(raw, Mapping):
        return {}
    found = {str(k): _number(v) for k, v in raw.items()}
    return {k: v for k, v in found.items() if v is not None}


def evidence_charts(waves: Sequence[Mapping[str, Any]], current: int | None) -> list[str]:
    """The charts of a rollout's journaled evidence (empty when nothing was judged)."""
    series: dict[str, list[tuple[int, float]]] = {}
    limits: dict[str, tuple[float | None, float | None]] = {}
    latest: dict[str, Mapping[str, Any]] = {}
    judged = [w for w in waves if isinstance(w.get("evidence"), Mapping) and w.get("decision")]
    for wave in judged:
        for m in wave["evidence"].get("measurements") or []:
            if not isinstance(m, Mapping):
                continue
            name = str(m.get("metric"))
            value = _number(m.get("statistic"))
            if value is not None:
                series.setdefault(name, []).append((int(wave["number"]), value))
            limits[name] = (_number(m.get("threshold")), _number(m.get("noise_floor")))
            if current is None or wave["number"] <= current:
                latest[name] = m
    charts = [series_chart(n, pts, *limits[n]) for n, pts in sorted(series.items())]
    for name, m in sorted(latest.items()):
        evidence = m.get("evidence")
        if isinstance(evidence, Mapping):
            wave_values, control_values = (
                _values(evidence.get("wave")),
                _values(evidence.get("controls")),
            )
            if wave_values and control_values:
                charts.append(groups_chart(name, wave_values, control_values))
    return charts
