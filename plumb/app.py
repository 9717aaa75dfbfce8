"""The typer application and the helpers every command shares."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from intent.fleet import Fleet, load_fleet
from inventory.problems import InputError

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="GitOps fleet configuration reconciler with policy-as-code for AI GPU clusters.",
    pretty_exceptions_enable=False,
)

PathArg = Annotated[Path, typer.Argument(help="Fleet repo (a directory with plumb.yaml).")]
FormatOpt = Annotated[str, typer.Option("--format", "-f", help="text | json")]
SelectOpt = Annotated[
    str | None,
    typer.Option("--select", "-s", help="Devices to cover, e.g. 'role=leaf,rack=net-01'."),
]


def fail(message: str, code: int = 2) -> typer.Exit:
    """Print an error line and return the Exit to raise."""
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(code)


def load_or_exit(root: Path) -> Fleet:
    """Load the fleet repo or print every problem as file:line:col and exit 2."""
    try:
        return load_fleet(root)
    except InputError as exc:
        for problem in exc.problems:
            typer.echo(str(problem), err=True)
        raise typer.Exit(2) from None


def check_format(format: str, allowed: tuple[str, ...] = ("text", "json")) -> None:
    if format not in allowed:
        raise fail(f"unknown format {format!r} (choose from {', '.join(allowed)})")
