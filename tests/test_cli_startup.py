"""The command line starts light: `plumb --help` imports no command module's heavy
dependencies, and its command table matches what the modules register."""

from __future__ import annotations

import json
import subprocess
import sys

import typer.main
from typer._click.utils import make_default_short_help
from typer.testing import CliRunner

import plumb.cli  # noqa: F401  (registers the commands it defines)
from plumb.app import app
from plumb.lazycli import LAZY, load_all_commands

HELP_IN_A_FRESH_PROCESS = """
import json, sys
from plumb.cli import app
try:
    app(["--help"], prog_name="plumb")
except SystemExit as exc:
    code = exc.code
print(json.dumps({"code": code, "modules": sorted(sys.modules)}))
"""

HEAVY = ("numpy", "scipy", "git", "pydantic", "rich", "ruamel", "intent", "policies", "rollouts")


def _fresh_help() -> tuple[int, set[str], str]:
    out = subprocess.run(
        [sys.executable, "-c", HELP_IN_A_FRESH_PROCESS], capture_output=True, text=True, check=True
    )
    help_text, _, last = out.stdout.rstrip().rpartition("\n")
    result = json.loads(last)
    return result["code"], {m.split(".")[0] for m in result["modules"]}, help_text


def test_help_imports_no_heavy_module() -> None:
    """`plumb --help` in a fresh interpreter loads neither numpy, git, scipy nor the models."""
    code, roots, _ = _fresh_help()
    assert code == 0
    assert roots.isdisjoint(HEAVY), sorted(roots & set(HEAVY))


def test_help_lists_every_command() -> None:
    """The fresh `--help` names every command of the table, with its summary."""
    _, _, help_text = _fresh_help()
    for name in ("validate", "schema", "summary", *LAZY):
        assert f"\n  {name} " in help_text, name
    assert "Lift the kill switch." in help_text


def test_table_matches_the_registered_commands() -> None:
    """Every command a module registers is in the table, in order, with its own summary."""
    load_all_commands(app)
    group = typer.main.get_group(app)
    registered = {
        n: c for n, c in group.commands.items() if n not in ("validate", "schema", "summary")
    }
    assert sorted(registered) == sorted(LAZY)
    for name, command in registered.items():
        assert command.get_short_help_str(10_000) == make_default_short_help(
            LAZY[name].summary, 10_000
        ), name


def test_a_lazy_command_runs() -> None:
    """A command of the table runs on first use (its module is imported then)."""
    result = CliRunner().invoke(app, ["lease", "--help"])
    assert result.exit_code == 0, result.output
    assert "show" in result.output and "break" in result.output


def test_an_unknown_command_is_refused() -> None:
    """A name no module registers is a usage error (exit 2)."""
    result = CliRunner().invoke(app, ["no-such-command"])
    assert result.exit_code == 2
    assert "No such command" in result.output


def test_config_file_name_matches_the_loader() -> None:
    """The start-up copy of the fleet file's name is the loader's."""
    from intent.fleet import CONFIG_FILE as LOADER_NAME
    from plumb.app import CONFIG_FILE

    assert CONFIG_FILE == LOADER_NAME
