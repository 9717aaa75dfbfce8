"""A rollout plan as a picture (matplotlib, the ``pictures`` extra): a self-contained
SVG a person opens in any browser, or an HTML page holding it beside the text plan.

Three panels:

* **waves x racks**: one row per wave (canaries marked), one column per rack; a cell
  holds how many of the wave's targets sit in that rack, coloured by the stratum most
  of them belong to; the caps are in the title;
* **canary coverage**: per stratum, the chance the canary covers it, stratified (1 by
  construction) against a random canary of the same size;
* **bake against detection**: each wave's bake minutes, and the smallest failure-rate
  ratio the bake detects with the declared confidence (lower is better), with the
  spec's ``detect_rate_ratio`` as a line.

Text stays text in the SVG (``svg.fonttype: none``) and nothing varies between runs
(no date, a fixed id salt), so the file is small and diffable.
"""

from __future__ import annotations

import html
import io
from collections import Counter
from collections.abc import Mapping

from inventory.extras import optional_imports
from rollouts.planning import RolloutPlan

MAX_RACKS = 96  # more racks than this are drawn in groups of consecutive racks


def _columns(racks: list[str]) -> tuple[list[str], dict[str, int]]:
    """Column labels and rack -> column: one rack a column, or consecutive groups."""
    if len(racks) <= MAX_RACKS:
        return racks, {r: i for i, r in enumerate(racks)}
    per = -(-len(racks) // MAX_RACKS)
    labels = [
        f"{racks[i]}..{racks[min(i + per, len(racks)) - 1]}" for i in range(0, len(racks), per)
    ]
    return labels, {r: i // per for i, r in enumerate(racks)}


def wave_plan_svg(plan: RolloutPlan, rack_of: Mapping[str, str], *, fleet: str) -> str:
    """The SVG document of ``plan`` (``rack_of``: target -> rack)."""
    with optional_imports():  # the pictures extra, imported only to draw
        import matplotlib as mpl
        from matplotlib.figure import Figure

    mpl.rcParams["svg.fonttype"] = "none"
    mpl.rcParams["svg.hashsalt"] = "plumb"
    spec, strata = plan.spec, plan.strata
    racks = sorted({rack_of.get(t, "?") for r in plan.reports for t in r.wave.targets})
    labels, column = _columns(racks)
    index = {s.id: i for i, s in enumerate(strata.strata)}
    palette = mpl.colormaps["tab20"]
    waves = plan.reports
    width = min(28.0, max(11.0, 4.0 + 0.22 * len(labels)))
    height = 3.0 + 0.32 * len(waves) + 2.6
    figure = Figure(figsize=(width, height), layout="constrained")
    grid = figure.add_gridspec(2, 2, height_ratios=[max(1.0, 0.32 * len(waves)), 2.4])
    cells = figure.add_subplot(grid[0, :])
    for row, report in enumerate(waves):
        counts: dict[int, Counter[str]] = {}
        for target in report.wave.targets:
            counts.setdefault(column[rack_of.get(target, "?")], Counter())[
                strata.of(target).id
            ] += 1
        for col, by_stratum in counts.items():
            stratum, _ = by_stratum.most_common(1)[0]
            colour = palette(index[stratum] % 20)
            cells.add_patch(mpl.patches.Rectangle((col, row), 1, 1, color=colour, lw=0))
            if len(labels) <= 48:
                cells.text(col + 0.5, row + 0.5, str(sum(by_stratum.values())), ha="center",
                           va="center", fontsize=7)  # fmt: skip
    cells.set_xlim(0, max(1, len(labels)))
    cells.set_ylim(len(waves), 0)
    cells.set_yticks([i + 0.5 for i in range(len(waves))])
    cells.set_yticklabels(
        [f"{'canary' if r.wave.canary else 'wave'} {r.wave.number}" for r in waves], fontsize=8
    )
    step = max(1, len(labels) // 40)
    cells.set_xticks([i + 0.5 for i in range(0, len(labels), step)])
    cells.set_xticklabels(labels[::step], rotation=90, fontsize=7)
    caps = ", ".join(plan.waves.limits.describe()) or "no caps"
    stalled = sum(r.stall.gpu_hours for r in waves)
    figure.suptitle(
        f"rollout {spec.name} on {fleet}: {len(plan.targets)} targets in {len(waves)} waves"
        f" over {len(racks)} racks, {stalled:.1f} GPU-h stalled\ncaps: {caps}",
        fontsize=10,
    )
    cells.set_title("targets per wave and rack, coloured by stratum", fontsize=9)
    handles = [
        mpl.patches.Patch(color=palette(i % 20), label=f"{s.id}: {s.label(strata.varying())}")
        for i, s in enumerate(strata.strata[:20])
    ]
    cells.legend(handles=handles, fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))

    cover = figure.add_subplot(grid[1, 0])
    names = [c.stratum for c in plan.coverage]
    positions = list(range(len(names)))
    cover.bar([p - 0.2 for p in positions], [c.stratified for c in plan.coverage], 0.4,
              label="stratified canary")  # fmt: skip
    cover.bar([p + 0.2 for p in positions], [c.random_distinct for c in plan.coverage], 0.4,
              label="random canary, same size")  # fmt: skip
    cover.set_xticks(positions)
    cover.set_xticklabels(names, fontsize=7, rotation=45)
    cover.set_ylim(0, 1.35)
    cover.set_ylabel("P(canary covers stratum)", fontsize=8)
    cover.legend(fontsize=7, loc="upper center", ncols=2)
    cover.set_title("canary coverage by stratum", fontsize=9)

    bake = figure.add_subplot(grid[1, 1])
    numbers = [r.wave.number for r in waves]
    bake.bar(numbers, [r.bake.minutes for r in waves], color="#9ecae1", label="bake minutes")
    bake.set_xlabel("wave", fontsize=8)
    bake.set_ylabel("bake (min)", fontsize=8)
    ratio = bake.twinx()
    ratio.plot(numbers, [r.bake.detectable_ratio for r in waves], "o-", color="#d62728",
               label="detectable failure-rate ratio")  # fmt: skip
    ratio.axhline(spec.bake.detect_rate_ratio, color="#d62728", ls="--", lw=0.8)
    ratio.set_ylabel("detectable ratio (lower is better)", fontsize=8)
    bake.set_title("bake against detection power", fontsize=9)
    out = io.StringIO()
    figure.savefig(out, format="svg", metadata={"Date": None})
    return out.getvalue()


def wave_plan_html(plan: RolloutPlan, rack_of: Mapping[str, str], *, fleet: str, text: str) -> str:
    """An HTML page holding the SVG and the text plan: one file, nothing fetched."""
    svg = wave_plan_svg(plan, rack_of, fleet=fleet)
    svg = svg[svg.index("<svg") :]  # inline: no XML prolog inside HTML
    title = html.escape(f"rollout {plan.spec.name} on {fleet}")
    return (
        "<!doctype html>\n<html lang=en><head><meta charset=utf-8>"
        f"<title>{title}</title><meta name=viewport content='width=device-width'>"
        "<style>body{font-family:sans-serif;margin:1em}svg{max-width:100%;height:auto}"
        "pre{overflow-x:auto;background:#f6f8fa;padding:1em}</style></head><body>"
        f"<h1>{title}</h1>\n{svg}\n<h2>plan</h2><pre>{html.escape(text)}</pre></body></html>\n"
    )
