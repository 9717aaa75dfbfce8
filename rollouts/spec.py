"""Rollout specs: ``rollouts/NAME.yaml`` in the fleet repo, declared before a rollout starts.

A spec says which targets a change covers, how canaries are stratified, how waves
grow within which caps, how long each wave bakes, which abort conditions judge it
(pre-registered: statistic, test, threshold, noise floor), whether the change needs
a drain, and the rollback scope. Everything the planner and the assessment use is
here, so a rollout is reviewable as data before it touches anything.
"""

from __future__ import annotations

import re
from enum import StrEnum
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    BeforeValidator,
    Field,
    ModelWrapValidatorHandler,
    StrictBool,
    StrictFloat,
    StrictInt,
    StringConstraints,
    model_validator,
)

from inventory.models import Role
from inventory.schemabase import Name, Strict

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
    never_both_tors: StrictBool = Field(
        False,
        description="no wave holds two switches cabled to the same host (both ToRs of "
        "a pair, or two rails of one node): no host loses two uplinks at once",
    )
    per_role: dict[Role, Annotated[StrictInt, Field(ge=1)]] = Field(
        default_factory=dict,
        description="role (tier) -> devices of that role in one wave, e.g. {spine: 1}",
    )


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
    dataplane = "dataplane"  # the real-network lab's probes: hard faults only


class MetricKind(StrEnum):
    gauge = "gauge"  # sampled across the window (range query), every sample kept
    counter = "counter"  # events in the window (instant query at its end, per target-hour)


class MetricTemplate(StrEnum):
    """Ready-made queries (see :mod:`rollouts.sources.templates`)."""

    step_time = "step_time"
    throughput = "throughput"
    sm_active = "sm_active"
    gpu_power = "gpu_power"
    xid_errors = "xid_errors"
    pfc_pause_rx = "pfc_pause_rx"
    ecn_marked = "ecn_marked"
    lossless_discards = "lossless_discards"
    fec_uncorrectable = "fec_uncorrectable"
    link_flaps = "link_flaps"
    bgp_down = "bgp_down"


COUNT_TEMPLATES = frozenset(
    {
        MetricTemplate.xid_errors,
        MetricTemplate.pfc_pause_rx,
        MetricTemplate.ecn_marked,
        MetricTemplate.lossless_discards,
        MetricTemplate.fec_uncorrectable,
        MetricTemplate.link_flaps,
        MetricTemplate.bgp_down,
    }
)
"""The templates of kind ``counter`` (events over the window); the others are gauges."""


PromLabel = Annotated[
    str, StringConstraints(pattern=r"^([A-Za-z][A-Za-z0-9_]{0,62}|_[A-Za-z0-9][A-Za-z0-9_]{0,61})$")
]
"""A Prometheus label name (``__``-prefixed names are Prometheus's own)."""
_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
_TARGETS_SPOT = re.compile(r'=~"\{targets\}"')
_WINDOW_SPOT = re.compile(r"\[\{window\}[]:]")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def query_template_problem(text: str) -> str | None:
    """Why ``text`` is not a usable PromQL template, or None.

    ``{targets}`` (the wave's or controls' names, as an anchored regex) may appear only
    as a whole regex matcher value, ``label=~"{targets}"``, and must appear at least
    once; ``{window}`` (the window's length) only as a range, ``[{window}]`` or
    ``[{window}:step]``. Control characters other than tab and newline are refused."""
    if _CONTROL.search(text):
        return "control characters are not allowed in a query"
    names = _PLACEHOLDER.findall(text)
    unknown = sorted(set(names) - {"targets", "window"})
    if unknown:
        return f"unknown placeholder {{{unknown[0]}}} (known: {{targets}}, {{window}})"
    if "targets" not in names:
        return 'a query must select its targets with label=~"{targets}"'
    if names.count("targets") != len(_TARGETS_SPOT.findall(text)):
        return '{targets} may only appear as a whole regex matcher: label=~"{targets}"'
    if names.count("window") != len(_WINDOW_SPOT.findall(text)):
        return "{window} may only appear as a range: [{window}] or [{window}:step]"
    return None


