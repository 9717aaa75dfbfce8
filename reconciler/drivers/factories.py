"""plumb's own device drivers as ``plumb.drivers`` entry points (pyproject.toml):
``eos``, ``sonic`` and ``linux-frr`` over SSH, ``ansible`` for GPU nodes. Each factory imports its
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


FRR_OPTIONS: dict[str, str | bool] = {
    "workdir": "/var/lib/plumb",
    "vty_socket": "",
    "config_dir": "",
    "frr_reload": "",
    "sudo": False,
}
"""linux-frr's own rule options (the rest are the SSH switch options): where plumb keeps
its candidate, saved config and revert timer on the switch, vtysh's socket and config
directories ("" = FRR's defaults), frr-reload.py's path ("" = Debian's), and whether
a non-root SSH user runs the commands through ``sudo -n``."""


def linux_frr(context: TargetContext, rule: DriverRule) -> Driver:
    from reconciler.drivers.linux_exec import SshRunner
    from reconciler.drivers.linux_frr import FRR_RELOAD, FrrAccess, LinuxFrrDriver
    from reconciler.drivers.ssh_exec import ExecPool

    own = {k: v for k, v in rule.options.items() if k in FRR_OPTIONS}
    for key, value in own.items():
        kind = type(FRR_OPTIONS[key])
        if type(value) is not kind:
            wanted = "true or false" if kind is bool else "text"
            raise TargetError(f"driver linux-frr: option {key} must be {wanted}, not {value!r}")
    ssh = rule.model_copy(
        update={"options": {k: v for k, v in rule.options.items() if k not in FRR_OPTIONS}}
    )
    options, credentials = _switch_options(context, ssh)
    values = {**FRR_OPTIONS, **own}
    access = FrrAccess(
        str(values["workdir"]),
        str(values["vty_socket"]) or None,
        frr_reload=str(values["frr_reload"]) or FRR_RELOAD,
        config_dir=str(values["config_dir"]) or None,
    )
    runner = SshRunner(ExecPool(options, credentials), sudo=values["sudo"] is True)
    return LinuxFrrDriver(runner, lambda ref: access, options.commit_timeout)
