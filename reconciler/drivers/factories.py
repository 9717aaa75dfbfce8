"""plumb's own device drivers as ``plumb.drivers`` entry points (pyproject.toml):
``eos`` and ``sonic`` over SSH, ``ansible`` for GPU nodes. Each factory imports its
driver (and so its client library) only when a rule uses it."""

from __future__ import annotations

from typing import Any

from intent.models import DriverRule
from reconciler.drivers.base import Driver
from reconciler.drivers.plugin import TargetContext, TargetError


def ansible(context: TargetContext, rule: DriverRule) -> Driver:
    from reconciler.drivers.ansible_host import AnsibleHostDriver
    from reconciler.drivers.ansible_inventory import HostOptions

    try:
        options = HostOptions.parse(rule.options)
    except ValueError as exc:
        raise TargetError(f"driver ansible: {exc}") from exc
    return AnsibleHostDriver(context.state_dir, options)


def _switch_options(context: TargetContext, rule: DriverRule) -> tuple[Any, Any]:
    from reconciler.drivers.switch_access import load_credentials, parse_options

    try:
        return parse_options(rule.options), load_credentials(rule.options, context.root)
    except ValueError as exc:
        raise TargetError(f"driver {rule.driver}: {exc}") from None


def eos(context: TargetContext, rule: DriverRule) -> Driver:
    from reconciler.drivers.netmiko_eos import EosDriver

    return EosDriver(*_switch_options(context, rule))


def sonic(context: TargetContext, rule: DriverRule) -> Driver:
    from reconciler.drivers.netmiko_sonic import SonicDriver

    return SonicDriver(*_switch_options(context, rule))