def _checked_query(text: str) -> str:
    problem = query_template_problem(text)
    if problem is not None:
        raise ValueError(problem)
    return text


PromQL = Annotated[
    str, StringConstraints(min_length=1, max_length=2000), AfterValidator(_checked_query)
]
"""A PromQL template: see :func:`query_template_problem`."""


class Metric(Strict):
    """One pre-registered abort condition on a measured signal.

    A ``prometheus`` metric names a ``template`` or its own ``query`` (PromQL with the
    placeholders ``{targets}`` and ``{window}``), the label that carries each target's
    name (``target_label``) and whether the query is sampled or counts events
    (``kind``); a ``lab`` metric uses none of these."""

    name: Name
    source: Source = Source.lab
    signal: Name = Field(description="lab metric name, or a label for the query")
    template: MetricTemplate | None = Field(None, description="a ready-made query (prometheus)")
    query: PromQL | None = Field(
        None, description='PromQL selecting label=~"{targets}", ranges as [{window}]'
    )
    target_label: PromLabel | None = Field(
        None, description="the label holding the target's name; series are grouped by it"
    )
    kind: MetricKind | None = Field(None, description="gauge (default) or counter")
    statistic: Statistic = Statistic.median_ratio
    test: TestKind = TestKind.permutation
    direction: Direction = Direction.higher_is_worse
    threshold: StrictFloat = Field(description="practical threshold of the statistic")
    alpha: Probability = 0.05
    min_samples: StrictInt = Field(5, ge=2, description="per group; fewer holds the wave")
    absolute_max: StrictFloat | None = Field(None, description="no target may exceed this")
    absolute_min: StrictFloat | None = None

    @model_validator(mode="wrap")
    @classmethod
    def _query_fits_the_source(
        cls, data: Any, handler: ModelWrapValidatorHandler[Metric]
    ) -> Metric:
        metric = handler(data)
        if not isinstance(data, Metric):  # an instance was checked when it was made
            metric.check_query()
        return metric

    def check_query(self) -> None:
        """A lab metric has no query; a prometheus one has exactly one, consistent."""
        prometheus_only = ("template", "query", "target_label", "kind")
        if self.source is Source.lab:
            given = [f for f in prometheus_only if getattr(self, f) is not None]
            if given:
                raise ValueError(f"{', '.join(given)}: only for source prometheus")
            return
        check_query_choice(self.template, self.query, self.target_label)
        if self.template is not None and self.kind is not None:
            raise ValueError("kind comes from the template")
        if self.kind is MetricKind.counter and "{window}" not in (self.query or ""):
            raise ValueError("a counter query counts events over [{window}]")


def check_query_choice(template: object, query: str | None, target_label: str | None) -> None:
    """Exactly one of template and query; an own query names its target label."""
    if (template is None) == (query is None):
        raise ValueError("a prometheus query needs exactly one of template and query")
    if query is not None and target_label is None:
        raise ValueError("a query needs target_label (the label holding the target's name)")


class HardFault(StrEnum):
    unreachable = "unreachable"
    unknown = "unknown"
    acceptance_failed = "acceptance_failed"
    fec_uncorrectable = "fec_uncorrectable"
    link_flap = "link_flap"
    bgp_down = "bgp_down"
    lossless_discards = "lossless_discards"
    path_mtu = "path_mtu"  # a DF probe between racks lost: a black-holed path


DEFAULT_HARD_FAULTS = tuple(k for k in HardFault if k is not HardFault.path_mtu)
"""What ``abort.hard_faults`` is when a spec does not say: every kind but ``path_mtu``,
which only a data-plane source (the real-network lab) counts; declare it there."""

