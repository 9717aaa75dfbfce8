"""ECN and PFC on a Linux switch as plumb's flat state, and the iproute2 lines that set
them (pure).

**ECN** is the kernel's RED qdisc with ECN marking, one per priority, under a ``prio``
root that separates the priorities by the packet's skb priority (the switch's DSCP
map puts the RoCE DSCP on its priority; ``priomap`` sends priority *p* to band *p*,
class ``1:<p+1>``)::

    tc qdisc replace dev X root handle 1: prio bands 8 priomap 0 1 2 3 4 5 6 7 0 0 0 0 0 0 0 0
    tc qdisc replace dev X parent 1:4 handle 14: red limit L min KMIN max KMAX \\
        avpkt 1000 burst B probability P ecn

``min``/``max`` are ``kmin_kb``/``kmax_kb`` in bytes (KB = 1024 bytes, as on SONiC),
``probability`` is ``pmax_percent`` / 100, ``bandwidth`` is left out (tc reads it
as a 32-bit byte rate: 100gbit is "Illegal"; it only sets how fast an idle average
decays, and tc assumes 10Mbit); above ``max`` RED marks every ECN-capable
packet (no ``harddrop``: a lossless class is marked, not dropped). Read back from
``tc -d -j qdisc show`` (tc-red(8); ``-d`` adds ``probability``)::

    {"kind": "red", "handle": "14:", "dev": "swp1", "parent": "1:4",
     "options": {"limit": 819200, "min": 102400, "max": 204800, "ecn": true,
                 "harddrop": false, "adaptive": false, "nodrop": false,
                 "ewma": 5, "probability": 0.1, "Scell_log": 21}}

The priority a RED child serves is read through the root's ``priomap``, so a root
another tool made is read as it forwards. ``qos/ecn/<p>/...`` is the value every port
shares (None when a port has none, or they differ), as on the other platforms.

**PFC** is DCB's (``dcb-pfc(8)``): ``dcb -j pfc show dev X`` prints
``{"pfc_cap": 8, "macsec_bypass": false, "delay": 0, "prio_pfc": [false, ...]}``,
read as ``interfaces/<port>/pfc_priorities`` ("3,4"; "" none); a port whose driver has
no DCB (a veth) answers with an error instead, kept as ``interfaces/<port>/dcb`` so
the capability rule can quote it. Written with ``dcb pfc set dev X prio-pfc all:off
3:on 4:on`` (one command per port: ``dcb -batch`` reads ``-batch`` as ``-b atch``).
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from reconciler.drivers.eos_parse import common
from reconciler.settings import Scalar

PRIORITIES = 8
AVPKT = 1000  # bytes: RED's average packet size, as in tc-red(8)'s example
ECN_FIELDS = ("kmin_kb", "kmax_kb", "pmax_percent")
_U32 = 2**32 - 1


@dataclass(frozen=True)
class Red:
    """One priority's ECN marking thresholds, as intent states them."""

    kmin_kb: int
    kmax_kb: int
    pmax_percent: int


def root_line(dev: str) -> str:
    """The ``tc -batch`` line for the classful root: priority p -> class 1:<p+1>."""
    priomap = " ".join(str(p) for p in range(PRIORITIES)) + " 0" * 8
    return f"qdisc replace dev {dev} root handle 1: prio bands {PRIORITIES} priomap {priomap}"


