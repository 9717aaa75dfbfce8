"""One real Prometheus per session, scraping two lab exporters every second: ``lab``
(28 GPU nodes) and ``lab_b`` (4 nodes, stopped by the test that needs a dead exporter).

Nodes and what the lab does to them:

* gpu-n01..04 a healthy wave, gpu-n05..12 its controls, gpu-n21..28 the A/A partner;
* gpu-n13..16 a wave whose gpu-n14 loses FEC codewords (120 uncorrectable per hour);
* gpu-n17..20 a wave served by ``lab_b``;
* gpu-n29..32 revision-B0 NICs whose GPUs run 15 % less SM activity (a regression).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from lab.metrics import Defect
from reconciler.settings import Scalar
from tests.prometheus.exporter import Exporter, LabCollector, start_exporter
from tests.prometheus.server import PrometheusServer, free_port, start_prometheus, wait_for

SEED = 7
NODES = [f"gpu-n{i:02d}" for i in range(1, 33)]
HEALTHY_WAVE, CONTROLS, FAULT_WAVE = NODES[0:4], NODES[4:12], NODES[12:16]
STOPPED_WAVE, AA_PARTNER, B0_WAVE = NODES[16:20], NODES[20:28], NODES[28:32]
FEC_NODE = "gpu-n14"
DEFECTS = (
    Defect({"label.nic_revision": "B0"}, sm_activity_factor=0.85),
    Defect({"name": FEC_NODE}, fec_rate=120.0),
)
SCRAPES_BEFORE_JUDGING = 7


def attributes(node: str) -> dict[str, Scalar]:
    revision = "B0" if node in B0_WAVE else "A1"
    return {"role": "gpu-node", "name": node, "label.nic_revision": revision}


@dataclass
class Telemetry:
    prometheus: PrometheusServer
    main: Exporter
    stoppable: Exporter
    ready_seconds: float  # from starting the exporters to enough samples to judge

    @property
    def url(self) -> str:
        return self.prometheus.url


def _scraped_enough(server: PrometheusServer) -> bool | None:
    fewest = server.value("min(sum_over_time(up[1m]))")
    return True if fewest is not None and fewest >= SCRAPES_BEFORE_JUDGING else None


@pytest.fixture(scope="session")
def telemetry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Telemetry]:
    began = time.monotonic()
    workdir: Path = tmp_path_factory.mktemp("prometheus")
    served = {n: attributes(n) for n in NODES if n not in STOPPED_WAVE}
    main = start_exporter(free_port(), LabCollector(served, DEFECTS, SEED))
    stoppable = start_exporter(
        free_port(), LabCollector({n: attributes(n) for n in STOPPED_WAVE}, DEFECTS, SEED)
    )
    try:
        server = start_prometheus(workdir, {"lab": main.port, "lab_b": stoppable.port})
    except BaseException:
        main.stop()
        stoppable.stop()
        raise
    try:
        wait_for(lambda: _scraped_enough(server), 30.0, f"{SCRAPES_BEFORE_JUDGING} scrapes")
        yield Telemetry(server, main, stoppable, time.monotonic() - began)
    finally:
        server.stop()
        main.stop()
        stoppable.stop()
