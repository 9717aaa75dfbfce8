"""The lab fleet's telemetry (pure): a virtual clock and per-target time series with
realistic noise, so abort conditions can be exercised end to end without hardware.
The clock and attached defects persist in :mod:`lab.clock`; the
rollout metrics source over them is :mod:`lab.source`.

One sample every :data:`SAMPLE_MINUTES` of virtual time, at minutes ``5k``:

===================== ============================================================
signal                model
===================== ============================================================
``step_time_s``       GPU nodes: seconds per training step = base x per-node factor
                      (log-normal, fixed per node) x log-normal sample noise, with
                      rare stragglers (checkpoint, GC) 1.2-2x slower
``gpu_sm_activity``   GPU nodes: SM activity fraction, per-node level + noise
``fec_uncorrectable`` every device: uncorrectable FEC codewords in the interval,
                      Poisson (rate 0 on a healthy link)
``link_flaps``        every device: link flaps in the interval, Poisson (rare)
``bgp_down``          every device: BGP sessions lost in the interval, Poisson (0)
``lossless_discards`` every device: drops in the lossless class, Poisson (0)
``acceptance``        GPU nodes: one acceptance run an hour, 1.0 pass / 0.0 fail
===================== ============================================================

A :class:`Defect` attaches to a combination of attributes (observed setting paths such
as ``firmware/nic_firmware``, inventory fields such as ``model`` or ``rack``, labels
as ``label.nic_revision``) and changes the signals of every target whose *current*
attributes match, so a defect tied to a firmware version appears only once that
firmware has landed. Values depend only on (seed, target, signal, sample time) and
the matching defects: any window over the same minutes gives the same samples.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields, replace
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from statistics import NormalDist
from typing import Any, Protocol

from inventory.extras import optional_imports

with optional_imports():
    import numpy as np
    from numpy.typing import NDArray

from reconciler.settings import Scalar

LAB_EPOCH = datetime(2026, 12, 1, tzinfo=UTC)
SAMPLE_MINUTES = 5
_BLOCK = 12  # samples drawn from one generator: one hour
_NODE = 1_000  # generator stream of a node's fixed traits
_NORMAL = NormalDist()
Floats = NDArray[np.float64]


class VirtualClock(Protocol):
    def now(self) -> float:
        """Minutes of virtual time since :data:`LAB_EPOCH`."""
        ...


@dataclass
class ManualClock:
    """A clock that moves only when told (tests, dry runs)."""

    minutes: float = 0.0

    def now(self) -> float:
        return self.minutes

    def advance(self, minutes: float) -> float:
        self.minutes += minutes
        return self.minutes


def lab_time(minutes: float) -> datetime:
    return LAB_EPOCH + timedelta(minutes=minutes)


def lab_minutes(when: datetime) -> float:
    return (when - LAB_EPOCH).total_seconds() / 60.0


@dataclass(frozen=True)
class Window:
    """Virtual minutes ``[start, end)``."""

    start: float
    end: float

    def __post_init__(self) -> None:
        if not self.end >= self.start:
            raise ValueError(f"window ends ({self.end}) before it starts ({self.start})")

    @classmethod
    def ending(cls, now: float, minutes: float) -> Window:
        return cls(now - minutes, now)

    @property
    def hours(self) -> float:
        return (self.end - self.start) / 60.0

    def sample_indices(self, every: int = 1) -> range:
        """Indices ``k`` of the samples at minute ``5k`` inside the window."""
        first = math.ceil(self.start / SAMPLE_MINUTES)
        last = math.ceil(self.end / SAMPLE_MINUTES)
        return range(first + (-first) % every, last, every)


class Signal(StrEnum):
    step_time_s = "step_time_s"
    gpu_sm_activity = "gpu_sm_activity"
    fec_uncorrectable = "fec_uncorrectable"
    link_flaps = "link_flaps"
    bgp_down = "bgp_down"
    lossless_discards = "lossless_discards"
    acceptance = "acceptance"

    @property
    def is_count(self) -> bool:
        return self in _COUNTS


_COUNTS = (Signal.fec_uncorrectable, Signal.link_flaps, Signal.bgp_down, Signal.lossless_discards)
_GPU_ONLY = (Signal.step_time_s, Signal.gpu_sm_activity, Signal.acceptance)
ACCEPTANCE_EVERY = 12  # samples: one acceptance run an hour


@dataclass(frozen=True)
class Baseline:
    """A healthy fleet. Rates are events per target-hour."""

    step_time_s: float = 1.25
    node_jitter: float = 0.015  # sigma of the per-node log-normal factor
    sample_noise: float = 0.03  # sigma of each sample's log-normal noise
    straggler_probability: float = 0.01
    sm_activity: float = 0.92
    sm_noise: float = 0.02
    fec_rate: float = 0.0
    link_flap_rate: float = 0.0005
    bgp_down_rate: float = 0.0
    lossless_discard_rate: float = 0.0
    acceptance_fail_probability: float = 0.0


HEALTHY = Baseline()

_RATE_FIELD = {
    Signal.fec_uncorrectable: "fec_rate",
    Signal.link_flaps: "link_flap_rate",
    Signal.bgp_down: "bgp_down_rate",
    Signal.lossless_discards: "lossless_discard_rate",
}


@dataclass(frozen=True)
class Defect:
    """A fault of some combination of attributes (all of ``match`` must hold)."""

    match: Mapping[str, Scalar]
    step_time_factor: float = 1.0
    sm_activity_factor: float = 1.0
    fec_rate: float = 0.0
    link_flap_rate: float = 0.0
    bgp_down_rate: float = 0.0
    lossless_discard_rate: float = 0.0
    acceptance_fail_probability: float = 0.0
    note: str = ""
    id: int | None = None  # assigned by the store

    def __post_init__(self) -> None:
        if not self.match:
            raise ValueError("a defect needs at least one attribute to match")
        if self.step_time_factor <= 0 or self.sm_activity_factor <= 0:
            raise ValueError("defect factors must be positive")
        if min(getattr(self, name) for name in _RATE_FIELD.values()) < 0:
            raise ValueError("defect rates must not be negative")
        if not 0.0 <= self.acceptance_fail_probability <= 1.0:
            raise ValueError("acceptance_fail_probability must be within [0, 1]")

    def matches(self, attributes: Mapping[str, Scalar]) -> bool:
        return all(
            key in attributes and str(attributes[key]) == str(want)
            for key, want in self.match.items()
        )

    @classmethod
    def with_effects(
        cls,
        match: Mapping[str, Scalar],
        effects: Mapping[str, float],
        *,
        note: str = "",
        id: int | None = None,
    ) -> Defect:
        """A defect from effect names and values (``{"fec_rate": 2.0}``), checked."""
        known = {f.name for f in fields(cls) if isinstance(f.default, float)}
        unknown = sorted(set(effects) - known)
        if unknown:
            raise ValueError(
                f"unknown defect effect {', '.join(unknown)}; known: {', '.join(sorted(known))}"
            )
        changes: dict[str, Any] = {name: float(value) for name, value in effects.items()}
        return replace(cls(match=match, note=note, id=id), **changes)

    def effects(self) -> dict[str, float]:
        """The effect fields that differ from a healthy target."""
        return {
            f.name: getattr(self, f.name)
            for f in fields(self)
            if isinstance(f.default, float) and getattr(self, f.name) != f.default
        }

    def describe(self) -> str:
        where = ", ".join(f"{k}={v}" for k, v in sorted(self.match.items()))
        effects = " ".join(f"{k}={v:g}" for k, v in self.effects().items())
        return f"[{where}] {effects or 'no effect'}"


def parse_match(text: str) -> dict[str, Scalar]:
    """``"firmware/nic_firmware=28.43.1014,label.nic_revision=B0"`` -> a match mapping."""
    match: dict[str, Scalar] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        key, sep, value = part.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"defect match {part!r}: expected attribute=value")
        match[key.strip()] = value.strip()
    return match


def target_attributes(
    inventory: Mapping[str, Scalar], labels: Mapping[str, str], state: Mapping[str, Scalar]
) -> dict[str, Scalar]:
    """What a defect can match: observed settings, inventory fields, ``label.<key>``."""
    out: dict[str, Scalar] = dict(state)
    out.update(inventory)
    out.update({f"label.{key}": value for key, value in labels.items()})
    return out


def _rng(seed: int, target: str, stream: int, block: int = 0) -> np.random.Generator:
    mask = 0xFFFF_FFFF_FFFF_FFFF  # seeds and blocks before the epoch may be negative
    key = [seed & mask, zlib.crc32(target.encode()), stream, block & mask]
    return np.random.default_rng(key)


def _block(seed: int, target: str, signal: Signal, block: int, rate: float) -> Floats:
    """The :data:`_BLOCK` raw draws of one signal for samples ``12 block ...``."""
    rng = _rng(seed, target, list(Signal).index(signal), block)
    if signal.is_count:
        return rng.poisson(rate * SAMPLE_MINUTES / 60.0, _BLOCK).astype(np.float64)
    return rng.random((3, _BLOCK))  # noise, straggler draw, straggler size


def series(
    seed: int,
    target: str,
    attributes: Mapping[str, Scalar],
    signal: Signal,
    window: Window,
    defects: Iterable[Defect] = (),
    baseline: Baseline = HEALTHY,
) -> tuple[float, ...]:
    """The samples of ``signal`` on ``target`` inside ``window``, oldest first."""
    gpu = attributes.get("role") == "gpu-node"
    if signal in _GPU_ONLY and not gpu:
        return ()
    hits = [d for d in defects if d.matches(attributes)]
    every = ACCEPTANCE_EVERY if signal is Signal.acceptance else 1
    indices = window.sample_indices(every)
    if signal.is_count:
        name = _RATE_FIELD[signal]
        rate = getattr(baseline, name) + sum(getattr(d, name) for d in hits)
        blocks = {b: _block(seed, target, signal, b, rate) for b in {k // _BLOCK for k in indices}}
        return tuple(float(blocks[k // _BLOCK][k % _BLOCK]) for k in indices)
    blocks = {b: _block(seed, target, signal, b, 0.0) for b in {k // _BLOCK for k in indices}}
    draws = [blocks[k // _BLOCK][:, k % _BLOCK] for k in indices]
    if signal is Signal.acceptance:
        keep = math.prod(1.0 - d.acceptance_fail_probability for d in hits)
        fail = 1.0 - (1.0 - baseline.acceptance_fail_probability) * keep
        return tuple(0.0 if u[0] < fail else 1.0 for u in draws)
    node = _rng(seed, target, _NODE).normal(size=2)
    if signal is Signal.step_time_s:
        level = baseline.step_time_s * math.exp(baseline.node_jitter * node[0])
        level *= math.prod(d.step_time_factor for d in hits)
        return tuple(
            level
            * math.exp(baseline.sample_noise * _normal(u[0]))
            * (1.2 + 0.8 * u[2] if u[1] < baseline.straggler_probability else 1.0)
            for u in draws
        )
    level = baseline.sm_activity * (1.0 + baseline.sm_noise * node[1])
    level *= math.prod(d.sm_activity_factor for d in hits)
    return tuple(
        min(1.0, max(0.0, float(level + baseline.sm_noise * _normal(u[0])))) for u in draws
    )


def _normal(u: float) -> float:
    """A uniform draw made standard normal (one generator call per block serves all)."""
    return _NORMAL.inv_cdf(min(max(u, 1e-12), 1.0 - 1e-12))
