"""``plumb inventory export ansible [PATH]``: the fleet's inventory as Ansible
dynamic-inventory JSON (see :mod:`ci.ansibleexport` and docs/inventory-export.md).
``plumb inventory import netbox URL [PATH]``: racks, devices and cables from NetBox
into the inventory files (see :mod:`inventory.netbox_import` and docs/netbox.md).

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

from plumb.app import (
    FormatOpt,
    PathArg,
    check_format,
    fail,
    fleet_root,
    load_or_exit,
    read_config,
)

inventory_app = typer.Typer(
    help="The fleet's inventory to and from other tools (Ansible, NetBox).",
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


class ImportSource(StrEnum):
    netbox = "netbox"


@inventory_app.command("import")
def inventory_import(
    source: Annotated[ImportSource, typer.Argument(help="netbox: a NetBox server.")],
    url: Annotated[str, typer.Argument(help="The NetBox URL, e.g. https://netbox.example.com")],
    path: PathArg = Path("."),
    check: Annotated[
        bool,
        typer.Option(
            "--check", help="Write nothing; exit 1 when the repo and NetBox differ, 0 when equal."
        ),
    ] = False,
    token_file: Annotated[
        Path | None,
        typer.Option(
            "--token-file",
            help="File whose first line is the API token (mode 0600); default: the"
            " environment variable sources.netbox.token_env names ($NETBOX_TOKEN).",
        ),
    ] = None,
    format: FormatOpt = "text",
) -> None:
    """Import racks, devices (with NICs and rails) and cables (with lengths) from NetBox
    into the inventory files (docs/netbox.md); report what differs. Exit codes: 0 in sync
    or written, 1 drift under --check (or a record defined both in NetBox and by hand),
    2 bad input (token, URL, a NetBox object plumb cannot import)."""
    from inventory.netbox_import import ImportFailed, run_import
    from inventory.netbox_map import NetboxMapping

    check_format(format)
    root = fleet_root(path)
    netbox = read_config(root).sources.netbox
    mapping = NetboxMapping.with_overrides(
        {slug: role.value if role else None for slug, role in netbox.roles.items()},
        {slug: kind.value if kind else None for slug, kind in netbox.platforms.items()},
    )
    try:
        outcome = run_import(
            root,
            url,
            mapping=mapping,
            site=netbox.site,
            token_env=netbox.token_env,
            token_file=token_file,
            write=not check,
        )
    except ImportFailed as exc:
        for line in exc.lines:
            typer.echo(line, err=True)
        raise typer.Exit(2) from None
    if format == "json":
        typer.echo(json.dumps({"written": not check, **outcome.json()}, indent=2))
    else:
        for line in outcome.text(check=check):
            typer.echo(line)
    raise typer.Exit(outcome.exit_code(check=check))


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
