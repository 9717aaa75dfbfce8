"""The host driver: GPU nodes through ansible-runner, with the playbooks shipped in
``reconciler/drivers/playbooks`` (``observe.yml``, ``apply.yml``, ``files/plumb-nictool``).

The contract's steps map onto runs like this:

=========  ===========================================================================
observe    ``observe.yml``: ``ip -j link show``, ``ip -j address show``, ``plumb-nictool
           show`` in one task -> one flat state (:mod:`reconciler.drivers.hoststate`)
stage      pure: the changes become an ``ip -batch`` script, its undo and a vendor-tool
           JSON object (nothing runs; a malformed value is ConfigRejected here)
compare    ``apply.yml`` in check mode (``--check --diff``), task ``check``: reads the
           kernel and has the vendor tool validate with ``set --check``; what would
           change
commit     ``apply.yml``, task ``write settings``: kernel settings, then vendor
           settings; if either fails, the playbook undoes the kernel lines before
           reporting (nothing half-applied). The same command then reads the host
           back; an ``observe`` of that host within :data:`READBACK_TTL` seconds
           returns that read-back, which saves the confirm and verify steps a run
confirm    nothing: a Linux host has no commit-confirm timer. Under ``confirm_within``
           the base class re-reads after commit; if the read-back differs, this driver
           reverts the changes itself (a lost controller does *not* revert: documented)
discard    nothing to drop: the candidate only lives in memory
=========  ===========================================================================

Besides the contract, :meth:`AnsibleHostDriver.run_command` runs one command line on
a host (``command.yml``; a rollout's acceptance tests) and reports its exit status and
output.

Batching: ansible-playbook costs ~2.5 s to start whatever the host count, so
:meth:`observe_many` observes every host in one run (``forks`` at a time), and
per-device calls that arrive together (the reconcile loop's thread pool, or
:meth:`apply_many`) are joined into one run per step by
:class:`~reconciler.drivers.batching.Coalescer`. Errors are mapped per host by
:mod:`reconciler.drivers.ansible_events`.
"""

from __future__ import annotations

import json
import math
import shlex
import shutil
import tempfile
import threading
import time
from collections.abc import Hashable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reconciler.drivers.ansible_events import HostReport, host_error, runner_exception_error
from reconciler.drivers.ansible_inventory import PLAYBOOKS, HostOptions, inventory
from reconciler.drivers.ansible_run import PlaybookRunner, RunRecord
from reconciler.drivers.base import ApplyResult, DeviceRef, Driver, Outcome
from reconciler.drivers.batching import Coalescer
from reconciler.drivers.hoststate import (
    HostOutputError,
    HostWrite,
    flat_state,
    parse_addresses,
    parse_links,
    plan_write,
    planned_changes,
    split_readback,
    split_sections,
)
from reconciler.errors import DeviceError, TerminalDeviceError
from reconciler.settings import Change, Scalar

OBSERVE, CHECK, COMMIT = "observe", "check", "commit"


@dataclass(frozen=True)
class CommandOutput:
    """How a command ended on a host: exit status (None: it did not finish) and output."""

    rc: int | None
    stdout: str
    stderr: str


READBACK_TTL = 5.0  # seconds a commit's read-back stands in for observe


@dataclass(frozen=True)
class _Job:
    device: DeviceRef
    write: HostWrite | None = None
    run_vars: Mapping[str, Any] = field(default_factory=dict)


def _run_vars(write: HostWrite) -> dict[str, Any]:
    return {
        "plumb_ip_apply": list(write.ip_apply),
        "plumb_ip_undo": list(write.ip_undo),
        "plumb_vendor": write.vendor_json(),
    }


def private_dir_for(state_dir: Path) -> tuple[Path, bool]:
    """``<state_dir>/ansible``, or a fresh temp dir if that path has whitespace (ansible
    cannot take an interpreter path with spaces). The flag says "remove on close"."""
    wanted = state_dir.resolve() / "ansible"
    if not any(ch.isspace() for ch in str(wanted)):
        wanted.mkdir(parents=True, exist_ok=True, mode=0o700)
        return wanted, False
    return Path(tempfile.mkdtemp(prefix="plumb-ansible-")), True


