"""A real NetBox for the suite: the PyPI ``netbox`` Django app behind gunicorn, with
PostgreSQL and Redis, started once per run and reset to its just-migrated state per test.

NetBox 4.7 needs Python >= 3.12, so the server runs from its own venv outside the repo
(``PLUMB_NB_VENV``, default ``/opt/plumb-nbvenv``) built from a 3.12 interpreter
(``PLUMB_NB_PYTHON``); plumb's side only needs pynetbox. Migrating an empty database
takes minutes, so a migrated database (with the superuser ``admin``) is kept as
``tests/netbox/netbox-<version>.dump`` and restored in under a second; a template copy of
it makes the per-test reset a DROP + CREATE (~0.25 s) instead of a restart.

    python -m tests.nbserver ensure-venv   # build the server venv when it is missing
    python -m tests.nbserver build-dump    # migrate an empty database and dump it (minutes)
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path

import psycopg

from tests.pgserver import PGBIN, PgServer

VERSION = "4.7.3"
HERE = Path(__file__).resolve().parent / "netbox"
DUMP = HERE / f"netbox-{VERSION}.dump"
CONFIGURATION = HERE / "configuration.py"
PYTHON = Path(os.environ.get("PLUMB_NB_PYTHON", "/root/.pyenv/versions/3.12.1/bin/python"))
VENV = Path(os.environ.get("PLUMB_NB_VENV", "/opt/plumb-nbvenv"))
ADMIN = ("admin", "plumb-suite-admin-pass")


class NetboxUnavailable(Exception):
    """This machine cannot run the NetBox test server (no 3.12, no venv, no redis)."""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def venv_ready() -> bool:
    marker = VENV / "bin" / "netbox"
    return marker.is_file() and (VENV / f".netbox-{VERSION}").is_file()


def ensure_venv() -> None:
    """Build the server venv (about 80 s) unless it already holds this NetBox version."""
    if venv_ready():
        return
    if not os.access(PYTHON, os.X_OK):
        raise NetboxUnavailable(
            f"NetBox {VERSION} needs Python >= 3.12 and {PYTHON} is not there"
            " (set PLUMB_NB_PYTHON to a 3.12 interpreter)"
        )
    print(f"nbserver: building the NetBox {VERSION} venv in {VENV} (about 80 s)", file=sys.stderr)
    subprocess.run([PYTHON, "-m", "venv", "--clear", VENV], check=True)
    subprocess.run(
        [
            VENV / "bin" / "pip",
            "install",
            "-q",
            "--disable-pip-version-check",
            f"netbox=={VERSION}",
        ],
        check=True,
    )
    (VENV / f".netbox-{VERSION}").touch()


def check_available() -> None:
    """Raise NetboxUnavailable naming what is missing."""
    if not venv_ready():
        raise NetboxUnavailable(
            f"no NetBox {VERSION} venv at {VENV} (run `python -m tests.nbserver ensure-venv`)"
        )
    if shutil.which("redis-server") is None:
        raise NetboxUnavailable("redis-server not found (Debian package redis-server)")
    if not DUMP.is_file():
        raise NetboxUnavailable(f"{DUMP} is missing (run `python -m tests.nbserver build-dump`)")


class NetboxServer:
    """gunicorn (1 worker, 4 threads) + Redis on 127.0.0.1, databases on ``pg``."""

    def __init__(self, pg: PgServer) -> None:
        self.pg = pg
        self.dir = Path(f"/dev/shm/plumb-nb-{os.getpid()}-{uuid.uuid4().hex[:6]}")
        tag = f"nb{os.getpid()}_{uuid.uuid4().hex[:6]}"
        self.database, self.template = tag, f"{tag}_clean"
        self.redis_port = 0
        self.http_port = 0
        self.processes: list[subprocess.Popen[bytes]] = []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.http_port}"

    def _environment(self) -> dict[str, str]:
        return {
            **os.environ,
            "NETBOX_ROOT": str(self.dir / "nbroot"),
            "PLUMB_NB_DB_NAME": self.database,
            "PLUMB_NB_DB_PORT": str(self.pg.port),
            "PLUMB_NB_REDIS_PORT": str(self.redis_port),
        }

    def _spawn(self, argv: list[str | Path], log: str) -> subprocess.Popen[bytes]:
        process = subprocess.Popen(
            argv,
            cwd=self.dir,
            env=self._environment(),
            stdout=subprocess.DEVNULL,
            stderr=(self.dir / log).open("ab"),
            start_new_session=True,
        )
        self.processes.append(process)
        return process

    def _prepare(self) -> None:
        self.dir.mkdir(mode=0o700)
        conf = self.dir / "nbroot" / "conf"
        conf.mkdir(parents=True)
        (conf / "__init__.py").write_text("")
        shutil.copyfile(CONFIGURATION, conf / "configuration.py")
        self.redis_port = _free_port()
        self._spawn(
            [
                "redis-server",
                "--port",
                str(self.redis_port),
                "--bind",
                "127.0.0.1",
                "--dir",
                str(self.dir),
                "--save",
                "",
                "--appendonly",
                "no",
            ],
            "redis.log",
        )
        self._redis_wait()
        with psycopg.connect(self.pg.url, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{self.database}" TEMPLATE template0')

    def _redis_wait(self) -> None:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.redis_port), timeout=1) as s:
                    s.sendall(b"PING\r\n")
                    if s.recv(16).startswith(b"+PONG"):
                        return
            except OSError:
                time.sleep(0.02)
        raise RuntimeError(f"redis did not start: {(self.dir / 'redis.log').read_text()}")

    def _db_url(self, name: str) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.pg.port}/{name}"

    def start(self) -> NetboxServer:
        check_available()
        self._prepare()
        subprocess.run(
            [PGBIN / "pg_restore", "--no-owner", "-d", self._db_url(self.database), DUMP],
            check=True,
            capture_output=True,
        )
        # the template must be copied before gunicorn holds connections to the source
        with psycopg.connect(self.pg.url, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{self.template}" TEMPLATE "{self.database}"')
        self.http_port = _free_port()
        gunicorn = self._spawn(
            [
                VENV / "bin" / "gunicorn",
                "--bind",
                f"127.0.0.1:{self.http_port}",
                "--workers",
                "1",
                "--threads",
                "4",
                "--timeout",
                "120",
                "netbox.wsgi",
            ],
            "gunicorn.log",
        )
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if gunicorn.poll() is not None:
                raise RuntimeError(f"gunicorn exited: {(self.dir / 'gunicorn.log').read_text()}")
            try:
                urllib.request.urlopen(f"{self.url}/api/", timeout=2).close()
                return self
            except urllib.error.HTTPError:  # 403 without a token: it answers
                return self
            except OSError:
                time.sleep(0.1)
        raise RuntimeError("NetBox did not answer within 120 s")

    def reset(self) -> None:
        """Back to the just-migrated database and an empty cache; the server keeps running."""
        with psycopg.connect(self.pg.url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE "{self.database}" WITH (FORCE)')
            conn.execute(f'CREATE DATABASE "{self.database}" TEMPLATE "{self.template}"')
        with socket.create_connection(("127.0.0.1", self.redis_port), timeout=5) as s:
            s.sendall(b"FLUSHALL\r\n")
            if not s.recv(16).startswith(b"+OK"):
                raise RuntimeError("redis refused FLUSHALL")

    def stop(self) -> None:
        for process in reversed(self.processes):
            if process.poll() is None:
                # SIGINT: gunicorn's quick shutdown (SIGTERM waits for its graceful
                # timeout); Redis, which saves nothing here, exits on it too
                process.send_signal(signal.SIGINT)
                try:
                    process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
        with psycopg.connect(self.pg.url, autocommit=True) as conn:
            for name in (self.database, self.template):
                conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        shutil.rmtree(self.dir, ignore_errors=True)

    def build_dump(self) -> None:
        """Migrate an empty database, add the superuser and write ``DUMP``."""
        if not venv_ready():
            raise NetboxUnavailable(f"no NetBox {VERSION} venv at {VENV}")
        self._prepare()
        netbox = VENV / "bin" / "netbox"
        env = self._environment()
        for argv in (
            [netbox, "migrate", "--no-input"],
            [
                netbox,
                "createsuperuser",
                "--no-input",
                "--username",
                ADMIN[0],
                "--email",
                "admin@example.invalid",
            ],
        ):
            subprocess.run(
                argv,
                check=True,
                cwd=self.dir,
                capture_output=True,
                env={**env, "DJANGO_SUPERUSER_PASSWORD": ADMIN[1]},
            )
        partial = DUMP.with_suffix(".partial")
        subprocess.run(
            [PGBIN / "pg_dump", "-Fc", "-f", partial, self._db_url(self.database)], check=True
        )
        partial.rename(DUMP)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.nbserver")
    parser.add_argument("job", choices=["ensure-venv", "build-dump"])
    job = parser.parse_args(argv).job
    try:
        ensure_venv()
    except NetboxUnavailable as exc:
        print(f"nbserver: {exc}", file=sys.stderr)
        return 1
    if job == "build-dump":
        pg = PgServer().start()
        server = NetboxServer(pg)
        try:
            started = time.monotonic()
            server.build_dump()
            print(f"nbserver: wrote {DUMP} in {time.monotonic() - started:.0f} s", file=sys.stderr)
        finally:
            server.stop()
            pg.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
