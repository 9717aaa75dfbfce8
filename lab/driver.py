"""The lab driver: plumb's embedded default target, a simulated fleet in SQLite
(:class:`~lab.store.LabStore`) behind the same contract as the SSH and
ansible drivers, with deterministic fault injection.

Each operation first lets the device act on its own (an unconfirmed commit whose
window has passed, by wall clock, is reverted), then applies the device's faults:

==========================  =========================  ==================================
fault                       where                      effect (reconciler outcome)
==========================  =========================  ==================================
``latency``                 every operation            sleeps ``latency_ms`` first
``unreachable``             observe, every apply step  DeviceUnreachable (failed)
``auth_fail``               observe, every apply step  DeviceAuthError (failed, terminal)
``reject``                  stage                      ConfigRejected (failed)
``timeout_before_write``    commit                     DeviceTimeout, nothing written
                                                       (unknown)
``drop_mid_commit``         commit                     ConnectionLost; the commit landed
                                                       whole or not at all (unknown)
``reboot_loses_unsaved``    commit                     running written but not saved, the
                                                       device reboots: change lost,
                                                       ConnectionLost (unknown)
``timeout_after_write``     commit                     written, then DeviceTimeout
                                                       (unknown)
==========================  =========================  ==================================

A fault with a ``path_glob`` only affects operations whose changes touch a matching
path (so never observe or confirm). A fault with ``probability < 1`` fires on a draw
from ``random.Random(f"{seed}/{n}")``, ``n`` being the fault's persisted draw count;
``drop_mid_commit`` takes one draw more to decide whether the write landed (even odds).
Outcomes therefore repeat exactly for a seed, across processes.
"""

from __future__ import annotations

import fnmatch
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from intent.fleet import Fleet
from inventory.index import Endpoint
from lab.fleet import (
    Fault,
    FaultKind,
    heard_peer,
    initial_lab_states,
    is_unmanaged,
    lldp_heard,
    swap_far_ends,
)
from lab.store import LabStore
from reconciler.drivers.base import DeviceRef, Driver, checked_candidate
from reconciler.errors import (
    ConfigRejected,
    ConnectionLost,
    DeviceAuthError,
    DeviceError,
    DeviceTimeout,
    DeviceUnreachable,
)
from reconciler.settings import Change, Scalar

_OBSERVE, _STAGE, _COMPARE, _COMMIT, _CONFIRM = "observe", "stage", "compare", "commit", "confirm"
_GATES = {FaultKind.unreachable: DeviceUnreachable, FaultKind.auth_fail: DeviceAuthError}


@dataclass
class LabCandidate:
    """A staged change set; the lab has no device-side candidate, so it lives here."""

    device: str
    changes: tuple[Change, ...]
    discarded: bool = False

    @property
    def paths(self) -> list[str]:
        return [change.path for change in self.changes]


def _applies(fault: Fault, paths: Sequence[str]) -> bool:
    if fault.path_glob is None:
        return True
    return any(fnmatch.fnmatchcase(path, fault.path_glob) for path in paths)