OBSERVED_FAULTS = frozenset({HardFault.unreachable, HardFault.unknown})
"""Counted by the rollout loop from observing its devices, not by a metrics source."""


class FaultQuery(Strict):
    """How Prometheus counts one hard-fault kind: a count ``template`` or an own
    ``query`` counting events over ``[{window}]``, per ``target_label``."""

    template: MetricTemplate | None = None
    query: PromQL | None = None
    target_label: PromLabel | None = Field(None, description="default: the template's")

    @model_validator(mode="after")
    def _one_query(self) -> FaultQuery:
        check_query_choice(self.template, self.query, self.target_label)
        if self.template is not None and self.template not in COUNT_TEMPLATES:
            counts = ", ".join(sorted(t.value for t in COUNT_TEMPLATES))
            raise ValueError(f"template {self.template.value} is not a count (counts: {counts})")
        if self.query is not None and "{window}" not in self.query:
            raise ValueError("a hard-fault query counts events over [{window}]")
        return self


PrometheusUrl = Annotated[
    str,
    StringConstraints(
        pattern=r"^https?://([A-Za-z0-9.-]{1,253}|\[[0-9A-Fa-f:.]{2,45}\])(:[0-9]{1,5})?"
        r"(/[A-Za-z0-9._~/-]{0,200})?$"
    ),
]
"""Scheme, host, port and path only: no credentials (the spec lives in git), no query."""


class PrometheusConfig(Strict):
    """Where ``prometheus`` metrics and hard faults are read (``abort.prometheus``)."""

    url: PrometheusUrl = Field(description="base URL, e.g. http://prometheus.mon:9090")
    timeout_seconds: StrictFloat = Field(10.0, gt=0.0, le=120.0, description="per request")
    step_seconds: StrictInt = Field(
        60, ge=1, le=3600, description="resolution of gauge samples across the window"
    )
    hard_faults: dict[HardFault, FaultQuery] = Field(
        default_factory=dict, description="hard-fault kind -> how Prometheus counts it"
    )

    @model_validator(mode="after")
    def _countable_kinds(self) -> PrometheusConfig:
        observed = sorted(k.value for k in self.hard_faults if k in OBSERVED_FAULTS)
        if observed:
            raise ValueError(
                f"{', '.join(observed)}: counted by the rollout from observing its devices"
            )
        return self


class Abort(Strict):
    metrics: tuple[Metric, ...] = ()
    hard_faults: tuple[HardFault, ...] = DEFAULT_HARD_FAULTS
    aa_noise_floor: StrictBool = Field(True, description="measure A/A before the first wave")
    prometheus: PrometheusConfig | None = None


class RollbackScope(StrEnum):
    target = "target"
    wave = "wave"
    rollout = "rollout"


class Rollback(Strict):
    scope: RollbackScope = RollbackScope.wave
    automatic: StrictBool = True


class DrainVia(StrEnum):
    """Who takes a node out of service: the scheduler, a site's commands, or nobody
    (``lab``: the drain is a journal state only, for the lab fleet)."""

    slurm = "slurm"
    command = "command"
    lab = "lab"


class OnTimeout(StrEnum):
    """What happens to jobs still running on a draining node when the wait is over."""

    requeue = "requeue"
    cancel = "cancel"


class OnRequeueRefused(StrEnum):
    """What happens when the scheduler refuses to requeue a job (Slurm requeues batch
    jobs only: an ``srun`` or ``salloc`` job is "Only batch jobs are accepted")."""

    cancel = "cancel"  # cancel it, as on_timeout: cancel would have
    fail = "fail"  # leave it running and fail its nodes (given back, not written)


CommandLine = Annotated[str, StringConstraints(min_length=1, max_length=1000)]
"""A command line (split like a shell would, never run through one); ``{node}`` is the
node's name and ``{reason}`` the drain reason."""


class DrainCommands(Strict):
    """A site's own drain: each command exits 0 on success."""

    drain: CommandLine = Field(description="take {node} out of service, with {reason}")
    drained: CommandLine = Field(description="exits 0 once no work runs on {node}")
    resume: CommandLine = Field(description="return {node} to service")


