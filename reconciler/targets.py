"""Which driver reaches which device: the ``drivers`` rules of ``plumb.yaml`` (first
match by platform and role wins; no rule means the lab fleet), with management
addresses from the inventory.

Drivers register by name in :data:`DRIVER_FACTORIES`; a test can build a
:class:`Targets` with its own factories.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from intent.fleet import Fleet
from intent.models import DriverRule
from inventory.models import Device
from reconciler.drivers.base import DeviceRef, Driver

DriverFactory = Callable[["TargetContext", DriverRule], Driver]


@dataclass(frozen=True)
class TargetContext:
    """What a driver factory may need: the fleet repo, its state dir, the fleet."""

    root: Path
    state_dir: Path
    fleet: Fleet


def _lab_factory(context: TargetContext, rule: DriverRule) -> Driver:
    from reconciler.drivers.lab import LabDriver
    from reconciler.state.labdb import LabStore

    store = LabStore(context.state_dir / "lab.db")
    if not store.exists():
        raise TargetError("the lab fleet does not exist yet: run `plumb lab init` first")
    return LabDriver(store)


DRIVER_FACTORIES: dict[str, DriverFactory] = {"lab": _lab_factory}
LAB_RULE = DriverRule(driver="lab")


class TargetError(Exception):
    """A device has no usable driver (unknown driver name, lab not initialised...)."""


def rule_for(rules: tuple[DriverRule, ...], device: Device) -> DriverRule:
    for rule in rules:
        if rule.platforms is not None and device.platform not in rule.platforms:
            continue
        if rule.roles is not None and device.role not in rule.roles:
            continue
        return rule
    return LAB_RULE


@dataclass
class Targets:
    """Resolves each device to a (DeviceRef, Driver); one driver instance per rule."""

    context: TargetContext
    factories: Mapping[str, DriverFactory] = field(default_factory=lambda: DRIVER_FACTORIES)
    _drivers: dict[int, Driver] = field(default_factory=dict)

    @classmethod
    def for_fleet(
        cls, fleet: Fleet, factories: Mapping[str, DriverFactory] | None = None
    ) -> Targets:
        state_dir = fleet.root / fleet.config.state_dir
        return cls(
            TargetContext(fleet.root, state_dir, fleet),
            DRIVER_FACTORIES if factories is None else factories,
        )

    def ref(self, name: str) -> DeviceRef:
        device = self.context.fleet.devices[name]
        rule = rule_for(self.context.fleet.config.drivers, device)
        return DeviceRef(
            name=name,
            platform=device.platform.value,
            role=device.role.value,
            host=str(device.mgmt),
            port=rule.port or 22,
            vendor=device.vendor,
            model=device.model,
            labels=dict(device.labels),
        )

    def driver(self, name: str) -> Driver:
        device = self.context.fleet.devices[name]
        rules = self.context.fleet.config.drivers
        rule = rule_for(rules, device)
        key = rules.index(rule) if rule in rules else -1
        if key not in self._drivers:
            factory = self.factories.get(rule.driver)
            if factory is None:
                raise TargetError(
                    f"no driver named {rule.driver!r} (known: {', '.join(sorted(self.factories))})"
                )
            self._drivers[key] = factory(self.context, rule)
        return self._drivers[key]

    def close(self) -> None:
        for driver in self._drivers.values():
            driver.close()
        self._drivers.clear()
