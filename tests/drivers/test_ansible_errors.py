"""ansible-runner's statuses, exceptions and per-host events map onto plumb's errors,
and nothing upstream is left unmapped."""

from __future__ import annotations

import inspect
import re
from pathlib import Path
from typing import Any

import ansible_runner
import ansible_runner.exceptions
import pytest

from reconciler.drivers.ansible_events import (
    RUN_STATUS_ERRORS,
    RUNNER_EXCEPTION_ERRORS,
    collect,
    host_error,
    runner_exception_error,
)
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

_STATUS = re.compile(
    r"""status_callback\(['"](\w+)['"]\)|self\.status = ['"](\w+)['"]|'status': ['"](\w+)['"]"""
)


def runner_statuses() -> set[str]:
    """Every status string the installed ansible-runner sets, read from its source."""
    root = Path(ansible_runner.__file__).parent
    found: set[str] = set()
    for path in root.rglob("*.py"):
        for groups in _STATUS.findall(path.read_text()):
            found.update(g for g in groups if g)
    return found


def event(kind: str, host: str, res: dict[str, Any], task: str = "write settings") -> Any:
    return {"event": kind, "event_data": {"host": host, "task": task, "res": res}}


STATS = {"event": "playbook_on_stats", "event_data": {}}


def test_every_runner_status_is_mapped() -> None:
    """Each status ansible-runner can report has an entry in the mapping table."""
    statuses = runner_statuses()
    assert {"successful", "failed", "timeout", "canceled", "unstarted"} <= statuses
    assert statuses <= set(RUN_STATUS_ERRORS), sorted(statuses - set(RUN_STATUS_ERRORS))


def test_every_runner_exception_is_mapped() -> None:
    """Each exception class ansible_runner.exceptions defines maps to a plumb error."""
    upstream = [
        cls
        for _, cls in inspect.getmembers(ansible_runner.exceptions, inspect.isclass)
        if issubclass(cls, Exception) and cls.__module__ == "ansible_runner.exceptions"
    ]
    mapped = {cls for cls, _ in RUNNER_EXCEPTION_ERRORS}
    assert upstream and set(upstream) <= mapped
    assert runner_exception_error(ansible_runner.exceptions.ConfigurationError("x")) is (
        TerminalDeviceError
    )


def test_a_run_timeout_leaves_unfinished_hosts_unknown() -> None:
    """Status 'timeout' without a host result is DeviceTimeout (outcome unknown)."""
    run = collect([event("runner_on_ok", "a", {"stdout": "[]"})])
    error = host_error("a", run, "timeout", 254)
    assert isinstance(error, DeviceTimeout)
    assert isinstance(host_error("b", run, "canceled", 254), OutcomeUnknown)


@pytest.mark.parametrize(
    ("kind", "res", "expected"),
    [
        (
            "runner_on_unreachable",
            {"msg": "Failed to connect: Permission denied (publickey)."},
            DeviceAuthError,
        ),
        ("runner_on_unreachable", {"msg": "Host key verification failed."}, HostKeyMismatch),
        (
            "runner_on_unreachable",
            {"msg": "ssh: connect to host x port 22: No route"},
            DeviceUnreachable,
        ),
        (
            "runner_on_failed",
            {"msg": "Task failed: Timed out", "timedout": {"period": 4}},
            DeviceTimeout,
        ),
        (
            "runner_on_failed",
            {"msg": "non-zero return code", "stderr": 'Cannot open network namespace "x"'},
            DeviceUnreachable,
        ),
        (
            "runner_on_failed",
            {"msg": "non-zero return code", "stderr": "Error: mtu greater than device maximum."},
            ConfigRejected,
        ),
    ],
)
def test_host_events_map_to_plumb_errors(
    kind: str, res: dict[str, Any], expected: type[DeviceError]
) -> None:
    """Per-host events map to the error the table names (and exactly that class)."""
    error = host_error("h", collect([event(kind, "h", res), STATS]), "failed", 2)
    assert type(error) is expected


def test_a_rejected_write_carries_the_task_and_its_message() -> None:
    """ConfigRejected names the failed task, ansible's msg and the command's stderr."""
    res = {"msg": "non-zero return code", "stderr": "Error: mtu greater than device maximum."}
    error = host_error("h", collect([event("runner_on_failed", "h", res), STATS]), "failed", 2)
    assert str(error) == (
        "h: write settings: non-zero return code: Error: mtu greater than device maximum."
    )


def test_a_host_that_succeeded_in_a_failed_run_has_no_error() -> None:
    """Another host's failure fails the run, not the hosts that reported success."""
    run = collect(
        [
            event("runner_on_ok", "good", {"stdout": "ok"}),
            event("runner_on_failed", "bad", {"msg": "boom"}),
            STATS,
        ]
    )
    assert host_error("good", run, "failed", 2) is None
    assert isinstance(host_error("bad", run, "failed", 2), ConfigRejected)
    assert isinstance(host_error("missing", run, "failed", 2), DeviceUnreachable)


def test_a_run_that_broke_after_a_host_started_is_unknown_for_it() -> None:
    """A run ending early without stats leaves a started host ConnectionLost."""
    run = collect([event("runner_on_ok", "a", {"stdout": "ok"})])
    assert isinstance(host_error("a", run, "failed", 1), ConnectionLost)
    assert type(host_error("b", run, "failed", 1)) is TerminalDeviceError
