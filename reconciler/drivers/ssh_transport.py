"""The SSH transport under both switch pools (:mod:`.netmiko_common` for EOS CLI
sessions, :mod:`.ssh_exec` for SONiC exec channels): host keys and the paramiko
transport, tuned for a process that holds many connections at once.

- **Host keys** are parsed once per known_hosts file version (path and mtime), not once
  per login (paramiko and netmiko read the whole file for every new client: at 500
  lines about 0.1 s of CPU, most of a login). Each client is given only the entries of
  the host it connects to and still refuses any other key (``RejectPolicy``), so the
  check is exactly as strict as loading the file.
- **Small packets go out at once** (``TCP_NODELAY``, as OpenSSH sets for interactive
  sessions). Without it a request written right after another small one (an exec
  channel's open after the last one's close) waits for the server's delayed ACK,
  about 40 ms on Linux, for every command.
- **The transport's reader thread** blocks on its socket and wakes every
  :data:`IDLE_WAKE` seconds on an idle link instead of paramiko's 0.1 s (ten wake-ups a
  second per open connection: with 1,000 connections open, most of a core spent
  polling). Incoming packets are read as soon as they arrive either way; the interval
  only bounds how long a closed transport's thread lingers before it notices (it then
  ends quietly, as paramiko's own does).
"""

from __future__ import annotations

import socket
import threading
from pathlib import Path
from typing import Any

from inventory.extras import optional_imports

with optional_imports():
    import paramiko
    from netmiko import BaseConnection
    from netmiko.ssh_dispatcher import CLASS_MAPPER

IDLE_WAKE = 2.0  # seconds between an idle reader thread's checks

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


def host_entry(host: str, port: int) -> str:
    """How known_hosts (and paramiko) name ``host``: bare on port 22, else ``[host]:port``."""
    return host if port == 22 else f"[{host}]:{port}"


def trust_host(client: paramiko.SSHClient, path: Path, host: str, port: int) -> None:
    """Give ``client`` the known_hosts entries of ``host:port`` (none if it has none)."""
    name = host_entry(host, port)
    for kind, key in (known_hosts(path).lookup(name) or {}).items():
        client.get_host_keys().add(name, kind, key)


class QuietTransport(paramiko.Transport):  # type: ignore[misc]  # paramiko is untyped
    """A paramiko transport whose idle reader thread wakes every :data:`IDLE_WAKE`
    seconds (paramiko reads the interval from this class attribute when it sets up
    the socket), on a socket that sends small packets at once (``TCP_NODELAY``)."""

    _active_check_timeout = IDLE_WAKE

    def __init__(self, sock: Any, *args: Any, **kwargs: Any) -> None:
        if isinstance(sock, socket.socket) and sock.family in (socket.AF_INET, socket.AF_INET6):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        super().__init__(sock, *args, **kwargs)


class _CachedKeys:
    """netmiko connection mixin: host keys from :func:`known_hosts`, a
    :class:`QuietTransport`, and ANSI codes looked for only where there are any;
    everything else is netmiko's own."""

    host: str
    port: int
    alt_host_keys: bool
    alt_key_file: str
    key_policy: paramiko.MissingHostKeyPolicy

    def _build_ssh_client(self) -> paramiko.SSHClient:
        client = paramiko.SSHClient()
        path = Path(self.alt_key_file)
        if self.alt_host_keys and path.is_file():
            trust_host(client, path, self.host, self.port)
        client.set_missing_host_key_policy(self.key_policy)
        return client

    def _connect_params_dict(self) -> dict[str, Any]:
        params: dict[str, Any] = super()._connect_params_dict()  # type: ignore[misc]
        params["transport_factory"] = QuietTransport
        return params

    def strip_ansi_escape_codes(self, string_buffer: str) -> str:
        # Every code netmiko strips begins with ESC; its 35 substitutions per read
        # were a third of an EOS session's CPU on output that has none.
        if "\x1b" not in string_buffer:
            return string_buffer
        stripped: str = super().strip_ansi_escape_codes(string_buffer)  # type: ignore[misc]
        return stripped


_CLASSES: dict[str, type[BaseConnection]] = {}


def connection_class(device_type: str) -> type[BaseConnection]:
    """netmiko's connection class for ``device_type`` with cached host keys and a
    quiet transport (used instead of ``ConnectHandler``, with the same arguments)."""
    with _KNOWN_LOCK:
        found = _CLASSES.get(device_type)
        if found is None:
            base: type[BaseConnection] = CLASS_MAPPER[device_type]
            found = type(f"Cached{base.__name__}", (_CachedKeys, base), {})
            _CLASSES[device_type] = found
        return found