class AnsibleHostDriver(Driver):
    """The driver contract for GPU nodes over ansible-runner (see the module docstring)."""

    name = "ansible"

    def __init__(self, state_dir: Path, options: HostOptions, *, quiet: float = 0.05) -> None:
        self.options = options
        self.private_dir, self._temporary = private_dir_for(state_dir)
        self.runner = PlaybookRunner(
            self.private_dir, forks=options.forks, run_timeout=options.run_timeout
        )
        self._batches: Coalescer[_Job, HostReport | DeviceError] = Coalescer(
            self._run_batch, quiet=quiet
        )
        self._readbacks: dict[str, tuple[float, dict[str, Scalar]]] = {}
        self._readback_lock = threading.Lock()

    @property
    def runs(self) -> list[RunRecord]:
        """The runs made so far (most recent last; bounded)."""
        return list(self.runner.records)

    def close(self) -> None:
        if self._temporary:
            shutil.rmtree(self.private_dir, ignore_errors=True)

    # -- one ansible run for many hosts --------------------------------------------------

    def _run_batch(
        self, kind: Hashable, jobs: Mapping[str, _Job]
    ) -> dict[str, HostReport | DeviceError]:
        devices = {name: job.device for name, job in jobs.items()}
        run_vars = {name: job.run_vars for name, job in jobs.items()}
        playbook = PLAYBOOKS / ("observe.yml" if kind == OBSERVE else "apply.yml")
        result = self.runner.run(
            playbook,
            inventory(devices, self.options, self.private_dir, run_vars),
            check=kind == CHECK,
        )
        out: dict[str, HostReport | DeviceError] = {}
        for name in jobs:
            if result.error is not None:
                mapped = runner_exception_error(result.error)
                out[name] = mapped(name, f"ansible-runner: {result.error}")
                continue
            error = host_error(name, result.report, result.record.status, result.record.rc)
            out[name] = error if error is not None else result.report.hosts[name]
        return out

    def _submit(self, kind: str, job: _Job) -> HostReport:
        found = self._batches.submit(kind, job.device.name, job)
        if isinstance(found, DeviceError):
            raise found
        return found

    # -- the contract --------------------------------------------------------------------

    def run_command(self, device: DeviceRef, argv: Sequence[str], timeout: float) -> CommandOutput:
        """Run ``argv`` on the host (each word quoted); DeviceError when the host could
        not be reached or the run broke, else the command's own exit status."""
        run_vars = {
            "plumb_command": " ".join(shlex.quote(w) for w in argv),
            "plumb_command_timeout": max(1, math.ceil(timeout)),
        }
        result = self.runner.run(
            PLAYBOOKS / "command.yml",
            inventory(
                {device.name: device}, self.options, self.private_dir, {device.name: run_vars}
            ),
            check=False,
        )
        if result.error is not None:
            mapped = runner_exception_error(result.error)
            raise mapped(device.name, f"ansible-runner: {result.error}")
        error = host_error(device.name, result.report, result.record.status, result.record.rc)
        if error is not None:
            raise error
        res = result.report.hosts[device.name].ok.get("run", {})
        rc = res.get("rc")
        if res.get("timedout") or not isinstance(rc, int):
            return CommandOutput(None, str(res.get("stdout", "")), str(res.get("msg", "")))
        return CommandOutput(rc, str(res.get("stdout", "")), str(res.get("stderr", "")))

    def observe(self, device: DeviceRef) -> dict[str, Scalar]:
        with self._readback_lock:
            readback = self._readbacks.get(device.name)
            if readback is not None and time.monotonic() - readback[0] > READBACK_TTL:
                del self._readbacks[device.name]
                readback = None
        if readback is not None:
            return dict(readback[1])
        return _state(device.name, self._submit(OBSERVE, _Job(device)))

    def observe_many(
        self, devices: Sequence[DeviceRef], concurrency: int = 16
    ) -> dict[str, dict[str, Scalar] | DeviceError]:
        """One ansible run for all ``devices`` (``forks`` hosts at a time)."""
        if not devices:
            return {}
        found = self._run_batch(OBSERVE, {d.name: _Job(d) for d in devices})
        out: dict[str, dict[str, Scalar] | DeviceError] = {}
        for name, report in found.items():
            try:
                out[name] = report if isinstance(report, DeviceError) else _state(name, report)
            except DeviceError as exc:
                out[name] = exc
        return out

    def stage(self, device: DeviceRef, changes: Sequence[Change]) -> HostWrite:
        return plan_write(device.name, changes)

    def compare(self, device: DeviceRef, candidate: object) -> list[Change]:
        write = _candidate(candidate)
        report = self._submit(CHECK, _Job(device, write, _run_vars(write)))
        try:
            links, addresses, vendor = split_sections(_stdout(report, "check"))
            kernel = parse_links(links)
            kernel.update(parse_addresses(addresses))
            planned = json.loads(vendor)["changes"]
        except (HostOutputError, ValueError, KeyError, TypeError) as exc:
            raise TerminalDeviceError(device.name, f"unexpected tool output: {exc}") from exc
        return planned_changes(write, kernel, planned)

    def commit(self, device: DeviceRef, candidate: object, confirm_within: float | None) -> None:
        write = _candidate(candidate)
        with self._readback_lock:
            self._readbacks.pop(device.name, None)
        report = self._submit(COMMIT, _Job(device, write, _run_vars(write)))
        try:
            state = flat_state(*split_readback(_stdout(report, "write settings")))
        except HostOutputError:
            return  # written; the next observe reads the host afresh
        with self._readback_lock:
            self._readbacks[device.name] = (time.monotonic(), state)

    def confirm(self, device: DeviceRef, candidate: object) -> None:
        return None  # applied at commit; nothing on the host waits for a confirm

    def discard(self, device: DeviceRef, candidate: object) -> None:
        return None  # the candidate is only in memory

    def apply(
        self,
        device: DeviceRef,
        changes: Sequence[Change],
        *,
        dry_run: bool,
        confirm_within: float | None = None,
    ) -> ApplyResult:
        result = super().apply(device, changes, dry_run=dry_run, confirm_within=confirm_within)
        if result.outcome is not Outcome.failed:
            return result
        # The base class returns `failed` only after a commit whose read-back differed
        # under confirm_within. No timer on the host reverts it, so revert here.
        undo = [Change(c.path, c.after, c.before) for c in changes if c.before is not None]
        try:
            self.commit(device, self.stage(device, undo), None)
            done = "the driver reverted the changes"
        except DeviceError as exc:
            done = f"reverting failed ({exc.detail}); re-observe and reconcile"
        return ApplyResult(
            device.name,
            Outcome.failed,
            tuple(changes),
            f"read-back after commit differs from the plan; {done} "
            "(hosts have no device-side commit-confirm)",
        )

    def apply_many(
        self,
        requests: Sequence[tuple[DeviceRef, Sequence[Change]]],
        *,
        dry_run: bool,
        confirm_within: float | None = None,
    ) -> dict[str, ApplyResult | DeviceError]:
        """:meth:`apply` for many hosts at once: each step is one ansible run for all."""

        def one(request: tuple[DeviceRef, Sequence[Change]]) -> ApplyResult | DeviceError:
            device, changes = request
            try:
                return self.apply(device, changes, dry_run=dry_run, confirm_within=confirm_within)
            except DeviceError as exc:
                return exc

        with ThreadPoolExecutor(max_workers=max(1, len(requests))) as pool:
            results = list(pool.map(one, requests))
        return {device.name: result for (device, _), result in zip(requests, results, strict=True)}


def _candidate(candidate: object) -> HostWrite:
    if not isinstance(candidate, HostWrite):
        raise TypeError(f"not a candidate of this driver: {candidate!r}")
    return candidate


def _stdout(report: HostReport, task: str) -> str:
    res = report.ok.get(task)
    if res is None or "stdout" not in res:
        raise HostOutputError(f"task {task!r} reported no output")
    return str(res["stdout"])


def _state(device: str, report: HostReport) -> dict[str, Scalar]:
    try:
        return flat_state(*split_sections(_stdout(report, "read")))
    except HostOutputError as exc:
        raise TerminalDeviceError(device, f"unexpected tool output: {exc}") from exc
