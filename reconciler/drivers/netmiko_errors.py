"""The one place where netmiko, paramiko and socket exceptions become plumb errors.

Every netmiko call of the switch drivers runs inside :func:`map_errors`, which
raises a :mod:`reconciler.errors` type ``from`` the original. What an upstream
error means depends on the phase it happened in: ``connect`` (nothing sent),
``read`` (observe, stage, compare: running config untouched) or ``write`` (a
commit, confirm, rollback timer or reload may have been sent)::

    upstream exception                         connect            read               write
    -----------------------------------------  -----------------  -----------------  --------------
    NetmikoAuthenticationException, paramiko   DeviceAuthError    DeviceAuthError    DeviceAuthError
      AuthenticationException (+ subclasses)
    paramiko BadHostKeyException; SSHException HostKeyMismatch    HostKeyMismatch    HostKeyMismatch
      "not found in known_hosts" (also when
      netmiko re-raises it as a timeout)
    ConfigInvalidException (error_pattern)     ConfigRejected     ConfigRejected     ConfigRejected
    NetmikoTimeoutException, ReadTimeout,      DeviceUnreachable  DeviceTimeout      DeviceTimeout
      socket.timeout / TimeoutError
    NetmikoParsingException                    DeviceUnreachable  ConfigRejected     OutcomeUnknown
    ReadException, WriteException,             DeviceUnreachable  DeviceUnreachable  ConnectionLost
      ConnectionException, NetmikoBaseException,
      paramiko SSHException / ChannelException,
      EOFError, OSError (reset, refused, pipe)
    ValueError raised inside netmiko           DeviceAuthError*   ConfigRejected     OutcomeUnknown
      (* enable refused; else DeviceUnreachable)

which sits in plumb's tree (:mod:`reconciler.errors`) as::

    DeviceError
    ├── OutcomeUnknown  ── DeviceTimeout, ConnectionLost        re-observe first
    ├── DeviceUnreachable                                       nothing written; retry later
    ├── TerminalDeviceError ── DeviceAuthError, HostKeyMismatch a human must act
    └── ConfigRejected                                          the device refused; nothing applied

Messages keep the upstream class and first lines, with every known secret replaced by
``***``. :data:`ERROR_TABLE` is data, so a test checks that every class
``netmiko.exceptions`` exports is covered.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from enum import StrEnum

from inventory.extras import optional_imports

with optional_imports():
    import paramiko
    from netmiko import exceptions as nx

from reconciler.errors import (
    ConfigRejected,
    ConnectionLost,
    DeviceAuthError,
    DeviceError,
    DeviceTimeout,
    DeviceUnreachable,
    HostKeyMismatch,
    OutcomeUnknown,
)


class Phase(StrEnum):
    connect = "connect"
    read = "read"
    write = "write"


Mapped = tuple[type[DeviceError], type[DeviceError], type[DeviceError]]
_AUTH: Mapped = (DeviceAuthError, DeviceAuthError, DeviceAuthError)
_HOSTKEY: Mapped = (HostKeyMismatch, HostKeyMismatch, HostKeyMismatch)
_TIMEOUT: Mapped = (DeviceUnreachable, DeviceTimeout, DeviceTimeout)
_DROPPED: Mapped = (DeviceUnreachable, DeviceUnreachable, ConnectionLost)

# First match wins: subclasses before their bases.
ERROR_TABLE: tuple[tuple[type[BaseException], Mapped], ...] = (
    (nx.NetmikoAuthenticationException, _AUTH),
    (paramiko.AuthenticationException, _AUTH),
    (paramiko.BadHostKeyException, _HOSTKEY),
    (nx.ConfigInvalidException, (ConfigRejected, ConfigRejected, ConfigRejected)),
    (nx.ReadTimeout, _TIMEOUT),
    (nx.NetmikoTimeoutException, _TIMEOUT),
    (TimeoutError, _TIMEOUT),  # socket.timeout is TimeoutError
    (nx.NetmikoParsingException, (DeviceUnreachable, ConfigRejected, OutcomeUnknown)),
    (nx.ReadException, _DROPPED),
    (nx.WriteException, _DROPPED),
    (nx.ConnectionException, _DROPPED),
    (nx.NetmikoBaseException, _DROPPED),
    (paramiko.ChannelException, _DROPPED),
    (paramiko.SSHException, _DROPPED),
    (EOFError, _DROPPED),
    (OSError, _DROPPED),
)
_NOT_IN_KNOWN_HOSTS = re.compile(
    r"not found in known_hosts|host key for server .* does not match", re.IGNORECASE
)


def _chain(exc: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def _host_key_problem(exc: BaseException) -> bool:
    for link in _chain(exc):
        if isinstance(link, paramiko.BadHostKeyException):
            return True
        if isinstance(link, paramiko.SSHException) and _NOT_IN_KNOWN_HOSTS.search(str(link)):
            return True
    return False


def _from_netmiko(exc: BaseException) -> bool:
    tb = exc.__traceback__
    last = None
    while tb is not None:
        last = tb
        tb = tb.tb_next
    return last is not None and str(last.tb_frame.f_globals.get("__name__", "")).startswith(
        "netmiko"
    )


def scrub(text: str, secrets: Sequence[str]) -> str:
    """``text`` on one line, at most 300 characters, with every secret masked."""
    for secret in sorted((s for s in secrets if s), key=len, reverse=True):
        text = text.replace(secret, "***")
    return " ".join(text.split())[:300]


def translate(
    device: str, phase: Phase, exc: BaseException, secrets: Sequence[str] = ()
) -> DeviceError | None:
    """The plumb error for ``exc`` in ``phase``; None if it is not a device I/O error."""
    index = list(Phase).index(phase)
    message = f"{phase.value}: {type(exc).__name__}: {scrub(str(exc), secrets) or 'no detail'}"
    if _host_key_problem(exc):
        return HostKeyMismatch(device, message)
    if isinstance(exc, ValueError) and _from_netmiko(exc):
        if phase is Phase.connect:
            kind = DeviceAuthError if "enable" in str(exc).lower() else DeviceUnreachable
            return kind(device, message)
        return (ConfigRejected if phase is Phase.read else OutcomeUnknown)(device, message)
    for upstream, mapped in ERROR_TABLE:
        if isinstance(exc, upstream):
            return mapped[index](device, message)
    return None


@contextmanager
def map_errors(device: str, phase: Phase, secrets: Sequence[str] = ()) -> Iterator[None]:
    """Run a netmiko call; upstream errors leave as plumb errors raised ``from`` them."""
    try:
        yield
    except DeviceError:
        raise
    except Exception as exc:
        mapped = translate(device, phase, exc, secrets)
        if mapped is None:
            raise
        raise mapped from exc
