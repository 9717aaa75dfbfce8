"""SSH front end: one asyncssh listener per device, all on one event loop.

`Runtime` owns the listeners and runs on the simulator's event-loop thread.
Each accepted session gets a dialect shell.  An exec request
(``ssh switch 'command'``) runs one command and ends with its exit status;
an interactive session loops: it reads a line,
asks the shell for a `Reply`, applies the device's faults and carries out the
reply's action.  Any exception inside a shell is logged and answered, never
allowed to end the session silently.  Reboot and ``unreachable`` close the
listener (new connections are refused) and cut open sessions.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import hmac
import logging
import os
import secrets
import socket
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import asyncssh
from asyncssh.editor import SSHLineEditor
from asyncssh.kex import get_kex_algs
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, NoEncryption, PrivateFormat

from .device import Device
from .eos_device import EosDevice
from .eos_shell import EosShell
from .replies import Action, Reply
from .sonic_device import SonicDevice
from .sonic_shell import SonicShell
from .spec import Fault

log = logging.getLogger("switchsim")
MAX_LINE_LENGTH = 65536
MAX_STDIN_BYTES = 1 << 20
# Key exchange as the switches' sshd offers it by default: OpenSSH 9.2 (SONiC 202411
# on Debian 12; EOS 4.3x ships an OpenSSH of the same era). Hybrid ML-KEM came with
# OpenSSH 9.9, so a switch never negotiates it; sntrup761x25519 (first in OpenSSH's
# list) is left out only when asyncssh lacks it, and no client here offers it anyway.
SSHD_KEX = (
    "sntrup761x25519-sha512@openssh.com",
    "curve25519-sha256",
    "curve25519-sha256@libssh.org",
    "ecdh-sha2-nistp256",
    "ecdh-sha2-nistp384",
    "ecdh-sha2-nistp521",
    "diffie-hellman-group-exchange-sha256",
    "diffie-hellman-group16-sha512",
    "diffie-hellman-group18-sha512",
    "diffie-hellman-group14-sha256",
)


@functools.cache
def sshd_kex() -> list[str]:
    """:data:`SSHD_KEX`, in its order, as far as this asyncssh implements it."""
    known = {name.decode() for name in get_kex_algs()}
    return [name for name in SSHD_KEX if name in known]


def _cache_line_editor_tables() -> None:
    """Share asyncssh's per-session printable-character regex between sessions.

    asyncssh's line editor rebuilds a regex over 64K code points for every
    session (about 20 ms of CPU, half the server's cost of a netmiko
    session).  It depends only on the editor's key bindings, which are the
    same for every session here, so it is built once per distinct key set.
    If a future asyncssh lacks the hook, sessions simply build it themselves.
    """
    build = getattr(SSHLineEditor, "_build_printable", None)
    if build is None or getattr(build, "cached", False):
        return
    cache: dict[frozenset[str], Any] = {}

    def cached(editor: Any) -> None:
        keys = frozenset(editor._keymap)
        if keys in cache:
            editor._printable = cache[keys]
            return
        build(editor)
        if len(cache) < 8:
            cache[keys] = editor._printable

    cached.cached = True  # type: ignore[attr-defined]
    setattr(SSHLineEditor, "_build_printable", cached)  # noqa: B010


_cache_line_editor_tables()


class Shell(Protocol):
    """What the session loop needs from a dialect shell."""

    echo: bool

    @property
    def prompt(self) -> str: ...

    def greeting(self) -> str: ...

    def execute(self, line: str) -> Reply: ...


@dataclass
class Endpoint:
    """A device and its listening socket, host keys and open connections."""

    device: Device
    host: str
    port: int
    host_key: asyncssh.SSHKey
    sock: socket.socket | None = None
    alt_key: asyncssh.SSHKey | None = None
    acceptor: asyncssh.SSHAcceptor | None = None
    connections: set[asyncssh.SSHServerConnection] = field(default_factory=set)
    rebooting: bool = False

    def key_line(self) -> str:
        """known_hosts line for the key this device is meant to present."""
        public = self.host_key.export_public_key("openssh").decode().split()
        return f"[{self.host}]:{self.port} {public[0]} {public[1]}"


def load_seed(path: Path) -> bytes:
    """The secret from which every device's host key is derived, created on first use."""
    if path.exists():
        return path.read_bytes()
    seed = secrets.token_bytes(32)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as file:
        file.write(seed)
    return seed


