"""Driver plugins: how a driver name in ``plumb.yaml``'s ``drivers:`` rules becomes a
driver instance.

Drivers register by name under the ``plumb.drivers`` entry point group, as plumb's own
do (``eos``, ``sonic``, ``ansible``, ``lab``: see pyproject.toml). A site adds a vendor
by installing a package that declares one more entry point; plumb is not edited. An
entry point names a :data:`DriverFactory`, loaded only when a rule uses that name, so a
driver's client library (netmiko, ansible-runner) is imported only where it is used.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path
from typing import TYPE_CHECKING

from intent.fleet import Fleet
from reconciler.drivers.base import Driver

if TYPE_CHECKING:
    from intent.models import DriverRule

DRIVER_GROUP = "plumb.drivers"


@dataclass(frozen=True)
class TargetContext:
    """What a driver factory may need: the fleet repo, its state dir, the fleet."""

    root: Path
    state_dir: Path
    fleet: Fleet


class TargetError(Exception):
    """A device has no usable driver (no rule, unknown driver name, lab not initialised...)."""


DriverFactory = Callable[[TargetContext, "DriverRule"], Driver]


@cache
def _entry_points(group: str) -> dict[str, EntryPoint]:
    return {ep.name: ep for ep in entry_points(group=group)}


class LazyFactories(Mapping[str, DriverFactory]):
    """The installed drivers by name; each factory is imported on first use."""

    def __init__(self, group: str = DRIVER_GROUP) -> None:
        self.group = group
        self._loaded: dict[str, DriverFactory] = {}

    def __getitem__(self, name: str) -> DriverFactory:
        if name not in self._loaded:
            entry = _entry_points(self.group).get(name)
            if entry is None:
                raise KeyError(name)
            factory = entry.load()
            if not callable(factory):
                raise TargetError(f"driver {name!r}: entry point {entry.value} is not callable")
            self._loaded[name] = factory
        return self._loaded[name]

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(_entry_points(self.group)))

    def __len__(self) -> int:
        return len(_entry_points(self.group))


def installed_drivers() -> LazyFactories:
    """The drivers every installed package registers (``plumb.drivers`` entry points)."""
    return LazyFactories()
