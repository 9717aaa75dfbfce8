"""Upstream exceptions become plumb errors in one place, by phase, raised ``from`` the
original; no class netmiko exports is left unmapped."""

from __future__ import annotations

import inspect

import netmiko.exceptions
import paramiko
import pytest

from reconciler.drivers.netmiko_errors import ERROR_TABLE, Phase, map_errors, scrub, translate
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


def exported() -> list[type[BaseException]]:
    """Every exception class ``netmiko.exceptions`` exports, found by introspection."""
    return sorted(
        {
            obj
            for _, obj in inspect.getmembers(netmiko.exceptions, inspect.isclass)
            if issubclass(obj, BaseException)
        },
        key=lambda c: c.__name__,
    )


def test_the_introspection_finds_the_known_classes() -> None:
    """The enumeration is not empty and sees netmiko's own and paramiko's classes."""
    names = {c.__name__ for c in exported()}
    assert {"ReadTimeout", "ConfigInvalidException", "SSHException"} <= names


@pytest.mark.parametrize("upstream", exported(), ids=lambda c: c.__name__)
@pytest.mark.parametrize("phase", list(Phase))
def test_every_netmiko_exception_is_mapped(upstream: type[BaseException], phase: Phase) -> None:
    """Each exported class maps to a plumb DeviceError in every phase."""
    mapped = translate("leaf-1", phase, upstream("boom"))
    assert isinstance(mapped, DeviceError), f"{upstream.__name__} is unmapped in {phase}"


def test_the_table_names_every_exported_class_or_a_base_of_it() -> None:
    """The table itself covers every exported class (not only the host-key special case)."""
    for upstream in exported():
        assert any(issubclass(upstream, known) for known, _ in ERROR_TABLE), upstream


@pytest.mark.parametrize(
    ("error", "phase", "expected"),
    [
        (netmiko.exceptions.NetmikoTimeoutException("tcp"), Phase.connect, DeviceUnreachable),
        (netmiko.exceptions.ReadTimeout("no prompt"), Phase.read, DeviceTimeout),
        (netmiko.exceptions.ReadTimeout("no prompt"), Phase.write, DeviceTimeout),
        (TimeoutError("t"), Phase.write, DeviceTimeout),
        (ConnectionRefusedError(111, "refused"), Phase.connect, DeviceUnreachable),
        (EOFError(), Phase.write, ConnectionLost),
        (ConnectionResetError(104, "reset"), Phase.write, ConnectionLost),
        (ConnectionResetError(104, "reset"), Phase.read, DeviceUnreachable),
        (netmiko.exceptions.NetmikoAuthenticationException("no"), Phase.connect, DeviceAuthError),
        (paramiko.BadAuthenticationType("x", ["publickey"]), Phase.connect, DeviceAuthError),
        (netmiko.exceptions.ConfigInvalidException("% Invalid"), Phase.read, ConfigRejected),
        (netmiko.exceptions.NetmikoParsingException("p"), Phase.write, OutcomeUnknown),
        (
            paramiko.SSHException("Server '[h]:22' not found in known_hosts"),
            Phase.connect,
            HostKeyMismatch,
        ),
    ],
    ids=lambda v: v.__name__ if isinstance(v, type) else str(v)[:20],
)
def test_mapping_by_phase(error: BaseException, phase: Phase, expected: type[DeviceError]) -> None:
    """The table's rows, one by one."""
    assert type(translate("leaf-1", phase, error)) is expected


def test_a_changed_host_key_wrapped_by_netmiko_is_a_host_key_mismatch() -> None:
    """netmiko re-raises paramiko's BadHostKeyException as a timeout; plumb sees through."""
    key, other = paramiko.RSAKey.generate(1024), paramiko.RSAKey.generate(1024)
    try:
        try:
            raise paramiko.BadHostKeyException("[127.0.0.1]:2222", key, other)
        except paramiko.SSHException as inner:  # what netmiko's establish_connection does
            raise netmiko.exceptions.NetmikoTimeoutException(f"SSHException: {inner}")  # noqa: B904
    except netmiko.exceptions.NetmikoTimeoutException as wrapped:
        mapped = translate("leaf-1", Phase.connect, wrapped)
    assert isinstance(mapped, HostKeyMismatch) and isinstance(mapped, TerminalDeviceError)


def test_map_errors_raises_from_the_original() -> None:
    """The plumb error keeps the upstream one as its cause."""
    original = netmiko.exceptions.ReadTimeout("Pattern not detected")
    with pytest.raises(DeviceTimeout) as caught, map_errors("leaf-1", Phase.write):
        raise original
    assert caught.value.__cause__ is original and caught.value.device == "leaf-1"


def test_plumb_errors_and_foreign_errors_pass_through() -> None:
    """Errors already mapped, and programming errors, are not re-labelled."""
    with pytest.raises(ConfigRejected), map_errors("leaf-1", Phase.read):
        raise ConfigRejected("leaf-1", "already mapped")
    with pytest.raises(KeyError), map_errors("leaf-1", Phase.read):
        raise KeyError("a bug, not a device error")


def test_a_value_error_from_netmiko_is_mapped_but_ours_is_not() -> None:
    """netmiko signals a failed enable with ValueError; only ValueErrors raised in netmiko map."""
    ours = ValueError("enable failed")
    assert translate("leaf-1", Phase.connect, ours) is None
    namespace: dict[str, object] = {"__name__": "netmiko.base_connection"}
    exec("def enable():\n    raise ValueError('Failed to enter enable mode')", namespace)
    with pytest.raises(ValueError) as caught:
        namespace["enable"]()  # type: ignore[operator]
    assert isinstance(translate("leaf-1", Phase.connect, caught.value), DeviceAuthError)


def test_secrets_are_scrubbed_from_messages() -> None:
    """A secret echoed in an upstream message never reaches plumb's error."""
    error = netmiko.exceptions.ReadTimeout("sent hunter2-long-secret then waited")
    mapped = translate("leaf-1", Phase.read, error, secrets=["hunter2-long-secret"])
    assert mapped is not None and "hunter2" not in str(mapped) and "***" in str(mapped)
    assert scrub("a\n\n  b", []) == "a b"
