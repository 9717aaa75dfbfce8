"""A Prometheus exporter serving the lab fleet's telemetry (lab.metrics) in
real time: one lab sample (5 virtual minutes) per second since the exporter started,
under the metric names real exporters use.

* ``DCGM_FI_PROF_SM_ACTIVE{Hostname, gpu}``: SM activity of each of a node's GPUs
  (dcgm-exporter's name and labels), from ``gpu_sm_activity``;
* ``nic_fec_uncorrectable_codewords_total{node, port}``: a counter per NIC port, the
  running sum of ``fec_uncorrectable``;
* ``node_network_carrier_changes_total{node, device}``: node_exporter's name, the
  running sum of ``link_flaps``.

Per-GPU and per-port series of one node draw their own noise (the lab seeds series by
name), so grouping them back to the node is exercised for real.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from wsgiref.simple_server import WSGIServer

from prometheus_client import CollectorRegistry, start_http_server
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

from lab.metrics import SAMPLE_MINUTES, Defect, Signal, Window, series
from reconciler.settings import Scalar

GPUS = 2
PORTS = 2


@dataclass(eq=False)  # registered in a CollectorRegistry, which hashes it
class LabCollector:
    """Computes every series at scrape time from the lab model and the elapsed seconds."""

    nodes: Mapping[str, Mapping[str, Scalar]]
    defects: Sequence[Defect] = ()
    seed: int = 0
    started: float = field(default_factory=time.monotonic)

    def tick(self) -> int:
        return int(time.monotonic() - self.started)

    def _sample(self, name: str, attrs: Mapping[str, Scalar], signal: Signal, k: int) -> float:
        window = Window(k * SAMPLE_MINUTES, (k + 1) * SAMPLE_MINUTES)
        return series(self.seed, name, attrs, signal, window, self.defects)[0]

    def _total(self, name: str, attrs: Mapping[str, Scalar], signal: Signal, k: int) -> float:
        window = Window(0, (k + 1) * SAMPLE_MINUTES)
        return sum(series(self.seed, name, attrs, signal, window, self.defects))

    def collect(self) -> Iterator[Metric]:
        k = self.tick()
        sm = GaugeMetricFamily("DCGM_FI_PROF_SM_ACTIVE", "SM activity", labels=["Hostname", "gpu"])
        fec = CounterMetricFamily(
            "nic_fec_uncorrectable_codewords",
            "uncorrectable FEC codewords",
            labels=["node", "port"],
        )
        flaps = CounterMetricFamily(
            "node_network_carrier_changes", "carrier changes", labels=["node", "device"]
        )
        for node, attrs in self.nodes.items():
            for gpu in range(GPUS):
                value = self._sample(f"{node}/gpu{gpu}", attrs, Signal.gpu_sm_activity, k)
                sm.add_metric([node, str(gpu)], value)
            for port in range(PORTS):
                name = f"{node}/eth{port}"
                fec.add_metric(
                    [node, f"eth{port}"], self._total(name, attrs, Signal.fec_uncorrectable, k)
                )
                flaps.add_metric(
                    [node, f"eth{port}"], self._total(name, attrs, Signal.link_flaps, k)
                )
        yield from (sm, fec, flaps)


@dataclass
class Exporter:
    """One exporter on a loopback port, serving from its own thread until stopped."""

    port: int
    server: WSGIServer
    thread: threading.Thread
    stopped: bool = False

    def stop(self) -> None:
        if self.stopped:
            return
        self.stopped = True
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)


def start_exporter(port: int, collector: LabCollector) -> Exporter:
    registry = CollectorRegistry(auto_describe=False)
    registry.register(collector)
    server, thread = start_http_server(port, addr="127.0.0.1", registry=registry)
    return Exporter(port, server, thread)
