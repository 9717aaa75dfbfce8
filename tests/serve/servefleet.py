"""Real parts for the controller's tests: a bare git remote and an author clone that
pushes to it, the controller's own clone with a lab, ``plumb serve`` as a process, and
a loopback HTTP receiver for notifications."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, TypeVar

from intent.fleet import load_fleet
from lab.driver import create_lab
from lab.fleet import Fault, lab_db_path
from lab.store import LabStore
from reconciler.settings import Scalar
from tests.fleetcopy import copy_orion
from tests.prometheus.server import free_port

PLUMB = Path(sys.executable).with_name("plumb")
T = TypeVar("T")


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=author", "-c", "user.email=author@example.invalid", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
        text=True,
    )
    return done.stdout.strip()


def wait_until(check: Callable[[], T | None], timeout: float, what: str) -> T:
    deadline = time.monotonic() + timeout
    while True:
        found = check()
        if found:
            return found
        if time.monotonic() > deadline:
            raise TimeoutError(f"waited {timeout:g}s for {what}")
        time.sleep(0.1)


@dataclass
class Repos:
    remote: Path
    author: Path
    controller: Path

    def push(self, relative: str, text: str, message: str) -> str:
        """Commit ``text`` as ``relative`` in the author clone and push it; the new head."""
        (self.author / relative).write_text(text)
        git(self.author, "add", relative)
        git(self.author, "commit", "-q", "-m", message)
        git(self.author, "push", "-q", "origin", "main")
        return git(self.author, "rev-parse", "HEAD")


def make_repos(tmp: Path, serve_yaml: str) -> Repos:
    """ORION with ``serve_yaml`` appended to plumb.yaml, pushed to a bare remote, and
    the controller's clone of it with a lab at intent (no drift, intended firmware)."""
    remote = tmp / "remote.git"
    git(tmp, "init", "-q", "--bare", "-b", "main", str(remote))
    author = copy_orion(tmp / "author").path
    (author / "plumb.yaml").write_text((author / "plumb.yaml").read_text() + serve_yaml)
    git(author, "init", "-q", "-b", "main")
    git(author, "add", "-A")
    git(author, "commit", "-q", "-m", "orion")
    git(author, "remote", "add", "origin", str(remote))
    git(author, "push", "-q", "origin", "main")
    controller = tmp / "controller"
    git(tmp, "clone", "-q", str(remote), str(controller))
    fleet = load_fleet(controller)
    store = LabStore(lab_db_path(fleet))
    try:
        create_lab(store, fleet, drift=0, older_firmware=False)
    finally:
        store.close()
    return Repos(remote, author, controller)


def lab_values(root: Path, device: str) -> dict[str, Scalar]:
    store = LabStore(lab_db_path(load_fleet(root)))
    try:
        return store.read_running(device)
    finally:
        store.close()


def inject_drift(root: Path, device: str, values: Mapping[str, Scalar]) -> None:
    """Change a lab device behind plumb's back, as a person at the console would."""
    store = LabStore(lab_db_path(load_fleet(root)))
    try:
        store.commit(device, values, save=True)
    finally:
        store.close()


def add_lab_fault(root: Path, fault: Fault) -> None:
    store = LabStore(lab_db_path(load_fleet(root)))
    try:
        store.add_fault(fault)
    finally:
        store.close()


@dataclass
class Served:
    process: subprocess.Popen[bytes]
    port: int
    log: Path
    host: str = "127.0.0.1"

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def get(self, path: str) -> tuple[int, str]:
        try:
            with urllib.request.urlopen(f"{self.url}{path}", timeout=2) as response:
                return response.status, response.read().decode()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read().decode()
        except OSError:
            return 0, ""

    def post(self, path: str, body: bytes, headers: Mapping[str, str]) -> int:
        request = urllib.request.Request(
            f"{self.url}{path}", data=body, headers=dict(headers), method="POST"
        )
        try:
            with urllib.request.urlopen(request, timeout=2) as response:
                return int(response.status)
        except urllib.error.HTTPError as exc:
            return int(exc.code)

    def metric(self, name: str, **labels: str) -> float | None:
        """One sample of ``/metrics`` (labels given must all match), or None."""
        status, text = self.get("/metrics")
        if status != 200:
            return None
        for line in text.splitlines():
            named = line.startswith((f"{name}{{", f"{name} "))
            if named and all(f'{k}="{v}"' in line for k, v in labels.items()):
                return float(line.rsplit(" ", 1)[1])
        return None

    def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=10)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=5)


def start_serve(root: Path, env: Mapping[str, str], log: Path) -> Served:
    port = free_port()
    with log.open("ab") as out:
        process = subprocess.Popen(
            [str(PLUMB), "serve", str(root), "--listen", f"127.0.0.1:{port}"],
            env={**os.environ, "PLUMB_ACTOR": "controller@test", **env},
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    served = Served(process, port, log)
    wait_until(lambda: served.get("/healthz")[0] == 200 or process.poll() is not None, 20, "up")
    assert process.poll() is None, log.read_text()[-2000:]
    return served


@dataclass
class Receiver:
    """A webhook receiver on loopback that answers 500 to the first ``fail_first``."""

    fail_first: int = 0
    received: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    refused: int = 0

    def start(self) -> str:
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: object) -> None:
                return None

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if outer.refused < outer.fail_first:
                    outer.refused += 1
                    self.send_response(500)
                else:
                    outer.received.append((self.path, json.loads(body)))
                    self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def events(self, path: str) -> list[dict[str, Any]]:
        return [body for p, body in self.received if p == path]
