"""SSH exec channels for switches with a Linux shell (SONiC): one paramiko client per
device, one exec channel per command, and each command's stdout, stderr and exit
status, with no prompt to read.

Clients verify host keys against the rule's known_hosts (paramiko's ``RejectPolicy``;
``ssh_strict: false`` accepts unknown keys and keeps them in memory only), log in with
the password from :class:`~.switch_access.Credentials` (never an agent or key files),
and are reused by observe, stage, compare, commit and confirm behind a per-device
lock. known_hosts is parsed once per file version (path and mtime). Every call runs in
:func:`~.netmiko_errors.map_errors`; after any error the client is dropped and the next
call reconnects.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import paramiko

from reconciler.drivers.base import DeviceRef
from reconciler.drivers.netmiko_errors import Phase, map_errors
from reconciler.drivers.switch_access import Credentials, SwitchOptions
from reconciler.errors import HostKeyMismatch

_KNOWN: dict[tuple[str, int], paramiko.HostKeys] = {}
_KNOWN_LOCK = threading.Lock()


def known_hosts(path: Path) -> paramiko.HostKeys:
    """The parsed known_hosts file, cached by path and modification time."""
    stamp = path.stat().st_mtime_ns
    with _KNOWN_LOCK:
        cached = _KNOWN.get((str(path), stamp))
        if cached is None:
            cached = paramiko.HostKeys(str(path))
            for key in [k for k in _KNOWN if k[0] == str(path)]:
                del _KNOWN[key]
            _KNOWN[(str(path), stamp)] = cached
        return cached


@dataclass(frozen=True)
class Result:
    """What one command left: its output streams and exit status."""

    stdout: str
    stderr: str
    status: int


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
            channel = transport.open_session(timeout=self.pool.options.connect_timeout)
            try:
                channel.settimeout(wait)
                channel.exec_command(command)
                return self._collect(channel, wait, command)
            finally:
                channel.close()

    @staticmethod
    def _collect(channel: paramiko.Channel, wait: float, command: str) -> Result:
        deadline = time.monotonic() + wait
        out, err = bytearray(), bytearray()
        while not channel.exit_status_ready():
            if channel.recv_ready():
                out += channel.recv(65536)
            elif channel.recv_stderr_ready():
                err += channel.recv_stderr(65536)
            elif time.monotonic() > deadline:
                raise TimeoutError(f"no exit status within {wait:.0f} s for {command[:40]!r}")
            else:
                time.sleep(0.002)
        while channel.recv_ready():
            out += channel.recv(65536)
        while channel.recv_stderr_ready():
            err += channel.recv_stderr(65536)
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

    def _lock(self, name: str) -> threading.Lock:
        with self._guard:
            return self._locks.setdefault(name, threading.Lock())

    def _trust(self, client: paramiko.SSHClient, ref: DeviceRef) -> None:
        path = self.options.known_hosts
        if not path.is_file():
            if self.options.ssh_strict:
                raise HostKeyMismatch(ref.name, f"connect: known_hosts file {path} does not exist")
            return
        name = ref.host if ref.port == 22 else f"[{ref.host}]:{ref.port}"
        entries = known_hosts(path).lookup(name)
        for kind, key in (entries or {}).items():
            client.get_host_keys().add(name, kind, key)

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
                )
        except BaseException:
            client.close()
            raise
        with self._guard:
            self.opened += 1
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
