"""Schema of the compact ``topology:`` section of an inventory file.

The section holds rules (racks, devices and cables written once as patterns over index
ranges) and the exceptions to them; :mod:`inventory.topology` expands it into ordinary
records. Pattern fields are text (``gpu-n{n:04}``) or plain values; what a pattern
produces is checked afterwards exactly as a hand-written record is, by
:class:`inventory.models.InventoryFile`.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, StrictFloat, StrictInt, StringConstraints, model_validator

from inventory.schemabase import Label, Name, Strict

Variable = Annotated[str, StringConstraints(pattern=r"^[a-z_][a-z0-9_]{0,31}$")]
"""A loop variable or constant: lower-case, usable in an expression."""

RangeText = Annotated[
    str,
    StringConstraints(pattern=r"^[^.]+\.\.[^.]+$", max_length=200),
    Field(description="inclusive range FIRST..LAST, each an expression (e.g. 1..nodes)"),
]
Pattern = Annotated[
    str,
    StringConstraints(min_length=1, max_length=200),
    Field(description="text with {expression} or {expression:04} fields"),
]
IntPattern = StrictInt | Pattern
Length = Annotated[StrictFloat | StrictInt, Field(gt=0, le=2000)]
Endpoint = Annotated[
    str,
    StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,62}:[A-Za-z][A-Za-z0-9/._-]{0,31}$"),
]

Loops = Annotated[
    dict[Variable, RangeText],
    Field(
        alias="for",
        description="loop variables and their ranges, outermost first (records come "
        "out in this order)",
    ),
]


class Rule(Strict):
    """What every rule has: a name (for messages and exceptions) and its loops."""

    rule: Name
    loops: Loops = Field(default_factory=dict)


class RackRule(Rule):
    name: Pattern
    kind: Pattern | None = None
    power_domain: Pattern
    cooling_domain: Pattern
    row: Pattern | None = None


class NicRule(Strict):
    """NICs of each generated device; ``for`` ranges here are constant."""

    loops: Loops = Field(default_factory=dict)
    name: Pattern
    speed_gbps: IntPattern
    rail: IntPattern | None = None
    model: Pattern | None = None
    revision: Pattern | None = None


class DeviceRule(Rule):
    name: Pattern
    role: Pattern
    vendor: Pattern
    model: Pattern
    platform: Pattern
    rack: Pattern
    mgmt: Pattern
    rail: IntPattern | None = None
    pod: Pattern | None = None
    gpus: IntPattern | None = None
    nics: tuple[NicRule, ...] = ()
    labels: dict[Label, Pattern] = Field(default_factory=dict)


class LinkRule(Rule):
    """Cables. Lengths: one ``length_m`` for all, or a ``lengths_m`` table (one value
    per cable with one loop variable; else one row per combination of the outer
    variables, one value per value of the innermost)."""

    a: Pattern
    a_port: Pattern
    b: Pattern
    b_port: Pattern
    link_class: Pattern = Field(alias="class")
    length_m: Length | None = None
    lengths_m: tuple[Length, ...] | tuple[tuple[Length, ...], ...] | None = None
    speed_gbps: IntPattern | None = None

    @model_validator(mode="after")
    def _one_length(self) -> LinkRule:
        if (self.length_m is None) == (self.lengths_m is None):
            raise ValueError("give exactly one of length_m (every cable) and lengths_m (a table)")
        return self


class TopologyException(Strict):
    """One generated record changed or removed: a cable moved, a node out of the fabric,
    another length, a device of another model."""

    device: Name | None = None
    rack: Name | None = None
    cable: Endpoint | None = Field(None, description="either end of the cable: DEVICE:PORT")
    remove: Literal[True] | None = None
    set: dict[str, Any] | None = Field(None, description="fields to replace (not name)")
    reason: str | None = Field(None, max_length=300)

    @model_validator(mode="after")
    def _one_target_one_change(self) -> TopologyException:
        targets = [t for t in (self.device, self.rack, self.cable) if t is not None]
        if len(targets) != 1:
            raise ValueError("name exactly one of device, rack and cable")
        if (self.remove is None) == (self.set is None):
            raise ValueError("give exactly one of remove: true and set: {...}")
        if self.set is not None and not self.set:
            raise ValueError("set: is empty")
        return self


class Topology(Strict):
    """Rules and exceptions; expanded into racks, devices and links of the same file."""

    constants: dict[Variable, StrictInt] = Field(default_factory=dict)
    racks: tuple[RackRule, ...] = ()
    devices: tuple[DeviceRule, ...] = ()
    links: tuple[LinkRule, ...] = ()
    exceptions: tuple[TopologyException, ...] = ()
