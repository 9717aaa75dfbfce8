"""EOS QoS grammar: PFC and transmit-queue lines of a port or ``qos profile``, ECN
thresholds, and ``qos map dscp``.

The same lines configure a port and a ``qos profile`` (which ports apply with
``service-profile``).  Transmit queues are ``tx-queue N`` on Jericho/Arad
platforms and ``uc-tx-queue N``/``mc-tx-queue N`` on Trident/Tomahawk ones
(`Grammar.queue_kinds`): the other keyword is refused there.  EOS has no
``priority-flow-control headroom`` or ``xoff-threshold`` command (PFC buffer sizes
are not interface configuration), so those lines are invalid input.

``random-detect ecn minimum-threshold MIN UNIT maximum-threshold MAX UNIT
[max-mark-probability P] [weight W]`` replaces the queue's whole ECN line: an
option left out returns to its default.  ``random-detect ecn count`` (ECN
counters), ``bandwidth``, ``priority``, ``shape`` and ``random-detect drop`` lines
are kept verbatim beside it.
"""

from __future__ import annotations

from .eos_blocks import Block, add_line, negate
from .eos_model import BYTE_UNITS, OTHER_UNITS, EcnThresholds, EosConfig, QosSettings
from .eos_modes import NOT_HERE, EosContext, Grammar, incomplete
from .eos_modes import number as _number
from .eos_vocab import TX_QUEUE, known
from .replies import invalid

THRESHOLD_MAX = 256_000_000
QUEUE_WORDS = ("tx-queue", "uc-tx-queue", "mc-tx-queue")


def qos_line(
    qos: QosSettings, mode: EosContext, tokens: list[str], raw: str, grammar: Grammar
) -> object:
    """PFC lines and queue sub-modes: the same in a port and in a ``qos profile``."""
    match tokens:
        case ["priority-flow-control", "on"] | ["priority-flow-control", "mode", "on"]:
            qos.pfc = True
        case ["no", "priority-flow-control"] | ["priority-flow-control", "mode", "off"]:
            qos.pfc = False
        case ["default", "priority-flow-control"]:
            qos.pfc = None
        case ["priority-flow-control", "priority", prio, "no-drop"]:
            value = _number(prio, "priority", 0, 7)
            qos.no_drop.add(value)
            qos.drop.discard(value)
        case ["priority-flow-control", "priority", prio, "drop"]:
            value = _number(prio, "priority", 0, 7)
            qos.no_drop.discard(value)
            qos.drop.add(value)
        case ["no" | "default", "priority-flow-control", "priority", prio, *rest] if rest in (
            [],
            ["no-drop"],
            ["drop"],
        ):
            value = _number(prio, "priority", 0, 7)
            qos.no_drop.discard(value)
            qos.drop.discard(value)
        case ["priority-flow-control", "pause", "watchdog", *_]:
            add_line(qos.extra, raw)
        case ["no" | "default", "priority-flow-control", "pause", "watchdog", *_]:
            negate(qos.extra, raw.split(None, 1)[1], keep_no=tokens[0] == "no")
        case ["priority-flow-control"] | ["priority-flow-control", "priority", *_]:
            raise incomplete()
        case ["priority-flow-control", *_] | ["no", "priority-flow-control", *_]:
            raise invalid(f"priority-flow-control {tokens[1] if tokens[0] != 'no' else ''}")
        case [kind, *_] if kind in QUEUE_WORDS and kind not in grammar.queue_kinds:
            raise invalid(f"{kind} is not available on this platform")
        case [kind] if kind in QUEUE_WORDS:
            raise incomplete()
        case [kind, queue] if kind in QUEUE_WORDS:
            key = (kind, _number(queue, kind, 0, 7))
            return EosContext(mode.kind, mode.name, key, mode.kind)
        case _:
            return NOT_HERE
    return mode


