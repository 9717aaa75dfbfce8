"""The lab fleet's pure side: the starting state of every simulated device, snapshot
documents, and the fault vocabulary. The database is :mod:`lab.store`;
the driver over it is :mod:`lab.driver`.

A fresh lab is *not* the desired state, so the first reconcile has real work to do:

* **firmware**: each device runs another bundle validated for its model (the first by
  name that is not the intended one), so ``firmware/*`` and ``system/nos_version``
  differ from intent, as before a firmware rollout;
* **drift**: ``drift`` seeded perturbations of kinds seen in real fleets (a host NIC
  left at MTU 1500, an ECN Kmin changed by hand, a BGP maximum-paths of 16, an extra
  PFC priority on one port, ...), each on a distinct field;
* **unmanaged fields** that plumb does not own and must never write
  (:data:`UNMANAGED_PATTERNS`): hostname, serial, kernel, a switch's model (and on
  SONiC its BGP configuration mode and buffer model), port descriptions, and what
  each switch port hears on the wire by LLDP (``lldp/<port>/{system,port}``, the far
  end of its inventory cable until :func:`swap_far_ends` miscables two of them).

Everything is a function of the fleet and the seed.
"""

from __future__ import annotations

import fnmatch
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from pathlib import Path
from typing import TypeVar

from intent.fleet import Fleet
from intent.models import Bundle
from inventory.index import Endpoint
from inventory.models import Platform, Role
from reconciler.capabilities import checker
from reconciler.render import render_desired
from reconciler.settings import Scalar, as_desired_state

LAB_DB = "lab.db"
SNAPSHOT_SCHEMA = "plumb.snapshot/v1"
HOST_KERNEL = "6.8.0-45-generic"
UNMANAGED_PATTERNS = (
    "system/hostname",
    "system/serial",
    "system/kernel",
    "system/model",
    "system/bgp_config",
    "system/buffer_model",
    "interfaces/*/description",
    "lldp/*",
)
States = dict[str, dict[str, Scalar]]
T = TypeVar("T")
_KINDS: dict[type, str] = {dict: "an object", str: "a string"}


class FaultKind(StrEnum):
    latency = "latency"  # sleep latency_ms before every operation
    timeout_before_write = "timeout_before_write"  # DeviceTimeout at commit, nothing written
    timeout_after_write = "timeout_after_write"  # commit written, then DeviceTimeout
    reject = "reject"  # ConfigRejected at stage
    drop_mid_commit = "drop_mid_commit"  # ConnectionLost at commit; atomic, landed or not
    reboot_loses_unsaved = "reboot_loses_unsaved"  # running written unsaved, device reboots
    unreachable = "unreachable"  # DeviceUnreachable on observe and every apply step
    auth_fail = "auth_fail"  # DeviceAuthError on observe and every apply step


@dataclass(frozen=True)
class Fault:
    """One injected fault on one device; ``count=None`` is persistent, N fires N times."""

    device: str
    kind: FaultKind
    path_glob: str | None = None  # only operations touching a matching path
    count: int | None = None  # firings left (None: persistent)
    probability: float = 1.0  # chance of firing on an eligible operation
    seed: int = 0  # seeds the fault's random draws
    latency_ms: int = 0
    id: int | None = None  # assigned by the store
    draws: int = 0  # random draws taken so far


def lab_db_path(fleet: Fleet) -> Path:
    """``<repo>/<state_dir>/lab.db``."""
    return fleet.root / fleet.config.state_dir / LAB_DB


def is_unmanaged(path: str) -> bool:
    return any(fnmatch.fnmatchcase(path, pattern) for pattern in UNMANAGED_PATTERNS)


# -- initial state ---------------------------------------------------------------------

Perturb = Callable[[Scalar, random.Random], Scalar]


def _extra_priority(value: Scalar, rng: random.Random) -> Scalar:
    if not isinstance(value, str) or not value or "4" in value.split(","):
        return None  # not a lossless port, or already has it
    return f"{value},4"


