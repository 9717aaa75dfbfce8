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


@inventory_app.command("expand")
def inventory_expand(
    path: PathArg = Path("."),
    out: Annotated[
        Path | None,
        typer.Option("--out", help="Write each expanded file under DIR (same relative path)."),
    ] = None,
    format: Annotated[str, typer.Option("--format", "-f", help="text | json")] = "text",
) -> None:
    """Expand every inventory file's topology: section into ordinary records (racks,
    devices and links, beside the file's own records and gangs) and print them as YAML,
    or write them under --out. Exit 2 when a section does not expand."""
    from inventory.problems import InputError
    from inventory.topology_files import expanded_files
    from plumb.app import check_format, fleet_root

    check_format(format)
    try:
        texts = expanded_files(fleet_root(path))
    except InputError as exc:
        for problem in exc.problems:
            typer.echo(str(problem), err=True)
        raise typer.Exit(2) from None
    if out is None:
        if format == "json":
            typer.echo(json.dumps({"files": texts}, indent=2))
        else:
            typer.echo("\n".join(texts.values()), nl=False)
        return
    for relative, text in texts.items():
        target = out / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    if format == "json":
        typer.echo(json.dumps({"written": [str(out / r) for r in texts]}, indent=2))
    else:
        for relative in texts:
            typer.echo(f"wrote {out / relative}")
