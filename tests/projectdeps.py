"""What plumb declares (pyproject.toml) and what its product code imports (read by AST),
for the tests of dependencies, extras and the light install."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from dataclasses import dataclass
from functools import cache
from importlib.metadata import packages_distributions
from pathlib import Path
from typing import Any

from tests.test_layering import STAGES

ROOT = Path(__file__).resolve().parent.parent
SELF = "plumb"  # an extra that installs other extras names the project itself
NOT_AN_EXTRA = ("dev", "all")  # dev: the tests' tools; all: every extra


@cache
def pyproject() -> dict[str, Any]:
    """pyproject.toml, parsed."""
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def canonical(name: str) -> str:
    """A distribution (or dotted module) name as pip compares them (PEP 503)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def requirement_name(spec: str) -> str:
    """The canonical distribution name of a requirement: ``psycopg[binary]>=3`` -> psycopg."""
    match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", spec)
    assert match, f"not a requirement: {spec!r}"
    return canonical(match.group(1))


def product_packages() -> list[str]:
    """The top-level packages that ship: the layering test's stages and pyproject's
    package list, those that exist."""
    include = pyproject()["tool"]["setuptools"]["packages"]["find"]["include"]
    shipped = {pattern.rstrip("*") for pattern in include}
    return sorted(p for p in shipped | set(STAGES) if (ROOT / p / "__init__.py").is_file())


def declared() -> dict[str, str]:
    """Every runtime distribution -> where it is declared: ``base`` or an extra's name."""
    project = pyproject()["project"]
    where = {requirement_name(spec): "base" for spec in project["dependencies"]}
    for extra, specs in project["optional-dependencies"].items():
        if extra in NOT_AN_EXTRA:
            continue
        for spec in specs:
            name = requirement_name(spec)
            if name != SELF:
                where.setdefault(name, extra)
    return where


@cache
def distributions_of(top: str) -> frozenset[str]:
    """The installed distributions that provide the top-level module ``top``."""
    return frozenset(canonical(d) for d in packages_distributions().get(top, ()))


@cache
def modules_of(distribution: str) -> frozenset[str]:
    """The top-level modules the installed ``distribution`` provides."""
    return frozenset(
        top
        for top, dists in packages_distributions().items()
        if distribution in {canonical(d) for d in dists}
    )


@dataclass(frozen=True)
class ImportSite:
    """One import of a third-party module in product code."""

    module: str  # dotted, as written
    path: str  # relative to the repository
    line: int
    guarded: bool  # inside ``with optional_imports():``
    type_checking: bool  # under ``if TYPE_CHECKING:``

    @property
    def top(self) -> str:
        return self.module.partition(".")[0]

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.module}"


def _is_optional_imports(node: ast.With) -> bool:
    for item in node.items:
        call = item.context_expr
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Name | ast.Attribute):
            name = call.func.id if isinstance(call.func, ast.Name) else call.func.attr
            if name == "optional_imports":
                return True
    return False


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def imports_in(source: str, path: str, local: set[str]) -> list[ImportSite]:
    """The imports of modules neither in the standard library nor in ``local``."""
    found: list[ImportSite] = []

    def visit(node: ast.AST, guarded: bool, type_checking: bool) -> None:
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        for name in names:
            top = name.partition(".")[0]
            if top not in sys.stdlib_module_names and top not in local and top != "__future__":
                line = getattr(node, "lineno", 0)
                found.append(ImportSite(name, path, line, guarded, type_checking))
        if isinstance(node, ast.With) and _is_optional_imports(node):
            guarded = True
        if isinstance(node, ast.If) and _is_type_checking(node):
            for statement in node.body:
                visit(statement, guarded, True)
            for statement in node.orelse:
                visit(statement, guarded, type_checking)
            return
        for child in ast.iter_child_nodes(node):
            visit(child, guarded, type_checking)

    visit(ast.parse(source, filename=path), False, False)
    return found


@cache
def third_party_imports() -> tuple[ImportSite, ...]:
    """Every import of a third-party module in the product packages."""
    packages = product_packages()
    local = set(packages)
    sites: list[ImportSite] = []
    for package in packages:
        for file in sorted((ROOT / package).rglob("*.py")):
            relative = file.relative_to(ROOT).as_posix()
            sites += imports_in(file.read_text(), relative, local)
    return tuple(sites)
