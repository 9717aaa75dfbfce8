"""docs/exit-codes.md is the one exit-code table: rendered from plumb/exitcodes.py,
naming every command, and no command exits with a code its row does not give."""

from __future__ import annotations

import ast
import inspect
import textwrap
from pathlib import Path

from plumb.exitcodes import COMMANDS, allowed, table_markdown
from tests.test_help_texts import _commands

DOC = Path(__file__).resolve().parent.parent / "docs" / "exit-codes.md"


def _literal_exits(callback: object) -> set[int]:
    """The exit codes a command's own body names: typer.Exit(N) and fail(..., N)."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(callback)))  # type: ignore[arg-type]
    found: set[int] = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = node.func.attr if isinstance(node.func, ast.Attribute) else ""
        name = name or (node.func.id if isinstance(node.func, ast.Name) else "")
        if name == "Exit" and node.args and isinstance(node.args[0], ast.Constant):
            found.add(int(node.args[0].value))
        if name == "fail":
            code = node.args[1] if len(node.args) > 1 else None
            found.add(int(code.value) if isinstance(code, ast.Constant) else 2)
    return found


def test_the_doc_is_rendered_from_the_table() -> None:
    text = DOC.read_text()
    start = text.index("-->\n", text.index("exit-codes:begin")) + 4
    end = text.index("<!-- exit-codes:end")
    assert text[start:end] == table_markdown(), "regenerate docs/exit-codes.md"


def test_every_command_has_a_row_and_every_row_a_command() -> None:
    names = {name for name, _ in _commands()}
    assert names == set(COMMANDS)


def test_no_command_exits_with_a_code_its_row_does_not_give() -> None:
    wrong = {
        name: sorted(_literal_exits(command.callback) - allowed(name))
        for name, command in _commands()
        if _literal_exits(command.callback) - allowed(name)
    }
    assert wrong == {}


def test_the_scan_sees_the_exits_of_a_command() -> None:
    """The check can fail: a body that exits 1 and 5 is seen to."""

    def sample() -> None:
        import typer

        from plumb.app import fail

        if input():
            raise typer.Exit(5)
        raise fail("no", 1)

    assert _literal_exits(sample) == {1, 5}