# (what a human would call it, which paths, the drifted value); None: not applicable
DRIFT_KINDS: tuple[tuple[str, str, Perturb], ...] = (
    ("host NIC MTU left at 1500", "nics/*/mtu", lambda v, r: 1500),
    ("ECN kmin changed by hand", "qos/ecn/*/kmin_kb", lambda v, r: r.choice([100, 150, 300, 450])),
    ("BGP maximum-paths 16", "bgp/maximum_paths", lambda v, r: 16),
    ("extra PFC priority on a port", "interfaces/*/pfc_priorities", _extra_priority),
    ("RDMA path MTU 1024", "nics/*/rdma_mtu", lambda v, r: 1024),
    ("switch port MTU 1500", "interfaces/*/mtu", lambda v, r: 1500),
    ("inbound filter removed", "bgp/neighbors/*/inbound_filter", lambda v, r: ""),
    ("PFC Xoff changed", "qos/pfc_xoff_kb", lambda v, r: r.choice([250, 500, 600])),
)


def other_bundle(fleet: Fleet, name: str) -> Bundle | None:
    """The first bundle by name validated for the device's model that it is not meant to run."""
    model = fleet.devices[name].model
    intended = fleet.setting(name, "firmware", "bundle")
    skip = intended.value if intended is not None else None
    names = sorted(b for b, bundle in fleet.bundles.items() if model in bundle.models and b != skip)
    return fleet.bundles[names[0]] if names else None


def _run_bundle(fleet: Fleet, name: str, bundle: Bundle, state: dict[str, Scalar]) -> None:
    if fleet.devices[name].role is Role.gpu_node:
        for component, version in bundle.components.items():
            state[f"firmware/{component}"] = version
    elif "nos" in bundle.components:
        state["system/nos_version"] = bundle.components["nos"]


def _drift(states: States, count: int, rng: random.Random) -> None:
    candidates: list[list[tuple[str, str]]] = [[] for _ in DRIFT_KINDS]
    for name, state in states.items():
        for path in sorted(state):
            for index, (_, pattern, _) in enumerate(DRIFT_KINDS):
                if fnmatch.fnmatchcase(path, pattern):
                    candidates[index].append((name, path))
    kinds = list(range(len(DRIFT_KINDS)))
    rng.shuffle(kinds)
    made = 0
    while made < count and kinds:
        kind = kinds[made % len(kinds)]
        pool = candidates[kind]
        if not pool:
            kinds.remove(kind)
            continue
        name, path = pool.pop(rng.randrange(len(pool)))
        value = DRIFT_KINDS[kind][2](states[name][path], rng)
        if value is not None and value != states[name][path]:
            states[name][path] = value
            made += 1


def _serial(name: str) -> str:
    rng = random.Random(f"serial/{name}")
    return "SN" + "".join(rng.choice("0123456789ABCDEFGHJKLMNPRSTUVWXYZ") for _ in range(10))


def _add_platform_facts(fleet: Fleet, name: str, state: dict[str, Scalar]) -> None:
    """What a switch reports about itself and its platform decides what it can express:
    its model (on SONiC the HwSKU), and on SONiC the BGP configuration mode and buffer
    model. Lab SONiC switches run FRR's management framework (``frrcfgd``: BGP globals
    and route-maps in config_db) on the static buffer model."""
    device = fleet.devices[name]
    if device.role is Role.gpu_node:
        return
    state["system/model"] = device.hwsku or device.model
    if device.platform is Platform.sonic:
        state["system/bgp_config"] = "frrcfgd"
        state["system/buffer_model"] = "static"


def _add_unmanaged(fleet: Fleet, name: str, state: dict[str, Scalar]) -> None:
    state["system/hostname"] = name
    state["system/serial"] = _serial(name)
    if fleet.devices[name].role is Role.gpu_node:
        state["system/kernel"] = HOST_KERNEL
        return
    for link in fleet.cabling.ports(name):
        state[f"interfaces/{link.local.port}/description"] = f"{link.peer.device} {link.peer.port}"
        state.update(lldp_heard(link.local.port, link.peer))


# -- the wire ----------------------------------------------------------------------------


def lldp_heard(port: str, peer: Endpoint) -> dict[str, Scalar]:
    """What a lab switch's ``port`` reports by LLDP when ``peer`` is on the other end."""
    return {f"lldp/{port}/system": peer.device, f"lldp/{port}/port": peer.port}


