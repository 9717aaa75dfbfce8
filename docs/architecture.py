"""Draw docs/architecture.md's picture of the floors from the code: every product
package and which lower floors its modules import, read from the source (so the
picture cannot drift from the code), drawn without the arrows a path already
implies. ``python docs/architecture.py`` rewrites the diagram between the markers;
``--check`` exits 1 when the file is stale."""

from __future__ import annotations

import ast
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "architecture.md"
FLOORS = [
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
BEGIN, END = "<!-- floors:begin (docs/architecture.py) -->", "<!-- floors:end -->"


def _imported_floors(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module.split(".")[0])
    return found & set(FLOORS)


def measure() -> tuple[dict[str, tuple[int, int]], Counter[tuple[str, str]]]:
    """Per floor (modules, lines), and per (floor, lower floor) how many modules import it."""
    sizes: dict[str, tuple[int, int]] = {}
    edges: Counter[tuple[str, str]] = Counter()
    for floor in FLOORS:
        files = sorted((ROOT / floor).rglob("*.py"))
        lines = sum(len(f.read_text().splitlines()) for f in files)
        sizes[floor] = (len(files), lines)
        for file in files:
            for other in _imported_floors(file) - {floor}:
                edges[(floor, other)] += 1
    return sizes, edges


def reduced(edges: set[tuple[str, str]]) -> set[tuple[str, str]]:
    """Drop each edge another path already implies (the transitive reduction)."""

    def reaches(start: str, goal: str, skip: tuple[str, str]) -> bool:
        seen, todo = {start}, [start]
        while todo:
            here = todo.pop()
            for a, b in edges:
                if a == here and (a, b) != skip and b not in seen:
                    if b == goal:
                        return True
                    seen.add(b)
                    todo.append(b)
        return False

    return {edge for edge in edges if not reaches(edge[0], edge[1], edge)}


def diagram() -> str:
    _, counted = measure()
    edges = reduced(set(counted))
    out = ["```mermaid", "flowchart BT"]
    for floor in FLOORS:
        out.append(f'    {floor}["{floor}/"]')
    for upper, lower in sorted(edges):
        out.append(f"    {upper} --> {lower}")
    out.append("```")
    return "\n".join(out)


def render(text: str) -> str:
    start, end = text.index(BEGIN) + len(BEGIN), text.index(END)
    return text[:start] + "\n" + diagram() + "\n" + text[end:]


def main(argv: list[str]) -> int:
    current = DOC.read_text()
    fresh = render(current)
    if "--check" in argv:
        if fresh != current:
            print("docs/architecture.md is stale: run python docs/architecture.py", file=sys.stderr)
            return 1
        return 0
    DOC.write_text(fresh)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
