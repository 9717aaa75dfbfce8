"""SSH plumbing shared by the EOS and SONiC drivers: one netmiko connection per
device, reused by observe, stage, compare, commit and confirm in one process,
serialised by a per-device lock and closed by :meth:`SwitchDriver.close`.

Connections verify host keys against the rule's known_hosts file (paramiko's
``RejectPolicy`` unless ``ssh_strict: false``; the file parsed once per version and
the transport kept quiet while idle, :mod:`.ssh_transport`), log in with credentials from the
environment or a private file (:mod:`reconciler.drivers.switch_access`), never use
an SSH agent or key files found lying around, and log sessions only when
``session_log_dir`` is set (netmiko masks the password and enable secret there).
Every netmiko call goes through :func:`~reconciler.drivers.netmiko_errors.map_errors`,
the one place upstream exceptions become plumb errors (re-exported here); after any
error the connection is dropped, as its state is unknown, and the next call
reconnects.
"""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from inventory.extras import optional_imports

with optional_imports():
    from netmiko import BaseConnection
    from netmiko.exceptions import ReadTimeout

from reconciler.drivers.base import DeviceRef, Driver
from reconciler.drivers.netmiko_errors import Phase, map_errors
from reconciler.drivers.ssh_transport import connection_class
from reconciler.drivers.switch_access import Credentials, SwitchOptions
from reconciler.errors import ConfigRejected, DeviceError, DeviceTimeout, HostKeyMismatch

__all__ = ["DeviceSession", "Phase", "SshPool", "SwitchDriver", "map_errors"]

READ_SLICE = 0.05  # seconds between checks of the deadline and the link while waiting
ERROR_LINE = re.compile(r"^% .*$", re.MULTILINE)
# In pasted output the echo of lines typed ahead may share a line with an answer.
ERROR_ANYWHERE = re.compile(r"% [A-Za-z][^\n]*")


@dataclass(frozen=True)
class Dialect:
    """What differs between device kinds at the SSH level."""

    device_type: str  # netmiko's name
    prompt_tail: str  # regex after the base prompt, up to the end of the prompt
    enable: bool  # enter privileged mode after login


