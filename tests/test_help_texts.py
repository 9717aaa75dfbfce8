"""Every command's help reads as written for a person: each option and argument is
described, and no type placeholder (``<list[str]>``, ``{spec}``) stands for a value."""

from __future__ import annotations

import re

import typer.main
from typer import _click
from typer.testing import CliRunner

from plumb.app import app
from plumb.lazycli import load_all_commands, name_metavars


def _commands() -> list[tuple[str, _click.Command]]:
    load_all_commands(app)
    root = typer.main.get_group(app)
    found: list[tuple[str, _click.Command]] = []

    def walk(prefix: str, command: _click.Command) -> None:
        name_metavars(command)
        subs = getattr(command, "commands", {})
        if not subs:
            found.append((prefix, command))
        for name, sub in sorted(subs.items()):
            walk(f"{prefix} {name}".strip(), sub)

    walk("", root)
    return found


def test_every_option_and_argument_is_described() -> None:
    """No option or argument without help text (the global ones included)."""
    missing = [
        f"plumb {name}: {param.name}"
        for name, command in _commands()
        for param in command.params
        if not (getattr(param, "help", None) or "").strip() and param.name != "help"
    ]
    assert missing == []


def test_no_type_placeholders_in_help() -> None:
    """Help names values (SPEC, PATH, N), never ``<list[str]>`` or ``{spec}``."""
    placeholder = re.compile(r"<list\[|\{[a-z_]+\}")
    bad = []
    for name, _command in _commands():
        shown = CliRunner().invoke(app, [*name.split(), "--help"], terminal_width=200)
        assert shown.exit_code == 0, (name, shown.output)
        if placeholder.search(shown.output):
            bad.append(f"plumb {name}: {placeholder.search(shown.output).group(0)}")  # type: ignore[union-attr]
    assert bad == []