class LabDriver(Driver):
    """The driver contract over a :class:`LabStore`; ``clock`` decides commit-confirm."""

    name = "lab"

    def __init__(
        self,
        store: LabStore,
        *,
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.store = store
        self._clock = clock
        self._sleep = sleep

    # -- faults ------------------------------------------------------------------------

    def _fire(self, fault: Fault) -> random.Random | None:
        """Whether ``fault`` fires now: its RNG (for any further draw) if so, else None."""
        assert fault.id is not None
        seeded = fault.probability < 1.0 or fault.kind is FaultKind.drop_mid_commit
        draw = self.store.next_draw(fault.id) if seeded else 0
        rng = random.Random(f"{fault.seed}/{draw}")
        if seeded and rng.random() >= fault.probability:
            return None
        if fault.count is not None and not self.store.consume_fault(fault.id):
            return None  # another thread used the last firing
        return rng

    def _firing(
        self, faults: Sequence[Fault], kind: FaultKind, paths: Sequence[str]
    ) -> random.Random | None:
        for fault in faults:
            if fault.kind is kind and _applies(fault, paths):
                rng = self._fire(fault)
                if rng is not None:
                    return rng
        return None

    def _enter(self, name: str, operation: str, paths: Sequence[str] = ()) -> list[Fault]:
        """Start one operation on ``name``: revert expired commits, then latency and
        reachability faults. Returns the device's faults for the operation to check."""
        self.store.revert_expired(self._clock())
        if not self.store.has_device(name):
            raise DeviceUnreachable(name, "no such device in the lab")
        faults = self.store.faults_for(name)
        for fault in faults:
            if (
                fault.kind is FaultKind.latency
                and _applies(fault, paths)
                and self._fire(fault) is not None
            ):
                self._sleep(fault.latency_ms / 1000)
        for kind, error in _GATES.items():
            if self._firing(faults, kind, paths) is not None:
                raise error(name, f"{operation}: injected fault {kind.value}")
        return faults

    # -- the contract ------------------------------------------------------------------

    def observe(self, device: DeviceRef) -> dict[str, Scalar]:
        self._enter(device.name, _OBSERVE)
        return self.store.read_running(device.name)

    def observe_many(
        self, devices: Sequence[DeviceRef], concurrency: int = 16
    ) -> dict[str, dict[str, Scalar] | DeviceError]:
        """Observe many devices with one bulk read; devices with faults go one by one."""
        self.store.revert_expired(self._clock())
        faulty = {fault.device for fault in self.store.faults_for(None)}
        running = self.store.read_all_running({device.name for device in devices})
        out: dict[str, dict[str, Scalar] | DeviceError] = {}
        for device in devices:
            if device.name in running and device.name not in faulty:
                out[device.name] = running[device.name]
                continue
            try:
                out[device.name] = self.observe(device)
            except DeviceError as exc:
                out[device.name] = exc
        return out

    def stage(self, device: DeviceRef, changes: Sequence[Change]) -> LabCandidate:
        candidate = LabCandidate(device.name, tuple(changes))
        faults = self._enter(device.name, _STAGE, candidate.paths)
        for fault in faults:
            if fault.kind is not FaultKind.reject or not _applies(fault, candidate.paths):
                continue
            if self._fire(fault) is not None:
                hit = next(
                    p
                    for p in candidate.paths
                    if fault.path_glob is None or fnmatch.fnmatchcase(p, fault.path_glob)
                )
                raise ConfigRejected(device.name, f"stage: {hit}: injected fault reject")
        return candidate

    def _candidate(self, device: DeviceRef, candidate: object) -> LabCandidate:
        return checked_candidate(device, candidate, LabCandidate, "a lab")

    def compare(self, device: DeviceRef, candidate: object) -> list[Change]:
        staged = self._candidate(device, candidate)
        self._enter(device.name, _COMPARE, staged.paths)
        running = self.store.read_running(device.name)
        return [
            Change(c.path, running.get(c.path), c.after, c.owner)
            for c in staged.changes
            if running.get(c.path) != c.after
        ]

    def commit(self, device: DeviceRef, candidate: object, confirm_within: float | None) -> None:
        staged = self._candidate(device, candidate)
        name, paths = device.name, staged.paths
        values = {c.path: c.after for c in staged.changes}
        faults = self._enter(name, _COMMIT, paths)
        revert_at = None if confirm_within is None else self._clock() + confirm_within
        if self._firing(faults, FaultKind.timeout_before_write, paths) is not None:
            raise DeviceTimeout(name, "commit: no answer (injected timeout_before_write)")
        dropped = self._firing(faults, FaultKind.drop_mid_commit, paths)
        if dropped is not None:
            landed = dropped.random() < 0.5
            if landed:
                self._write(name, values, save=True, revert_at=revert_at)
            raise ConnectionLost(name, "commit: connection dropped (injected drop_mid_commit)")
        if self._firing(faults, FaultKind.reboot_loses_unsaved, paths) is not None:
            self._write(name, values, save=False, revert_at=None)
            self.store.reboot(name)
            raise ConnectionLost(
                name, "commit: device rebooted before saving (injected reboot_loses_unsaved)"
            )
        self._write(name, values, save=True, revert_at=revert_at)
        if self._firing(faults, FaultKind.timeout_after_write, paths) is not None:
            raise DeviceTimeout(
                name, "commit: no answer after the write (injected timeout_after_write)"
            )

    def _write(
        self, name: str, values: dict[str, Scalar], *, save: bool, revert_at: float | None
    ) -> None:
        self.store.commit(name, values, save=save, revert_at=revert_at)
        unmanaged = sum(1 for path in values if is_unmanaged(path))
        if unmanaged:
            self.store.add_to_counter("unmanaged_writes", unmanaged)

    def confirm(self, device: DeviceRef, candidate: object) -> None:
        self._enter(device.name, _CONFIRM)
        if not self.store.clear_pending(device.name):
            raise ConfigRejected(
                device.name,
                "confirm: no commit is awaiting confirmation "
                "(its window passed and it was rolled back)",
            )

    def discard(self, device: DeviceRef, candidate: object) -> None:
        """Drop the candidate; purely local, so it never fails and no fault applies."""
        if isinstance(candidate, LabCandidate):
            candidate.discarded = True


# -- building a lab ----------------------------------------------------------------------


def create_lab(
    store: LabStore, fleet: Fleet, *, seed: int = 0, drift: int = 6, older_firmware: bool = True
) -> None:
    """(Re)create the lab in ``store`` from ``fleet`` (see :func:`initial_lab_states`)."""
    states = initial_lab_states(fleet, seed=seed, drift=drift, older_firmware=older_firmware)
    devices = [(d.name, d.platform.value, d.role.value) for d in fleet.devices.values()]
    store.create(devices, states)


def lab_refs(store: LabStore) -> list[DeviceRef]:
    """A :class:`DeviceRef` for every lab device."""
    return [
        DeviceRef(name=name, platform=platform, role=role, host="lab")
        for name, platform, role in store.devices()
    ]


def miscable(store: LabStore, a: Endpoint, b: Endpoint) -> dict[Endpoint, Endpoint]:
    """Swap the far ends of the cables on lab switch ports ``a`` and ``b``, as a technician
    who plugged two cables into each other's ports would: each switch port involved
    then reports its new neighbour by LLDP (host ends report nothing). Returns every
    endpoint whose far end changed, to the new far end.

    Raises ValueError when a port is not a lab switch port with a neighbour, or the two
    are one cable."""
    roles = {name: role for name, _, role in store.devices()}
    peers = []
    for end in (a, b):
        if roles.get(end.device, "gpu-node") == "gpu-node":
            raise ValueError(f"{end}: not a lab switch")
        peer = heard_peer(store.read_running(end.device), end.port)
        if peer is None:
            raise ValueError(f"{end}: no LLDP neighbour to swap")
        peers.append(peer)
    moved = swap_far_ends(a, peers[0], b, peers[1])
    facts: dict[str, dict[str, Scalar]] = {}
    for end, peer in moved.items():
        if roles.get(end.device, "gpu-node") != "gpu-node":
            facts.setdefault(end.device, {}).update(lldp_heard(end.port, peer))
    store.set_facts(facts)
    return moved