def heard_peer(state: Mapping[str, Scalar], port: str) -> Endpoint | None:
    """The far end a lab switch's ``port`` reports by LLDP, or None."""
    system, peer_port = state.get(f"lldp/{port}/system"), state.get(f"lldp/{port}/port")
    if not isinstance(system, str) or not isinstance(peer_port, str):
        return None
    return Endpoint(system, peer_port)


def swap_far_ends(
    a: Endpoint, a_peer: Endpoint, b: Endpoint, b_peer: Endpoint
) -> dict[Endpoint, Endpoint]:
    """Every endpoint whose far end changes when the cables at ``a`` and ``b`` swap their
    far ends (``a`` then reaches ``b_peer``, ``b`` reaches ``a_peer``), to its new far end.

    Raises ValueError when ``a`` and ``b`` are the same port or the two ends of one cable."""
    if a == b:
        raise ValueError(f"{a} is given twice")
    if a_peer == b or b_peer == a:
        raise ValueError(f"{a} and {b} are the two ends of one cable")
    return {a: b_peer, b: a_peer, a_peer: b, b_peer: a}


def initial_lab_states(
    fleet: Fleet, *, seed: int = 0, drift: int = 6, older_firmware: bool = True
) -> States:
    """The running state of every lab device (see the module docstring), for ``seed``.

    ``drift`` is exact unless the fleet has fewer fields of the drift kinds."""
    states = {name: as_desired_state(desired) for name, desired in render_desired(fleet).items()}
    for name, state in states.items():
        _add_platform_facts(fleet, name, state)
        # A lab device holds only what its platform can express, like the real one.
        refuses = checker(fleet.devices[name].platform.value, state)
        for path in [p for p in state if refuses(p) is not None]:
            del state[path]
    if older_firmware:
        for name, state in states.items():
            bundle = other_bundle(fleet, name)
            if bundle is not None:
                _run_bundle(fleet, name, bundle, state)
    _drift(states, drift, random.Random(seed))
    for name, state in states.items():
        _add_unmanaged(fleet, name, state)
    return states


# -- snapshots ---------------------------------------------------------------------------


def snapshot_document(
    fleet: str, states: Mapping[str, Mapping[str, Scalar]], taken_at: datetime
) -> dict[str, object]:
    """A ``plumb.snapshot/v1`` document of ``states`` (what :func:`states_from_snapshot` reads)."""
    return {
        "schema": SNAPSHOT_SCHEMA,
        "fleet": fleet,
        "taken_at": taken_at.isoformat(),
        "devices": {name: {"state": dict(state)} for name, state in states.items()},
    }


def _expect(value: object, kind: type[T], where: str) -> T:
    if not isinstance(value, kind):
        got = "nothing" if value is None else type(value).__name__
        raise ValueError(f"snapshot: {where}: expected {_KINDS[kind]}, got {got}")
    return value


def states_from_snapshot(data: object) -> States:
    """Device states from a parsed ``plumb.snapshot/v1`` JSON document.

    Raises ValueError naming the offending key for a wrong schema id or shape."""
    document = _expect(data, dict, "top level")
    schema = document.get("schema")
    if schema != SNAPSHOT_SCHEMA:
        raise ValueError(f"snapshot: schema is {schema!r}, expected {SNAPSHOT_SCHEMA!r}")
    _expect(document.get("fleet"), str, "fleet")
    taken_at = _expect(document.get("taken_at"), str, "taken_at")
    try:
        datetime.fromisoformat(taken_at)
    except ValueError:
        raise ValueError(f"snapshot: taken_at: {taken_at!r} is not an ISO 8601 time") from None
    states: States = {}
    for name, entry in _expect(document.get("devices"), dict, "devices").items():
        where = f"devices.{name}"
        state = _expect(_expect(entry, dict, where).get("state"), dict, f"{where}.state")
        out: dict[str, Scalar] = {}
        for path, value in state.items():
            if value is not None and not isinstance(value, str | int | float | bool):
                raise ValueError(
                    f"snapshot: {where}.state.{path}: {type(value).__name__} is not a scalar"
                )
            out[str(path)] = value
        states[str(name)] = out
    return states
