"""Strata of a change (pure): which components it touches, and which targets share every
attribute the change touches.

A defect that a change brings often hits only one kind of target: one NIC revision,
one current firmware version, one vendor's NOS. A canary that holds one target of
every such kind is sure to meet it. The stratum key of a target is

* its ``model``, ``platform``, ``vendor`` and ``role``;
* the version it runs now (the change's ``before`` value) of every *versioned*
  component the change touches anywhere (``firmware/<component>``, ``nos``), or
  ``unchanged`` when the change leaves that component alone on this target;
* the spec's extra attributes (``rack``, ``label.nic_revision``, ``power_domain``...).

Non-versioned components (``mtu``, ``ecn``, ``pfc``...) are reported as touched, but
their current values are settings, not kinds of target, and do not split strata.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from reconciler.settings import Change
from rollouts.topology import FleetShape, Seat, attribute, seats

UNCHANGED = "unchanged"
BASE_ATTRIBUTES = ("model", "platform", "vendor", "role")

# (path glob, component); the first match wins. ``*`` in the component takes the
# matched path's second segment (``firmware/nic_firmware`` -> ``nic_firmware``).
_COMPONENTS: tuple[tuple[str, str], ...] = (
    ("firmware/*", "*"),
    ("system/nos_version", "nos"),
    ("*/*/rdma_mtu", "rdma_mtu"),
    ("*/*/mtu", "mtu"),
    ("*/*/pfc_priorities", "pfc"),
    ("*/*/address", "address"),
    ("qos/dscp/*", "dscp_map"),
    ("qos/ecn/*", "ecn"),
    ("qos/pfc_xoff_kb", "pfc_xoff"),
    ("qos/pfc_headroom_kb", "pfc_headroom"),
    ("bgp/neighbors/*", "bgp_neighbors"),
    ("bgp/*", "bgp"),
)
_VERSIONED = ("firmware/*", "system/nos_version")


def component_of(path: str) -> str:
    """The component a setting path belongs to (its first segment when none matches)."""
    for pattern, component in _COMPONENTS:
        if fnmatch.fnmatchcase(path, pattern):
            return path.split("/")[1] if component == "*" else component
    return path.split("/")[0]


def is_versioned(path: str) -> bool:
    """Firmware and NOS versions: the current value names a kind of target."""
    return any(fnmatch.fnmatchcase(path, pattern) for pattern in _VERSIONED)


def touched_components(changes: Mapping[str, Sequence[Change]]) -> tuple[str, ...]:
    """Every component any target's changes touch, sorted."""
    return tuple(sorted({component_of(c.path) for cs in changes.values() for c in cs}))


def carried(changes: Sequence[Change], paths: Sequence[str]) -> tuple[Change, ...]:
    """The changes a rollout carries: those matching ``paths`` (all when it is empty)."""
    if not paths:
        return tuple(changes)
    return tuple(c for c in changes if any(fnmatch.fnmatchcase(c.path, p) for p in paths))


@dataclass(frozen=True)
class Stratum:
    """Targets that share every touched attribute; ``key`` lists (attribute, value)."""

    id: str
    key: tuple[tuple[str, str], ...]
    members: tuple[str, ...]

    def label(self, attributes: Sequence[str] | None = None) -> str:
        shown = [(k, v) for k, v in self.key if attributes is None or k in attributes]
        return " ".join(f"{k}={v}" for k, v in shown)


@dataclass(frozen=True)
class Stratification:
    """The strata of one change over its targets."""

    components: tuple[str, ...]
    versioned: tuple[str, ...]
    attributes: tuple[str, ...]
    strata: tuple[Stratum, ...]

    @property
    def targets(self) -> tuple[str, ...]:
        return tuple(sorted(t for s in self.strata for t in s.members))

    def of(self, target: str) -> Stratum:
        for stratum in self.strata:
            if target in stratum.members:
                return stratum
        raise KeyError(target)

    def varying(self) -> tuple[str, ...]:
        """The attributes whose value differs between strata (what tells them apart)."""
        return tuple(
            a for i, a in enumerate(self.attributes) if len({s.key[i][1] for s in self.strata}) > 1
        )


def stratify(
    fleet: FleetShape,
    changes: Mapping[str, Sequence[Change]],
    extra_attributes: Sequence[str] = (),
) -> Stratification:
    """Group the targets (the keys of ``changes``) by their stratum key."""
    versions: dict[str, str] = {}
    for target_changes in changes.values():
        for change in target_changes:
            if is_versioned(change.path):
                versions[change.path] = component_of(change.path)
    versioned_paths = sorted(versions, key=lambda p: (versions[p], p))
    attributes = (
        *BASE_ATTRIBUTES,
        *(versions[p] for p in versioned_paths),
        *(a for a in extra_attributes if a not in BASE_ATTRIBUTES),
    )
    targets = sorted(changes)
    seat_of: dict[str, Seat] = seats(fleet, targets)
    groups: dict[tuple[tuple[str, str], ...], list[str]] = {}
    for target in targets:
        before = {c.path: c.before for c in changes[target]}
        key: list[tuple[str, str]] = [
            (a, attribute(fleet, seat_of[target], target, a)) for a in BASE_ATTRIBUTES
        ]
        for path in versioned_paths:
            value = str(before[path]) if path in before else UNCHANGED
            key.append((versions[path], value))
        key += [
            (a, attribute(fleet, seat_of[target], target, a))
            for a in extra_attributes
            if a not in BASE_ATTRIBUTES
        ]
        groups.setdefault(tuple(key), []).append(target)
    strata = tuple(
        Stratum(f"S{i + 1}", key, tuple(groups[key])) for i, key in enumerate(sorted(groups))
    )
    return Stratification(
        touched_components(changes),
        tuple(versions[p] for p in versioned_paths),
        attributes,
        strata,
    )
