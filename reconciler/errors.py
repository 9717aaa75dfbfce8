"""plumb's own error tree for device I/O; third-party errors are mapped into it once,
at the driver edge, and raised ``from`` the original.

    DeviceError                      something went wrong talking to a device
    ├── OutcomeUnknown               the write may or may not have taken effect
    │   ├── DeviceTimeout            no answer in time: re-observe before anything else
    │   └── ConnectionLost           dropped mid-commit
    ├── DeviceUnreachable            cannot connect at all (nothing was written)
    ├── TerminalDeviceError          retrying will not help; a human must act
    │   ├── DeviceAuthError          credentials refused
    │   └── HostKeyMismatch          SSH host key does not match known_hosts
    └── ConfigRejected               the device refused the change; nothing applied

Which errors are retried, and how, is decided in one place: :func:`classify`.
"""

from __future__ import annotations

from enum import StrEnum


class DeviceError(Exception):
    """Base of every device I/O error; ``device`` names the target."""

    def __init__(self, device: str, message: str) -> None:
        super().__init__(f"{device}: {message}")
        self.device = device
        self.detail = message


class OutcomeUnknown(DeviceError):
    """The write may have taken effect: re-observe, never blindly retry."""


class DeviceTimeout(OutcomeUnknown):
    pass


class ConnectionLost(OutcomeUnknown):
    pass


class DeviceUnreachable(DeviceError):
    pass


class TerminalDeviceError(DeviceError):
    pass


class DeviceAuthError(TerminalDeviceError):
    pass


class HostKeyMismatch(TerminalDeviceError):
    pass


class ConfigRejected(DeviceError):
    pass


class FencedOut(Exception):
    """This process no longer holds the fleet's lease: it must not write."""


class Frozen(Exception):
    """The fleet is frozen (kill switch): no write may start."""


class Handling(StrEnum):
    reobserve = "reobserve"  # outcome unknown: observe again, then decide
    failed = "failed"  # nothing applied; safe to retry on a later pass
    terminal = "terminal"  # needs a human; do not retry


def classify(error: DeviceError) -> Handling:
    """The single place that decides what an error means for the reconcile loop."""
    if isinstance(error, OutcomeUnknown):
        return Handling.reobserve
    if isinstance(error, TerminalDeviceError):
        return Handling.terminal
    return Handling.failed
