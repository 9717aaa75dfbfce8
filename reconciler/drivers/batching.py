"""Group commit for drivers with a high fixed cost per call: per-device calls that
arrive together are joined into one batch call.

The reconcile loop applies the devices of a step on a thread pool, one ``apply`` per
device (the driver contract). For the ansible driver each run costs seconds of
ansible-playbook start-up however many hosts it covers, so concurrent calls of the
same kind (``observe``, ``check``, ``commit``) wait a short quiet window for company,
then one of them, the leader, makes a single batch call for all; each caller gets
its own device's result. A lone caller pays only the window.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field
from typing import Generic, TypeVar

Item = TypeVar("Item")
Result = TypeVar("Result")


@dataclass
class _Batch(Generic[Item, Result]):
    items: dict[str, Item] = field(default_factory=dict)
    last_arrival: float = field(default_factory=time.monotonic)
    done: threading.Event = field(default_factory=threading.Event)
    results: Mapping[str, Result] | None = None
    error: BaseException | None = None


class Coalescer(Generic[Item, Result]):
    """``submit(key, device, item)`` blocks until the batch holding it has run.

    ``run(key, items)`` must return a result for every device in ``items``; if it
    raises, every caller of that batch gets the exception.
    """

    def __init__(
        self,
        run: Callable[[Hashable, Mapping[str, Item]], Mapping[str, Result]],
        *,
        quiet: float = 0.05,
        max_wait: float = 0.5,
    ) -> None:
        self._run = run
        self._quiet = quiet
        self._max_wait = max_wait
        self._lock = threading.Lock()
        self._open: dict[Hashable, _Batch[Item, Result]] = {}

    def submit(self, key: Hashable, device: str, item: Item) -> Result:
        while True:
            with self._lock:
                batch = self._open.get(key)
                if batch is not None and device in batch.items:
                    busy: _Batch[Item, Result] | None = batch  # same device twice: wait
                else:
                    busy = None
                    leader = batch is None
                    if batch is None:
                        batch = self._open[key] = _Batch()
                    batch.items[device] = item
                    batch.last_arrival = time.monotonic()
            if busy is None:
                break
            busy.done.wait()
        if leader:
            self._lead(key, batch)
        else:
            batch.done.wait()
        if batch.error is not None:
            raise batch.error
        assert batch.results is not None
        return batch.results[device]

    def _lead(self, key: Hashable, batch: _Batch[Item, Result]) -> None:
        started = time.monotonic()
        while True:
            with self._lock:
                now = time.monotonic()
                quiet_for = now - batch.last_arrival
                if quiet_for >= self._quiet or now - started >= self._max_wait:
                    del self._open[key]
                    break
            time.sleep(max(0.001, self._quiet - quiet_for))
        try:
            batch.results = self._run(key, dict(batch.items))
        except BaseException as exc:
            batch.error = exc
        finally:
            batch.done.set()