def derive_host_key(seed: bytes, name: str, variant: str = "") -> asyncssh.SSHKey:
    """A stable ed25519 host key for device `name` (one seed file instead of a file per device)."""
    raw = hashlib.sha256(b"\0".join([seed, name.encode(), variant.encode()])).digest()
    private = Ed25519PrivateKey.from_private_bytes(raw)
    pem = private.private_bytes(Encoding.PEM, PrivateFormat.OpenSSH, NoEncryption())
    return asyncssh.import_private_key(pem)


def bind_socket(host: str, port: int) -> socket.socket:
    """A listening TCP socket on (host, port); port 0 lets the OS choose."""
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(128)
    except OSError:
        sock.close()
        raise
    sock.setblocking(False)
    return sock


def make_shell(device: Device, username: str) -> Shell:
    """The dialect shell for one session on `device`."""
    if isinstance(device, EosDevice):
        return EosShell(device)
    assert isinstance(device, SonicDevice)
    return SonicShell(device, username)


class _SshServer(asyncssh.SSHServer):
    """Password authentication against the device spec, and connection tracking."""

    def __init__(self, endpoint: Endpoint) -> None:
        self._endpoint = endpoint
        self._conn: asyncssh.SSHServerConnection | None = None

    def connection_made(self, conn: asyncssh.SSHServerConnection) -> None:
        self._conn = conn
        self._endpoint.connections.add(conn)

    def connection_lost(self, exc: Exception | None) -> None:
        if self._conn is not None:
            self._endpoint.connections.discard(self._conn)

    def begin_auth(self, username: str) -> bool:
        return True

    def password_auth_supported(self) -> bool:
        return True

    def validate_password(self, username: str, password: str) -> bool:
        spec = self._endpoint.device.spec
        if self._endpoint.device.fault.auth_fail:
            return False
        return hmac.compare_digest(
            username.encode(), spec.username.encode()
        ) and hmac.compare_digest(password.encode(), spec.password.encode())


