"""``plumb inventory export ansible [PATH]``: the fleet's inventory as Ansible
dynamic-inventory JSON (see :mod:`ci.ansibleexport` and docs/inventory-export.md).

Ansible runs an inventory script as ``SCRIPT --list`` and ``SCRIPT --host NAME``; a
two-line script that execs this command with the fleet path answers both.
Exit codes: 0 printed, 2 bad input (a fleet that does not load, both flags given).
"""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from plumb.app import PathArg, fail, load_or_exit

inventory_app = typer.Typer(
    help="The fleet's inventory for other tools (Ansible dynamic inventory).",
    no_args_is_help=True,
)


class ExportFormat(StrEnum):
    ansible = "ansible"


@inventory_app.command("export")
def inventory_export(
    format: Annotated[ExportFormat, typer.Argument(help="ansible: dynamic-inventory JSON.")],
    path: PathArg = Path("."),
    list_hosts: Annotated[
        bool, typer.Option("--list", help="Every group and host (the default).")
    ] = False,
    host: Annotated[
        str | None, typer.Option("--host", help="One host's variables ({} if unknown).")
    ] = None,
) -> None:
    """Print the fleet's devices as Ansible dynamic-inventory JSON: groups by role,
    platform, rack, rail, pod and label; ansible_host is the management address."""
    from ci.ansibleexport import ansible_host, ansible_list

    if list_hosts and host is not None:
        raise fail("--list and --host exclude each other")
    fleet = load_or_exit(path)
    document = ansible_list(fleet) if host is None else ansible_host(fleet, host)
    typer.echo(json.dumps(document, indent=2, sort_keys=False))
