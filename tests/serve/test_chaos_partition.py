"""The network between the leading replica and its PostgreSQL state cut and healed:
the leader runs in a network namespace whose route to the server is removed. It stops
leading and says why; the server ends its session (plumb's sessions are probed with
keepalives), so the standby, on the host, takes over and corrects drift; once the route
is back the old leader reconnects by itself and stands by. Nobody restarts anything."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from reconciler.state.pgdb import open_pg_state_db
from tests.netns import netns_unavailable
from tests.pgserver import PgServer, PgUnavailable
from tests.prometheus.server import free_port
from tests.serve.servefleet import (
    PLUMB,
    Served,
    inject_drift,
    lab_values,
    make_repos,
    start_serve,
    wait_until,
)

pytestmark = pytest.mark.slow

SERVE = """
state:
  backend: postgresql
serve:
  poll_seconds: 30
  interval_seconds: 1
  drift:
    - mode: correct
"""
QOS = "qos/ecn/3/kmin_kb"
NET = "10.213.213.0/30"
SERVER_IP, REPLICA_IP = "10.213.213.1", "10.213.213.2"


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, text=True, timeout=30)


class Partition:
    """A namespace joined to the host by one veth pair; :meth:`cut` removes its route
    to the host side (packets from the server still arrive, nothing goes back)."""

    def __init__(self) -> None:
        tag = f"{os.getpid() % 100000}"
        self.namespace = f"plumb-{tag}-cut"
        self.host_end, self.inner_end = f"pc{tag}h", f"pc{tag}n"
        _ip("netns", "add", self.namespace)
        _ip("link", "add", self.host_end, "type", "veth", "peer", "name", self.inner_end)
        _ip("link", "set", self.inner_end, "netns", self.namespace)
        _ip("addr", "add", f"{SERVER_IP}/30", "dev", self.host_end)
        _ip("link", "set", self.host_end, "up")
        self.run("ip", "addr", "add", f"{REPLICA_IP}/30", "dev", self.inner_end)
        self.run("ip", "link", "set", self.inner_end, "up")
        self.run("ip", "link", "set", "lo", "up")

    def run(self, *args: str) -> None:
        subprocess.run(
            ["ip", "netns", "exec", self.namespace, *args],
            check=True,
            capture_output=True,
            text=True,
            timeout=30,
        )

    def cut(self) -> None:
        self.run("ip", "route", "del", NET, "dev", self.inner_end)

    def heal(self) -> None:
        self.run("ip", "route", "add", NET, "dev", self.inner_end, "src", REPLICA_IP)

    def close(self) -> None:
        subprocess.run(["ip", "link", "del", self.host_end], capture_output=True, check=False)
        subprocess.run(["ip", "netns", "del", self.namespace], capture_output=True, check=False)


@pytest.fixture
def partition() -> Iterator[Partition]:
    why = netns_unavailable()
    if why is not None:
        pytest.skip(why)
    made = Partition()
    try:
        yield made
    finally:
        made.close()


@pytest.fixture
def server(partition: Partition) -> Iterator[PgServer]:
    try:
        own = PgServer(durable=True, listen=(SERVER_IP,), trust=(NET,))
    except PgUnavailable as exc:
        pytest.skip(f"PostgreSQL test server unavailable: {exc}")
    own.start()
    try:
        yield own
    finally:
        own.stop()


def _serve_inside(partition: Partition, root: Path, url: str, log: Path) -> Served:
    port = free_port()
    with log.open("ab") as out:
        process = subprocess.Popen(
            [
                *("ip", "netns", "exec", partition.namespace),
                *(str(PLUMB), "serve", str(root), "--listen", f"0.0.0.0:{port}"),
            ],
            env={**os.environ, "PLUMB_ACTOR": "controller-a@test", "PLUMB_STATE_URL": url},
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    served = Served(process, port, log, host=REPLICA_IP)
    wait_until(lambda: served.get("/healthz")[0] == 200 or process.poll() is not None, 30, "up")
    assert process.poll() is None, log.read_text()[-2000:]
    return served


def test_a_partitioned_leader_hands_over_and_comes_back_as_standby(
    tmp_path: Path, partition: Partition, server: PgServer
) -> None:
    database = server.new_database().rsplit("/", 1)[1]
    repos = make_repos(tmp_path, SERVE)
    inside = _serve_inside(
        partition,
        repos.controller,
        f"postgresql://postgres@{SERVER_IP}:{server.port}/{database}",
        tmp_path / "a.log",
    )
    replicas = [inside]
    try:
        wait_until(lambda: inside.metric("plumb_serve_leader") == 1, 30, "the inside replica leads")
        host_url = f"postgresql://postgres@127.0.0.1:{server.port}/{database}"
        outside = start_serve(repos.controller, {"PLUMB_STATE_URL": host_url}, tmp_path / "b.log")
        replicas.append(outside)
        wait_until(lambda: outside.get("/readyz")[0] == 200, 30, "the standby ready")
        assert outside.metric("plumb_serve_leader") == 0

        partition.cut()
        wait_until(
            lambda: "state database unreachable, not leading" in inside.log.read_text(),
            90,
            "the inside replica to see the cut",
        )
        wait_until(lambda: outside.metric("plumb_serve_leader") == 1, 90, "the standby to lead")
        inject_drift(repos.controller, "leaf-r0", {QOS: 150})
        wait_until(lambda: lab_values(repos.controller, "leaf-r0")[QOS] == 200, 60, "the fix")

        partition.heal()
        wait_until(
            lambda: "state database reachable again" in inside.log.read_text(),
            90,
            "the inside replica to reconnect",
        )
        code, body = inside.get("/readyz")
        assert (code, "standby" in body) == (200, True), body
        assert inside.metric("plumb_serve_leader") == 0
        assert outside.metric("plumb_serve_leader") == 1
        assert all(r.process.poll() is None for r in replicas)
    finally:
        for replica in replicas:
            replica.stop()
    with open_pg_state_db(f"postgresql://postgres@127.0.0.1:{server.port}/{database}") as db:
        assert db.audit.verify().ok
        assert db.lease.current() is None
    assert "Traceback" not in inside.log.read_text() + outside.log.read_text()
