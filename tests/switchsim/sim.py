"""`SwitchSim`: the in-process API, with the event loop on a background thread.

Typical use in a test::

    sim = SwitchSim(tmp_path)
    sim.start()
    port = sim.add_device(DeviceSpec(name="leaf-1", dialect="eos", password="pw"))
    ...  # netmiko to 127.0.0.1:port
    assert sim.state("leaf-1").interfaces["Ethernet1"].mtu == 9214
    sim.stop()

`add_device` may be called before or after `start`; either way it returns the
port at once (the socket is bound immediately, listening starts with the
loop).  Every other method is safe to call from any thread.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Coroutine
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar

from .device import Device
from .eos_device import EosDevice
from .model import SwitchState
from .server import Endpoint, Runtime, bind_socket, derive_host_key, load_seed
from .sonic_device import SonicDevice
from .spec import DeviceSpec, Fault

T = TypeVar("T")


class SwitchSim:
    """Many simulated switches served over SSH by one event loop."""

    def __init__(self, state_dir: Path, host: str = "127.0.0.1") -> None:
        self.state_dir = Path(state_dir)
        self.host = host
        self._runtime = Runtime()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._seed: bytes | None = None

    # -- lifecycle ------------------------------------------------------------

    def start(self) -> None:
        """Start the event loop and listen on every added device's port."""
        with self._lock:
            if self._loop is not None:
                return
            loop = asyncio.new_event_loop()
            ready = threading.Event()
            self._thread = threading.Thread(
                target=self._run_loop, args=(loop, ready), name="switchsim", daemon=True
            )
            self._thread.start()
            ready.wait()
            self._loop = loop
        endpoints = list(self._runtime.endpoints.values())
        self._call(self._open_all(endpoints))

    def stop(self) -> None:
        """Close every listener and session and end the loop thread."""
        with self._lock:
            loop, self._loop = self._loop, None
        if loop is None:
            for endpoint in self._runtime.endpoints.values():
                if endpoint.sock is not None:
                    endpoint.sock.close()
            return
        asyncio.run_coroutine_threadsafe(self._runtime.stop(), loop).result()
        loop.call_soon_threadsafe(loop.stop)
        if self._thread is not None:
            self._thread.join()

    def __enter__(self) -> SwitchSim:
        self.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    # -- devices ---------------------------------------------------------------

    def add_device(self, spec: DeviceSpec) -> int:
        """Create (or restore from `state_dir`) a device; return its port."""
        if spec.name in self._runtime.endpoints:
            raise ValueError(f"device {spec.name} already exists")
        self.state_dir.mkdir(parents=True, exist_ok=True)
        path = self.state_dir / f"{spec.name}.json"
        device: Device = EosDevice(spec, path) if spec.dialect == "eos" else SonicDevice(spec, path)
        if self._seed is None:
            self._seed = load_seed(self.state_dir / "host-key-seed")
        key = derive_host_key(self._seed, spec.name)
        sock = bind_socket(self.host, spec.port)
        endpoint = Endpoint(
            device=device, host=self.host, port=sock.getsockname()[1], host_key=key, sock=sock
        )
        self._runtime.endpoints[spec.name] = endpoint
        if self._loop is not None:
            self._call(self._runtime.open(endpoint))
        return endpoint.port

    def names(self) -> list[str]:
        """Names of all devices."""
        return list(self._runtime.endpoints)

    def port(self, name: str) -> int:
        """The TCP port of device `name`."""
        return self._endpoint(name).port

    def host_key_line(self, name: str) -> str:
        """known_hosts line: ``[127.0.0.1]:PORT ssh-ed25519 AAAA...``."""
        return self._endpoint(name).key_line()

    def state(self, name: str) -> SwitchState:
        """A copy of the device's running state."""
        device = self._endpoint(name).device
        return self._on_loop(device.state_view)

    def write_count(self, name: str) -> int:
        """How many writes to running or startup config the device has taken."""
        device = self._endpoint(name).device
        return self._on_loop(lambda: device.write_count)

    def set_fault(self, name: str, fault: Fault) -> None:
        """Replace the device's faults with `fault`."""
        endpoint = self._endpoint(name)
        if self._loop is None:
            endpoint.device.fault = fault
            return
        self._call(self._runtime.set_fault(endpoint, fault))

    def clear_faults(self, name: str) -> None:
        """Make the device healthy again."""
        self.set_fault(name, Fault())

    def is_up(self, name: str) -> bool:
        """Whether the device is listening (not rebooting, not unreachable)."""
        endpoint = self._endpoint(name)
        return self._on_loop(lambda: endpoint.acceptor is not None)

    # -- plumbing --------------------------------------------------------------

    @staticmethod
    def _run_loop(loop: asyncio.AbstractEventLoop, ready: threading.Event) -> None:
        asyncio.set_event_loop(loop)
        loop.call_soon(ready.set)
        try:
            loop.run_forever()
        finally:
            loop.close()

    async def _open_all(self, endpoints: list[Endpoint]) -> None:
        await asyncio.gather(*(self._runtime.open(e) for e in endpoints))

    def _endpoint(self, name: str) -> Endpoint:
        try:
            return self._runtime.endpoints[name]
        except KeyError:
            raise KeyError(f"no device named {name!r}") from None

    def _call(self, coro: Coroutine[Any, Any, T]) -> T:
        loop = self._loop
        if loop is None:
            coro.close()
            raise RuntimeError("the simulator is not running")
        return asyncio.run_coroutine_threadsafe(coro, loop).result()

    def _on_loop(self, fn: Callable[[], T]) -> T:
        if self._loop is None:
            return fn()

        async def call() -> T:
            return fn()

        return self._call(call())
