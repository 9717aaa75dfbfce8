"""Rollout specs: ``rollouts/NAME.yaml`` in the fleet repo, declared before a rollout starts.

A spec says which targets a change covers, how canaries are stratified, how waves
grow within which caps, how long each wave bakes, which abort conditions judge it
(pre-registered: statistic, test, threshold, noise floor), whether the change needs
a drain, and the rollback scope. Everything the planner and the assessment use is
here, so a rollout is reviewable as data before it touches anything.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

from pydantic import Field, StrictBool, StrictFloat, StrictInt, StringConstraints, model_validator

from inventory.models import Name, Strict

Probability = Annotated[StrictFloat, Field(gt=0.0, lt=1.0)]
Attribute = Annotated[str, StringConstraints(pattern=r"^(label\.)?[a-z][a-z0-9_]{0,40}$")]
PathGlob = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_*?\[\]./:-]{1,200}$")]


class Targets(Strict):
    """Which devices the rollout covers: a ``--select`` expression (see reconciler.select)."""

    select: Annotated[str, StringConstraints(min_length=1, max_length=500)]
    paths: tuple[PathGlob, ...] = Field(
        (),
        description="setting paths (globs, e.g. firmware/*) the rollout carries; "
        "empty: every pending change of the selected devices",
    )


class Strata(Strict):
    """Strata are the combinations of every attribute the change touches (automatic:
    model, platform, vendor, role and the current version of every touched component)
    plus these extra attributes (e.g. ``rack``, ``label.nic_revision``)."""

    extra_attributes: tuple[Attribute, ...] = ()
    canary_per_stratum: StrictInt = Field(1, ge=1, le=16)
    canary_waves: StrictInt = Field(
        1,
        ge=1,
        le=8,
        description="waves the canary may span when the caps cannot hold it in one; "
        "no later wave starts before every stratum has its canaries",
    )


class Waves(Strict):
    """After the canary, each wave is ``growth`` times the previous, within the caps."""

    growth: StrictFloat = Field(2.0, ge=1.0, le=10.0)
    first_wave: StrictInt | None = Field(None, ge=1, description="size after the canary")


class Caps(Strict):
    per_wave: StrictInt | None = Field(None, ge=1)
    per_rack: StrictInt | None = Field(None, ge=1)
    per_power_domain: StrictInt | None = Field(None, ge=1)
    per_cooling_domain: StrictInt | None = Field(None, ge=1)
    per_dp_replica: StrictInt | None = Field(None, ge=1, description="nodes of one DP replica")
    fleet_fraction_in_flight: StrictFloat | None = Field(None, gt=0.0, le=1.0)


class BakeMode(StrEnum):
    fixed = "fixed"
    auto = "auto"


class Bake(Strict):
    """How long each wave soaks before it is judged.

    ``auto``: the bake T is sized so that failures at ``detect_rate_ratio`` times the
    baseline rate (lambda per target-hour) would exceed the Poisson background
    ``lambda * N * T`` with the declared confidence; bounded by min/max.
    """

    mode: BakeMode = BakeMode.auto
    fixed_minutes: StrictFloat | None = Field(None, gt=0)
    baseline_failures_per_target_hour: StrictFloat = Field(0.0005, gt=0.0, le=1.0)
    detect_rate_ratio: StrictFloat = Field(3.0, gt=1.0, le=100.0)
    confidence: Probability = 0.95
    min_minutes: StrictFloat = Field(15.0, gt=0)
    max_minutes: StrictFloat = Field(24 * 60.0, gt=0)

    @model_validator(mode="after")
    def _fixed_has_minutes(self) -> Bake:
        if self.mode is BakeMode.fixed and self.fixed_minutes is None:
            raise ValueError("mode fixed needs fixed_minutes")
        if self.min_minutes > self.max_minutes:
            raise ValueError("min_minutes must not exceed max_minutes")
        return self


class Price(Strict):
    usd_per_gpu_hour: StrictFloat = Field(3.0, ge=0.0)
    drain_minutes: StrictFloat = Field(20.0, ge=0.0, description="drain + change + return")


class Statistic(StrEnum):
    median_ratio = "median_ratio"  # median of wave targets / median of controls
    mean_ratio = "mean_ratio"
    rate_difference = "rate_difference"  # events per target-hour, wave minus controls


class TestKind(StrEnum):
    permutation = "permutation"  # exact (or Monte Carlo) permutation test, scipy.stats
    bootstrap = "bootstrap"  # bootstrap confidence band of the statistic, scipy.stats


class Direction(StrEnum):
    higher_is_worse = "higher_is_worse"
    lower_is_worse = "lower_is_worse"


class Source(StrEnum):
    lab = "lab"
    prometheus = "prometheus"


class Metric(Strict):
    """One pre-registered abort condition on a measured signal."""

    name: Name
    source: Source = Source.lab
    signal: Name = Field(description="lab metric name, or a label for the query")
    query: str | None = Field(None, max_length=2000, description="PromQL with {target}")
    statistic: Statistic = Statistic.median_ratio
    test: TestKind = TestKind.permutation
    direction: Direction = Direction.higher_is_worse
    threshold: StrictFloat = Field(description="practical threshold of the statistic")
    alpha: Probability = 0.05
    min_samples: StrictInt = Field(5, ge=2, description="per group; fewer holds the wave")
    absolute_max: StrictFloat | None = Field(None, description="no target may exceed this")
    absolute_min: StrictFloat | None = None


class HardFault(StrEnum):
    unreachable = "unreachable"
    unknown = "unknown"
    acceptance_failed = "acceptance_failed"
    fec_uncorrectable = "fec_uncorrectable"
    link_flap = "link_flap"
    bgp_down = "bgp_down"
    lossless_discards = "lossless_discards"


class Abort(Strict):
    metrics: tuple[Metric, ...] = ()
    hard_faults: tuple[HardFault, ...] = tuple(HardFault)
    aa_noise_floor: StrictBool = Field(True, description="measure A/A before the first wave")


class RollbackScope(StrEnum):
    target = "target"
    wave = "wave"
    rollout = "rollout"


class Rollback(Strict):
    scope: RollbackScope = RollbackScope.wave
    automatic: StrictBool = True


class RolloutSpec(Strict):
    name: Name
    description: str | None = Field(None, max_length=2000)
    targets: Targets
    strata: Strata = Field(default_factory=Strata)
    waves: Waves = Field(default_factory=Waves)
    caps: Caps = Field(default_factory=Caps)
    bake: Bake = Field(default_factory=Bake)
    drain: StrictBool = False
    price: Price = Field(default_factory=Price)
    abort: Abort = Field(default_factory=Abort)
    rollback: Rollback = Field(default_factory=Rollback)
    seed: StrictInt = 0


class RolloutFile(Strict):
    """Schema of ``rollouts/NAME.yaml``."""

    rollout: RolloutSpec
