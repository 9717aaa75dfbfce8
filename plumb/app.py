"""The typer application and the helpers every command shares."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from plumb.lazycli import LazyGroup

if TYPE_CHECKING:
    from intent.fleet import Fleet
    from intent.models import PlumbConfig
    from service.context import FleetContext

CONFIG_FILE = "plumb.yaml"  # intent.fleet's name for it, kept here so start-up imports no models


class _RootGroup(LazyGroup):
    """The lazy root group of :data:`app`."""

    def typer_app(self) -> typer.Typer:
        return app


app = typer.Typer(
    add_completion=True,  # --install-completion / --show-completion for bash, zsh, fish
    no_args_is_help=True,
    help="GitOps fleet configuration reconciler with policy-as-code for AI GPU clusters.",
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # plain click help: rich's help renderer costs 0.1 s at start-up
    cls=_RootGroup,
)

PathArg = Annotated[
    Path,
    typer.Argument(
        help="Fleet repo (a directory with plumb.yaml); default: -C/--repo, $PLUMB_REPO, or"
        " the nearest directory upward from here with a plumb.yaml."
    ),
]
HERE = Path(".")


def complete_formats(incomplete: str) -> list[str]:
    """Shell completion of ``--format`` (the other completions: :mod:`plumb.completion`)."""
    return [f for f in ("text", "json") if f.startswith(incomplete)]


def format_option(*names: str) -> Any:
    """A ``--format/-f`` option taking ``names`` (help and shell completion say them)."""

    def complete(incomplete: str) -> list[str]:
        return [n for n in names if n.startswith(incomplete)]

    return typer.Option("--format", "-f", help=" | ".join(names), autocompletion=complete)


class _Global:
    """What the global options chose for this invocation."""

    repo: Path | None = None


def _print_version(wanted: bool) -> None:
    if wanted:
        from plumb import __version__

        typer.echo(f"plumb {__version__}")
        raise typer.Exit(0)


@app.callback()
def _global_options(
    version: Annotated[
        bool,
        typer.Option(
            "--version", is_eager=True, callback=_print_version, help="Print the version."
        ),
    ] = False,
    repo: Annotated[
        Path | None,
        typer.Option(
            "--repo",
            "-C",
            envvar="PLUMB_REPO",
            help="The fleet repo, for every command (a path given to a command wins).",
        ),
    ] = None,
) -> None:
    """GitOps fleet configuration reconciler with policy-as-code for AI GPU clusters."""
    _Global.repo = repo


def fleet_root(path: Path) -> Path:
    """The fleet repo a command works on: its own path argument when one was given,
    else -C/--repo (or $PLUMB_REPO), else the nearest directory from the working
    directory upward that holds a plumb.yaml, else the working directory (which then
    fails to load, saying it is not a fleet repo)."""
    if path != HERE:
        return path
    if _Global.repo is not None:
        return _Global.repo
    here = Path.cwd()
    for directory in (here, *here.parents):
        if (directory / CONFIG_FILE).is_file():
            return directory
    return path


FormatOpt = Annotated[
    str, typer.Option("--format", "-f", help="text | json", autocompletion=complete_formats)
]
SelectOpt = Annotated[
    str | None,
    typer.Option("--select", "-s", help="Devices to cover, e.g. 'role=leaf,rack=net-01'."),
]
ConcurrencyOpt = Annotated[
    int,
    typer.Option(
        min=1,
        max=256,
        help="Devices talked to at once (EOS, SONiC and hosts side by side, sharing it).",
    ),
]


def fleet_arg(root: Path) -> str:
    """The fleet repo as a suggested command's argument: relative to the working
    directory when inside it (``.`` there), else absolute; quoted for a shell."""
    import shlex

    resolved, here = root.resolve(), Path.cwd().resolve()
    shown = resolved.relative_to(here) if resolved.is_relative_to(here) else resolved
    return shlex.quote(str(shown) or ".")


def fail(message: str, code: int = 2) -> typer.Exit:
    """Print an error line and return the Exit to raise."""
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(code)


def load_or_exit(root: Path) -> Fleet:
    """Load the fleet repo or print every problem as file:line:col and exit 2."""
    from intent.fleet import load_fleet
    from inventory.problems import InputError

    try:
        return load_fleet(fleet_root(root))
    except InputError as exc:
        for problem in exc.problems:
            typer.echo(str(problem), err=True)
        if root == HERE and _Global.repo is None and not (Path.cwd() / CONFIG_FILE).exists():
            typer.echo(
                "hint: run plumb inside a fleet repo, or name it with `plumb -C PATH ...`"
                " or PLUMB_REPO=PATH (a command's own arguments, such as a rollout id,"
                " come before its fleet path)",
                err=True,
            )
        raise typer.Exit(2) from None


def read_config(root: Path) -> PlumbConfig:
    """plumb.yaml alone, for a command that needs no more of the fleet (an import before
    the inventory loads, a state upgrade), or exit 2."""
    from intent.models import PlumbConfig
    from inventory.loadfile import load_document
    from inventory.problems import InputError
    from inventory.validation import validate_document

    if not (root / CONFIG_FILE).is_file():
        raise fail(f"{root} is not a fleet repo: no {CONFIG_FILE}")
    try:
        return validate_document(load_document(root, Path(CONFIG_FILE)), PlumbConfig)
    except InputError as exc:
        for problem in exc.problems:
            typer.echo(str(problem), err=True)
        raise typer.Exit(2) from None


def check_format(format: str, allowed: tuple[str, ...] = ("text", "json")) -> None:
    if format not in allowed:
        raise fail(f"unknown format {format!r} (choose from {', '.join(allowed)})")


@contextmanager
def fleet_context(path: Path) -> Iterator[FleetContext]:
    """The service context of the fleet repo a command names (problems printed, exit 2)."""
    from service.context import open_context

    with open_context(load_or_exit(path)) as context:
        yield context
