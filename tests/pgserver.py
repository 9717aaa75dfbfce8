"""A throwaway PostgreSQL 15 server for the suite: started once per run on tmpfs, one
fresh database per test.

The server binaries refuse to run as root, so they run as the system's ``postgres``
user; the data directory lives under ``/dev/shm`` (every parent must let that user
through, and tmpfs makes the copy and start fast), the socket directory path is kept
short (a unix socket path has at most 107 bytes), and an ``initdb`` is cached as a
template that later runs copy. ``client_connection_check_interval`` makes a backend
whose client was killed mid-statement let go of its locks within a fraction of a second.
"""

from __future__ import annotations

import itertools
import os
import pwd
import shutil
import socket
import subprocess
import time
import uuid
from pathlib import Path

import psycopg

PGBIN = Path(os.environ.get("PLUMB_PGBIN", "/usr/lib/postgresql/15/bin"))
TEMPLATE = Path(os.environ.get("PLUMB_PG_TEMPLATE", "/dev/shm/plumb-pg15-initdb"))
SERVER_USER = "postgres"
INITDB_OPTIONS = (
    "-U",
    "postgres",
    "-A",
    "trust",
    "-E",
    "UTF8",
    "--locale=C.UTF-8",
    "--no-sync",
    "-N",
)
SETTINGS = {
    "listen_addresses": "127.0.0.1",
    "fsync": "off",
    "synchronous_commit": "off",
    "full_page_writes": "off",
    "max_connections": "200",
    "client_connection_check_interval": "250ms",
}


class PgUnavailable(Exception):
    """This machine cannot run the test server (no binaries, no postgres user)."""


def _as_server_user() -> dict[str, object]:
    return {"user": SERVER_USER, "group": SERVER_USER, "extra_groups": []}


DURABLE = {"fsync": "on", "full_page_writes": "on"}
"""What a server that is crashed and restarted in a test needs to keep its commits.
Its default stays ``synchronous_commit = off``, as on a server tuned for speed: plumb's
own sessions must ask for it (reconciler/state/pgconn.py)."""


def _settings(durable: bool) -> list[str]:
    settings = {**SETTINGS, **DURABLE} if durable else SETTINGS
    return [part for name, value in settings.items() for part in ("-c", f"{name}={value}")]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _chown(path: Path) -> None:
    entry = pwd.getpwnam(SERVER_USER)
    os.chown(path, entry.pw_uid, entry.pw_gid)


def _template() -> Path:
    """The cached initdb, made once per machine (built aside, then renamed into place)."""
    if (TEMPLATE / "PG_VERSION").is_file():
        return TEMPLATE
    building = TEMPLATE.with_name(f"{TEMPLATE.name}.{uuid.uuid4().hex[:8]}")
    building.mkdir(mode=0o700)
    _chown(building)
    subprocess.run(
        [PGBIN / "initdb", "-D", building, *INITDB_OPTIONS],
        check=True,
        capture_output=True,
        **_as_server_user(),  # type: ignore[call-overload]
    )
    try:
        building.rename(TEMPLATE)
    except OSError:  # another run built it first
        shutil.rmtree(building, ignore_errors=True)
    return TEMPLATE


class PgServer:
    """One postgres process on 127.0.0.1; ``url`` is its maintenance database. Fast and
    not durable (fsync off: plumb then records to it only with
    ``PLUMB_STATE_NONDURABLE=accept``), or ``durable`` for a server a test crashes."""

    def __init__(
        self, *, durable: bool = False, listen: tuple[str, ...] = (), trust: tuple[str, ...] = ()
    ) -> None:
        self.durable = durable
        self.listen = listen  # addresses besides 127.0.0.1 (they must exist at start)
        self.trust = trust  # networks (CIDR) whose clients may connect without a password
        if not (PGBIN / "postgres").is_file():
            raise PgUnavailable(f"{PGBIN}/postgres not found (Debian package postgresql-15)")
        try:
            pwd.getpwnam(SERVER_USER)
        except KeyError as exc:
            raise PgUnavailable(f"no {SERVER_USER} user to run the server as") from exc
        if os.geteuid() != 0:
            raise PgUnavailable("the test server is started as root (it runs as postgres)")
        self.dir = Path(f"/dev/shm/plumb-pg-{os.getpid()}-{uuid.uuid4().hex[:6]}")
        self.port = 0
        self.process: subprocess.Popen[bytes] | None = None
        self._names = itertools.count(1)

    @property
    def url(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def start(self) -> PgServer:
        template = _template()
        self.dir.mkdir(mode=0o755)
        _chown(self.dir)
        data = self.dir / "data"
        subprocess.run(["cp", "-a", str(template), str(data)], check=True)
        for _attempt in range(3):
            self.port = _free_port()
            if self._spawn():
                return self
        raise RuntimeError(f"postgres did not start: {(self.dir / 'server.log').read_text()}")

    def _spawn(self) -> bool:
        hba = self.dir / "data" / "pg_hba.conf"
        lines = hba.read_text()
        for network in self.trust:
            if f" {network} " not in lines:
                lines += f"host all all {network} trust\n"
        hba.write_text(lines)
        listen = ["-c", f"listen_addresses={','.join(('127.0.0.1', *self.listen))}"]
        self.process = subprocess.Popen(
            [
                PGBIN / "postgres",
                "-D",
                self.dir / "data",
                "-p",
                str(self.port),
                "-k",
                self.dir,
                *_settings(self.durable),
                *listen,
            ],
            stdout=subprocess.DEVNULL,
            stderr=(self.dir / "server.log").open("ab"),
            start_new_session=True,
            **_as_server_user(),  # type: ignore[call-overload]
        )
        if self._wait_ready():
            return True
        self.process.kill()
        self.process.wait()
        return False

    def halt(self) -> None:
        """Shut the server down at once (SIGQUIT: what a crash or a failover looks like
        to clients), keeping its data and port for :meth:`resume`."""
        assert self.process is not None
        self.process.send_signal(3)
        self.process.wait(timeout=30)

    def resume(self) -> None:
        """Start the halted server again on the same port and data (crash recovery)."""
        if not self._spawn():
            raise RuntimeError(f"postgres did not restart: {(self.dir / 'server.log').read_text()}")

    def _wait_ready(self) -> bool:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            assert self.process is not None
            if self.process.poll() is not None:
                return False
            try:
                psycopg.connect(self.url, connect_timeout=2).close()
                return True
            except psycopg.OperationalError:
                time.sleep(0.05)
        return False

    def new_database(self) -> str:
        """A fresh, empty database; returns its URL."""
        name = f"t{os.getpid()}_{next(self._names)}"
        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}" TEMPLATE template0')
        return f"postgresql://postgres@127.0.0.1:{self.port}/{name}"

    def terminate_clients(self, url: str, application: str = "plumb") -> int:
        """Cut every ``application`` connection to ``url``'s database, as a lost network
        or a restarted server would; returns how many were cut."""
        database = url.rsplit("/", 1)[1]
        with psycopg.connect(self.url, autocommit=True) as conn:
            rows = conn.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                " WHERE datname = %s AND application_name = %s",
                (database, application),
            ).fetchall()
        return len(rows)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(3)  # SIGQUIT: immediate shutdown
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        shutil.rmtree(self.dir, ignore_errors=True)