def red_line(dev: str, priority: int, red: Red) -> str:
    """The ``tc -batch`` line for priority ``priority``'s RED child with ECN marking."""
    low, high = red.kmin_kb * 1024, red.kmax_kb * 1024
    # The smallest burst tc finds an EWMA weight for (tc_red_eval_ewma needs burst + 1 -
    # min/avpkt >= 1): the average follows the queue closely, as DCQCN marks on the
    # queue's depth. tc-red(8)'s (2 min + max) / (3 avpkt) has none for a wide min-max.
    burst = -(-low // AVPKT) + 1
    limit = min(_U32, 4 * high)
    band = priority + 1
    return (
        f"qdisc replace dev {dev} parent 1:{band:x} handle {0x10 + band:x}: red limit {limit} "
        f"min {low} max {high} avpkt {AVPKT} burst {burst} "
        f"probability {red.pmax_percent / 100:g} ecn"
    )


def unset_line(dev: str, priority: int) -> str:
    """Remove priority ``priority``'s RED child (the band gets the default fifo back)."""
    return f"qdisc delete dev {dev} parent 1:{priority + 1:x}"


def ecn_lines(
    devs: Sequence[str], before: Mapping[int, Red | None], after: Mapping[int, Red | None]
) -> list[str]:
    """``tc -batch`` lines taking every port from ``before`` to ``after`` (per priority;
    a priority only in ``after`` or None there is removed)."""
    lines: list[str] = []
    for dev in devs:
        changed = [p for p in sorted(after) if after[p] != before.get(p)]
        if any(after[p] is not None for p in changed):
            lines.append(root_line(dev))
        for priority in changed:
            red = after[priority]
            lines.append(unset_line(dev, priority) if red is None else red_line(dev, priority, red))
    return lines


def _handle_major(text: object) -> str:
    return str(text).split(":", 1)[0].lower()


def _port_reds(entries: list[dict[str, Any]]) -> dict[str, dict[int, Red]]:
    """Device -> priority -> RED thresholds, from ``tc -d -j qdisc show``."""
    roots: dict[str, tuple[str, list[int]]] = {}
    for entry in entries:
        if entry.get("root") and entry.get("kind") == "prio":
            priomap = [int(b) for b in entry.get("options", {}).get("priomap", [])]
            roots[str(entry.get("dev", ""))] = (_handle_major(entry.get("handle")), priomap)
    out: dict[str, dict[int, Red]] = {}
    for entry in entries:
        dev = str(entry.get("dev", ""))
        if entry.get("kind") != "red" or dev not in roots:
            continue
        major, priomap = roots[dev]
        parent_major, _, minor = str(entry.get("parent", "")).partition(":")
        if parent_major.lower() != major or not minor:
            continue
        band = int(minor, 16) - 1
        options = entry.get("options", {})
        if not options.get("ecn"):
            continue  # RED that only drops marks nothing
        probability = options.get("probability")
        red = Red(
            -(-int(options["min"]) // 1024),
            -(-int(options["max"]) // 1024),
            round(float(probability) * 100) if probability is not None else 0,
        )
        for priority, mapped in enumerate(priomap[:PRIORITIES]):
            if mapped == band:
                out.setdefault(dev, {})[priority] = red
    return out


def ecn_state(qdiscs: str, devs: Sequence[str]) -> dict[str, Scalar]:
    """``qos/ecn/<p>/{kmin_kb,kmax_kb,pmax_percent}``: the value ``devs`` share, from
    ``tc -d -j qdisc show`` (every device's qdiscs, each entry naming its ``dev``)."""
    try:
        data = json.loads(qdiscs or "[]")
        if not isinstance(data, list):
            raise ValueError("expected a JSON list")
        reds = _port_reds([e for e in data if isinstance(e, dict)])
    except (ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"tc -d -j qdisc show: {exc}") from None
    state: dict[str, Scalar] = {}
    for priority in range(PRIORITIES):
        shared = common([reds.get(dev, {}).get(priority) for dev in devs])
        for name in ECN_FIELDS:
            state[f"qos/ecn/{priority}/{name}"] = None if shared is None else getattr(shared, name)
    return state


def red_of(state: Mapping[str, Scalar], priority: int) -> Red | None:
    """Priority ``priority``'s thresholds in a flat state (None: not all three set)."""
    values = [state.get(f"qos/ecn/{priority}/{name}") for name in ECN_FIELDS]
    if any(v is None for v in values):
        return None
    kmin, kmax, pmax = (int(str(v)) for v in values)
    return Red(kmin, kmax, pmax)


PROBE_RED = Red(100, 400, 10)


def qdisc_probe() -> str:
    """A shell command that tries the lines :func:`ecn_lines` renders on ``lo`` of a
    network namespace of its own (``unshare -n``, gone when it exits): whether this
    kernel has the qdiscs, asked of the kernel itself, without touching a port."""
    tries = " && ".join(f"tc {line}" for line in ecn_lines(["lo"], {}, {3: PROBE_RED}))
    return f'unshare -n sh -c {shlex.quote(tries)} 2>&1; echo "rc=$?"'


UNKNOWN_KIND = "Specified qdisc kind is unknown"


def probe_result(output: str) -> tuple[bool, str]:
    """(the kernel takes plumb's ECN qdiscs, why not) from :func:`qdisc_probe`'s output."""
    lines = [ln.strip() for ln in output.splitlines() if ln.strip()]
    if lines and lines[-1] == "rc=0":
        return True, ""
    errors = [ln for ln in lines if not ln.startswith(("rc=", "RED: set bandwidth"))]
    first = errors[0] if errors else (lines[-1] if lines else "no output")
    if any(UNKNOWN_KIND in ln for ln in errors):
        return False, f"this kernel has no prio or red qdisc (tc: {first})"
    return False, f"the qdisc probe failed (tc: {first})"


# -- PFC ----------------------------------------------------------------------------------

DCB_MARK = "plumb-dcb "


def dcb_script(devs: Sequence[str]) -> str:
    """One shell command reading every port's PFC: a marker line, then dcb's output
    (stdout and stderr) and exit status, per port."""
    parts = [
        f"echo '{DCB_MARK}'{shlex.quote(dev)}; dcb -j pfc show dev {shlex.quote(dev)} 2>&1; "
        f'echo "{DCB_MARK}rc=$?"'
        for dev in devs
    ]
    return "; ".join(parts) or "true"


def pfc_value(data: Mapping[str, Any]) -> str:
    """``prio_pfc`` of ``dcb -j pfc show`` as plumb's "3,4"."""
    flags = data.get("prio_pfc")
    if not isinstance(flags, list) or not all(isinstance(f, bool) for f in flags):
        raise ValueError(f"prio_pfc is not a list of on/off flags: {flags!r}")
    return ",".join(str(p) for p, on in enumerate(flags) if on)


def pfc_state(output: str, port_of: Mapping[str, str]) -> dict[str, Scalar]:
    """``interfaces/<port>/pfc_priorities`` of every port that answers DCB, and
    ``interfaces/<port>/dcb`` (dcb's error) of every port that does not."""
    state: dict[str, Scalar] = {}
    dev: str | None = None
    body: list[str] = []
    for line in output.splitlines():
        if not line.startswith(DCB_MARK):
            body.append(line)
            continue
        tag = line[len(DCB_MARK) :]
        if not tag.startswith("rc="):
            dev, body = tag, []
            continue
        if dev is None:
            continue
        port = port_of.get(dev, dev)
        text = "\n".join(body).strip()
        if tag == "rc=0":
            try:
                state[f"interfaces/{port}/pfc_priorities"] = pfc_value(json.loads(text))
            except ValueError as exc:
                raise ValueError(f"dcb -j pfc show dev {dev}: {exc}") from None
        else:
            first = next((ln.strip() for ln in body if ln.strip()), f"exit status {tag[3:]}")
            state[f"interfaces/{port}/dcb"] = f"dcb pfc show: {first}"
        dev = None
    return state


def pfc_argv(dev: str, priorities: str) -> list[str]:
    """The ``dcb`` command setting PFC on exactly ``priorities`` ("3,4"; "" none)."""
    on = [p for p in priorities.split(",") if p.strip()]
    for p in on:
        if not p.strip().isdigit() or not 0 <= int(p) < PRIORITIES:
            raise ValueError(f"PFC priority {p!r} is not 0-{PRIORITIES - 1}")
    return ["dcb", "pfc", "set", "dev", dev, "prio-pfc", "all:off", *(f"{int(p)}:on" for p in on)]
