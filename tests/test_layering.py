"""The flow runs one way: a lower stage never imports a higher one, no modules import
each other round a circle, and third-party clients are imported only by the edge
modules that own them."""

from __future__ import annotations

import ast
import fnmatch
from collections.abc import Iterable, Mapping
from functools import cache
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

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
PRODUCT = (*STAGES, "benchmarks")
"""Every package the import-circle check covers: the stages and the benchmarks."""

KNOWN_CIRCLES: list[frozenset[str]] = []
"""Import circles that exist today and are to be broken; the check fails on any other,
and on an entry here that is no longer a circle."""

# The lab is reached only through the driver registry (its plugin), never named by the
# floors that real fleets run on; the CLI alone may start the controller.
FORBIDDEN = {
    "service": ("lab", "serve", "plumb"),
    "serve": ("lab", "plumb"),
}
CONTROLLER_DOOR = "plumb/cmd_serve.py"

# Third-party client -> the only modules allowed to import it.
EDGE_OWNERS = {
    "netmiko": ["reconciler/drivers/netmiko_*.py", "reconciler/drivers/ssh_transport.py"],
    "paramiko": [
        "reconciler/drivers/netmiko_errors.py",
        "reconciler/drivers/ssh_exec.py",
        "reconciler/drivers/ssh_transport.py",
    ],
    "ansible_runner": ["reconciler/drivers/ansible_*.py"],
    "git": ["ci/gitrepo.py", "ci/gitrev.py", "serve/gitpoll.py", "rollouts/gitpin.py"],
    "sqlalchemy": [
        "reconciler/state/schema.py",
        "reconciler/state/upgrade.py",
        "reconciler/state/migrations/*.py",
    ],
    "alembic": ["reconciler/state/upgrade.py", "reconciler/state/migrations/*.py"],
    "sqlite3": ["reconciler/state/*.py", "lab/store.py", "lab/clock.py"],
    "psycopg": ["reconciler/state/pg*.py", "serve/leader_pg.py"],
    "urllib": ["inventory/redact.py"],
    "httpx": ["rollouts/sources/prometheus.py", "serve/sender.py"],
    "typer": ["plumb/*.py"],
    "pynetbox": ["inventory/netbox_fetch.py"],
    "requests": ["inventory/netbox_fetch.py"],
    "waitress": ["serve/httpd.py"],
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


# -- import circles ----------------------------------------------------------------------


def module_files(root: Path, packages: Iterable[str]) -> dict[str, Path]:
    """Dotted module name -> file, for every module of ``packages`` under ``root``."""
    found: dict[str, Path] = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def _nearest_module(dotted: str, modules: Mapping[str, Path]) -> str | None:
    """``dotted`` when it is a module, else its nearest enclosing one (``pkg.name`` where
    ``name`` is a function of ``pkg`` is ``pkg``)."""
    while dotted:
        if dotted in modules:
            return dotted
        dotted = dotted.rpartition(".")[0]
    return None


def _imported_names(name: str, path: Path) -> list[tuple[str, int]]:
    """Every absolute name ``path`` imports, at any depth (functions, ``TYPE_CHECKING``):
    ``from pkg import x`` gives ``pkg.x``, relative imports resolved against ``name``."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: list[tuple[str, int]] = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1])
                stem = f"{base}.{node.module}" if node.module else base
            else:
                stem = node.module or ""
            found += [(f"{stem}.{alias.name}", node.lineno) for alias in node.names]
    return found


def import_graph(root: Path, packages: Iterable[str]) -> dict[str, dict[str, int]]:
    """The import graph of the modules of ``packages`` (imports of other packages left
    out): module -> the modules it imports -> the line of the first such import."""
    modules = module_files(root, packages)
    graph: dict[str, dict[str, int]] = {}
    for name, path in modules.items():
        edges = graph.setdefault(name, {})
        for imported, line in _imported_names(name, path):
            target = _nearest_module(imported, modules)
            if target is not None and target != name:
                edges.setdefault(target, line)
    return graph


def strongly_connected(graph: Mapping[str, Iterable[str]]) -> list[set[str]]:
    """The strongly connected components of ``graph`` (Tarjan's algorithm, iterative so
    a long import chain cannot exhaust the stack)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[set[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)

    for start in sorted(graph):
        if start in index:
            continue
        visit(start)
        work = [(start, iter(sorted(graph[start])))]
        while work:
            node, successors = work[-1]
            for successor in successors:
                if successor not in index:
                    visit(successor)
                    work.append((successor, iter(sorted(graph.get(successor, ())))))
                    break
                if successor in on_stack:
                    low[node] = min(low[node], index[successor])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    component: set[str] = set()
                    while node not in component:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.add(member)
                    components.append(component)
    return components


def import_circles(root: Path, packages: Iterable[str]) -> dict[frozenset[str], list[str]]:
    """Each import circle as its set of files (relative to ``root``) -> one line per
    import that stays inside it (``file:line imports file``)."""
    modules = module_files(root, packages)
    graph = import_graph(root, packages)

    def file(name: str) -> str:
        return modules[name].relative_to(root).as_posix()

    circles: dict[frozenset[str], list[str]] = {}
    for component in strongly_connected(graph):
        if len(component) > 1:
            circles[frozenset(file(m) for m in component)] = [
                f"{file(m)}:{line} imports {file(target)}"
                for m in sorted(component)
                for target, line in sorted(graph[m].items())
                if target in component
            ]
    return circles


@cache
def _product_circles() -> dict[frozenset[str], list[str]]:
    return import_circles(ROOT, PRODUCT)


def test_no_import_circles() -> None:
    """No product modules import each other round a circle, counting imports inside
    functions and under ``TYPE_CHECKING`` (only the listed known circles remain)."""
    new = {c: lines for c, lines in _product_circles().items() if c not in KNOWN_CIRCLES}
    report = [
        f"import circle of {len(circle)} files:\n  " + "\n  ".join(lines)
        for circle, lines in new.items()
    ]
    assert not new, "\n".join(report)


def test_known_circles_are_still_circles() -> None:
    """Every entry of KNOWN_CIRCLES is a circle that exists: a broken one leaves the list."""
    stale = [sorted(c) for c in KNOWN_CIRCLES if c not in _product_circles()]
    assert not stale, f"no longer import circles, remove from KNOWN_CIRCLES: {stale}"


def test_the_circle_check_finds_a_circle(tmp_path: Path) -> None:
    """A circle closed by a relative, a TYPE_CHECKING and a function-level import is found,
    with the imports that close it; a module that only imports into it stays out."""
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from pkg.sub import b\n")
    (pkg / "sub" / "b.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..c import thing\n"
    )
    (pkg / "c.py").write_text("def thing() -> None:\n    from . import a\n")
    (pkg / "d.py").write_text("import pkg.a\nfrom pkg import c\n")
    assert import_circles(tmp_path, ["pkg"]) == {
        frozenset({"pkg/a.py", "pkg/sub/b.py", "pkg/c.py"}): [
            "pkg/a.py:1 imports pkg/sub/b.py",
            "pkg/c.py:2 imports pkg/a.py",
            "pkg/sub/b.py:3 imports pkg/c.py",
        ]
    }


def test_a_name_that_is_no_module_is_its_package(tmp_path: Path) -> None:
    """``from pkg import name`` is an import of ``pkg.name`` when that is a module, else
    of the package itself."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("from pkg.a import VALUE\n")
    (pkg / "a.py").write_text("VALUE = 1\n")
    (pkg / "b.py").write_text("from pkg import VALUE, a\n")
    assert import_graph(tmp_path, ["pkg"]) == {
        "pkg": {"pkg.a": 1},
        "pkg.a": {},
        "pkg.b": {"pkg": 1, "pkg.a": 1},
    }


def _reaches(graph: Mapping[str, Iterable[str]], start: str) -> set[str]:
    seen, todo = {start}, [start]
    while todo:
        for successor in graph[todo.pop()]:
            if successor not in seen:
                seen.add(successor)
                todo.append(successor)
    return seen


@given(
    st.dictionaries(st.sampled_from("abcdefgh"), st.sets(st.sampled_from("abcdefgh")), min_size=8)
)
def test_components_are_exactly_the_mutually_reachable_nodes(graph: dict[str, set[str]]) -> None:
    """Every node is in exactly one component, and two nodes share one exactly when each
    reaches the other."""
    components = strongly_connected(graph)
    assert sorted(n for c in components for n in c) == sorted(graph)
    reach = {node: _reaches(graph, node) for node in graph}
    for component in components:
        for node in component:
            assert component == {other for other in graph if node in reach[other]} & reach[node]