class DeviceSession:
    """An open connection to one device, used while the pool holds its lock."""

    def __init__(self, name: str, conn: BaseConnection, pool: SshPool) -> None:
        self.name = name
        self.conn = conn
        self.pool = pool
        self.base = re.escape(conn.base_prompt)
        self.spent = False  # the connection is gone (reload) and must not be reused

    def _read(self, done: Callable[[str], bool], timeout: float, what: str) -> str:
        """Read the channel until ``done(output)``, woken as soon as more output
        arrives (netmiko's own loops sleep 25 ms a turn, most of a fast device's
        answer time, and polling 64 sessions at once costs a core). Raises
        netmiko's ReadTimeout, which :func:`map_errors` maps like any other."""
        deadline = time.monotonic() + timeout
        arrived = self._arrivals()
        output = ""
        while not done(output):
            if time.monotonic() > deadline:
                raise ReadTimeout(f"no prompt within {timeout:.0f} s after {what[:40]!r}")
            chunk = self.conn.read_channel()
            output += chunk
            if not chunk:
                if self._closed():
                    raise EOFError(f"the device closed the connection during {what[:40]!r}")
                arrived.wait(READ_SLICE)
        return output

    def _arrivals(self) -> threading.Event:
        """An event set while the channel holds unread output (or has closed).

        paramiko's channel buffer keeps such an event for ``Channel.fileno()``; one is
        given to it here instead, without the two file descriptors per connection
        that ``fileno()`` costs. A channel without that buffer is polled each slice.
        """
        event = threading.Event()
        buffer = getattr(self.conn.remote_conn, "in_buffer", None)
        if buffer is not None and hasattr(buffer, "set_event"):
            buffer.set_event(event)
        return event

    def _closed(self) -> bool:
        """Whether the SSH channel is gone (netmiko's reads just return nothing)."""
        channel: Any = self.conn.remote_conn
        if channel is None:
            return True
        transport = channel.get_transport() if hasattr(channel, "get_transport") else None
        return bool(
            getattr(channel, "closed", False)
            or getattr(channel, "eof_received", False)
            or (transport is not None and not transport.is_active())
        )

    def run(self, command: str, *, phase: Phase = Phase.read, timeout: float | None = None) -> str:
        """One command; its output without the echoed command and the prompt."""
        prompt = re.compile(rf"\n{self.base}{self.pool.dialect.prompt_tail}")
        wait = timeout or self.pool.options.command_timeout
        with map_errors(self.name, phase, self.pool.secrets):
            self.conn.write_channel(self.conn.normalize_cmd(command))
            output = self._read(lambda out: prompt.search(out[-1024:]) is not None, wait, command)
        body = output[: output.rindex("\n")]
        echo, _, rest = body.partition("\n")
        return rest if command.strip() in echo or not rest else body

    def configure(self, lines: Sequence[str], mode_command: str, phase: Phase = Phase.read) -> str:
        """Lines in a configuration mode; a ``% ...`` answer raises ConfigRejected."""
        with map_errors(self.name, phase, self.pool.secrets):
            output = self.conn.send_config_set(
                list(lines),
                config_mode_command=mode_command,
                error_pattern=r"^% ",
                read_timeout=self.pool.options.command_timeout,
            )
        return str(output)

    def paste(self, lines: Sequence[str], prompt: str, phase: Phase = Phase.read) -> str:
        """Send many lines at once, as pasted text, and read until the device has
        answered each with ``prompt`` (a regex); far faster than a round trip per
        line. The caller checks the output for error lines."""
        pattern = re.compile(prompt)
        seen = [0, 0]  # prompts counted, where counting resumes

        def answered(output: str) -> bool:
            for found in pattern.finditer(output, seen[1]):
                seen[0], seen[1] = seen[0] + 1, found.end()
            return seen[0] >= len(lines)

        with map_errors(self.name, phase, self.pool.secrets):
            self.conn.write_channel("".join(self.conn.normalize_cmd(line) for line in lines))
            return self._read(answered, self.pool.options.command_timeout, "pasted lines")

    def send_and_leave(self, command: str) -> None:
        """Send a command that ends the session (a reload); the connection is spent."""
        self.spent = True
        with map_errors(self.name, Phase.write, self.pool.secrets):
            self.conn.write_channel(self.conn.normalize_cmd(command))
            time.sleep(0.2)

    def refused(self, output: str, what: str, pasted: bool = False) -> None:
        """Raise ConfigRejected if the device answered with an error line."""
        found = (ERROR_ANYWHERE if pasted else ERROR_LINE).search(output)
        if found:
            raise ConfigRejected(self.name, f"{what}: {found.group(0)[:200]}")


def abandon(conn: BaseConnection) -> None:
    """Close without the polite ``exit``: a connection in an unknown state (after a
    timeout, a drop or a reload) may never answer it."""
    conn.paramiko_cleanup()
    conn.disconnect()  # now only releases the session log and the log filter