class Runtime:
    """All endpoints of one simulator; every method runs on its event loop."""

    def __init__(self) -> None:
        self.endpoints: dict[str, Endpoint] = {}
        self._tasks: set[asyncio.Task[None]] = set()

    async def open(self, endpoint: Endpoint) -> None:
        """Start listening with the host key the device's faults call for."""
        fault = endpoint.device.fault
        if endpoint.acceptor is not None or endpoint.rebooting:
            return
        if fault.unreachable:
            await self.close(endpoint, drop_connections=True)
            return
        if fault.host_key_changed and endpoint.alt_key is None:
            endpoint.alt_key = asyncssh.generate_private_key("ssh-ed25519")
        key = endpoint.alt_key if fault.host_key_changed else endpoint.host_key
        where: dict[str, Any] = (
            {"sock": endpoint.sock}
            if endpoint.sock
            else {"host": endpoint.host, "port": endpoint.port}
        )
        endpoint.sock = None
        endpoint.acceptor = await asyncssh.listen(
            **where,
            server_factory=lambda: _SshServer(endpoint),
            server_host_keys=[key],
            kex_algs=sshd_kex(),
            process_factory=lambda process: self._session(endpoint, process),
            line_editor=True,
            max_line_length=MAX_LINE_LENGTH,
            reuse_address=True,
            login_timeout=30,
        )

    async def close(self, endpoint: Endpoint, drop_connections: bool) -> None:
        """Stop listening; optionally cut every open session."""
        if endpoint.sock is not None:
            endpoint.sock.close()
            endpoint.sock = None
        acceptor, endpoint.acceptor = endpoint.acceptor, None
        if acceptor is not None:
            acceptor.close()
            await acceptor.wait_closed()
        if drop_connections:
            for conn in list(endpoint.connections):
                conn.abort()
            endpoint.connections.clear()

    async def set_fault(self, endpoint: Endpoint, fault: Fault) -> None:
        """Install `fault`, reopening or closing the listener as it requires."""
        before, endpoint.device.fault = endpoint.device.fault, fault
        if endpoint.rebooting:
            return
        if fault.unreachable:
            await self.close(endpoint, drop_connections=True)
        elif endpoint.acceptor is None:
            await self.open(endpoint)
        elif before.host_key_changed != fault.host_key_changed:
            await self.close(endpoint, drop_connections=False)
            await self.open(endpoint)

    async def reboot(self, endpoint: Endpoint) -> None:
        """Go down for `reboot_seconds`, then come back from startup config."""
        device = endpoint.device
        if endpoint.rebooting:
            return
        log.info("%s: rebooting for %.1f s", device.name, device.spec.reboot_seconds)
        endpoint.rebooting = True
        device.begin_reboot()
        await self.close(endpoint, drop_connections=True)
        await asyncio.sleep(device.spec.reboot_seconds)
        device.finish_reboot()
        device.boot_time = time.time()
        endpoint.rebooting = False
        await self.open(endpoint)

    async def stop(self) -> None:
        """Close every listener and session; cancel device timers."""
        for task in list(self._tasks):
            task.cancel()
        for endpoint in self.endpoints.values():
            endpoint.device.cancel_timers()
            await self.close(endpoint, drop_connections=True)
        # Sessions still waiting (a withheld answer) would die pending with the loop.
        others = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in others:
            task.cancel()
        await asyncio.gather(*others, return_exceptions=True)

    def _spawn(self, coro: Any) -> None:
        task: asyncio.Task[None] = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _session(self, endpoint: Endpoint, process: asyncssh.SSHServerProcess[str]) -> None:
        try:
            await self._serve(endpoint, process)
        except (BrokenPipeError, ConnectionError, asyncssh.Error) as exc:
            log.debug("%s: client went away: %s", endpoint.device.name, exc)
        except Exception:
            log.exception("%s: session failed", endpoint.device.name)
        finally:
            if not process.is_closing():
                process.exit(0)

    async def _serve(self, endpoint: Endpoint, process: asyncssh.SSHServerProcess[str]) -> None:
        device = endpoint.device
        shell = make_shell(device, process.get_extra_info("username") or device.spec.username)
        if process.command is not None:
            await self._exec(endpoint, process, shell, process.command)
            return
        process.stdout.write(shell.greeting() + shell.prompt)
        while True:
            try:
                line = await process.stdin.readline()
            except (asyncssh.TerminalSizeChanged, asyncssh.BreakReceived, asyncssh.SignalReceived):
                continue
            except (asyncssh.Error, OSError):
                return
            if not line:
                return
            reply = _run(shell, device, line.rstrip("\r\n"))
            if device.fault.slow or reply.delay:
                await asyncio.sleep(device.fault.slow + reply.delay)
            if reply.action is Action.DROP:
                log.info("%s: cutting the connection (fault)", device.name)
                process.get_extra_info("connection").abort()
                return
            text = reply.text + "\n" if reply.text else ""
            if reply.action is Action.REBOOT:
                self._spawn(self.reboot(endpoint))
            if reply.action in (Action.CLOSE, Action.REBOOT):
                if text:
                    process.stdout.write(text)
                return
            channel: Any = process.channel
            channel.set_echo(shell.echo)
            process.stdout.write(text + shell.prompt)
            await process.stdout.drain()

    async def _exec(
        self,
        endpoint: Endpoint,
        process: asyncssh.SSHServerProcess[str],
        shell: Shell,
        command: str,
    ) -> None:
        """One exec request: run `command`, answer stdout, stderr and its exit status.

        The SONiC shell gives separate streams and a status (and may read the
        request's stdin first); the EOS shell's reply is printed on stdout
        with status 0.
        """
        device = endpoint.device
        sonic = shell if isinstance(shell, SonicShell) else None
        stdin: bytes | None = None
        if sonic is not None and sonic.wants_stdin(command):
            text = await process.stdin.read(MAX_STDIN_BYTES)
            stdin = text.encode()
        try:
            if sonic is not None:
                outcome = sonic.run(command, stdin)
                out, err, status = outcome.out, outcome.err, outcome.status
                action, delay = outcome.action, outcome.delay
            else:
                reply = shell.execute(command)
                out, err, status, action, delay = reply.text, "", 0, reply.action, reply.delay
        except Exception as exc:
            log.exception("%s: exec %r failed", device.name, command)
            out, err, status, action, delay = "", f"Internal error: {exc}", 1, Action.PROMPT, 0.0
        if device.fault.slow or delay:
            await asyncio.sleep(device.fault.slow + delay)
        if action is Action.DROP:
            log.info("%s: cutting the connection (fault)", device.name)
            process.get_extra_info("connection").abort()
            return
        if action is Action.REBOOT:
            self._spawn(self.reboot(endpoint))
        if out:
            process.stdout.write(out + "\n")
        if err:
            process.stderr.write(err + "\n")
        process.exit(status)


def _run(shell: Shell, device: Device, line: str) -> Reply:
    try:
        return shell.execute(line)
    except Exception as exc:
        log.exception("%s: command %r failed", device.name, line)
        return Reply(f"% Internal error: {type(exc).__name__}: {exc}")
