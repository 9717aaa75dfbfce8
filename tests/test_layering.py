"""The flow runs one way: a lower stage never imports a higher one, and third-party
clients are imported only by the edge modules that own them."""

from __future__ import annotations

import ast
import fnmatch
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
STAGES = [
    "inventory",
    "intent",
    "policies",
    "reconciler",
    "rollouts",
    "ci",
    "lab",
    "service",
    "serve",
    "plumb",
]
RANK = {name: rank for rank, name in enumerate(STAGES)}

# The lab is reached only through the driver registry (its plugin), never named by the
# floors that real fleets run on; the CLI alone may start the controller.
FORBIDDEN = {
    "service": ("lab", "serve", "plumb"),
    "serve": ("lab", "plumb"),
}
CONTROLLER_DOOR = "plumb/cmd_serve.py"

# Third-party client -> the only modules allowed to import it.
EDGE_OWNERS = {
    "netmiko": ["reconciler/drivers/netmiko_*.py"],
    "paramiko": ["reconciler/drivers/netmiko_*.py"],
    "ansible_runner": ["reconciler/drivers/ansible_*.py"],
    "git": ["ci/gitrepo.py", "ci/gitrev.py", "serve/gitpoll.py", "rollouts/gitpin.py"],
    "sqlite3": ["reconciler/state/*.py", "lab/store.py", "lab/clock.py"],
    "psycopg": ["reconciler/state/pg*.py", "serve/leader_pg.py"],
    "urllib": ["rollouts/sources/prometheus.py", "serve/sender.py"],
    "typer": ["plumb/*.py"],
    "pynetbox": ["inventory/netbox_fetch.py"],
    "requests": ["inventory/netbox_fetch.py"],
}


def _modules() -> list[Path]:
    return sorted(p for stage in STAGES for p in (ROOT / stage).rglob("*.py"))


def _imports(path: Path) -> list[tuple[str, int]]:
    tree = ast.parse(path.read_text(), filename=str(path))
    found: list[tuple[str, int]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.module, node.lineno))
    return found


def test_every_stage_is_a_package_with_a_docstring() -> None:
    """Each stage folder is importable and says what it holds."""
    for stage in STAGES:
        init = ROOT / stage / "__init__.py"
        assert init.is_file(), f"{stage}/ has no __init__.py"
        assert ast.get_docstring(ast.parse(init.read_text())), f"{stage}/__init__.py: no docstring"


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_upward_or_edge_imports(path: Path) -> None:
    """A module imports only its own or lower stages, and clients only where they belong."""
    relative = path.relative_to(ROOT).as_posix()
    own = RANK[relative.split("/")[0]]
    for module, line in _imports(path):
        top = module.split(".")[0]
        if top in RANK:
            assert RANK[top] <= own, f"{relative}:{line}: imports higher stage {module}"
        for banned in FORBIDDEN.get(relative.split("/")[0], ()):
            assert top != banned, f"{relative}:{line}: imports {module}: use the service floor"
        if top == "serve" and relative.startswith("plumb/"):
            assert relative == CONTROLLER_DOOR, f"{relative}:{line}: only plumb serve starts it"
        if top == "plumb":
            assert relative.startswith("plumb/"), f"{relative}:{line}: imports the CLI {module}"
        owners = EDGE_OWNERS.get(top)
        if owners is not None:
            assert any(fnmatch.fnmatch(relative, pattern) for pattern in owners), (
                f"{relative}:{line}: imports {top}, which only {owners} may import"
            )


def test_the_layering_check_catches_a_violation(tmp_path: Path) -> None:
    """The import scanner sees a violating import (guards against a check that finds nothing)."""
    bad = tmp_path / "bad.py"
    bad.write_text("import netmiko\nfrom rollouts.plan import x\n")
    assert [m for m, _ in _imports(bad)] == ["netmiko", "rollouts.plan"]