class SshPool:
    """One netmiko connection per device, each behind its own lock."""

    def __init__(self, dialect: Dialect, options: SwitchOptions, credentials: Credentials) -> None:
        self.dialect = dialect
        self.options = options
        self.credentials = credentials
        self.secrets = credentials.secrets()
        self._guard = threading.Lock()
        self._locks: dict[str, threading.Lock] = {}
        self._conns: dict[str, BaseConnection] = {}
        self.opened = 0  # connections opened so far (reuse keeps this at one per device)

    def _lock(self, name: str) -> threading.Lock:
        with self._guard:
            return self._locks.setdefault(name, threading.Lock())

    def _session_log(self, name: str) -> str | None:
        folder = self.options.session_log_dir
        if folder is None:
            return None
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        path = folder / f"{name}.log"
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600))
        return str(path)

    def _connect(self, ref: DeviceRef) -> BaseConnection:
        known = self.options.known_hosts
        if self.options.ssh_strict and not known.is_file():
            raise HostKeyMismatch(ref.name, f"connect: known_hosts file {known} does not exist")
        timeout = self.options.connect_timeout
        with map_errors(ref.name, Phase.connect, self.secrets):
            conn = connection_class(self.dialect.device_type)(
                device_type=self.dialect.device_type,
                host=ref.host,
                port=ref.port,
                username=self.credentials.username,
                password=self.credentials.password,
                secret=self.credentials.secret,
                ssh_strict=self.options.ssh_strict,
                system_host_keys=False,
                alt_host_keys=True,
                alt_key_file=str(known),
                use_keys=False,
                allow_agent=False,
                conn_timeout=timeout,
                auth_timeout=timeout,
                banner_timeout=timeout,
                fast_cli=True,
                session_log=self._session_log(ref.name),
                session_log_file_mode="append",
            )
        if self.dialect.enable:
            try:
                with map_errors(ref.name, Phase.connect, self.secrets):
                    conn.enable()
            except BaseException:
                abandon(conn)
                raise
        with self._guard:
            self.opened += 1
        return conn

    def _alive(self, conn: BaseConnection) -> bool:
        client = conn.remote_conn_pre
        transport = client.get_transport() if client is not None else None
        return transport is not None and transport.is_active()

    @contextmanager
    def session(self, ref: DeviceRef) -> Iterator[DeviceSession]:
        """The device's connection (opened if needed) for the duration of the block."""
        with self._lock(ref.name):
            conn = self._conns.pop(ref.name, None)
            if conn is not None and not self._alive(conn):
                abandon(conn)
                conn = None
            if conn is None:
                conn = self._connect(ref)
            session = DeviceSession(ref.name, conn, self)
            try:
                yield session
            except BaseException:
                abandon(conn)
                raise
            if session.spent:
                abandon(conn)
            else:
                self._conns[ref.name] = conn

    def close(self) -> None:
        with self._guard:
            conns, self._conns = list(self._conns.values()), {}
        for conn in conns:
            conn.disconnect()


class SwitchDriver(Driver):
    """What both SSH switch drivers share: the pool, the commits awaiting confirmation,
    and waiting for a device to come back on a new NOS version."""

    def __init__(self, dialect: Dialect, options: SwitchOptions, credentials: Credentials) -> None:
        self.options = options
        self.pool = SshPool(dialect, options, credentials)
        self._pending: dict[str, object] = {}
        self._pending_lock = threading.Lock()
        self._sleep: Callable[[float], None] = time.sleep

    def remember(self, device: str, candidate: object | None) -> None:
        """Note (or forget) the commit awaiting confirmation on ``device``."""
        with self._pending_lock:
            if candidate is None:
                self._pending.pop(device, None)
            else:
                self._pending[device] = candidate

    def awaiting(self, device: str) -> object | None:
        with self._pending_lock:
            return self._pending.get(device)

    def wait_for_version(self, ref: DeviceRef, version: str) -> None:
        """After a reload: poll until the device answers on ``version`` (bounded)."""
        deadline = time.monotonic() + self.options.reload_timeout
        last = "no answer yet"
        while time.monotonic() < deadline:
            self._sleep(self.options.reload_poll)
            try:
                running = self.observe(ref).get("system/nos_version")
            except DeviceError as exc:
                last = f"{type(exc).__name__}: {exc.detail}"
                continue
            if running == version:
                return
            last = f"running {running}"
        raise DeviceTimeout(
            ref.name,
            f"reload: not back on {version} within {self.options.reload_timeout:.0f} s ({last})",
        )

    def close(self) -> None:
        self.pool.close()
