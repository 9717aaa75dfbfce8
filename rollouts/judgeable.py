"""Can each wave's abort conditions ever be judged? (pure)

A wave is judged on its changed targets (topped up to ``min_samples`` with targets of
earlier waves that passed) against controls: targets of the rollout not yet changed
or, when too few remain, targets changed in waves that passed. With an A/A noise
floor the controls are split in two groups (one as large as the judged group, at most
half), and both must reach ``min_samples`` too.

These counts depend only on the wave sizes, not on how long a wave bakes: a wave
short of samples holds, and baking it again holds again. :func:`unjudgeable` finds
those waves before a rollout starts (``rollout plan`` warns at the metric's line),
:func:`short_metrics` names them in a held wave's evidence so the hold can say that
resuming will not help. Both follow the executor's rules in
:mod:`rollouts.assessing` (``earlier_changed``, ``controls_for``, ``control_floors``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rollouts.spec import Abort, Metric

CONTROLS_RULE = "controls are rollout targets not yet changed, or changed in waves that passed"


@dataclass(frozen=True)
class Groups:
    """The judged targets and controls of one wave, every earlier wave having passed."""

    wave: int
    judged: int
    controls: int


@dataclass(frozen=True)
class Unjudgeable:
    """A metric that can never be judged in one wave: the wave holds however long it bakes."""

    wave: int
    metric: int  # index in abort.metrics
    name: str
    why: str

    def message(self) -> str:
        return (
            f"wave {self.wave}: {self.name} can never be judged ({self.why}; "
            f"{CONTROLS_RULE}): the wave will hold however long it bakes"
        )


def group_sizes(sizes: Sequence[int], need: int) -> list[Groups]:
    """Judged and control counts per wave of ``sizes`` when every target is changed
    and every wave passes; ``need`` is the largest ``min_samples`` of the metrics."""
    found = []
    for index, size in enumerate(sizes):
        earlier = sum(sizes[:index])
        borrowed = min(max(0, need - size), earlier)
        judged = size + borrowed
        untouched = sum(sizes[index + 1 :])
        controls = untouched if untouched >= judged + need else earlier - borrowed
        found.append(Groups(index + 1, judged, controls))
    return found


def aa_split(judged: int, controls: int) -> tuple[int, int]:
    """The two A/A groups the controls are split into (see ``assessing.control_floors``)."""
    first = max(1, min(judged, controls // 2))
    return min(first, controls), max(0, controls - first)


def too_few(metric: Metric, judged: int, controls: int, aa_noise_floor: bool) -> str | None:
    """Why ``metric`` cannot be judged on these counts, or None."""
    least = metric.min_samples
    short = [
        f"{n} {group} targets"
        for n, group in ((judged, "wave"), (controls, "control"))
        if n < least
    ]
    if aa_noise_floor and not short:
        a, b = aa_split(judged, controls)
        if min(a, b) < least:
            short.append(f"A/A groups of {a} and {b} controls")
    if not short:
        return None
    return f"{' and '.join(short)} < min_samples {least}"


def unjudgeable(abort: Abort, sizes: Sequence[int]) -> list[Unjudgeable]:
    """Every (wave, metric) of a plan with wave ``sizes`` that can never be judged."""
    need = max((m.min_samples for m in abort.metrics), default=0)
    found = []
    for groups in group_sizes(sizes, need):
        for index, metric in enumerate(abort.metrics):
            why = too_few(metric, groups.judged, groups.controls, abort.aa_noise_floor)
            if why is not None:
                found.append(Unjudgeable(groups.wave, index, metric.name, why))
    return found


def short_metrics(abort: Abort, judged: int, controls: int) -> dict[str, str]:
    """The metrics a wave with these counts can never judge, with why."""
    found = {}
    for metric in abort.metrics:
        why = too_few(metric, judged, controls, abort.aa_noise_floor)
        if why is not None:
            found[metric.name] = why
    return found
