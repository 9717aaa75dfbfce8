"""A real Prometheus server (Debian's ``prometheus``) on a free loopback port, with a
generated config scraping the test exporters every second and its own storage dir.

Waits poll the HTTP API; nothing sleeps for a fixed time. Under ``CI=true`` a missing
or broken Prometheus fails the tests; elsewhere it skips them with the reason.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import time
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn, TypeVar

import pytest

from rollouts.sources.prometheus import PrometheusApi, PrometheusError

T = TypeVar("T")
SCRAPE_SECONDS = 1
START_TIMEOUT = 15.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def unavailable(reason: str) -> NoReturn:
    """Fail under CI (the server is part of the test environment), else skip."""
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"Prometheus is required under CI: {reason}", pytrace=False)
    pytest.skip(f"no Prometheus server to test against: {reason}")


def wait_for(check: Callable[[], T | None], timeout: float, what: str) -> T:
    """Poll ``check`` every 0.1 s until it returns something other than None."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            found = check()
        except PrometheusError:
            found = None
        if found is not None:
            return found
        if time.monotonic() > deadline:
            raise TimeoutError(f"waited {timeout:g}s for {what}")
        time.sleep(0.1)


@dataclass
class PrometheusServer:
    process: subprocess.Popen[bytes]
    url: str
    log: Path
    started_seconds: float = 0.0

    @property
    def api(self) -> PrometheusApi:
        return PrometheusApi(self.url, 5.0)

    def value(self, promql: str) -> float | None:
        """The single value of an instant query now, or None when it has no series."""
        found = self.api.query(promql, time.time())
        return found[0].values[0] if found and found[0].values else None

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=5)


def _ready(url: str) -> bool | None:
    try:
        with urllib.request.urlopen(f"{url}/-/ready", timeout=1) as response:
            return True if response.status == 200 else None
    except OSError:
        return None


def start_prometheus(workdir: Path, jobs: Mapping[str, int]) -> PrometheusServer:
    """Start Prometheus scraping ``127.0.0.1:<port>`` for each job; wait until ready."""
    binary = shutil.which("prometheus")
    if binary is None:
        unavailable("no prometheus on PATH (Debian package prometheus; ./dev test installs it)")
    config = {
        "global": {"scrape_interval": f"{SCRAPE_SECONDS}s", "scrape_timeout": "1s"},
        "scrape_configs": [
            {"job_name": job, "static_configs": [{"targets": [f"127.0.0.1:{port}"]}]}
            for job, port in jobs.items()
        ],
    }
    (workdir / "prometheus.yml").write_text(json.dumps(config))  # JSON is YAML
    port = free_port()
    log = workdir / "prometheus.log"
    began = time.monotonic()
    with log.open("wb") as out:
        process = subprocess.Popen(
            [
                binary,
                f"--config.file={workdir / 'prometheus.yml'}",
                f"--storage.tsdb.path={workdir / 'data'}",
                f"--web.listen-address=127.0.0.1:{port}",
                "--log.level=warn",
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    server = PrometheusServer(process, f"http://127.0.0.1:{port}", log)
    try:
        wait_for(
            lambda: _ready(server.url) if process.poll() is None else True, START_TIMEOUT, "ready"
        )
    except TimeoutError:
        server.stop()
        unavailable(f"not ready after {START_TIMEOUT:g}s; log: {log.read_text()[-500:]}")
    if process.poll() is not None:
        unavailable(f"exited with {process.returncode}; log: {log.read_text()[-500:]}")
    server.started_seconds = time.monotonic() - began
    return server
