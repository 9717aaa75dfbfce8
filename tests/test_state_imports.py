"""The state package imports in one direction: the backends (``db``, ``pgdb``) import
the modules of each table, which know the database only through ``conn.StateStore``."""

from __future__ import annotations

import ast
import graphlib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "reconciler" / "state"
TABLE_MODULES = ("audit", "lease", "freeze", "journal", "journal_approvals", "outbox", "drifttold")


def _graph() -> dict[str, set[str]]:
    """Module -> the state modules it imports, counting imports made only for type
    checking and inside functions."""
    modules = {
        ".".join(p.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__"): p
        for p in PACKAGE.rglob("*.py")
    }
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                found |= {node.module, *(f"{node.module}.{a.name}" for a in node.names)}
            elif isinstance(node, ast.Import):
                found |= {a.name for a in node.names}
        graph[name] = {m for m in found if m in modules and m != name}
    return graph


def test_the_state_package_imports_in_one_direction() -> None:
    """No import circle inside reconciler/state, counting imports made only for type
    checking and inside functions: the backends import the table modules, never the
    reverse."""
    graph = _graph()
    assert "reconciler.state.db" in graph["reconciler.state.pgdb"]  # the graph is real
    graphlib.TopologicalSorter(graph).prepare()  # raises CycleError naming the circle
    for module in TABLE_MODULES:
        assert not graph[f"reconciler.state.{module}"] & {
            "reconciler.state.db",
            "reconciler.state.pgdb",
        }, module
