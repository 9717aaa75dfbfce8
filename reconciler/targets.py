"""Which driver reaches which device: the ``drivers`` rules of ``plumb.yaml`` (first
match by platform and role wins; a device no rule matches has no driver, and the lab
fleet is a rule like any other, ``driver: lab``), with management addresses from the
inventory.

A rule's ``port`` is the SSH port of its devices. Its ``mgmt_map`` option names a JSON
file (absolute, or relative to the fleet repo) that overrides the inventory address
per device, ``{"leaf-r0": {"host": "127.0.0.1", "port": 40001}, ...}``: for switches
behind port forwards, jump hosts mapped to local ports, or simulated switches.

Drivers register by name as ``plumb.drivers`` entry points
(:mod:`reconciler.drivers.plugin`); a test can build a :class:`Targets` with its own
factories.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from intent.fleet import Fleet
from intent.models import DriverRule
from inventory.models import Device
from reconciler.drivers.base import DeviceRef, Driver
from reconciler.drivers.plugin import DriverFactory as DriverFactory
from reconciler.drivers.plugin import TargetContext as TargetContext
from reconciler.drivers.plugin import TargetError as TargetError
from reconciler.drivers.plugin import installed_drivers

_HOST = re.compile(r"^[A-Za-z0-9][A-Za-z0-9.:-]{0,252}$")


def load_mgmt_map(root: Path, option: str) -> dict[str, tuple[str, int]]:
    """The ``mgmt_map`` file of a rule: device name -> (host, port)."""
    path = Path(option) if Path(option).is_absolute() else root / option
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise TargetError(f"mgmt_map {option}: cannot read a JSON object ({exc})") from None
    if not isinstance(data, dict):
        raise TargetError(f"mgmt_map {option}: expected a JSON object of devices")
    found: dict[str, tuple[str, int]] = {}
    for name, entry in data.items():
        host = entry.get("host") if isinstance(entry, dict) else None
        port = entry.get("port", 22) if isinstance(entry, dict) else None
        if (
            not isinstance(host, str)
            or not _HOST.match(host)
            or not isinstance(port, int)
            or isinstance(port, bool)
            or not 1 <= port <= 65535
        ):
            raise TargetError(f"mgmt_map {option}: {name}: needs a host and a port 1-65535")
        found[str(name)] = (host, port)
    return found


NO_RULES = (
    "plumb.yaml names no drivers: add a `drivers:` rule for the devices"
    " (`- driver: lab` for the embedded lab fleet; docs/drivers.md)"
)


def matching_rule(rules: tuple[DriverRule, ...], device: Device) -> DriverRule | None:
    """The first rule whose platforms and roles cover ``device``, if any."""
    for rule in rules:
        if rule.platforms is not None and device.platform not in rule.platforms:
            continue
        if rule.roles is not None and device.role not in rule.roles:
            continue
        return rule
    return None


def rule_for(rules: tuple[DriverRule, ...], device: Device) -> DriverRule:
    """The rule that reaches ``device``; refused when none does."""
    rule = matching_rule(rules, device)
    if rule is not None:
        return rule
    if not rules:
        raise TargetError(NO_RULES)
    raise TargetError(
        f"no `drivers:` rule in plumb.yaml matches {device.name}"
        f" (platform {device.platform.value}, role {device.role.value})"
    )


@dataclass
class Targets:
    """Resolves each device to a (DeviceRef, Driver); one driver instance per rule."""

    context: TargetContext
    factories: Mapping[str, DriverFactory] = field(default_factory=installed_drivers)
    _drivers: dict[int, Driver] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _mgmt_maps: dict[str, dict[str, tuple[str, int]]] = field(default_factory=dict)

    @classmethod
    def for_fleet(
        cls, fleet: Fleet, factories: Mapping[str, DriverFactory] | None = None
    ) -> Targets:
        state_dir = fleet.root / fleet.config.state_dir
        return cls(
            TargetContext(fleet.root, state_dir, fleet),
            installed_drivers() if factories is None else factories,
        )

    def ref(self, name: str) -> DeviceRef:
        device = self.context.fleet.devices[name]
        rule = rule_for(self.context.fleet.config.drivers, device)
        host, port = str(device.mgmt), rule.port or 22
        option = rule.options.get("mgmt_map")
        if isinstance(option, str) and option:
            if option not in self._mgmt_maps:
                self._mgmt_maps[option] = load_mgmt_map(self.context.root, option)
            host, port = self._mgmt_maps[option].get(name, (host, port))
        return DeviceRef(
            name=name,
            platform=device.platform.value,
            role=device.role.value,
            host=host,
            port=port,
            vendor=device.vendor,
            model=device.model,
            labels=dict(device.labels),
        )

    def driver(self, name: str) -> Driver:
        device = self.context.fleet.devices[name]
        rules = self.context.fleet.config.drivers
        rule = rule_for(rules, device)
        key = rules.index(rule)
        with self._lock:  # one driver per rule, even when worker threads ask first
            if key not in self._drivers:
                factory = self.factories.get(rule.driver)
                if factory is None:
                    known = ", ".join(sorted(self.factories))
                    raise TargetError(f"no driver named {rule.driver!r} (known: {known})")
                self._drivers[key] = factory(self.context, rule)
            return self._drivers[key]

    def close(self) -> None:
        for driver in self._drivers.values():
            driver.close()
        self._drivers.clear()