def queue_line(config: EosConfig, mode: EosContext, tokens: list[str], raw: str) -> object:
    """One line in a ``tx-queue``/``uc-tx-queue``/``mc-tx-queue`` sub-mode."""
    assert mode.queue is not None
    owner = (
        config.interfaces[mode.name].qos
        if mode.within == "interface"
        else config.qos_profiles[mode.name]
    )
    key = mode.queue

    def extra() -> list[Block]:
        return owner.queue_extra.setdefault(key, [])

    match tokens:
        case ["random-detect", "ecn", "minimum-threshold", *rest]:
            owner.queues[mode.queue] = ecn_thresholds(rest)
        case ["random-detect", "ecn", "count"]:
            add_line(extra(), raw)
        case ["no" | "default", "random-detect", "ecn", "count"]:
            negate(extra(), "random-detect ecn count", keep_no=False)
        case ["no" | "default", "random-detect", "ecn", *_]:
            owner.queues.pop(mode.queue, None)
        case ["random-detect"] | ["random-detect", "ecn"]:
            raise incomplete()
        case ["random-detect", "ecn", *_]:
            raise invalid("random-detect ecn")
        case ["no" | "default", *rest] if known(TX_QUEUE, rest):
            negate(extra(), " ".join(rest), keep_no=tokens[0] == "no")
        case _ if known(TX_QUEUE, tokens):
            add_line(extra(), raw)
        case _:
            return NOT_HERE
    return mode


def ecn_thresholds(rest: list[str]) -> EcnThresholds:
    """``minimum-threshold`` onwards of a ``random-detect ecn`` line."""
    if len(rest) < 5:
        raise incomplete()
    low, low_unit, keyword, high, high_unit, *options = rest
    if keyword != "maximum-threshold":
        raise invalid()
    units = (*BYTE_UNITS, *OTHER_UNITS)
    if low_unit not in units or high_unit not in units:
        raise invalid(f"unknown unit {low_unit if low_unit not in units else high_unit}")
    lo = _number(low, "minimum-threshold", 1, THRESHOLD_MAX)
    hi = _number(high, "maximum-threshold", 1, THRESHOLD_MAX)
    if (low_unit in BYTE_UNITS) != (high_unit in BYTE_UNITS) or (
        low_unit in OTHER_UNITS and low_unit != high_unit
    ):
        raise invalid("thresholds must use the same kind of unit")
    scale = BYTE_UNITS if low_unit in BYTE_UNITS else {low_unit: 1}
    if lo * scale[low_unit] > hi * scale[high_unit]:
        raise invalid("minimum-threshold exceeds maximum-threshold")
    probability = weight = None
    for index in range(0, len(options), 2):
        keyword, value = options[index], options[index + 1 : index + 2]
        if keyword not in ("max-mark-probability", "weight"):
            raise invalid()
        if not value:
            raise incomplete()
        if keyword == "max-mark-probability" and probability is None and weight is None:
            probability = _number(value[0], keyword, 1, 100)
        elif keyword == "weight" and weight is None:
            weight = _number(value[0], keyword, 0, 15)
        else:
            raise invalid()
    return EcnThresholds(lo, low_unit, hi, high_unit, probability, weight)


def dscp_map(config: EosConfig, rest: list[str], remove: bool) -> None:
    """``[no] qos map dscp D... to traffic-class T [drop-precedence P]``."""
    if "to" not in rest:
        raise incomplete()
    split = rest.index("to")
    values = [_number(d, "dscp", 0, 63) for d in rest[:split]]
    target: tuple[int, int | None]
    match rest[split + 1 :]:
        case ["traffic-class", tc]:
            target = (_number(tc, "traffic-class", 0, 7), None)
        case ["traffic-class", tc, "drop-precedence", dp]:
            target = (_number(tc, "traffic-class", 0, 7), _number(dp, "drop-precedence", 0, 2))
        case [] | ["traffic-class"] | ["traffic-class", _, "drop-precedence"]:
            raise incomplete()
        case _:
            raise invalid()
    if not values:
        raise incomplete()
    for dscp in values:
        if remove:
            config.dscp_map.pop(dscp, None)
        else:
            config.dscp_map[dscp] = target
