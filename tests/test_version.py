"""The version is written once, in plumb/__init__.py: the package metadata takes it from
there, and `plumb --version` prints what the metadata says."""

from __future__ import annotations

import ast
import subprocess
import sys
from importlib.metadata import version

from tests.projectdeps import ROOT, product_packages, pyproject


def _written_version() -> str:
    tree = ast.parse((ROOT / "plumb" / "__init__.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == [
            "__version__"
        ]:
            assert isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
            return node.value.value
    raise AssertionError("plumb/__init__.py assigns no __version__ string")


def test_pyproject_reads_the_version_from_the_package() -> None:
    """pyproject.toml states no version of its own: it is dynamic, plumb.__version__."""
    project = pyproject()["project"]
    assert "version" not in project
    assert "version" in project["dynamic"]
    assert pyproject()["tool"]["setuptools"]["dynamic"]["version"] == {
        "attr": "plumb.__version__"
    }


def test_version_command_prints_the_installed_version() -> None:
    """`plumb --version` in a fresh interpreter prints importlib.metadata's version of
    plumb, which is the one written in plumb/__init__.py."""
    done = subprocess.run(
        [sys.executable, "-m", "plumb", "--version"], capture_output=True, text=True, check=True
    )
    assert done.stdout == f"plumb {version('plumb')}\n"
    assert version("plumb") == _written_version(), "reinstall plumb: its metadata is stale"


def test_no_other_module_writes_the_version() -> None:
    """No product module holds the version as a string of its own."""
    written = _written_version()
    elsewhere = []
    for package in product_packages():
        for file in (ROOT / package).rglob("*.py"):
            if file == ROOT / "plumb" / "__init__.py":
                continue
            for node in ast.walk(ast.parse(file.read_text())):
                if isinstance(node, ast.Constant) and node.value == written:
                    elsewhere.append(f"{file.relative_to(ROOT)}:{node.lineno}")
    assert not elsewhere, elsewhere
