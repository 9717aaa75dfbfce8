"""How the linux-frr driver runs commands on a device: a small transport protocol with
two implementations, each mapping its failures once, here, into
:mod:`reconciler.errors`:

* :class:`NetnsRunner`: inside a network namespace of this host (``ip netns exec NS``),
  the real-network lab's switches and hosts;
* :class:`SshRunner`: over SSH exec channels to a whitebox switch
  (:class:`~reconciler.drivers.ssh_exec.ExecPool`, whose ``map_errors`` maps paramiko's
  errors); with ``sudo``, an SSH user that is not root runs every command through
  ``sudo -n`` (never a password prompt: sudo asking for one is ``DeviceAuthError``).

A command's own non-zero exit status is no transport error: the caller reads it.
Mapping of :class:`NetnsRunner`'s failures::

    subprocess.TimeoutExpired                   DeviceTimeout (outcome unknown); the
                                                command is killed with its children
    the namespace does not exist (any more)     DeviceUnreachable
    OSError starting ``ip`` (not installed)     DeviceUnreachable
"""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from reconciler.drivers.base import DeviceRef
from reconciler.errors import DeviceAuthError, DeviceTimeout, DeviceUnreachable

if TYPE_CHECKING:
    from reconciler.drivers.ssh_exec import ExecPool

NETNS_DIR = "/run/netns"
SUDO = ("sudo", "-n", "--")
SUDO_PASSWORD = "a password is required"  # sudo -n's refusal (sudo 1.8 and later)


@dataclass(frozen=True)
class Ran:
    """What one command left: its output streams and exit status."""

    stdout: str
    stderr: str
    status: int

    def first_error(self) -> str:
        """The first line of stderr (else stdout), for messages."""
        for line in (self.stderr or self.stdout).splitlines():
            if line.strip():
                return line.strip()[:300]
        return f"exit status {self.status}"


class Runner(Protocol):
    """Runs one command on one device."""

    def run(
        self,
        device: DeviceRef,
        argv: Sequence[str],
        *,
        stdin: str | None = None,
        timeout: float | None = None,
        write: bool = False,
    ) -> Ran:
        """``argv`` on ``device``; ``write`` says the command may change it (so a
        failure mid-way is an outcome unknown)."""

    def close(self) -> None: ...


class NetnsRunner:
    """Commands inside each device's network namespace on this host."""

    def __init__(self, namespaces: Mapping[str, str], timeout: float = 30.0) -> None:
        self.namespaces = dict(namespaces)
        self.timeout = timeout

    def namespace(self, device: DeviceRef) -> str:
        namespace = self.namespaces.get(device.name)
        if namespace is None:
            raise DeviceUnreachable(device.name, "no network namespace is recorded for it")
        if not os.path.exists(os.path.join(NETNS_DIR, namespace)):
            raise DeviceUnreachable(device.name, f"network namespace {namespace} does not exist")
        return namespace

    def run(
        self,
        device: DeviceRef,
        argv: Sequence[str],
        *,
        stdin: str | None = None,
        timeout: float | None = None,
        write: bool = False,
    ) -> Ran:
        command = ["ip", "netns", "exec", self.namespace(device), *argv]
        wait = timeout or self.timeout
        try:
            # A session of its own: a command that times out is killed with its children
            # (frr-reload.py's vtysh), so nothing it started goes on writing afterwards.
            process = subprocess.Popen(
                command,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                start_new_session=True,
            )
        except OSError as exc:
            raise DeviceUnreachable(device.name, f"cannot run ip netns exec: {exc}") from exc
        try:
            stdout, stderr = process.communicate(stdin, timeout=wait)
        except subprocess.TimeoutExpired as exc:
            os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
            raise DeviceTimeout(
                device.name, f"no answer within {wait:.0f} s to {shlex.join(argv)[:60]!r}"
            ) from exc
        if process.returncode == 255 and "Cannot open network namespace" in stderr:
            raise DeviceUnreachable(device.name, stderr.strip()[:200])
        return Ran(stdout, stderr, process.returncode)

    def close(self) -> None:
        return None


def shell_command(argv: Sequence[str], stdin: str | None, sudo: bool) -> str:
    """The one shell line an exec channel runs: ``argv`` (through ``sudo -n`` when
    ``sudo``), ``stdin`` riding along on a pipe (an exec channel's stdin is not used)."""
    command = shlex.join([*SUDO, *argv] if sudo else argv)
    return command if stdin is None else f"printf %s {shlex.quote(stdin)} | {command}"


def check_sudo(device: DeviceRef, ran: Ran) -> Ran:
    """``ran`` unless sudo refused to run it without a password."""
    if ran.status != 0 and f"sudo: {SUDO_PASSWORD}" in ran.stderr:
        raise DeviceAuthError(
            device.name,
            f"sudo -n: {SUDO_PASSWORD} — allow the SSH user plumb's commands without a "
            "password (sudoers NOPASSWD), or connect as root",
        )
    return ran


class SshRunner:
    """Commands over SSH exec channels (one client per device, reused)."""

    def __init__(self, pool: ExecPool, sudo: bool = False) -> None:
        self.pool = pool
        self.sudo = sudo

    def run(
        self,
        device: DeviceRef,
        argv: Sequence[str],
        *,
        stdin: str | None = None,
        timeout: float | None = None,
        write: bool = False,
    ) -> Ran:
        from reconciler.drivers.netmiko_errors import Phase

        command = shell_command(argv, stdin, self.sudo)
        with self.pool.session(device) as session:
            result = session.run(
                command, phase=Phase.write if write else Phase.read, timeout=timeout
            )
        ran = Ran(result.stdout, result.stderr, result.status)
        return check_sudo(device, ran) if self.sudo else ran

    def close(self) -> None:
        self.pool.close()
