"""The extras: a missing module of one becomes one line naming it, and the table in
inventory/extras.py, pyproject.toml and README's Install table agree."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest

from inventory.extras import (
    EXTRAS,
    ExtraMissing,
    extra_for_command,
    extra_named,
    extra_providing,
    installed_with,
    needs_extra_line,
    optional_imports,
)
from tests.projectdeps import ROOT, pyproject, requirement_name


class _Absent:
    """A meta path finder that makes the modules it names impossible to import."""

    def __init__(self, *names: str) -> None:
        self.names = names

    def find_spec(self, name: str, path: object = None, target: object = None) -> None:
        if name.partition(".")[0] in self.names:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)


@pytest.fixture
def without_numpy() -> Iterator[None]:
    """numpy (a module of the rollouts extra) cannot be imported."""
    saved = {name: mod for name, mod in sys.modules.items() if name.partition(".")[0] == "numpy"}
    for name in saved:
        del sys.modules[name]
    finder = _Absent("numpy")
    sys.meta_path.insert(0, finder)
    try:
        yield
    finally:
        sys.meta_path.remove(finder)
        sys.modules.update(saved)


def test_a_missing_module_of_an_extra_names_the_extra(without_numpy: None) -> None:
    """Importing numpy inside optional_imports() raises ExtraMissing for rollouts."""
    with pytest.raises(ExtraMissing) as caught, optional_imports():
        import numpy  # noqa: F401
    assert caught.value.extra.name == "rollouts"
    assert caught.value.name == "numpy"
    assert str(caught.value) == "numpy is in the rollouts extra: pip install 'plumb[rollouts]'"
    assert isinstance(caught.value, ModuleNotFoundError)  # what callers already catch


def test_a_missing_module_of_no_extra_is_left_as_it_is() -> None:
    """A module no extra provides stays a plain ModuleNotFoundError (a broken install)."""
    with pytest.raises(ModuleNotFoundError) as caught, optional_imports():
        import no_such_module_anywhere  # type: ignore[import-not-found]  # noqa: F401
    assert type(caught.value) is ModuleNotFoundError


def test_a_submodule_belongs_to_its_package_s_extra() -> None:
    """netmiko.exceptions is the ssh extra's; a base module is in no extra."""
    assert extra_providing("netmiko.exceptions") == extra_named("ssh")
    assert extra_providing("pydantic") is None


def test_serve_asks_for_its_own_extra_for_what_it_includes() -> None:
    """plumb serve missing numpy asks for serve (which brings rollouts); plumb rollout
    asks for rollouts; plumb serve missing netmiko asks for ssh, which serve lacks."""
    numpy = ModuleNotFoundError("No module named 'numpy'", name="numpy")
    netmiko = ModuleNotFoundError("No module named 'netmiko'", name="netmiko")
    assert extra_for_command("serve", numpy) == extra_named("serve")
    assert extra_for_command("rollout", numpy) == extra_named("rollouts")
    assert extra_for_command("serve", netmiko) == extra_named("ssh")
    assert extra_for_command("serve", ValueError("numpy")) is None


def test_the_line_names_command_and_install() -> None:
    """The one line a command prints when it lacks an extra."""
    assert (
        needs_extra_line("serve", extra_named("serve"))
        == "plumb serve needs the serve extra: pip install 'plumb[serve]'"
    )


def test_the_table_is_the_extras_of_pyproject() -> None:
    """Every extra of the table is one of pyproject.toml with the same includes, and
    `all` installs every one."""
    optional = pyproject()["project"]["optional-dependencies"]
    assert set(optional) - {"dev", "all"} == {extra.name for extra in EXTRAS}
    for extra in EXTRAS:
        included = {
            name
            for spec in optional[extra.name]
            if requirement_name(spec) == "plumb"
            for name in spec.partition("[")[2].rstrip("]").split(",")
        }
        assert included == set(extra.includes), extra.name
    [everything] = optional["all"]
    assert set(everything.partition("[")[2].rstrip("]").split(",")) == {e.name for e in EXTRAS}


def test_a_module_is_in_one_extra() -> None:
    """No module is provided by two extras (a missing one names exactly one)."""
    modules = [module for extra in EXTRAS for module in extra.modules]
    assert len(modules) == len(set(modules))


def test_includes_do_not_loop() -> None:
    """An extra's includes end (installed_with terminates and names real extras)."""
    for extra in EXTRAS:
        assert all(extra_named(name) for name in installed_with(extra))


def _readme_extras() -> list[list[str]]:
    text = (ROOT / "README.md").read_text()
    header = "| extra | enables | packages |"
    assert header in text, "README has no table of extras"
    lines = text[text.index(header) :].splitlines()[2:]
    rows = []
    for line in lines:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip("|").split("|")])
    return rows


def _packages_cell(specs: list[str]) -> str:
    words = []
    for spec in specs:
        name = requirement_name(spec)
        if name == "plumb":
            words += [f"the `{n}` extra" for n in spec.partition("[")[2].rstrip("]").split(",")]
        else:
            words.append(spec.split(">")[0].split("=")[0].split("<")[0].strip())
    return ", ".join(words)


def test_readme_table_is_the_table_and_pyproject() -> None:
    """README's Install table lists each extra with its `enables` and its packages."""
    optional = pyproject()["project"]["optional-dependencies"]
    expected = [
        [f"`{extra.name}`", extra.enables, _packages_cell(optional[extra.name])]
        for extra in EXTRAS
    ] + [["`all`", "every extra above", ""]]
    table = "\n".join("| " + " | ".join(row) + " |" for row in expected)
    assert _readme_extras() == expected, f"README's table should read:\n{table}"
