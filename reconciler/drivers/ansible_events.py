"""ansible-runner's event stream -> per-host results, and ansible's failures -> plumb's
errors (mapped here once, at the edge).

Per host, from its ``runner_on_*`` events (``event_data.host`` / ``event_data.res``):

==========================================  =================================================
what ansible reported for the host          plumb error
==========================================  =================================================
``runner_on_ok`` / ``_skipped`` only        none: the host's task results
``runner_on_unreachable``, msg says          DeviceAuthError (terminal)
"Permission denied", "Authentication
failed", "Invalid/incorrect password"
``runner_on_unreachable``, msg says          HostKeyMismatch (terminal)
"Host key verification failed"
``runner_on_unreachable``, anything else     DeviceUnreachable (nothing written)
``runner_on_failed`` with ``res.timedout``   DeviceTimeout (outcome unknown: re-observe)
``runner_on_failed``, stderr says            DeviceUnreachable (netns mode: the host's
"Cannot open network namespace"              namespace is gone)
``runner_on_failed``, anything else          ConfigRejected with the task name, ``res.msg``
                                             and the command's stderr (the apply playbook
                                             has rolled the host back first)
no result, run completed (stats printed)     DeviceUnreachable
run ended early, host had started            ConnectionLost unless the status maps to an
                                             OutcomeUnknown already (timeout)
run ended early, host had not started        by the run's status, below
==========================================  =================================================

A host without a result event is mapped by the runner's final status
(:data:`RUN_STATUS_ERRORS`); runner exceptions by :data:`RUNNER_EXCEPTION_ERRORS`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from inventory.extras import optional_imports

with optional_imports():
    from ansible_runner.exceptions import AnsibleRunnerException, CallbackError, ConfigurationError

from reconciler.errors import (
    ConfigRejected,
    ConnectionLost,
    DeviceAuthError,
    DeviceError,
    DeviceTimeout,
    DeviceUnreachable,
    HostKeyMismatch,
    OutcomeUnknown,
    TerminalDeviceError,
)

RESULT_EVENTS = ("runner_on_ok", "runner_on_skipped", "runner_on_failed", "runner_on_unreachable")

# The runner's status (``Runner.status``) -> the error for a host that got no result event.
# ``successful`` means every host reported; ``None`` marks "use the host's own events".
RUN_STATUS_ERRORS: dict[str, type[DeviceError] | None] = {
    "successful": None,
    "failed": TerminalDeviceError,  # ansible-playbook itself failed (bad playbook, no ansible)
    "timeout": DeviceTimeout,  # the run's own time limit: the host may be mid-write
    "canceled": ConnectionLost,  # stopped from our side mid-run: outcome unknown
    "unstarted": DeviceUnreachable,  # never started: nothing was written
    "starting": ConnectionLost,  # interrupted before finishing: outcome unknown
    "running": ConnectionLost,
    "error": ConnectionLost,  # streaming mode's transport error: assume it may have run
}

# ansible-runner's exception classes -> plumb errors (most specific first).
RUNNER_EXCEPTION_ERRORS: tuple[tuple[type[Exception], type[DeviceError]], ...] = (
    (ConfigurationError, TerminalDeviceError),  # runner misconfigured before starting
    (CallbackError, ConnectionLost),  # our event/status handler broke mid-run
    (AnsibleRunnerException, ConnectionLost),
)

_AUTH = re.compile(
    r"Permission denied|Authentication failed|(Invalid|incorrect) password|"
    r"no authentication methods",
    re.IGNORECASE,
)
_HOST_KEY = re.compile(r"Host key verification failed|REMOTE HOST IDENTIFICATION HAS CHANGED")
_NETNS_GONE = re.compile(r"Cannot open network namespace")


@dataclass
class HostReport:
    """Everything one run learned about one host."""

    host: str
    ok: dict[str, dict[str, Any]] = field(default_factory=dict)  # task name -> res
    failed: tuple[str, dict[str, Any]] | None = None  # first failed task and its res
    unreachable: dict[str, Any] | None = None

    @property
    def reported(self) -> bool:
        return bool(self.ok) or self.failed is not None or self.unreachable is not None


@dataclass
class RunReport:
    """The result events of one run, per host; ``completed`` once ansible printed its stats."""

    hosts: dict[str, HostReport] = field(default_factory=dict)
    completed: bool = False


def collect(events: list[Mapping[str, Any]]) -> RunReport:
    """Fold result events into one report per host (the first failure is the cause)."""
    run = RunReport()
    for event in events:
        kind = event.get("event")
        data = event.get("event_data") or {}
        host = data.get("host")
        if kind == "playbook_on_stats":
            run.completed = True
        if kind not in RESULT_EVENTS or not isinstance(host, str):
            continue
        report = run.hosts.setdefault(host, HostReport(host))
        res = dict(data.get("res") or {})
        task = str(data.get("task") or "")
        if kind == "runner_on_unreachable" and report.unreachable is None:
            report.unreachable = res
        elif kind == "runner_on_failed" and report.failed is None:
            report.failed = (task, res)
        elif kind in ("runner_on_ok", "runner_on_skipped"):
            report.ok[task] = res
    return run


def _text(res: Mapping[str, Any], *keys: str) -> str:
    return " ".join(str(res[k]).strip() for k in keys if res.get(k)).strip()


def _reported_error(device: str, report: HostReport) -> DeviceError | None:
    if report.unreachable is not None:
        message = _text(report.unreachable, "msg") or "unreachable"
        if _HOST_KEY.search(message):
            return HostKeyMismatch(device, message)
        if _AUTH.search(message):
            return DeviceAuthError(device, message)
        return DeviceUnreachable(device, message)
    if report.failed is not None:
        task, res = report.failed
        detail = _text(res, "stderr", "module_stderr")
        if res.get("timedout"):
            return DeviceTimeout(device, f"{task}: {res.get('msg', 'timed out')}")
        if _NETNS_GONE.search(detail):
            return DeviceUnreachable(device, f"{task}: {detail}")
        message = f"{task}: {res.get('msg', 'failed')}"
        return ConfigRejected(device, f"{message}: {detail}" if detail else message)
    return None


def host_error(device: str, run: RunReport, status: str, rc: int | None) -> DeviceError | None:
    """The plumb error for one host of a finished run, or None if it succeeded."""
    report = run.hosts.get(device)
    if report is not None:
        reported = _reported_error(device, report)
        if reported is not None:
            return reported
    if run.completed:
        if report is None or not report.reported:
            return DeviceUnreachable(device, "the run completed without a result for this host")
        return None
    error = run_status_error(status) or ConnectionLost
    if report is not None and report.reported and not issubclass(error, OutcomeUnknown):
        error = ConnectionLost  # it had started on this host: the outcome is unknown
    return error(device, f"the run ended early: ansible-runner status {status} (rc {rc})")


def run_status_error(status: str) -> type[DeviceError] | None:
    if status not in RUN_STATUS_ERRORS:
        return ConnectionLost  # a status this table does not know: assume the worst
    return RUN_STATUS_ERRORS[status]


def runner_exception_error(exc: Exception) -> type[DeviceError]:
    for upstream, mapped in RUNNER_EXCEPTION_ERRORS:
        if isinstance(exc, upstream):
            return mapped
    return ConnectionLost