class Drain(Strict):
    """How drained nodes leave and rejoin service (``drain: true`` is ``{via: lab}``)."""

    via: DrainVia = DrainVia.lab
    timeout_minutes: StrictFloat = Field(
        60.0, ge=0.0, le=7 * 24 * 60.0, description="wait this long for running jobs to end"
    )
    on_timeout: OnTimeout = Field(
        OnTimeout.requeue, description="then requeue or cancel the jobs still running (slurm)"
    )
    on_requeue_refused: OnRequeueRefused = Field(
        OnRequeueRefused.fail,
        description="when a job cannot be requeued (not a batch job): cancel it, or fail its "
        "nodes at once (the default: a job nobody agreed to cancel keeps running)",
    )
    command: DrainCommands | None = Field(None, description="the commands of via: command")

    @model_validator(mode="after")
    def _commands_for_command(self) -> Drain:
        if (self.via is DrainVia.command) != (self.command is not None):
            raise ValueError("command: exactly when via is command")
        return self


def _drain_from_bool(value: object) -> object:
    if value is True:
        return {"via": DrainVia.lab.value}
    if value is False:
        return None
    return value


class AcceptanceRun(StrEnum):
    node = "node"  # on the node, through its host driver (ansible)
    local = "local"  # on the machine running plumb (a site's harness that reaches the node)


class Acceptance(Strict):
    """A node's acceptance test: exit 0 passes; ``key=value`` lines of its output are
    kept as figures (bus bandwidth, diag results)."""

    command: CommandLine = Field(description="e.g. all_reduce_perf -b 8G -e 8G; {node}")
    timeout_seconds: StrictFloat = Field(600.0, gt=0.0, le=24 * 3600.0)
    run: AcceptanceRun = AcceptanceRun.node


WaveNumber = Annotated[StrictInt, Field(ge=1)]


class Approval(Strict):
    """Waves that wait for a person: before each wave listed the rollout pauses
    (``awaiting_promotion``) until ``plumb rollout promote ID --wave N``."""

    before_waves: tuple[WaveNumber, ...] = Field(
        (), description="wave numbers (1 is the first wave) that start only once promoted"
    )


class RolloutSpec(Strict):
    name: Name
    description: str | None = Field(None, max_length=2000)
    targets: Targets
    strata: Strata = Field(default_factory=Strata)
    waves: Waves = Field(default_factory=Waves)
    caps: Caps = Field(default_factory=Caps)
    bake: Bake = Field(default_factory=Bake)
    drain: Annotated[
        Drain | None,
        BeforeValidator(_drain_from_bool, json_schema_input_type=Drain | StrictBool | None),
    ] = Field(None, description="true, or {via: slurm | command | lab, ...}")
    acceptance: dict[Role, Acceptance] = Field(
        default_factory=dict, description="role -> the acceptance test its drained nodes pass"
    )
    price: Price = Field(default_factory=Price)
    abort: Abort = Field(default_factory=Abort)
    rollback: Rollback = Field(default_factory=Rollback)
    approval: Approval = Field(default_factory=Approval)
    seed: StrictInt = 0

    @property
    def drains(self) -> bool:
        """Does the change take its nodes out of service?"""
        return self.drain is not None

    @model_validator(mode="after")
    def _prometheus_configured(self) -> RolloutSpec:
        if self.abort.prometheus is None:
            names = [m.name for m in self.abort.metrics if m.source is Source.prometheus]
            if names:
                raise ValueError(f"{', '.join(names)}: source prometheus needs abort.prometheus")
        if self.acceptance and not self.drains:
            raise ValueError("acceptance: only a drained node runs acceptance (set drain)")
        return self


class RolloutFile(Strict):
    """Schema of ``rollouts/NAME.yaml``."""

    rollout: RolloutSpec
