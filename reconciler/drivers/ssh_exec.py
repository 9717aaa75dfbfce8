"""SSH exec channels for switches with a Linux shell (SONiC): one paramiko client per
device, one exec channel per command, and each command's stdout, stderr and exit
status, with no prompt to read.

Clients verify host keys against the rule's known_hosts (paramiko's ``RejectPolicy``;
``ssh_strict: false`` accepts unknown keys and keeps them in memory only), log in with
the password from :class:`~.switch_access.Credentials` (never an agent or key files),
and are reused by observe, stage, compare, commit and confirm behind a per-device
lock. known_hosts is parsed once per file version and idle transports stay quiet
(:mod:`.ssh_transport`). Every call runs in
:func:`~.netmiko_errors.map_errors`; after any error the client is dropped and the next
call reconnects.

With ``session_log_dir`` set, each device gets ``<dir>/<device>.log`` (folder created
0700, file kept 0600, appended to): every login, every command with its exit status,
stdout and stderr, and every command that ended without one (timeout, cut link), with
each known secret masked. Without the option nothing is written.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from inventory.extras import optional_imports

with optional_imports():
    import paramiko

from reconciler.drivers.base import DeviceRef
from reconciler.drivers.netmiko_errors import Phase, map_errors
from reconciler.drivers.ssh_transport import QuietTransport, trust_host
from reconciler.drivers.switch_access import Credentials, SwitchOptions
from reconciler.errors import HostKeyMismatch

READ_SLICE = 0.05  # seconds a read blocks before checking stderr and the deadline


def _rest(read: Callable[[int], bytes]) -> bytes:
    """What is left in a stream whose end of file has come."""
    data = bytearray()
    while chunk := read(65536):
        data += chunk
    return bytes(data)


@dataclass(frozen=True)
class Result:
    """What one command left: its output streams and exit status."""

    stdout: str
    stderr: str
    status: int


MASK = "********"


def masked(text: str, secrets: Sequence[str]) -> str:
    """``text`` with every secret replaced (longest first, so none leaves a tail)."""
    for secret in sorted((s for s in secrets if s), key=len, reverse=True):
        text = text.replace(secret, MASK)
    return text


def log_entry(when: datetime, command: str, result: Result | BaseException) -> str:
    """One session-log entry: the command, then its exit status and output streams, or
    why it ended without an exit status."""
    head = f"{when.isoformat(timespec='milliseconds')} $ {command}\n"
    if isinstance(result, BaseException):
        return head + f"[no exit status: {type(result).__name__}: {result}]\n"
    body = head + f"[exit status {result.status}]\n" + _block("stdout", result.stdout)
    return body + _block("stderr", result.stderr)


def _block(stream: str, text: str) -> str:
    if not text:
        return ""
    return f"[{stream}]\n{text}" + ("" if text.endswith("\n") else "\n")


class SessionLog:
    """``<folder>/<device>.log``: appended to, owner-only, every secret masked."""

    def __init__(self, folder: Path, device: str, secrets: Sequence[str]) -> None:
        self.path = folder / f"{device}.log"
        self.secrets = tuple(secrets)

    def write(self, text: str) -> None:
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        handle = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        os.fchmod(handle, 0o600)  # a file made by hand with wider rights is narrowed
        with os.fdopen(handle, "a", encoding="utf-8") as file:
            file.write(masked(text, self.secrets))

    def command(self, command: str, result: Result | BaseException) -> None:
        self.write(log_entry(datetime.now(UTC), command, result))

    def note(self, text: str) -> None:
        self.write(f"{datetime.now(UTC).isoformat(timespec='milliseconds')} # {text}\n")


class ExecSession:
    """An open client to one device, used while the pool holds its lock."""

    def __init__(self, name: str, client: paramiko.SSHClient, pool: ExecPool) -> None:
        self.name = name
        self.client = client
        self.pool = pool
        self.spent = False  # the device is rebooting: drop the client afterwards

    def run(
        self, command: str, *, phase: Phase = Phase.read, timeout: float | None = None
    ) -> Result:
        """Run ``command`` on its own channel; raises (mapped) on timeout or a cut link."""
        wait = timeout or self.pool.options.command_timeout
        with map_errors(self.name, phase, self.pool.secrets):
            transport = self.client.get_transport()
            if transport is None or not transport.is_active():
                raise EOFError("the SSH connection is closed")
            try:
                result = self._exec(transport, command, wait)
            except BaseException as exc:
                self.pool.record(self.name, command, exc)
                raise
            self.pool.record(self.name, command, result)
            return result

    def _exec(self, transport: paramiko.Transport, command: str, wait: float) -> Result:
        channel = transport.open_session(timeout=self.pool.options.connect_timeout)
        try:
            channel.settimeout(wait)
            channel.exec_command(command)
            return self._collect(channel, wait, command)
        finally:
            channel.close()

    @staticmethod
    def _collect(channel: paramiko.Channel, wait: float, command: str) -> Result:
        """stdout and stderr up to their end of file, then the exit status.

        The exit status is no sign that the output is all in: sshd sends it when the
        command exits, and output still queued behind the channel's window follows
        it. So the streams are read until the server's EOF (or close), blocking on
        stdout a slice at a time, and only then is the status taken.
        """
        deadline = time.monotonic() + wait
        out, err = bytearray(), bytearray()
        channel.settimeout(READ_SLICE)
        while True:
            try:
                chunk = channel.recv(65536)
            except TimeoutError:  # socket.timeout: nothing on stdout for a slice
                chunk = None
            while channel.recv_stderr_ready():
                err += channel.recv_stderr(65536)
            if chunk:
                out += chunk
            elif chunk is not None:  # b"": end of file (or the channel closed)
                break
            elif time.monotonic() > deadline:
                raise TimeoutError(f"no end of output within {wait:.0f} s for {command[:40]!r}")
        err += _rest(channel.recv_stderr)
        while not channel.exit_status_ready():
            if time.monotonic() > deadline:
                raise TimeoutError(f"no exit status within {wait:.0f} s for {command[:40]!r}")
            channel.status_event.wait(READ_SLICE)
        status = channel.recv_exit_status()
        if status < 0:
            raise EOFError(f"the channel closed without an exit status during {command[:40]!r}")
        return Result(out.decode(errors="replace"), err.decode(errors="replace"), status)

    def start_and_leave(self, command: str) -> None:
        """Start a command that ends the session (a reboot); the client is spent."""
        self.spent = True
        with map_errors(self.name, Phase.write, self.pool.secrets):
            transport = self.client.get_transport()
            if transport is None:
                raise EOFError("the SSH connection is closed")
            channel = transport.open_session(timeout=self.pool.options.connect_timeout)
            channel.exec_command(command)
            self.pool.note(self.name, f"started {command!r}; it ends the session")
            time.sleep(0.2)


class ExecPool:
    """One paramiko client per device, each behind its own lock."""

    def __init__(self, options: SwitchOptions, credentials: Credentials) -> None:
        self.options = options
        self.credentials = credentials
        self.secrets = credentials.secrets()
        self._guard = threading.Lock()
        self._locks: dict[str, threading.Lock] = {}
        self._clients: dict[str, paramiko.SSHClient] = {}
        self.opened = 0  # clients opened so far (reuse keeps this at one per device)

    def _log(self, name: str) -> SessionLog | None:
        folder = self.options.session_log_dir
        return None if folder is None else SessionLog(folder, name, self.secrets)

    def record(self, name: str, command: str, result: Result | BaseException) -> None:
        """Log one command's outcome (only with ``session_log_dir``)."""
        log = self._log(name)
        if log is not None:
            log.command(command, result)

    def note(self, name: str, text: str) -> None:
        """Log an event of the connection (only with ``session_log_dir``)."""
        log = self._log(name)
        if log is not None:
            log.note(text)

    def _lock(self, name: str) -> threading.Lock:
        with self._guard:
            return self._locks.setdefault(name, threading.Lock())

    def _trust(self, client: paramiko.SSHClient, ref: DeviceRef) -> None:
        path = self.options.known_hosts
        if not path.is_file():
            if self.options.ssh_strict:
                raise HostKeyMismatch(ref.name, f"connect: known_hosts file {path} does not exist")
            return
        trust_host(client, path, ref.host, ref.port)

    def _connect(self, ref: DeviceRef) -> paramiko.SSHClient:
        client = paramiko.SSHClient()
        self._trust(client, ref)
        policy = paramiko.RejectPolicy() if self.options.ssh_strict else paramiko.AutoAddPolicy()
        client.set_missing_host_key_policy(policy)
        timeout = self.options.connect_timeout
        try:
            with map_errors(ref.name, Phase.connect, self.secrets):
                client.connect(
                    ref.host,
                    port=ref.port,
                    username=self.credentials.username,
                    password=self.credentials.password,
                    timeout=timeout,
                    banner_timeout=timeout,
                    auth_timeout=timeout,
                    allow_agent=False,
                    look_for_keys=False,
                    transport_factory=QuietTransport,
                )
        except BaseException as exc:
            client.close()
            self.note(ref.name, f"login to {ref.host}:{ref.port} failed: {type(exc).__name__}")
            raise
        with self._guard:
            self.opened += 1
        self.note(ref.name, f"logged in to {ref.host}:{ref.port} as {self.credentials.username}")
        return client

    @staticmethod
    def _alive(client: paramiko.SSHClient) -> bool:
        transport = client.get_transport()
        return transport is not None and transport.is_active()

    @contextmanager
    def session(self, ref: DeviceRef) -> Iterator[ExecSession]:
        """The device's client (connected if needed) for the duration of the block."""
        with self._lock(ref.name):
            client = self._clients.pop(ref.name, None)
            if client is not None and not self._alive(client):
                client.close()
                client = None
            if client is None:
                client = self._connect(ref)
            session = ExecSession(ref.name, client, self)
            try:
                yield session
            except BaseException:
                client.close()
                raise
            if session.spent:
                client.close()
            else:
                self._clients[ref.name] = client

    def close(self) -> None:
        with self._guard:
            clients, self._clients = list(self._clients.values()), {}
        for client in clients:
            client.close()
